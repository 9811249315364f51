"""Seed 002's `eval_results` is a projection of runs: `full` for evaluations (regression once
gated), `ab_test` and `shadow` for the rows those commands make."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from memgauge.cli.main import main
from memgauge.data.demo import demo_dataset
from memgauge.data.io import save_retrieval_dataset


def _rows(db: Path, run_type: str) -> list[tuple[object, ...]]:
    with sqlite3.connect(db) as conn:
        return conn.execute(
            "SELECT run_id, run_type, feature_id, system, query_count, mrr_delta, ndcg_delta,"
            " is_significant FROM eval_results WHERE run_type = ? ORDER BY system",
            (run_type,),
        ).fetchall()


def test_evaluate_then_gate_then_ab_and_shadow(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "demo"
    save_retrieval_dataset(demo_dataset(), data)
    db = tmp_path / "r.db"
    args = ["evaluate", str(data), "-s", "lexical", "-s", "lexical:candidates=10@small"]
    assert main([*args, "--store", str(db), "--out", str(tmp_path / "out"), "--quiet"]) == 0
    run_id = json.loads((tmp_path / "out" / "result.json").read_text())["run_id"]
    full = _rows(db, "full")
    assert [(r[0], r[3]) for r in full] == [(run_id, "lexical"), (run_id, "small")]
    assert main(["gate", run_id, "--store", str(db), "--no-learn"]) == 0
    assert [r[3] for r in _rows(db, "regression")] == ["lexical", "small"]
    assert _rows(db, "full") == []

    assert (
        main(["ab", "create", "t1", "--delta", "0.05", "--metric", "RR@10", "--store", str(db)])
        == 0
    )
    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text(
        "".join(
            json.dumps({"query_id": f"q{i}", "control": 0.5, "treatment": 0.75}) + "\n"
            for i in range(4)
        )
    )
    assert main(["ab", "add", "t1", str(pairs), "--store", str(db)]) == 0
    (ab,) = _rows(db, "ab_test")
    assert ab[:5] == ("ab:t1", "ab_test", "t1", "treatment", 4)
    assert ab[5] == pytest.approx(0.25)  # the paired MRR delta
    capsys.readouterr()


def test_a_run_with_two_retrieval_tasks_has_a_row_per_system_and_task(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The seed's row is one per run and system; a suite with a retrieval task per dataset
    (`memgauge bench systems`) names each row's system with its task. Before, the second task's
    rows broke the table's unique key and the run ended in an internal error (exit 70)."""
    data = tmp_path / "demo"
    save_retrieval_dataset(demo_dataset(), data)
    task = {"kind": "retrieval", "dataset": str(data), "k": 10, "aggregates": ["ir"]}
    task["evaluators"] = [{"retrieval": {"measure": "RR@10"}}]
    suite = {
        "name": "two",
        "subjects": {"lexical": {"reference": {"mode": "lexical"}}},
        "tasks": [{"name": "a", **task}, {"name": "b", **task, "limit": 5}],
    }
    path = tmp_path / "suite.yaml"
    path.write_text(json.dumps(suite))
    db = tmp_path / "r.db"
    assert main(["run", str(path), "--store", str(db)]) == 0
    capsys.readouterr()
    rows = _rows(db, "full")
    assert [(r[3], r[4]) for r in rows] == [("lexical/a", 37), ("lexical/b", 5)]


def test_the_rows_are_those_of_the_whole_facts_dumped_without_what_they_never_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The facts are dumped for `eval_results` without the per-query fields its rows never
    read (hits, channels, texts: most of a big run's dump): the rows written are those the
    whole facts give, every column."""
    from memgauge.api import read_run
    from memgauge.store.seed_rows import EVAL_RESULTS_COLUMNS, UNREAD, eval_results_rows

    data = tmp_path / "demo"
    save_retrieval_dataset(demo_dataset(), data)
    db = tmp_path / "r.db"
    args = ["evaluate", str(data), "-s", "lexical", "--store", str(db), "--quiet"]
    assert main([*args, "--out", str(tmp_path / "out")]) == 0
    capsys.readouterr()
    run_id = json.loads((tmp_path / "out" / "result.json").read_text())["run_id"]
    run = read_run(run_id, store=db)
    assert run.summary is not None
    (agg,) = [a for a in run.summary.aggregates if a.aggregate == "ir"]
    with sqlite3.connect(db) as conn:
        conn.row_factory = sqlite3.Row
        (stored,) = [dict(r) for r in conn.execute("SELECT * FROM eval_results")]
    whole = agg.facts_json()
    (want,) = eval_results_rows({**whole, "run_id": run_id, "created_at": stored["created_at"]})
    assert {c: stored[c] for c in EVAL_RESULTS_COLUMNS} == want
    assert json.loads(want["per_query_results"])  # the per-query values are in it
    typed = agg.model_copy()
    from memgauge.aggregates.ir_facts import IrFacts

    typed.facts = IrFacts.model_validate(whole)
    slim = typed.facts_json(exclude=UNREAD)
    assert "hits" in whole["systems"][0]["per_query"][0]
    assert set(slim["systems"][0]["per_query"][0]) == {
        "query_id",
        "metrics",
        "agent_metrics",
        "error",
    }
