"""The results store: named migrations, the final schema, and round trips on a real SQLite file."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from memgauge.store.migrations import MIGRATIONS, migrate
from memgauge.store.results import ResultStore

EXPECTED_SCHEMA = {
    "eval_queries": [
        "id",
        "query_id",
        "query",
        "intent",
        "mode",
        "session_id",
        "tool_name",
        "result_ids",
        "result_count",
        "channel_contributions",
        "total_latency_ms",
        "fusion_weights",
        "quality_proxy_score",
        "trace_id",
        "created_at",
        "is_eval_corpus",
        "eval_category",
    ],
    "eval_judgments": [
        "id",
        "query_id",
        "memory_id",
        "relevance",
        "source",
        "annotator",
        "confidence",
        "created_at",
    ],
    "eval_feedback": [
        "id",
        "event_type",
        "session_id",
        "query_id",
        "memory_id",
        "rank_in_results",
        "metadata",
        "created_at",
    ],
    "memory_confidence": ["memory_id", "confidence", "validations", "updated_at"],
    "shadow_runs": [
        "id",
        "experiment",
        "query_id",
        "created_at",
        "classification",
        "error",
        "row_json",
    ],
    "ab_tests": [
        "name",
        "status",
        "metric",
        "config_json",
        "state_json",
        "created_at",
        "updated_at",
    ],
    "ab_test_pairs": [
        "name",
        "seq",
        "query_id",
        "control",
        "treatment",
        "control_latency_ms",
        "treatment_latency_ms",
        "constitutional_delta",
    ],
    "runs": [
        "run_id",
        "kind",
        "created_at",
        "memgauge_version",
        "dataset_name",
        "dataset_sha256",
        "settings_json",
        "result_json",
        "duration_seconds",
    ],
    "run_systems": ["run_id", "system", "status", "reason", "spec_json", "metrics_json"],
    "query_results": [
        "run_id",
        "system",
        "query_id",
        "category",
        "intent",
        "metrics_json",
        "hits_json",
        "latency_json",
        "error",
    ],
    "schema_migrations": ["name", "applied_at"],
    "suite_runs": [
        "run_id",
        "suite_name",
        "status",
        "reason",
        "created_at",
        "started_at",
        "finished_at",
        "heartbeat_at",
        "pid",
        "host",
        "suite_sha256",
        "suite_json",
        "suite_path",
        "settings_json",
        "provenance_json",
        "n_items",
        "summary_json",
    ],
    "suite_run_subjects": ["run_id", "subject", "spec_json"],
    "suite_run_tasks": [
        "run_id",
        "task",
        "kind",
        "dataset",
        "dataset_sha256",
        "spec_json",
        "n_items",
    ],
    "suite_run_items": [
        "run_id",
        "subject",
        "task",
        "item_id",
        "seq",
        "status",
        "attempts",
        "category",
        "input_json",
        "expected_json",
        "score",
        "started_at",
        "finished_at",
        "duration_ms",
    ],
    "suite_run_outputs": [
        "run_id",
        "subject",
        "task",
        "item_id",
        "output_json",
        "latency_json",
    ],
    "suite_run_scores": [
        "run_id",
        "subject",
        "task",
        "item_id",
        "evaluator",
        "value",
        "passed",
        "reason",
        "error",
        "detail_json",
    ],
    "suite_run_failures": [
        "failure_id",
        "run_id",
        "subject",
        "task",
        "item_id",
        "stage",
        "kind",
        "message",
        "attempt",
        "at",
    ],
}


def _run(run_id: str = "r1") -> dict[str, object]:
    return {
        "run_id": run_id,
        "kind": "retrieval",
        "created_at": "2026-11-22T10:00:00+00:00",
        "memgauge_version": "0.1.0",
        "dataset_name": "demo",
        "dataset_sha256": "ab" * 32,
        "settings": {"k": 20},
        "result_json": '{"x": 1}',
        "duration_seconds": 1.5,
    }


def test_final_schema_is_exactly_the_migrated_one(tmp_path: Path) -> None:
    ResultStore(tmp_path / "r.db").close()
    conn = sqlite3.connect(tmp_path / "r.db")
    tables = {
        r[0]
        for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")
        if not r[0].startswith("sqlite_")
    }
    assert tables == set(EXPECTED_SCHEMA)
    for table, columns in EXPECTED_SCHEMA.items():
        assert [r[1] for r in conn.execute(f"PRAGMA table_info({table})")] == columns
    names = [r[0] for r in conn.execute("SELECT name FROM schema_migrations ORDER BY name")]
    assert names == [name for name, _ in MIGRATIONS]


def test_migrations_are_applied_once(tmp_path: Path) -> None:
    conn = sqlite3.connect(tmp_path / "m.db")
    assert migrate(conn) == [name for name, _ in MIGRATIONS]
    assert migrate(conn) == []


def test_save_and_read_back(tmp_path: Path) -> None:
    db = tmp_path / "home" / "results.db"
    with ResultStore(db) as store:
        store.save_run(
            _run(),
            [{"system": "lexical", "status": "ok", "spec": {"reference": {}}, "metrics": {}}],
            [
                {
                    "system": "lexical",
                    "query_id": "q2",
                    "category": "c",
                    "intent": None,
                    "metrics": {"RR@10": 0.5},
                    "hits": ["a", "b"],
                    "latency_ms": {"total": 1.0},
                },
                {
                    "system": "lexical",
                    "query_id": "q1",
                    "category": None,
                    "intent": "i",
                    "metrics": {"RR@10": None},
                    "hits": [],
                    "error": "boom",
                },
            ],
        )
    # a new connection sees it: the data is on disk
    with ResultStore(db) as store:
        assert [r["run_id"] for r in store.list_runs()] == ["r1"]
        assert store.run_json("r1") == '{"x": 1}'
        assert store.run_json("nope") is None
        rows = store.query_results("r1", "lexical")
        assert [r["query_id"] for r in rows] == ["q1", "q2"]
        assert rows[0]["error"] == "boom"
        assert rows[0]["metrics"] == {"RR@10": None}
        assert rows[1]["hits"] == ["a", "b"]
        assert rows[1]["latency_ms"] == {"total": 1.0}


def test_resaving_a_run_replaces_it_whole(tmp_path: Path) -> None:
    with ResultStore(tmp_path / "r.db") as store:
        sys_row = {"system": "s", "status": "ok", "spec": {}, "metrics": {}}
        q = {"system": "s", "query_id": "q1", "metrics": {}, "hits": []}
        store.save_run(_run(), [sys_row], [q, {**q, "query_id": "q2"}])
        store.save_run(_run(), [sys_row], [q])
        assert len(store.query_results("r1", "s")) == 1


def test_a_failed_save_writes_nothing(tmp_path: Path) -> None:
    with ResultStore(tmp_path / "r.db") as store:
        sys_row = {"system": "s", "status": "ok", "spec": {}, "metrics": {}}
        bad_query = {"system": "s", "query_id": "q1", "metrics": {}}  # no "hits"
        with pytest.raises(KeyError):
            store.save_run(_run(), [sys_row], [bad_query])
        assert store.list_runs() == []
