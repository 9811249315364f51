"""Feature flags, shadow runs and A/B tests as one workflow on a `postgresql://` store, against
a real server (tests/pgserver.py): revision 0013's tables, the drop counter's upsert, the
shadow rows' intent and session, `ab add --from-shadow`, graduation rolling the flag out."""

from __future__ import annotations

import json
import threading
import time
from typing import Any

import pytest

from memgauge.cli.main import main
from memgauge.online.flags import Flags
from memgauge.online.shadow import ShadowRunner
from memgauge.store.shadow import ShadowStore
from pgserver import rows as _rows


def _json(capsys: pytest.CaptureFixture[str], args: list[str]) -> Any:
    capsys.readouterr()
    assert main(args) == 0
    return json.loads(capsys.readouterr().out)


def test_flags_shadow_and_ab_on_postgresql(pg_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    create = ["flags", "create", "PGF", "--shadow", "--shadow-percent", "100"]
    (made,) = _json(
        capsys, [*create, "--min-samples", "40", "--allow-unmeasured", "--store", pg_url, "--json"]
    )
    assert (made["rollout_percent"], made["test"]["status"]) == (0, "running")
    assert main(["flags", "set", "PGF", "--rollout", "120", "--store", pg_url]) == 2
    assert "120" in capsys.readouterr().err
    assert main(["flags", "set", "NOPE", "--rollout", "5", "--store", pg_url]) == 2
    (changed,) = _json(
        capsys, ["flags", "set", "PGF", "--rollout", "10", "--store", pg_url, "--json"]
    )
    assert changed["rollout_percent"] == 10

    def control(q: str, k: int) -> list[str]:
        time.sleep(0.01)  # slower than the treatment: the latency guardrail passes
        return ["x", "rel"] if q.endswith(("1", "3", "5")) else ["x", "y", "rel"]

    flags = Flags(pg_url, refresh_s=0)
    try:
        runner = flags.shadow_runner("PGF", control, lambda q, k: ["rel", "x"])
        for i in range(60):
            runner.search(f"q{i}", f"q{i}", {"rel": 3}, intent="find", session_id=f"s{i % 3}")
        runner.close()
        assert runner.stats()["recorded"] == 60
    finally:
        flags.close()
    ctx = _rows(
        pg_url,
        "SELECT COUNT(*), COUNT(DISTINCT session_id), MIN(intent), MIN(log_level)"
        " FROM eval_shadow_runs WHERE feature_id = 'PGF'",
    )
    assert ctx == [(60, 3, "find", "full")]
    capsys.readouterr()
    assert main(["ab", "add", "PGF", "--from-shadow", "--store", pg_url]) == 0
    assert "60 pairs added from shadow runs" in capsys.readouterr().out
    (flag,) = _json(capsys, ["flags", "list", "PGF", "--store", pg_url, "--json"])
    assert flag["test"]["status"] == "graduated"
    assert flag["rollout_percent"] == 100  # graduation rolled it out
    assert _rows(pg_url, "SELECT COUNT(DISTINCT shadow_run_id) FROM eval_ab_test_pairs") == [(60,)]

    # a full queue's drops are counted in the store (the upsert, twice)
    release = threading.Event()
    started = threading.Event()

    def slow(q: str, k: int) -> list[str]:
        started.set()
        release.wait(timeout=10)
        return ["b"]

    with ShadowStore(pg_url) as store:
        for _ in range(2):
            started.clear()
            release.clear()
            busy = ShadowRunner("busy", lambda q, k: ["a"], slow, store, percent=100, queue_size=1)
            busy.search("q0", "t")
            assert started.wait(timeout=10)
            for i in range(1, 5):
                busy.search(f"q{i}", "t")  # q1 queued, q2..q4 dropped
            release.set()
            busy.close()
        assert store.shadow_dropped("busy") == 6
    out = _json(capsys, ["shadow", "summary", "busy", "--store", pg_url, "--json"])
    assert (out["busy"]["n"], out["busy"]["n_dropped"]) == (4, 6)


def test_the_largest_min_samples_fits_postgresqls_integer_columns(
    pg_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--min-samples` stops at 2^31 - 1, what eval_flags and eval_ab_tests hold on PostgreSQL
    (one more was the server's "integer out of range", exit 70)."""
    top = str(2**31 - 1)
    (made,) = _json(
        capsys, ["flags", "create", "F", "--min-samples", top, "--store", pg_url, "--json"]
    )
    assert made["min_samples"] == 2**31 - 1
    assert (
        main(["ab", "create", "T", "--delta", "0.1", "--min-samples", top, "--store", pg_url]) == 0
    )
    assert _rows(pg_url, "SELECT min_samples FROM eval_ab_tests WHERE feature_id = 'T'") == [
        (2**31 - 1,)
    ]
    assert main(["flags", "set", "F", "--min-samples", str(2**31), "--store", pg_url]) == 2
