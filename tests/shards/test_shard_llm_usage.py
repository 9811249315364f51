"""A sharded run's LLM spend is the serial run's: the judges the driver runs for the shards'
records, and the subjects of the shards it keeps, count into the run's usage."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tests.helpers import judge_rule

from memgauge.cli.main import main

N = 12


@pytest.mark.parametrize(
    ("startup", "pool"),
    [("0", []), ("1000", []), ("0", ["--executor", "dask:local"])],
    ids=["pool-takes-all", "driver-keeps-all", "dask-local"],
)
def test_a_judged_run_on_workers_records_the_serial_runs_llm_usage(
    startup: str,
    pool: list[str],
    llm_server: Any,
    recall_suite: Any,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    llm_server.respond(judge_rule)
    items = [{"id": f"q{i}", "input": f"What is the code for item {i}?"} for i in range(N)]
    for i, item in enumerate(items):
        item["expected"] = f"K{i}X"
    memories = [{"id": f"m{i}", "text": f"The code for item {i} is K{i}X."} for i in range(N)]
    suite = recall_suite(items, memories, [{"qa-judge": "longmemeval"}], name="judged")
    db = tmp_path / "r.db"
    monkeypatch.setenv("MEMGAUGE_SHARD_STARTUP", startup)

    def run(*extra: str) -> tuple[dict[str, Any], str]:
        code = main(["run", str(suite), "--store", str(db), "--json", "--no-cache", *extra])
        out = capsys.readouterr().out
        assert code == 0, out
        result = json.loads(out.strip().splitlines()[-1])
        assert main(["runs", "show", result["run_id"], "--store", str(db)]) == 0
        return result, capsys.readouterr().out

    serial, serial_shown = run()
    if pool:
        pytest.importorskip("distributed")
    sharded, sharded_shown = run("--workers", "2", *pool)
    assert len(llm_server.requests) == 2 * N  # every item judged once in each run
    want = {"calls": N, "cached": 0, "requests": N, "failures": 0}
    for result in (serial, sharded):
        usage = result["llm_usage"]["fake"]
        assert {k: usage[k] for k in want} == want
        assert usage["prompt_tokens"] > 0
    assert sharded["llm_usage"] == serial["llm_usage"]
    line = f"LLM fake: {N} calls (0 from the cache), {N} HTTP requests"
    assert line in serial_shown
    assert line in sharded_shown


MEMAUDIT = Path(__file__).resolve().parents[3] / "shared" / "datasets" / "memaudit-sample.json"


@pytest.mark.skipif(not MEMAUDIT.is_file(), reason="memaudit-sample is not in ../shared/datasets")
def test_an_llm_subject_in_shards_the_driver_keeps_counts_into_the_run(
    llm_server: Any,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("MEMGAUGE_SHARD_STARTUP", "1000")  # the pool never pays: all run here
    db = tmp_path / "r.db"
    args = ["audit", str(MEMAUDIT), "--agent", "chat", "--model", "fake", "--scoring", "offline"]
    args += ["--store", str(db), "--workers", "2", "--json", "--no-progress", "--no-cache"]
    assert main([*args, "--output", str(tmp_path / "a")]) == 0, capsys.readouterr().err
    result = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    usage = result["llm_usage"]["fake"]
    assert usage["requests"] == len(llm_server.requests) > 10
    assert usage["calls"] == len(llm_server.requests)
    assert usage["cached"] == 0
