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


def test_component_targets_and_baseline_against_boosted_in_one_report(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Seed 002's performance layer: the p95 of the stages a subject times itself against
    boost < 10 ms, causal < 20 ms, hook < 5 ms, and the baseline against the boosted system."""
    monkeypatch.syspath_prepend(str(SUBJECTS))
    args = ["python:staged:boosted@boosted", "--baseline", "python:staged:baseline@plain"]
    code = main(["bench", *args, "-c", "1", "-c", "2", "--requests", "30", "--json"])
    assert code == 0
    doc = json.loads(capsys.readouterr().out)
    (one, two) = doc["boosted"]
    assert (one["errors"], two["errors"], doc["baseline"][0]["errors"]) == (0, 0, 0)
    assert one["stages"]["boost"] == {"p50": 3.0, "p95": 3.0, "n": 30}
    assert one["stages"]["causal"]["p95"] == 25.0
    targets = {t["component"]: t for t in one["targets"]}
    assert (targets["boost"]["status"], targets["boost"]["target_p95_ms"]) == ("met", 10.0)
    assert (targets["causal"]["status"], targets["causal"]["p95_ms"]) == ("missed", 25.0)
    assert targets["hook"]["status"] == "n/a"  # not reported: never counted as met
    assert targets["hook"]["note"] == "the subject reports no `hook` stage in its latency_ms"
    plain = doc["baseline"][0]
    assert {t["status"] for t in plain["targets"]} == {"n/a"}
    versus = doc["versus_baseline"]
    assert [(r["clients"], r["baseline"], r["boosted"]) for r in versus] == [
        (1, "plain", "boosted"),
        (2, "plain", "boosted"),
    ]
    assert versus[0]["p95_ms"] == [plain["p95"], one["p95"]]
    assert versus[0]["p95_change_ms"] == pytest.approx(one["p95"] - plain["p95"])
    # the terminal: the load table, the targets, the comparison
    code = main(["bench", *args, "-c", "1", "--requests", "10"])
    shown = capsys.readouterr().out
    assert code == 0
    assert "Component latency targets" in shown
    assert "Baseline against boosted" in shown
    rows = [line for line in shown.splitlines() if "│ boosted" in line and "< 20 ms" in line]
    assert rows
    assert "25.00" in rows[0]
    assert "missed" in rows[0]


def test_the_reference_memory_times_its_session_boost(capsys: pytest.CaptureFixture[str]) -> None:
    """A query with session context is benched with it: the reference memory's `boost`
    stage is timed and checked against its 10 ms target."""
    from memgauge import api

    ds = api.demo_dataset()
    assert any(q.session_context for q in ds.queries)
    levels = api.bench_search(
        "reference:mode=lexical,session_boost=0.2", ds, clients=(1,), requests=len(ds.queries)
    )
    ((_label, res),) = levels
    with_session = sum(1 for q in ds.queries if q.session_context)
    assert res.stages["boost"]["n"] == with_session
    (boost,) = [t for t in res.targets if t["component"] == "boost"]
    assert boost["status"] in ("met", "missed")
    assert boost["p95_ms"] == res.stages["boost"]["p95"]
