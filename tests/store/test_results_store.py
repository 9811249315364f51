"""The results store: named migrations, the final schema, and round trips on a real SQLite file."""

from __future__ import annotations

import json
import math
import sqlite3
from pathlib import Path

import pytest
from tests.helpers import revisions_after

from memgauge.data.records import Failure, ItemRecord, RunPlan, RunRecord, RunSummary, ScoreRecord
from memgauge.errors import UsageError
from memgauge.store.engine import open_engine, upgrade
from memgauge.store.migrations import MIGRATIONS, migrate
from memgauge.store.suite_runs import SuiteRunStore
from memgauge.store.url import HEAD, store_url

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
        "fallback_triggered",
        "fallback_reason",
        "degraded_mode",
        "stage_trace",
        "harvested_at",
        "token_usage_ratio",
        "pressure_level",
        "avg_relevance_score",
        "top_result_score",
        "boost_impact_delta",
        "dedup_tokens_saved",
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
    "eval_sessions": ["session_id", "turns", "started_at", "ended_at", "updated_at", "metadata"],
    "eval_outcomes": [
        "id",
        "session_id",
        "task_id",
        "success",
        "score",
        "knowledge_delta",
        "uncertainty_reduction",
        "learning_index",
        "spec_folder",
        "metadata",
        "created_at",
    ],
    "eval_agent_outputs": ["id", "session_id", "query_id", "text", "created_at"],
    "eval_results": [
        "id",
        "run_id",
        "run_type",
        "feature_id",
        "system",
        "mrr_at_5",
        "mrr_at_10",
        "ndcg_at_5",
        "ndcg_at_10",
        "ndcg_at_20",
        "recall_at_5",
        "recall_at_10",
        "constitutional_surfacing_rate",
        "importance_weighted_recall",
        "cold_start_mrr",
        "session_personalization_lift",
        "causal_chain_completeness",
        "avg_latency_ms",
        "channel_contribution_json",
        "result_diversity_score",
        "query_count",
        "confidence_interval_lower",
        "confidence_interval_upper",
        "control_run_id",
        "control_system",
        "mrr_delta",
        "ndcg_delta",
        "p_value",
        "is_significant",
        "created_at",
        "per_query_results",
    ],
    "eval_ab_tests": [
        "id",
        "feature_id",
        "status",
        "log_likelihood_ratio",
        "upper_bound",
        "lower_bound",
        "sample_count",
        "control_mrr_sum",
        "treatment_mrr_sum",
        "control_ndcg_sum",
        "treatment_ndcg_sum",
        "min_samples",
        "graduation_threshold",
        "started_at",
        "updated_at",
        "graduated_at",
        "metric",
        "config_json",
        "state_json",
    ],
    "eval_ab_test_pairs": [
        "feature_id",
        "seq",
        "query_id",
        "control",
        "treatment",
        "control_latency_ms",
        "treatment_latency_ms",
        "constitutional_delta",
        "shadow_run_id",
        "pair_key",
    ],
    "eval_shadow_runs": [
        "id",
        "query_id",
        "feature_id",
        "control_result_ids",
        "treatment_result_ids",
        "rank_correlation",
        "set_overlap",
        "top_result_changed",
        "order_differences",
        "mrr_delta",
        "ndcg_delta",
        "control_latency_ms",
        "treatment_latency_ms",
        "created_at",
        "spearman_rho",
        "classification",
        "error",
        "intent",
        "session_id",
        "log_level",
        "query_text",
        "control_mrr",
        "treatment_mrr",
        "control_ndcg",
        "treatment_ndcg",
    ],
    "eval_shadow_drops": ["feature_id", "dropped", "updated_at"],
    "review_labels": [
        "id",
        "run_id",
        "subject",
        "task",
        "item_id",
        "kind",
        "target",
        "reviewer",
        "grade",
        "label",
        "machine",
        "note",
        "created_at",
    ],
    "eval_flags": [
        "feature_id",
        "rollout_percent",
        "shadow_enabled",
        "shadow_percent",
        "min_samples",
        "graduation_threshold",
        "feed_ab",
        "created_at",
        "updated_at",
    ],
    "alembic_version": ["version_num"],
    "optimization_studies": [
        "study_id",
        "suite_name",
        "suite_path",
        "task",
        "measure",
        "subject",
        "strategy",
        "status",
        "stopped_because",
        "config_json",
        "best_step",
        "best_candidate",
        "holdout_json",
        "usage_json",
        "pid",
        "pid_start",
        "host",
        "created_at",
        "updated_at",
        "finished_at",
    ],
    "optimization_iterations": [
        "study_id",
        "phase",
        "step",
        "candidate",
        "target",
        "status",
        "params_json",
        "texts_json",
        "run_id",
        "score",
        "ci_low",
        "ci_high",
        "delta",
        "delta_ci_low",
        "delta_ci_high",
        "baseline_delta",
        "baseline_delta_ci_low",
        "baseline_delta_ci_high",
        "accepted",
        "values_json",
        "note",
        "reason",
        "started_at",
        "finished_at",
        "seconds",
        "constraint_value",
    ],
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
        "pid_start",
        "owner",
        "kind",
        "gate",
        "headline_json",
    ],
    "suite_run_queries": ["run_id", "task", "subject", "query_id", "detail_json"],
    "suite_run_search": ["run_id", "subject", "task", "item_id", "doc"],
    "suite_run_compared": ["run_id", "baseline_id", "state_key", "payload_json"],
    "suite_run_setups": ["run_id", "subject", "task", "corpus", "seconds", "at"],
    "suite_run_values": ["run_id", "subject", "task", "evaluator", "item_ids_json", "values_f8"],
    "suite_run_subjects": ["run_id", "subject", "spec_json"],
    "suite_run_usage": [
        "run_id",
        "model",
        "calls",
        "cached",
        "requests",
        "failures",
        "prompt_tokens",
        "completion_tokens",
    ],
    "suite_run_tasks": [
        "run_id",
        "task",
        "kind",
        "dataset",
        "dataset_sha256",
        "spec_json",
        "n_items",
        "seq",
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
        "repeat_index",
        "verdicts_digest",
    ],
    "suite_run_outputs": [
        "run_id",
        "subject",
        "task",
        "item_id",
        "output_json",
        "latency_json",
        "extra_json",
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
        "raw_reply",
        "seq",
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
    "traces": [
        "trace_id",
        "format",
        "source",
        "session_id",
        "root_span_id",
        "root_name",
        "start_ns",
        "end_ns",
        "answer",
        "error",
        "n_spans",
        "n_retrievals",
        "n_tool_calls",
        "n_llm_calls",
        "prompt_tokens",
        "completion_tokens",
        "total_tokens",
        "imported_at",
    ],
    "trace_spans": [
        "trace_id",
        "span_id",
        "seq",
        "parent_id",
        "kind",
        "name",
        "session_id",
        "start_ns",
        "end_ns",
        "line",
        "error",
        "input_json",
        "output_json",
        "tags_json",
        "query",
        "hits_json",
        "latency_ms",
        "tool_name",
        "tool_args_json",
        "tool_result_json",
        "tool_error",
        "model",
        "prompt_tokens",
        "completion_tokens",
        "total_tokens",
        "llm_output",
        "llm_error",
    ],
}


def _run(run_id: str = "r1") -> RunRecord:
    return RunRecord(
        run_id=run_id,
        suite_name="demo",
        kind="evaluate",
        suite_sha256="ab" * 32,
        suite={"name": "demo"},
        settings={"seed": 0},
        provenance={"memgauge_version": "0.1.0"},
    )


def test_final_schema_is_exactly_the_migrated_one(tmp_path: Path) -> None:
    SuiteRunStore(tmp_path / "r.db").close()
    conn = sqlite3.connect(tmp_path / "r.db")
    tables = {
        r[0]
        for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")
        if not r[0].startswith("sqlite_")
    }
    assert tables == set(EXPECTED_SCHEMA)
    for table, columns in EXPECTED_SCHEMA.items():
        assert [r[1] for r in conn.execute(f"PRAGMA table_info({table})")] == columns
    assert conn.execute("SELECT version_num FROM alembic_version").fetchall() == [(HEAD,)]


def test_migrations_are_applied_once(tmp_path: Path) -> None:
    url = store_url(tmp_path / "m.db")
    engine = open_engine(url)
    try:
        assert upgrade(engine, url) == revisions_after("0008")
        assert upgrade(engine, url) == []
    finally:
        engine.dispose()


def test_the_frozen_sqlite_migrations_are_applied_once(tmp_path: Path) -> None:
    conn = sqlite3.connect(tmp_path / "m.db")
    assert migrate(conn) == [name for name, _ in MIGRATIONS]
    assert migrate(conn) == []


def _items() -> list[ItemRecord]:
    return [
        ItemRecord(subject="lexical", task="t", item_id="q1", seq=0, input={"text": "one"}),
        ItemRecord(subject="lexical", task="t", item_id="q2", seq=1, input={"text": "two"}),
    ]


def test_typed_records_round_trip(tmp_path: Path) -> None:
    db = tmp_path / "home" / "results.db"
    with SuiteRunStore(db) as store:
        store.create_run(_run(), RunPlan({"lexical": {"reference": {}}}, [], _items()))
        done = ItemRecord(
            subject="lexical",
            task="t",
            item_id="q2",
            status="completed",
            output=[{"id": "a", "rank": 1}],
            latency_ms={"total": 1.0},
            extra={"without_session": ["b"]},
            scores=[
                ScoreRecord(evaluator="judge", value=0.5, reason="half", raw_reply='{"s": 50}'),
                ScoreRecord(evaluator="neutral", value=0.5, fallback=True),
            ],
            attempts=1,
        )
        failed = ItemRecord(
            subject="lexical",
            task="t",
            item_id="q1",
            status="failed",
            failures=[Failure(stage="subject", kind="RuntimeError", message="boom")],
            attempts=1,
        )
        store.record_items("r1", [done, failed])
        store.set_summary("r1", RunSummary(n_items=2, n_completed=1, n_failed=1))
    # a new connection sees it: the data is on disk, and comes back typed
    with SuiteRunStore(db) as store:
        run = store.get_run("r1")
        assert run is not None
        assert (run.kind, run.summary) == (
            "evaluate",
            RunSummary(n_items=2, n_completed=1, n_failed=1),
        )
        q1, q2 = store.item_records("r1")
        assert (q1.status, q1.failures[0].message, q1.input) == ("failed", "boom", {"text": "one"})
        assert q2.output == [{"id": "a", "rank": 1}]
        assert q2.extra == {"without_session": ["b"]}
        assert q2.scores[0].raw_reply == '{"s": 50}'
        assert q2.scores[1].fallback is True
        assert q2.verdict("judge") == done.scores[0]


def test_a_batchs_verdicts_are_stored_as_given_each_reason_redacted(tmp_path: Path) -> None:
    """Items of one batch sharing reasons (each distinct text redacted once): every row's
    reason and error are redacted, and a verdict's detail is stored as JSON whether empty,
    empty with the fallback flag, or not."""
    db = tmp_path / "results.db"
    leak = "Authorization: Bearer abc.DEF-123_x"

    def verdicts(i: int) -> list[ScoreRecord]:
        return [
            ScoreRecord(evaluator="rr", value=i / 2, reason=f"RR@5 = {i / 2:.3f}"),
            ScoreRecord(evaluator="judge", value=0.0, reason=leak, error=leak),
            ScoreRecord(evaluator="neutral", value=0.5, reason=leak, fallback=True),
            ScoreRecord(evaluator="ndcg", value=1.0, reason="", detail={"k": 5, "ids": ["a"]}),
        ]

    done = [
        ItemRecord(
            subject="lexical",
            task="t",
            item_id=f"q{i + 1}",
            status="completed",
            output=[],
            scores=verdicts(i),
        )
        for i in range(2)
    ]
    with SuiteRunStore(db) as store:
        store.create_run(_run(), RunPlan({"lexical": {"reference": {}}}, [], _items()))
        store.record_items("r1", done)
    with sqlite3.connect(db) as conn:
        rows = conn.execute(
            "SELECT item_id, evaluator, reason, error, detail_json FROM suite_run_scores"
            " ORDER BY item_id, seq"
        ).fetchall()
    hidden = "Authorization: [REDACTED]"
    assert rows == [
        (f"q{i + 1}", *rest)
        for i in range(2)
        for rest in [
            ("rr", f"RR@5 = {i / 2:.3f}", None, "{}"),
            ("judge", hidden, hidden, "{}"),
            ("neutral", hidden, None, '{"fallback":true}'),
            ("ndcg", "", None, '{"k":5,"ids":["a"]}'),
        ]
    ]
    with SuiteRunStore(db) as store:
        for i, got in enumerate(store.item_records("r1")):
            assert [v.detail for v in got.scores] == [{}, {}, {}, {"k": 5, "ids": ["a"]}]
            assert [v.fallback for v in got.scores] == [False, False, True, False]
            assert got.scores[0].reason == f"RR@5 = {i / 2:.3f}"


def test_large_outputs_and_summaries_are_stored_deflated_and_read_back_equal(
    tmp_path: Path,
) -> None:
    db = tmp_path / "results.db"
    hits = [
        {"id": f"conv-26:D{i}:3", "score": i / 7, "channel_ranks": {"lexical": i}}
        for i in range(50)
    ]
    summary = RunSummary(n_items=2, n_completed=1, n_failed=1, llm_usage={"m": "x" * 2000})
    with SuiteRunStore(db) as store:
        store.create_run(_run(), RunPlan({"lexical": {"reference": {}}}, [], _items()))
        done = ItemRecord(
            subject="lexical", task="t", item_id="q2", status="completed", output=hits
        )
        store.record_items("r1", [done])
        store.set_summary("r1", summary)
    with sqlite3.connect(db) as conn:
        (kind,) = conn.execute("SELECT typeof(output_json) FROM suite_run_outputs").fetchone()
        (summary_kind,) = conn.execute("SELECT typeof(summary_json) FROM suite_runs").fetchone()
    assert (kind, summary_kind) == ("blob", "blob")
    with SuiteRunStore(db) as store:
        run = store.get_run("r1")
        assert run is not None
        assert run.summary == summary
        assert store.item_records("r1")[1].output == hits


SEED_002 = next(
    (Path(__file__).resolve().parents[2].parent / "shared" / "seeds").glob("002_*.txt"), None
)


@pytest.mark.skipif(SEED_002 is None, reason="../shared/seeds/002_*.txt is not here")
def test_seed_002_tables_have_every_column_of_section_6_1(tmp_path: Path) -> None:
    """The six tables of seed 002's schema exist under its names with all its columns (ours
    add some: which system, the A/B config and state, Spearman rho, errors)."""
    assert SEED_002 is not None
    text = SEED_002.read_text(encoding="utf-8")
    sql = text[text.index("### 6.1") :]
    sql = sql[sql.index("```sql") + 6 : sql.index("```", sql.index("```sql") + 6)]
    seed = sqlite3.connect(":memory:")
    seed.executescript(sql)
    ours = sqlite3.connect(":memory:")
    migrate(ours)
    tables = [
        r[0]
        for r in seed.execute("SELECT name FROM sqlite_master WHERE type='table'")
        if not r[0].startswith("sqlite_")
    ]
    assert sorted(tables) == sorted(
        [
            "eval_queries",
            "eval_judgments",
            "eval_results",
            "eval_feedback",
            "eval_ab_tests",
            "eval_shadow_runs",
        ]
    )
    for table in tables:
        wanted = [r[1] for r in seed.execute(f"PRAGMA table_info({table})")]
        have = [r[1] for r in ours.execute(f"PRAGMA table_info({table})")]
        assert [c for c in have if c in wanted] == wanted, table  # all of them, in its order


def test_upgrade_from_0005_moves_ab_tests_and_shadow_runs_and_backfills_eval_results(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memgauge.store import migrations

    db = tmp_path / "old.db"
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA foreign_keys = ON")
    monkeypatch.setattr(migrations, "MIGRATIONS", MIGRATIONS[:5])
    migrations.migrate(conn)
    monkeypatch.undo()
    result = {
        "run_id": "r1",
        "created_at": "2026-11-01T00:00:00Z",
        "settings": {"alpha": 0.05},
        "systems": [
            {
                "name": "lexical",
                "status": "ok",
                "metrics": {"nDCG@10": {"value": 0.5, "ci_low": 0.4, "ci_high": 0.6}},
                "agent_metrics": {},
                "counts": {"n_scored": 3},
                "per_query": [],
            },
            {"name": "broken", "status": "failed", "metrics": {}},
        ],
        "comparisons": [],
    }
    conn.execute(
        "INSERT INTO runs VALUES ('r1', 'retrieval', '2026-11-01', '0.1.0', 'd', NULL, '{}', ?, 1)",
        (json.dumps(result),),
    )
    state = {"n": 3, "total": 0.3, "total_sq": 0.05, "decision": "no_difference", "log_lr": -2.0}
    config = {"delta": 0.03, "alpha": 0.05, "beta": 0.2, "min_samples": 100, "improvement": 0.03}
    conn.execute(
        "INSERT INTO ab_tests VALUES ('t', 'decided', 'nDCG@10', ?, ?, '2026-11-01', '2026-11-02')",
        (json.dumps(config), json.dumps(state)),
    )
    conn.executemany(
        "INSERT INTO ab_test_pairs VALUES ('t', ?, ?, ?, ?, 1.0, 2.0, 0.0)",
        [(1, "q1", 0.5, 0.6), (2, "q2", 0.4, 0.4)],
    )
    row = {"query_id": "q1", "control": ["a", "b"], "treatment": ["b", "a"], "kendall_tau_b": -1.0}
    conn.execute(
        "INSERT INTO shadow_runs (experiment, query_id, created_at, classification, error,"
        " row_json) VALUES ('e', 'q1', '2026-11-01', 'incompatible', NULL, ?)",
        (json.dumps({**row, "jaccard": 1.0, "top1_changed": True, "spearman_rho": -1.0}),),
    )
    conn.execute(
        "INSERT INTO shadow_runs (experiment, query_id, created_at, classification, error,"
        " row_json) VALUES ('e', 'q2', '2026-11-01', NULL, 'TimeoutError: slow', ?)",
        (json.dumps({"query_id": "q2", "error": "TimeoutError: slow"}),),
    )
    conn.commit()
    assert migrate(conn) == [name for name, _ in MIGRATIONS[5:]]
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert not tables & {"ab_tests", "ab_test_pairs", "shadow_runs", "runs", "run_systems"}
    (er,) = conn.execute(
        "SELECT system, ndcg_at_10, mrr_at_10, query_count, confidence_interval_upper"
        " FROM eval_results"
    ).fetchall()
    assert er == ("lexical", 0.5, None, 3, 0.6)  # the failed system has no row
    ab = conn.execute(
        "SELECT status, sample_count, log_likelihood_ratio, upper_bound, lower_bound,"
        " control_ndcg_sum, treatment_ndcg_sum, control_mrr_sum, min_samples FROM eval_ab_tests"
    ).fetchone()
    assert ab[:3] == ("rejected", 2, -2.0)
    assert ab[3:5] == pytest.approx((math.log(20), math.log(0.2)))
    assert ab[5:7] == pytest.approx((0.9, 1.0))  # an nDCG test keeps the nDCG sums
    assert ab[7:] == (None, 100)
    pairs = conn.execute("SELECT seq, query_id, treatment FROM eval_ab_test_pairs").fetchall()
    assert pairs == [(1, "q1", 0.6), (2, "q2", 0.4)]
    shadow = conn.execute(
        "SELECT query_id, feature_id, control_result_ids, treatment_result_ids,"
        " rank_correlation, set_overlap, top_result_changed, spearman_rho, classification, error"
        " FROM eval_shadow_runs ORDER BY id"
    ).fetchall()
    assert shadow == [
        ("q1", "e", '["a", "b"]', '["b", "a"]', -1.0, 1.0, 1, -1.0, "incompatible", None),
        ("q2", "e", "[]", None, None, None, None, None, None, "TimeoutError: slow"),
    ]


def test_upgrade_to_0008_keeps_the_llm_spend_runs_summed_into_their_summaries(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memgauge.store import migrations

    db = tmp_path / "old.db"
    conn = sqlite3.connect(db)
    monkeypatch.setattr(migrations, "MIGRATIONS", MIGRATIONS[:7])
    migrations.migrate(conn)
    monkeypatch.undo()
    usage = {"m": {"calls": 3, "cached": 1, "requests": 4, "failures": 0, "prompt_tokens": 30}}
    conn.execute(
        "INSERT INTO suite_runs (run_id, suite_name, status, created_at, suite_sha256,"
        " suite_json, settings_json, provenance_json, n_items, summary_json)"
        " VALUES ('s1', 'x', 'cancelled', '2026-11-01', 'ab', '{}', '{}', '{}', 3, ?)",
        (json.dumps({"n_items": 3, "llm_usage": {**usage, "n": {"calls": 1, "cost_usd": None}}}),),
    )
    conn.commit()
    assert migrate(conn) == [
        "0008_suite_run_usage",
        "0009_one_spine",
    ]
    conn.close()
    with SuiteRunStore(db) as store:
        assert store.usage("s1") == {
            "m": {**usage["m"], "completion_tokens": 0},
            "n": {
                "calls": 1,
                "cached": 0,
                "requests": 0,
                "failures": 0,
                "prompt_tokens": 0,
                "completion_tokens": 0,
            },
        }
        # the spend of the next attempts adds to it
        store.record_usage("s1", "m", {"requests": 2, "calls": 1})
        assert (store.usage("s1")["m"]["requests"], store.usage("s1")["m"]["calls"]) == (6, 4)


def test_upgrade_to_0009_turns_evaluate_runs_into_suite_runs_stored_once(tmp_path: Path) -> None:
    from memgauge.store import migrations

    db = tmp_path / "old.db"
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA foreign_keys = ON")
    real = migrations.MIGRATIONS
    migrations.MIGRATIONS = real[:8]
    try:
        migrations.migrate(conn)
    finally:
        migrations.MIGRATIONS = real
    result = {
        "run_id": "r1",
        "created_at": "2026-11-01T00:00:00+00:00",
        "memgauge_version": "0.1.0",
        "dataset": {"name": "demo", "sha256": "cd" * 32, "source": "data/demo"},
        "settings": {"measures": ["RR@10", "nDCG@10"], "k": 20, "alpha": 0.05, "seed": 0},
        "systems": [
            {
                "name": name,
                "status": "ok",
                "spec": {"reference": {"mode": name}},
                "metrics": {
                    "nDCG@10": {
                        "value": v,
                        "ci_low": v - 0.1,
                        "ci_high": v + 0.1,
                        "n_scored": 2,
                        "n_failed": 1,
                    }
                },
                "agent_metrics": {},
                "counts": {"n_scored": 2},
                "per_query": [
                    {"query_id": "q1", "text": "a", "metrics": {"nDCG@10": v}, "hits": ["m1"]},
                    {"query_id": "q2", "text": "b", "metrics": {"nDCG@10": v}, "hits": ["m2"]},
                    {
                        "query_id": "q3",
                        "text": "c",
                        "metrics": {"nDCG@10": None},
                        "hits": [],
                        "error": "RuntimeError: boom",
                    },
                ],
            }
            for name, v in (("lexical", 0.5), ("hybrid", 0.7))
        ],
        "comparisons": [
            {
                "baseline": "lexical",
                "candidate": "hybrid",
                "test": "randomization",
                "metrics": [
                    {
                        "measure": "nDCG@10",
                        "mean_a": 0.5,
                        "mean_b": 0.7,
                        "delta": 0.2,
                        "p_value": 0.02,
                        "p_holm": 0.04,
                        "n": 2,
                    }
                ],
            }
        ],
    }
    conn.execute(
        "INSERT INTO runs VALUES ('r1', 'retrieval', '2026-11-01T00:00:00+00:00', '0.1.0', 'demo',"
        " NULL, '{}', ?, 1)",
        (json.dumps(result),),
    )
    conn.commit()
    assert migrate(conn) == ["0009_one_spine"]
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert not tables & {"runs", "run_systems", "query_results"}
    (p, significant) = conn.execute(
        "SELECT p_value, is_significant FROM eval_results WHERE system = 'hybrid'"
    ).fetchone()
    assert (p, significant) == (0.04, 1)  # the Holm-corrected p the report shows
    conn.close()
    with SuiteRunStore(db) as store:
        run = store.get_run("r1")
        assert run is not None
        assert run.summary is not None
        assert (run.kind, run.status, run.suite_name) == ("evaluate", "completed", "evaluate:demo")
        agg = run.summary.aggregate("ir")
        assert agg is not None
        assert {(m.subject, m.name, m.value) for m in agg.measures} == {
            ("lexical", "nDCG@10", 0.5),
            ("hybrid", "nDCG@10", 0.7),
        }
        items = store.item_records("r1")
        assert len(items) == 6
        failed = [it for it in items if it.status == "failed"]
        assert [(it.subject, it.item_id) for it in failed] == [("hybrid", "q3"), ("lexical", "q3")]
        q1 = next(it for it in items if (it.subject, it.item_id) == ("lexical", "q1"))
        assert q1.output == [{"id": "m1", "rank": 1}]
        assert q1.verdict("nDCG@10") is not None


def test_a_store_object_given_for_where_the_store_is_is_refused_creating_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The README's `Flags(store)` read naturally as a store object: `Flags(ShadowStore())`
    said "no results store at <memgauge.store.shadow.ShadowStore object at 0x...>", and a
    writer given one (`ShadowStore(ShadowStore())`, `QueryLog(...)`) created a SQLite file of
    that name in the working directory. Only where a store is (a path, a URL, None) is taken."""
    from memgauge.online.flags import Flags
    from memgauge.online.querylog import QueryLog
    from memgauge.store.shadow import ShadowStore

    monkeypatch.setenv("MEMGAUGE_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("MEMGAUGE_STORE", raising=False)
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    store = ShadowStore()
    try:
        for given in (lambda: ShadowStore(store), lambda: QueryLog(store), lambda: Flags(store)):
            with pytest.raises(UsageError, match="not a ShadowStore object"):
                given()
    finally:
        store.close()
    assert list(work.iterdir()) == []
