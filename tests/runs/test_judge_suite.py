"""A suite judged by an LLM over real HTTP (the fake server on 127.0.0.1): the re-run makes no
request, a --cache-only replay reproduces the run, faults never become scores, keys stay out."""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from tests.helpers import judge_rule

from memgauge.cli.main import main
from memgauge.llm import FakeOpenAIServer, FaultRates

SECRET = "sk-SECRET-do-not-store-1234"
N = 30


def _truth(i: int) -> bool:
    return i % 3 != 0  # every third item's memory is missing: the answer cannot be found


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer(api_key=SECRET) as srv:
        srv.respond(judge_rule)
        yield srv


@pytest.fixture
def suite(server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch, recall_suite: Any) -> Path:
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    monkeypatch.setenv("MEMGAUGE_MODEL", "fake-judge")
    monkeypatch.setenv("MEMGAUGE_LLM_RETRIES", "3")
    monkeypatch.setenv("MEMGAUGE_LLM_TIMEOUT", "0.5")
    items = [
        {"id": f"q{i}", "input": f"What is the code for item {i}?", "expected": f"K{i}X"}
        for i in range(N)
    ]
    memories = [
        {"id": f"m{i}", "text": f"The code for item {i} is K{i}X."} for i in range(N) if _truth(i)
    ]
    return recall_suite(  # type: ignore[no-any-return]
        items,
        memories,
        [{"qa-judge": "longmemeval"}, {"rubric": "Is it helpful?"}],
        name="judged",
        concurrency=8,
        max_failure_rate=0.5,
    )


def _run(
    suite: Path, db: Path, capsys: pytest.CaptureFixture[str], *extra: str
) -> tuple[int, dict[str, Any], str]:
    code = main(["run", str(suite), "--store", str(db), "--json", *extra])
    cap = capsys.readouterr()
    return code, json.loads(cap.out.strip().splitlines()[-1]), cap.out + cap.err


def _means(result: dict[str, Any]) -> dict[str, Any]:
    return {r["evaluator"]: (r["mean"], r["n_scored"], r["n_failed"]) for r in result["results"]}


def test_rerun_costs_nothing_and_cache_only_replays_exactly(
    suite: Path, server: FakeOpenAIServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, first, out1 = _run(suite, tmp_path / "r.db", capsys)
    assert code == 0, out1
    calls = len(server.requests)
    assert calls == 2 * N  # one QA and one rubric call per item
    means = _means(first)
    assert means["qa-judge"] == (pytest.approx(20 / 30), N, 0)
    usage = first["llm_usage"]["fake-judge"]
    assert (usage["calls"], usage["cached"], usage["requests"]) == (2 * N, 0, 2 * N)
    assert usage["prompt_tokens"] > 0
    assert usage["cost_usd"] is None  # no price configured: n/a, not 0

    assert main(["runs", "show", first["run_id"], "--store", str(tmp_path / "r.db")]) == 0
    shown = capsys.readouterr().out
    assert "LLM fake-judge: 60 calls (0 from the cache), 60 HTTP requests" in shown
    assert "cost n/a" in shown

    code, again, _ = _run(suite, tmp_path / "r.db", capsys)
    assert code == 0
    assert len(server.requests) == calls  # the re-run made no request
    assert _means(again) == means
    assert again["llm_usage"]["fake-judge"]["cached"] == 2 * N

    code, replay, _ = _run(suite, tmp_path / "r.db", capsys, "--cache-only")
    assert (code, _means(replay)) == (0, means)
    assert len(server.requests) == calls

    # a replay that needs a call it never made fails those items; it does not call
    server.requests.clear()
    code, miss, out = _run(
        suite,
        tmp_path / "other.db",
        capsys,
        "--cache-only",
        "--llm-cache",
        str(tmp_path / "empty.db"),
    )
    assert server.requests == []
    assert _means(miss)["qa-judge"][:2] == (None, 0)
    assert "cache_miss" in out or "cache-only" in out
    _assert_no_secret(tmp_path, out1 + out)


def test_faulty_responses_never_become_scores(
    suite: Path, server: FakeOpenAIServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    server.set_faults(
        FaultRates(
            rate_limit=0.05,
            server_error=0.05,
            timeout=0.05,
            malformed=0.05,
            timeout_delay=1.0,
            retry_after=0.01,
            seed=7,
        )
    )
    _code, result, out = _run(suite, tmp_path / "r.db", capsys, "--no-cache")
    assert result["status"] == "completed", out
    assert sum(server.fault_counts.values()) > 0
    con = sqlite3.connect(tmp_path / "r.db")
    rows = con.execute(
        "SELECT item_id, evaluator, value, error, detail_json FROM suite_run_scores"
    ).fetchall()
    con.close()
    assert len(rows) == 2 * N  # every item and evaluator: a score or a recorded failure
    bound = (3 + 1) * 2  # (retries + 1) per call, one repair call
    for item_id, evaluator, value, error, detail_json in rows:
        detail = json.loads(detail_json)
        assert (value is None) == (error is not None)
        assert detail["requests"] <= bound
        if evaluator.startswith("qa-judge") and value is not None:
            # scored only from a real verdict: the deterministic judge's answer
            assert value == float(_truth(int(item_id[1:])))
    _assert_no_secret(tmp_path, out)


def _assert_no_secret(tmp_path: Path, output: str) -> None:
    assert SECRET not in output
    for f in tmp_path.rglob("*"):
        if f.is_file():
            assert SECRET.encode() not in f.read_bytes(), f


def test_a_panel_in_a_suite_reports_agreement(
    suite: Path, server: FakeOpenAIServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = yaml.safe_load(suite.read_text())
    spec["tasks"][0]["evaluators"] = [
        {"panel": {"judges": [{"qa-judge": "strict"}, {"qa-judge": "longmemeval"}], "rounds": 2}}
    ]
    suite.write_text(yaml.safe_dump(spec))
    code, result, out = _run(suite, tmp_path / "r.db", capsys)
    assert code == 0, out
    assert len(server.requests) == N * 2 * 2  # two judges, two rounds
    from memgauge.store.suite_runs import SuiteRunStore

    with SuiteRunStore(tmp_path / "r.db") as store:
        run = store.get_run(result["run_id"])
    assert run is not None
    assert run.summary is not None
    (row,) = run.summary.evaluators
    assert row.mean == pytest.approx(20 / 30)
    # the deterministic judges always agree; kappa is undefined only if every vote were equal
    assert row.agreement is not None
    assert row.agreement["percent_agreement"] == 1.0
    assert row.agreement["fleiss_kappa"] == pytest.approx(1.0)
    assert "panel of 2 on 30 items" in out


def test_sigterm_does_not_wait_for_judges_in_flight(
    suite: Path, server: FakeOpenAIServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    server.latency = 60.0  # every judge call would take a minute
    monkeypatch.setenv("MEMGAUGE_LLM_TIMEOUT", "120")
    db = tmp_path / "r.db"
    cmd = [sys.executable, "-m", "memgauge.cli.main", "run", str(suite), "--store", str(db)]
    proc = subprocess.Popen(
        [*cmd, "--no-progress"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    try:
        deadline = time.monotonic() + 30
        while len(server.requests) < 8 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(server.requests) >= 8  # judges are waiting on the server
    finally:
        t0 = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    assert time.monotonic() - t0 < 10
    assert proc.returncode == 143  # 128 + SIGTERM
    assert "Traceback" not in err
    con = sqlite3.connect(db)
    (status,) = con.execute("SELECT status FROM suite_runs").fetchone()
    con.close()
    assert status == "cancelled"
