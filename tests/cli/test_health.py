"""Issue 19 item 6: `memgauge health` and `api.memory_health`, the summary a memory server's
`memory_health` tool returns: latest metrics with CIs, drift, logging volume, open A/B tests,
golden-set coverage against seed 002's targets with warnings; on SQLite and PostgreSQL."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from tests.helpers import gated_suite

from memgauge import api
from memgauge.cli.main import main
from memgauge.data.demo import demo_dataset
from memgauge.data.io import save_retrieval_dataset
from memgauge.online.querylog import QueryLog
from memgauge.store.suite_runs import SuiteRunStore

MEMAUDIT = Path(__file__).resolve().parents[3] / "shared" / "datasets" / "memaudit-sample.json"


def _fill(store: str, tmp_path: Path) -> None:
    data = tmp_path / "demo"
    save_retrieval_dataset(demo_dataset(), data)
    for i in range(2):
        args = ["evaluate", str(data), "-s", "lexical", "--store", store, "--quiet"]
        assert main([*args, "--out", str(tmp_path / f"o{i}")]) in (0, 1)
    assert main(["ab", "create", "rerank", "--delta", "0.05", "--store", store]) == 0
    assert main(["ab", "create", "done", "--delta", "0.05", "--store", store]) == 0
    assert main(["ab", "pause", "done", "--store", store]) == 0
    log = QueryLog(store)
    for i in range(20):
        log.query(f"q {i}", session_id="s", result_ids=["m1"], category="semantic-search")
    for i in range(16):
        log.query(f"c {i}", session_id=f"c{i}", result_ids=["m1"], category="cold-start")
    log.close()
    assert main(["logs", "harvest", store, "-n", "36"]) == 0
    # the newest run is an audit: not the retrieval evaluation's stand-in
    audit = ["audit", str(MEMAUDIT), "--store", store, "--output", str(tmp_path / "audit")]
    assert main(audit) == 0


def _check(out: dict[str, Any]) -> None:
    # the latest evaluation of each kind, the newest first
    kinds = [ev["kind"] for ev in out["latest_evaluations"]]
    assert kinds == ["audit", "evaluate"]
    audit, ev = out["latest_evaluations"]
    assert audit["suite"] != ev["suite"]
    assert {m["task"] for m in audit["metrics"]} == {"audit"}
    assert audit["drift"]["baseline_runs"] == []
    rr = next(m for m in ev["metrics"] if m["measure"] == "RR@10")
    assert rr["value"] is not None
    assert rr["ci"][0] <= rr["value"] <= rr["ci"][1]
    # with its counts, as every number memgauge reports: the demo's 37 queries, none failed
    assert (rr["n_scored"], rr["n_failed"]) == (37, 0)
    assert all("n_scored" in m and "n_failed" in m for m in [*ev["metrics"], *audit["metrics"]])
    assert len(ev["drift"]["baseline_runs"]) == 1
    assert ev["drift"]["status"] == "pass"  # the same system on the same data
    assert out["logging"]["eval_queries"]["total"] == 36
    assert out["logging"]["eval_queries"]["last_24h"] == 36
    assert out["logging"]["sessions"] == 17
    # a paused test is still open
    assert sorted(t["name"] for t in out["ab_tests"]) == ["done", "rerank"]
    gs = out["golden_set"]
    assert (gs["queries"], gs["target"]) == (36, 280)
    assert gs["categories"]["cold-start"] == {
        "queries": 16,
        "target": 15,
        "short_of_target": 0,
        "below_minimum": False,
    }
    assert gs["categories"]["semantic-search"]["short_of_target"] == 30
    assert gs["categories"]["edge-case"]["below_minimum"] is True
    # each shortfall once, the categories of one kind together
    assert out["warnings"] == [
        "golden set: 36 of 280 queries",
        "golden set: short of the category target: trigger-match (0 of 30), semantic-search"
        " (20 of 50), causal-query (0 of 25), cross-folder (0 of 25), intent-specific (0 of"
        " 105), multi-concept (0 of 20), edge-case (0 of 10)",
        "golden set: under the 15 queries a per-category comparison needs: trigger-match (0),"
        " causal-query (0), cross-folder (0), intent-specific (0), multi-concept (0),"
        " edge-case (0)",
    ]


def test_health_on_sqlite(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = str(tmp_path / "results.db")
    _fill(store, tmp_path)
    _check(api.memory_health(store))
    capsys.readouterr()
    assert main(["health", "--store", store, "--json"]) == 0
    _check(json.loads(capsys.readouterr().out))
    assert main(["health", "--store", store]) == 0
    text = capsys.readouterr().out
    assert "golden set: 36 of 280 queries" in text
    assert "open A/B tests: 2" in text
    lines = text.splitlines()
    assert [line.split(" ")[1] for line in lines if line.startswith("latest ")] == [
        "audit",
        "evaluate",
    ]
    assert "  drift: no earlier run of its suite to compare with" in lines  # the audit's
    assert "  drift: pass against 1 earlier run" in lines
    (rr_line,) = [line for line in lines if line.startswith("  lexical/retrieval RR@10: ")]
    assert rr_line.endswith("] (n=37)")
    warnings = [line for line in lines if line.startswith("warning: ")]
    assert len(warnings) == 3


def test_health_of_an_empty_store_says_what_is_missing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = tmp_path / "results.db"
    QueryLog(store).close()
    out = api.memory_health(store)
    assert out["latest_evaluations"] == []
    assert out["golden_set"]["queries"] == 0
    assert out["warnings"] == [
        "no completed evaluation in the store: run `memgauge evaluate` or `run`",
        "logging: no query logged in the last 24 hours",
        "golden set: no query yet (seed 002 asks for 280, at least 15 per category): harvest"
        " judged queries from the log with `memgauge logs harvest STORE`",
    ]
    assert main(["health", "--store", str(tmp_path / "missing.db")]) == 2
    assert main(["health", "--store", str(store), "--suite", "nope"]) == 2
    assert "no completed run of suite 'nope'" in capsys.readouterr().err


def test_health_on_postgresql(
    pg_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _fill(pg_url, tmp_path)
    capsys.readouterr()
    assert main(["health", "--store", pg_url, "--json"]) == 0
    _check(json.loads(capsys.readouterr().out))


def _run_ids(store: str) -> list[str]:
    """The store's runs, the newest first."""
    with SuiteRunStore(store) as opened:
        return [r["run_id"] for r in opened.list_runs()]


def test_health_says_when_the_latest_run_failed_after_the_one_it_shows(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The nightly run failed (its subject down, exit 4) and health showed the night before's
    numbers as the "latest suite run", without a word; with no completed run at all it said
    "run `memgauge evaluate` or `run`", as if nothing had been run."""
    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parents[1] / "data" / "subjects"))
    store = str(tmp_path / "results.db")
    suite = gated_suite(tmp_path, 6)
    dead = tmp_path / "dead.yaml"
    spec = yaml.safe_load(suite.read_text())
    spec["subjects"] = {"agent": {"python": {"target": "broken:Broken"}}}
    dead.write_text(yaml.safe_dump(spec))
    assert main(["run", str(dead), "--store", store]) == 4
    [failed] = _run_ids(store)
    first = api.memory_health(store)["warnings"][0]
    assert first.startswith(f"the latest suite run {failed} failed: subject agent: ")
    assert first.endswith("; no suite run has completed")
    assert main(["run", str(suite), "--store", store]) == 0
    assert main(["run", str(dead), "--store", store]) == 4
    out = api.memory_health(store)
    done = out["latest_evaluations"][0]["run_id"]
    latest = _run_ids(store)[0]
    assert latest not in (done, failed)
    assert out["warnings"][0].startswith(f"the latest suite run {latest} failed: ")
    assert (
        f"; the suite numbers here are of {done}, the latest that completed" in out["warnings"][0]
    )
