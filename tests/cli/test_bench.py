"""`memgauge bench`: latency percentiles, throughput and errors under concurrent clients."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from memgauge.cli.main import main

SUBJECTS = Path(__file__).resolve().parents[1] / "data" / "subjects"


def _bench(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, list[dict]]:  # type: ignore[type-arg]
    code = main(["bench", *args, "--json"])
    out = capsys.readouterr().out
    return code, json.loads(out) if code == 0 else []


def test_reference_memory_under_concurrent_clients(capsys: pytest.CaptureFixture[str]) -> None:
    code, rows = _bench(capsys, "lexical", "-c", "1", "-c", "200", "--requests", "400")
    assert code == 0
    one, many = rows
    assert (one["clients"], many["clients"]) == (1, 200)
    for r in rows:
        assert r["requests"] == 400
        assert r["errors"] == 0
        assert 0 < r["p50"] <= r["p95"] <= r["p99"] <= r["max"]
        assert r["throughput"] > 0
        # its SQLite connection belongs to one thread: calls are serialized, and it says so
        assert r["serialized"] is True
    # 200 clients queue behind one connection: what each waits grows with the queue
    assert many["p50"] > one["p50"]


def test_errors_are_counted_not_timed(capsys: pytest.CaptureFixture[str]) -> None:
    server = f"subprocess:{sys.executable} {SUBJECTS / 'keyword_memory.py'} --fail=error"
    code, (row,) = _bench(capsys, server, "-c", "4", "--requests", "20")
    assert code == 0
    assert (row["requests"], row["errors"]) == (20, 20)
    assert row["p50"] is None
    assert "index is corrupt" in row["error_samples"][0]


def test_bench_options_are_checked(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "lexical", "--requests", "5", "--duration", "1"]) == 2
    assert main(["bench", "lexical", "-c", "1001", "--requests", "5"]) == 2
    assert "1001" in capsys.readouterr().err
