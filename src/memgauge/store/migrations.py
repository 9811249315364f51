"""The hand-run SQLite migrations of the results store, 0001 to 0009, frozen.

The store's history continues in Alembic (`store/revisions`, one history for SQLite and
PostgreSQL), whose first revision creates the schema as of 0009. These stay to bring a SQLite
store made before Alembic up to 0009, which `memgauge.store.engine.upgrade` then stamps and
upgrades in place. Never edit or add one here: add an Alembic revision.

A store made by the memgauge that ran two more here (0010_suite_run_gate, 0011_optimization_history,
now Alembic's 0011 and 0012) has them recorded in `schema_migrations`: they are not in this
list, so nothing here runs again, and the Alembic revisions find their column and tables there
and keep them.
"""

from __future__ import annotations

import json
import math
import sqlite3
from collections.abc import Callable
from datetime import UTC, datetime
from textwrap import indent

from memgauge.store.seed_rows import insert_eval_results, insert_shadow_row, metric_family
from memgauge.store.spine_migration import one_spine

__all__ = ["MIGRATIONS", "migrate"]

#: a migration is SQL (statements separated by ";") or a function of the connection, run inside
#: the migration's transaction
Step = str | Callable[[sqlite3.Connection], None]

#: an A/B test pair's own columns, 0003's `ab_test_pairs` and 0006's `eval_ab_test_pairs` alike
#: (0009 copies them from the one to the other)
_PAIR_COLUMNS = """    seq INTEGER NOT NULL,
    query_id TEXT,
    control REAL NOT NULL,
    treatment REAL NOT NULL,
    control_latency_ms REAL,
    treatment_latency_ms REAL,
    constitutional_delta REAL,
"""

MIGRATIONS: list[tuple[str, Step]] = [
    (
        "0001_runs",
        """
        CREATE TABLE runs (
            run_id TEXT PRIMARY KEY,
            kind TEXT NOT NULL,
            created_at TEXT NOT NULL,
            memgauge_version TEXT NOT NULL,
            dataset_name TEXT NOT NULL,
            dataset_sha256 TEXT,
            settings_json TEXT NOT NULL,
            result_json TEXT NOT NULL,
            duration_seconds REAL
        );
        CREATE INDEX idx_runs_created ON runs(created_at);
        CREATE TABLE run_systems (
            run_id TEXT NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,
            system TEXT NOT NULL,
            status TEXT NOT NULL,
            reason TEXT,
            spec_json TEXT NOT NULL,
            metrics_json TEXT NOT NULL,
            PRIMARY KEY (run_id, system)
        );
        CREATE TABLE query_results (
            run_id TEXT NOT NULL,
            system TEXT NOT NULL,
            query_id TEXT NOT NULL,
            category TEXT,
            intent TEXT,
            metrics_json TEXT NOT NULL,
            hits_json TEXT NOT NULL,
            latency_json TEXT NOT NULL,
            error TEXT,
            PRIMARY KEY (run_id, system, query_id),
            FOREIGN KEY (run_id, system) REFERENCES run_systems(run_id, system) ON DELETE CASCADE
        );
        """,
    ),
    (
        "0002_suite_runs",
        """
        CREATE TABLE suite_runs (
            run_id TEXT PRIMARY KEY,
            suite_name TEXT NOT NULL,
            status TEXT NOT NULL
                CHECK (status IN ('queued', 'running', 'completed', 'failed', 'cancelled')),
            reason TEXT,
            created_at TEXT NOT NULL,
            started_at TEXT,
            finished_at TEXT,
            heartbeat_at TEXT,
            pid INTEGER,
            host TEXT,
            suite_sha256 TEXT NOT NULL,
            suite_json TEXT NOT NULL,
            suite_path TEXT,
            settings_json TEXT NOT NULL,
            provenance_json TEXT NOT NULL,
            n_items INTEGER NOT NULL,
            summary_json TEXT
        );
        CREATE INDEX idx_suite_runs_suite ON suite_runs(suite_name, created_at);
        CREATE TABLE suite_run_subjects (
            run_id TEXT NOT NULL REFERENCES suite_runs(run_id) ON DELETE CASCADE,
            subject TEXT NOT NULL,
            spec_json TEXT NOT NULL,
            PRIMARY KEY (run_id, subject)
        );
        CREATE TABLE suite_run_tasks (
            run_id TEXT NOT NULL REFERENCES suite_runs(run_id) ON DELETE CASCADE,
            task TEXT NOT NULL,
            kind TEXT NOT NULL,
            dataset TEXT,
            dataset_sha256 TEXT,
            spec_json TEXT NOT NULL,
            n_items INTEGER NOT NULL,
            PRIMARY KEY (run_id, task)
        );
        CREATE TABLE suite_run_items (
            run_id TEXT NOT NULL REFERENCES suite_runs(run_id) ON DELETE CASCADE,
            subject TEXT NOT NULL,
            task TEXT NOT NULL,
            item_id TEXT NOT NULL,
            seq INTEGER NOT NULL,
            status TEXT NOT NULL
                CHECK (status IN ('queued', 'running', 'completed', 'failed', 'cancelled')),
            attempts INTEGER NOT NULL DEFAULT 0,
            category TEXT,
            input_json TEXT NOT NULL,
            expected_json TEXT NOT NULL,
            score REAL,
            started_at TEXT,
            finished_at TEXT,
            duration_ms REAL,
            PRIMARY KEY (run_id, subject, task, item_id)
        );
        CREATE INDEX idx_suite_run_items_status ON suite_run_items(run_id, status);
        CREATE TABLE suite_run_outputs (
            run_id TEXT NOT NULL,
            subject TEXT NOT NULL,
            task TEXT NOT NULL,
            item_id TEXT NOT NULL,
            output_json TEXT NOT NULL,
            latency_json TEXT NOT NULL,
            PRIMARY KEY (run_id, subject, task, item_id),
            FOREIGN KEY (run_id, subject, task, item_id)
                REFERENCES suite_run_items(run_id, subject, task, item_id) ON DELETE CASCADE
        );
        CREATE TABLE suite_run_scores (
            run_id TEXT NOT NULL,
            subject TEXT NOT NULL,
            task TEXT NOT NULL,
            item_id TEXT NOT NULL,
            evaluator TEXT NOT NULL,
            value REAL,
            passed INTEGER,
            reason TEXT NOT NULL,
            error TEXT,
            detail_json TEXT NOT NULL,
            PRIMARY KEY (run_id, subject, task, item_id, evaluator),
            FOREIGN KEY (run_id, subject, task, item_id)
                REFERENCES suite_run_items(run_id, subject, task, item_id) ON DELETE CASCADE
        );
        CREATE TABLE suite_run_failures (
            failure_id INTEGER PRIMARY KEY AUTOINCREMENT,
            run_id TEXT NOT NULL REFERENCES suite_runs(run_id) ON DELETE CASCADE,
            subject TEXT NOT NULL,
            task TEXT NOT NULL,
            item_id TEXT,
            stage TEXT NOT NULL,
            kind TEXT NOT NULL,
            message TEXT NOT NULL,
            attempt INTEGER NOT NULL,
            at TEXT NOT NULL
        );
        CREATE INDEX idx_suite_run_failures_run ON suite_run_failures(run_id, subject, task);
        """,
    ),
    (
        "0003_ab_tests",
        """
        CREATE TABLE ab_tests (
            name TEXT PRIMARY KEY,
            status TEXT NOT NULL,
            metric TEXT NOT NULL,
            config_json TEXT NOT NULL,
            state_json TEXT NOT NULL,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL
        );
        CREATE TABLE ab_test_pairs (
            name TEXT NOT NULL REFERENCES ab_tests(name) ON DELETE CASCADE,
"""
        + indent(_PAIR_COLUMNS, " " * 8)
        + """            PRIMARY KEY (name, seq)
        )
        """,
    ),
    (
        "0004_shadow_runs",
        """
        CREATE TABLE shadow_runs (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            experiment TEXT NOT NULL,
            query_id TEXT NOT NULL,
            created_at TEXT NOT NULL,
            classification TEXT,
            error TEXT,
            row_json TEXT NOT NULL
        );
        CREATE INDEX idx_shadow_runs_experiment ON shadow_runs(experiment, created_at)
        """,
    ),
    (
        "0005_eval_logging",
        """
        CREATE TABLE eval_queries (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            query_id TEXT NOT NULL UNIQUE,
            query TEXT NOT NULL,
            intent TEXT,
            mode TEXT,
            session_id TEXT,
            tool_name TEXT NOT NULL,
            result_ids TEXT NOT NULL DEFAULT '[]',
            result_count INTEGER NOT NULL DEFAULT 0,
            channel_contributions TEXT DEFAULT '{}',
            total_latency_ms REAL,
            fusion_weights TEXT,
            quality_proxy_score REAL,
            trace_id TEXT,
            created_at TEXT NOT NULL,
            is_eval_corpus INTEGER NOT NULL DEFAULT 0,
            eval_category TEXT
        );
        CREATE INDEX idx_eval_queries_session ON eval_queries(session_id);
        CREATE INDEX idx_eval_queries_created ON eval_queries(created_at);
        CREATE TABLE eval_judgments (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            query_id TEXT NOT NULL,
            memory_id TEXT NOT NULL,
            relevance INTEGER NOT NULL CHECK(relevance BETWEEN 0 AND 3),
            source TEXT NOT NULL CHECK(source IN ('manual', 'implicit', 'bootstrapped', 'validated')),
            annotator TEXT,
            confidence REAL DEFAULT 1.0,
            created_at TEXT NOT NULL,
            UNIQUE(query_id, memory_id, source)
        );
        CREATE TABLE eval_feedback (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            event_type TEXT NOT NULL CHECK(event_type IN ('read_after_search', 're_search',
                'scroll_past', 'reference', 'validate_useful', 'validate_not_useful')),
            session_id TEXT NOT NULL,
            query_id TEXT,
            memory_id TEXT,
            rank_in_results INTEGER,
            metadata TEXT DEFAULT '{}',
            created_at TEXT NOT NULL
        );
        CREATE INDEX idx_eval_feedback_query ON eval_feedback(query_id);
        CREATE TABLE memory_confidence (
            memory_id TEXT PRIMARY KEY,
            confidence REAL NOT NULL,
            validations INTEGER NOT NULL,
            updated_at TEXT NOT NULL
        )
        """,
    ),
    ("0006_seed_tables", lambda conn: _seed_tables(conn)),
    (
        # one process drives a run at a time: `owner` is the driving attempt's token (compared
        # and swapped under the write lock on takeover), `pid_start` tells a live owner from a
        # process that got its pid later; both NULL once the run ends
        "0007_suite_run_owner",
        """
        ALTER TABLE suite_runs ADD COLUMN pid_start TEXT;
        ALTER TABLE suite_runs ADD COLUMN owner TEXT
        """,
    ),
    ("0008_suite_run_usage", lambda conn: _suite_run_usage(conn)),
    ("0009_one_spine", lambda conn: one_spine(conn)),
]


_SEED_TABLES = (
    """
CREATE TABLE eval_results (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id TEXT NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,
    run_type TEXT NOT NULL CHECK(run_type IN ('full', 'shadow', 'regression', 'ab_test')),
    feature_id TEXT,
    system TEXT NOT NULL,
    mrr_at_5 REAL,
    mrr_at_10 REAL,
    ndcg_at_5 REAL,
    ndcg_at_10 REAL,
    ndcg_at_20 REAL,
    recall_at_5 REAL,
    recall_at_10 REAL,
    constitutional_surfacing_rate REAL,
    importance_weighted_recall REAL,
    cold_start_mrr REAL,
    session_personalization_lift REAL,
    causal_chain_completeness REAL,
    avg_latency_ms REAL,
    channel_contribution_json TEXT,
    result_diversity_score REAL,
    query_count INTEGER NOT NULL,
    confidence_interval_lower REAL,
    confidence_interval_upper REAL,
    control_run_id TEXT,
    control_system TEXT,
    mrr_delta REAL,
    ndcg_delta REAL,
    p_value REAL,
    is_significant INTEGER,
    created_at TEXT NOT NULL,
    per_query_results TEXT,
    UNIQUE(run_id, system)
);
CREATE INDEX idx_eval_results_run ON eval_results(run_id);
CREATE INDEX idx_eval_results_feature ON eval_results(feature_id);
CREATE INDEX idx_eval_results_type ON eval_results(run_type);
CREATE INDEX idx_eval_results_created ON eval_results(created_at);
CREATE TABLE eval_ab_tests (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    feature_id TEXT NOT NULL UNIQUE,
    status TEXT NOT NULL CHECK(status IN ('running', 'graduated', 'rejected', 'paused')),
    log_likelihood_ratio REAL NOT NULL DEFAULT 0,
    upper_bound REAL NOT NULL,
    lower_bound REAL NOT NULL,
    sample_count INTEGER NOT NULL DEFAULT 0,
    control_mrr_sum REAL,
    treatment_mrr_sum REAL,
    control_ndcg_sum REAL,
    treatment_ndcg_sum REAL,
    min_samples INTEGER NOT NULL DEFAULT 100,
    graduation_threshold REAL NOT NULL DEFAULT 0.03,
    started_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    graduated_at TEXT,
    metric TEXT NOT NULL,
    config_json TEXT NOT NULL,
    state_json TEXT NOT NULL
);
CREATE INDEX idx_eval_ab_status ON eval_ab_tests(status);
CREATE TABLE eval_ab_test_pairs (
    feature_id TEXT NOT NULL REFERENCES eval_ab_tests(feature_id) ON DELETE CASCADE,
"""
    + _PAIR_COLUMNS
    + """    PRIMARY KEY (feature_id, seq)
);
CREATE TABLE eval_shadow_runs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    query_id TEXT NOT NULL,
    feature_id TEXT NOT NULL,
    control_result_ids TEXT NOT NULL,
    treatment_result_ids TEXT,
    rank_correlation REAL,
    set_overlap REAL,
    top_result_changed INTEGER,
    order_differences INTEGER,
    mrr_delta REAL,
    ndcg_delta REAL,
    control_latency_ms REAL,
    treatment_latency_ms REAL,
    created_at TEXT NOT NULL,
    spearman_rho REAL,
    classification TEXT,
    error TEXT,
    CHECK (error IS NOT NULL OR treatment_result_ids IS NOT NULL)
);
CREATE INDEX idx_eval_shadow_feature ON eval_shadow_runs(feature_id);
CREATE INDEX idx_eval_shadow_created ON eval_shadow_runs(created_at)
"""
)


def _seed_tables(conn: sqlite3.Connection) -> None:
    """0006: seed 002's eval_results, eval_ab_tests and eval_shadow_runs, under its names and
    columns. A/B tests and shadow comparisons move over from 0003's and 0004's tables (which go);
    every retrieval run already stored gets its eval_results rows, projected from the run's
    result JSON by the same function that projects new runs."""
    for statement in (s.strip() for s in _SEED_TABLES.split(";")):
        if statement:
            conn.execute(statement)
    for run_id, result_json in conn.execute(
        "SELECT run_id, result_json FROM runs WHERE kind = 'retrieval'"
    ).fetchall():
        insert_eval_results(conn, {**json.loads(result_json), "run_id": run_id})
    tests = conn.execute(
        "SELECT name, status, metric, config_json, state_json, created_at, updated_at FROM ab_tests"
    ).fetchall()
    for name, status, metric, config_json, state_json, created, updated in tests:
        config, state = json.loads(config_json), json.loads(state_json)
        pairs = conn.execute(
            "SELECT seq, query_id, control, treatment, control_latency_ms, treatment_latency_ms,"
            " constitutional_delta FROM ab_test_pairs WHERE name = ? ORDER BY seq",
            (name,),
        ).fetchall()
        mrr = metric_family(metric) == "mrr"
        ndcg = metric_family(metric) == "ndcg"
        c_sum = sum(p[2] for p in pairs)
        t_sum = sum(p[3] for p in pairs)
        # 0003 knew "running" and "decided"; a decided test that found no difference is
        # rejected, any other waits as running until its next `ab add` applies the rules
        new_status = "rejected" if state.get("decision") == "no_difference" else "running"
        conn.execute(
            "INSERT INTO eval_ab_tests (feature_id, status, log_likelihood_ratio, upper_bound,"
            " lower_bound, sample_count, control_mrr_sum, treatment_mrr_sum, control_ndcg_sum,"
            " treatment_ndcg_sum, min_samples, graduation_threshold, started_at, updated_at,"
            " metric, config_json, state_json) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (
                name,
                new_status if status == "decided" else "running",
                state.get("log_lr", 0.0),
                math.log(1 / config["alpha"]),
                math.log(config["beta"]),
                len(pairs),
                c_sum if mrr else None,
                t_sum if mrr else None,
                c_sum if ndcg else None,
                t_sum if ndcg else None,
                config["min_samples"],
                config["improvement"],
                created,
                updated,
                metric,
                config_json,
                state_json,
            ),
        )
        conn.executemany(
            "INSERT INTO eval_ab_test_pairs (feature_id, seq, query_id, control, treatment,"
            " control_latency_ms, treatment_latency_ms, constitutional_delta)"
            " VALUES (?,?,?,?,?,?,?,?)",
            [(name, *p) for p in pairs],
        )
    for experiment, query_id, created, classification, error, row_json in conn.execute(
        "SELECT experiment, query_id, created_at, classification, error, row_json"
        " FROM shadow_runs ORDER BY id"
    ).fetchall():
        row = json.loads(row_json)
        row.update(query_id=query_id, classification=classification, error=error)
        insert_shadow_row(conn, experiment, row, created)
    for table in ("ab_test_pairs", "ab_tests", "shadow_runs"):
        conn.execute(f"DROP TABLE {table}")


def _suite_run_usage(conn: sqlite3.Connection) -> None:
    """0008: a run's LLM spend per model, added to request by request as it happens (so a
    run killed at any moment has recorded all it spent); filled from the totals that earlier
    versions summed at the end of each attempt into the summary."""
    conn.execute(
        """
        CREATE TABLE suite_run_usage (
            run_id TEXT NOT NULL REFERENCES suite_runs(run_id) ON DELETE CASCADE,
            model TEXT NOT NULL,
            calls INTEGER NOT NULL DEFAULT 0,
            cached INTEGER NOT NULL DEFAULT 0,
            requests INTEGER NOT NULL DEFAULT 0,
            failures INTEGER NOT NULL DEFAULT 0,
            prompt_tokens INTEGER NOT NULL DEFAULT 0,
            completion_tokens INTEGER NOT NULL DEFAULT 0,
            PRIMARY KEY (run_id, model)
        )
        """
    )
    counters = ("calls", "cached", "requests", "failures", "prompt_tokens", "completion_tokens")
    for run_id, summary_json in conn.execute(
        "SELECT run_id, summary_json FROM suite_runs WHERE summary_json IS NOT NULL"
    ).fetchall():
        usage = json.loads(summary_json).get("llm_usage") or {}
        conn.executemany(
            f"INSERT INTO suite_run_usage (run_id, model, {', '.join(counters)})"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            [
                (run_id, model, *(int(row.get(k) or 0) for k in counters))
                for model, row in usage.items()
            ],
        )


def _handed_over(conn: sqlite3.Connection) -> bool:
    return (
        conn.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'alembic_version'"
        ).fetchone()
        is not None
    )


def migrate(conn: sqlite3.Connection) -> list[str]:
    """Apply the migrations not yet applied, each in its own transaction; return their names.

    Safe when several processes open a new store at once: each migration takes the write lock
    (`BEGIN IMMEDIATE`) and checks again, under the lock, whether another process applied it,
    or has already handed the store to Alembic (then there is nothing left to do here).
    """
    if _handed_over(conn):
        return []
    conn.execute(
        "CREATE TABLE IF NOT EXISTS schema_migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)"
    )
    done = {row[0] for row in conn.execute("SELECT name FROM schema_migrations")}
    applied: list[str] = []
    for name, sql in MIGRATIONS:
        if name in done:
            continue
        conn.execute("BEGIN IMMEDIATE")
        try:
            if _handed_over(conn):
                conn.rollback()
                return applied
            again = conn.execute("SELECT 1 FROM schema_migrations WHERE name = ?", (name,))
            if again.fetchone() is None:
                if callable(sql):
                    sql(conn)
                else:
                    for statement in (s.strip() for s in sql.split(";")):
                        if statement:
                            conn.execute(statement)
                conn.execute(
                    "INSERT INTO schema_migrations(name, applied_at) VALUES (?, ?)",
                    (name, datetime.now(UTC).isoformat()),
                )
                applied.append(name)
        except BaseException:
            conn.rollback()
            raise
        conn.commit()
    return applied
