"""LLM judges under faults, over real HTTP (the fake server on 127.0.0.1): `--retry-failed`
asks again the judges whose calls failed on something that passes, and not those a retry would
only replay; the run's LLM spend is recorded request by request, so it is exact across kill -9."""

from __future__ import annotations

import json
import random
import signal
import sqlite3
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from memgauge.cli.main import main
from memgauge.llm import FakeOpenAIServer, Fault, FaultRates

VERDICT = json.dumps({"reasoning": "the answer gives the port", "label": "yes"})
LookupSuite = Callable[..., Path]  # the conftest fixtures' types
Spawn = Callable[..., "subprocess.Popen[str]"]


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict[str, Any], str]:
    code = main(["run", *args, "--json"])
    cap = capsys.readouterr()
    return code, json.loads(cap.out.strip().splitlines()[-1]), cap.err


def _judge_row(doc: dict[str, Any]) -> tuple[Any, ...]:
    (row,) = [r for r in doc["results"] if r["evaluator"] == "qa-judge"]
    return row["mean"], row["n_scored"], row["n_failed"]


def test_retry_failed_asks_again_the_judges_whose_calls_failed_on_something_that_passes(
    tmp_path: Path,
    lookup_suite: LookupSuite,
    judge: FakeOpenAIServer,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("MEMGAUGE_LLM_RETRIES", "0")  # each fault fails its call for good
    monkeypatch.setenv("MEMGAUGE_LLM_TIMEOUT", "0.5")
    # one at a time: faults go in order; judge failures count toward max_failure_rate, so the
    # suite tolerates them here to see every item through
    path = lookup_suite(10, concurrency=1, judged=True, max_failure_rate=0.6)
    db = tmp_path / "r.db"
    judge.fail(
        Fault(500),
        Fault(429, headers=(("retry-after", "0.01"),)),
        Fault(truncate=True),  # the connection drops mid-body
        Fault(200, delay=2.0, content=VERDICT),  # no answer within the 0.5 s timeout
        Fault(400, body='{"error": {"message": "the model does not exist"}}'),
    )
    code, first, err = _run(capsys, str(path), "--store", str(db))
    assert code == 0, err
    assert _judge_row(first) == (1.0, 5, 5)
    assert judge.n_requests == 10

    code, again, err = _run(
        capsys, str(path), "--store", str(db), "--resume", first["run_id"], "--retry-failed"
    )
    assert code == 0, err
    # the 500, 429, dropped connection and timeout are asked again and judged; the 400 is not:
    # it is cached, so asking again would replay it
    assert judge.n_requests == 10 + 4
    assert _judge_row(again) == (1.0, 9, 1)
    with sqlite3.connect(db) as conn:
        (error,) = conn.execute(
            "SELECT error FROM suite_run_scores WHERE error IS NOT NULL"
        ).fetchone()
        kinds = [r[0] for r in conn.execute("SELECT kind FROM suite_run_failures")]
    assert "400" in error
    assert len(kinds) == 5  # the first run's judge failures stay, as history


def _settled(server: FakeOpenAIServer) -> int:
    """The server's request count once it stops changing (bytes a killed client wrote are
    still read and counted)."""
    n = -1
    while n != server.n_requests:
        n = server.n_requests
        time.sleep(0.3)
    return n


def test_llm_spend_is_exact_across_kill_9(
    tmp_path: Path,
    lookup_suite: LookupSuite,
    judge: FakeOpenAIServer,
    spawn: Spawn,
    capsys: pytest.CaptureFixture[str],
) -> None:
    seed = random.randrange(1 << 30)
    rng = random.Random(seed)
    n, width = 40, 4
    # 429s, 500s and dropped connections: calls take several requests
    judge.latency = 0.02
    judge.set_faults(
        FaultRates(rate_limit=0.1, server_error=0.1, truncated=0.05, retry_after=0.01, seed=seed)
    )
    path = lookup_suite(n, concurrency=width, judged=True)
    db = tmp_path / "r.db"
    proc = spawn("run", str(path), "--store", str(db), "--no-progress")
    try:
        # at a random point of the run, the server stops answering: once the judges of all
        # `width` items in flight wait on it, no request is half-sent, and the kill lands
        # while the subject, the recorder and the LLM client are wherever they are
        kill_at = rng.randrange(4, n // 2)
        deadline = time.monotonic() + 60
        while judge.n_requests < kill_at:
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline
            time.sleep(0.01)
        judge.fail(*[Fault(200, delay=600, content=VERDICT)] * width)
        while judge.n_queued_faults:
            assert time.monotonic() < deadline, f"seed {seed}"
            time.sleep(0.01)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.communicate()
    killed = _settled(judge)
    with sqlite3.connect(db) as conn:
        (run_id,) = conn.execute("SELECT run_id FROM suite_runs").fetchone()
        (spent,) = conn.execute("SELECT requests FROM suite_run_usage").fetchone()
        (unfinished,) = conn.execute(
            "SELECT COUNT(*) FROM suite_run_items WHERE status != 'completed'"
        ).fetchone()
        # as if two finished items had been in flight: asked again, their verdicts are cached
        # (fewer when the kill came before two had finished: seeds 877933995, 924878366)
        requeued = conn.execute(
            "UPDATE suite_run_items SET status = 'queued' WHERE item_id IN (SELECT item_id"
            " FROM suite_run_items WHERE status = 'completed' ORDER BY seq LIMIT 2)"
        ).rowcount
    # the killed attempt recorded every request the server received, those it never answered
    # included
    assert spent == killed, f"seed {seed}"

    code = main(["run", str(path), "--store", str(db), "--resume", run_id, "--json"])
    out = capsys.readouterr().out
    assert code == 0
    doc = json.loads(out.strip().splitlines()[-1])
    usage = doc["llm_usage"]["fake-judge"]
    assert usage["requests"] == _settled(judge) > killed, f"seed {seed}"
    # the re-queued items are asked again from the cache; so is any item whose verdict was
    # cached but whose record was still in the recorder's group commit (it lingers 200 ms)
    # when the kill landed: redone, never lost, and its spend counted once per request. Only
    # items the killed attempt left unfinished are asked again; how many of them had a verdict
    # is timing (with a 20 ms judge more than `width` items can finish within the linger:
    # seed 1055517508 left 6 with a 50 ms linger)
    unrecorded = usage["cached"] - requeued
    assert 0 <= unrecorded <= unfinished, f"seed {seed}"
    # every item judged once, plus those asked again (from the cache); the `width` calls the
    # server never answered are neither calls nor failures
    assert usage["calls"] + usage["failures"] == n + usage["cached"], f"seed {seed}"
    code = main(["runs", "show", run_id, "--store", str(db)])
    assert f"{usage['requests']} HTTP requests" in capsys.readouterr().out
