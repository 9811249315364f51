"""The schema as of 0009_one_spine, the last of the hand-run SQLite migrations, for both dialects.

A new store (SQLite or PostgreSQL) is created here. A SQLite store made before Alembic is
brought to 0009 by those frozen migrations (`memgauge.store.migrations`) and stamped with this
revision instead (`memgauge.store.engine.upgrade`), so both arrive at the same tables.

Revision ID: 0009
Revises:
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0009"
down_revision = None
branch_labels = None
depends_on = None

#: JSON deflated past a few hundred bytes: text or a BLOB on SQLite, bytea on PostgreSQL
PACKED = sa.Text().with_variant(postgresql.BYTEA(), "postgresql")


def upgrade() -> None:
    """Create every table of the results store."""
    op.create_table(
        "eval_ab_tests",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("feature_id", sa.Text(), nullable=False),
        sa.Column("status", sa.Text(), nullable=False),
        sa.Column("log_likelihood_ratio", sa.Double(), server_default="0", nullable=False),
        sa.Column("upper_bound", sa.Double(), nullable=False),
        sa.Column("lower_bound", sa.Double(), nullable=False),
        sa.Column("sample_count", sa.Integer(), server_default="0", nullable=False),
        sa.Column("control_mrr_sum", sa.Double(), nullable=True),
        sa.Column("treatment_mrr_sum", sa.Double(), nullable=True),
        sa.Column("control_ndcg_sum", sa.Double(), nullable=True),
        sa.Column("treatment_ndcg_sum", sa.Double(), nullable=True),
        sa.Column("min_samples", sa.Integer(), server_default="100", nullable=False),
        sa.Column("graduation_threshold", sa.Double(), server_default="0.03", nullable=False),
        sa.Column("started_at", sa.Text(), nullable=False),
        sa.Column("updated_at", sa.Text(), nullable=False),
        sa.Column("graduated_at", sa.Text(), nullable=True),
        sa.Column("metric", sa.Text(), nullable=False),
        sa.Column("config_json", sa.Text(), nullable=False),
        sa.Column("state_json", sa.Text(), nullable=False),
        sa.CheckConstraint(
            "status IN ('running', 'graduated', 'rejected', 'paused')", name="ck_eval_ab_status"
        ),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("feature_id"),
        sqlite_autoincrement=True,
    )
    op.create_index("idx_eval_ab_status", "eval_ab_tests", ["status"], unique=False)
    op.create_table(
        "eval_feedback",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("event_type", sa.Text(), nullable=False),
        sa.Column("session_id", sa.Text(), nullable=False),
        sa.Column("query_id", sa.Text(), nullable=True),
        sa.Column("memory_id", sa.Text(), nullable=True),
        sa.Column("rank_in_results", sa.Integer(), nullable=True),
        sa.Column("metadata", sa.Text(), server_default="{}", nullable=True),
        sa.Column("created_at", sa.Text(), nullable=False),
        sa.CheckConstraint(
            "event_type IN ('read_after_search', 're_search', 'scroll_past', 'reference', 'validate_useful', 'validate_not_useful')",
            name="ck_eval_feedback_event",
        ),
        sa.PrimaryKeyConstraint("id"),
        sqlite_autoincrement=True,
    )
    op.create_index("idx_eval_feedback_query", "eval_feedback", ["query_id"], unique=False)
    op.create_table(
        "eval_judgments",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("query_id", sa.Text(), nullable=False),
        sa.Column("memory_id", sa.Text(), nullable=False),
        sa.Column("relevance", sa.Integer(), nullable=False),
        sa.Column("source", sa.Text(), nullable=False),
        sa.Column("annotator", sa.Text(), nullable=True),
        sa.Column("confidence", sa.Double(), server_default="1.0", nullable=True),
        sa.Column("created_at", sa.Text(), nullable=False),
        sa.CheckConstraint(
            "source IN ('manual', 'implicit', 'bootstrapped', 'validated')",
            name="ck_eval_judgments_source",
        ),
        sa.CheckConstraint("relevance BETWEEN 0 AND 3", name="ck_eval_judgments_relevance"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("query_id", "memory_id", "source"),
        sqlite_autoincrement=True,
    )
    op.create_table(
        "eval_queries",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("query_id", sa.Text(), nullable=False),
        sa.Column("query", sa.Text(), nullable=False),
        sa.Column("intent", sa.Text(), nullable=True),
        sa.Column("mode", sa.Text(), nullable=True),
        sa.Column("session_id", sa.Text(), nullable=True),
        sa.Column("tool_name", sa.Text(), nullable=False),
        sa.Column("result_ids", sa.Text(), server_default="[]", nullable=False),
        sa.Column("result_count", sa.Integer(), server_default="0", nullable=False),
        sa.Column("channel_contributions", sa.Text(), server_default="{}", nullable=True),
        sa.Column("total_latency_ms", sa.Double(), nullable=True),
        sa.Column("fusion_weights", sa.Text(), nullable=True),
        sa.Column("quality_proxy_score", sa.Double(), nullable=True),
        sa.Column("trace_id", sa.Text(), nullable=True),
        sa.Column("created_at", sa.Text(), nullable=False),
        sa.Column("is_eval_corpus", sa.Integer(), server_default="0", nullable=False),
        sa.Column("eval_category", sa.Text(), nullable=True),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("query_id"),
        sqlite_autoincrement=True,
    )
    op.create_index("idx_eval_queries_created", "eval_queries", ["created_at"], unique=False)
    op.create_index("idx_eval_queries_session", "eval_queries", ["session_id"], unique=False)
    op.create_table(
        "eval_results",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("run_id", sa.Text(), nullable=False),
        sa.Column("run_type", sa.Text(), nullable=False),
        sa.Column("feature_id", sa.Text(), nullable=True),
        sa.Column("system", sa.Text(), nullable=False),
        sa.Column("mrr_at_5", sa.Double(), nullable=True),
        sa.Column("mrr_at_10", sa.Double(), nullable=True),
        sa.Column("ndcg_at_5", sa.Double(), nullable=True),
        sa.Column("ndcg_at_10", sa.Double(), nullable=True),
        sa.Column("ndcg_at_20", sa.Double(), nullable=True),
        sa.Column("recall_at_5", sa.Double(), nullable=True),
        sa.Column("recall_at_10", sa.Double(), nullable=True),
        sa.Column("constitutional_surfacing_rate", sa.Double(), nullable=True),
        sa.Column("importance_weighted_recall", sa.Double(), nullable=True),
        sa.Column("cold_start_mrr", sa.Double(), nullable=True),
        sa.Column("session_personalization_lift", sa.Double(), nullable=True),
        sa.Column("causal_chain_completeness", sa.Double(), nullable=True),
        sa.Column("avg_latency_ms", sa.Double(), nullable=True),
        sa.Column("channel_contribution_json", sa.Text(), nullable=True),
        sa.Column("result_diversity_score", sa.Double(), nullable=True),
        sa.Column("query_count", sa.Integer(), nullable=False),
        sa.Column("confidence_interval_lower", sa.Double(), nullable=True),
        sa.Column("confidence_interval_upper", sa.Double(), nullable=True),
        sa.Column("control_run_id", sa.Text(), nullable=True),
        sa.Column("control_system", sa.Text(), nullable=True),
        sa.Column("mrr_delta", sa.Double(), nullable=True),
        sa.Column("ndcg_delta", sa.Double(), nullable=True),
        sa.Column("p_value", sa.Double(), nullable=True),
        sa.Column("is_significant", sa.Integer(), nullable=True),
        sa.Column("created_at", sa.Text(), nullable=False),
        sa.Column("per_query_results", sa.Text(), nullable=True),
        sa.CheckConstraint(
            "run_type IN ('full', 'shadow', 'regression', 'ab_test')", name="ck_eval_results_type"
        ),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("run_id", "system"),
        sqlite_autoincrement=True,
    )
    op.create_index("idx_eval_results_created", "eval_results", ["created_at"], unique=False)
    op.create_index("idx_eval_results_feature", "eval_results", ["feature_id"], unique=False)
    op.create_index("idx_eval_results_run", "eval_results", ["run_id"], unique=False)
    op.create_index("idx_eval_results_type", "eval_results", ["run_type"], unique=False)
    op.create_table(
        "eval_shadow_runs",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("query_id", sa.Text(), nullable=False),
        sa.Column("feature_id", sa.Text(), nullable=False),
        sa.Column("control_result_ids", sa.Text(), nullable=False),
        sa.Column("treatment_result_ids", sa.Text(), nullable=True),
        sa.Column("rank_correlation", sa.Double(), nullable=True),
        sa.Column("set_overlap", sa.Double(), nullable=True),
        sa.Column("top_result_changed", sa.Integer(), nullable=True),
        sa.Column("order_differences", sa.Integer(), nullable=True),
        sa.Column("mrr_delta", sa.Double(), nullable=True),
        sa.Column("ndcg_delta", sa.Double(), nullable=True),
        sa.Column("control_latency_ms", sa.Double(), nullable=True),
        sa.Column("treatment_latency_ms", sa.Double(), nullable=True),
        sa.Column("created_at", sa.Text(), nullable=False),
        sa.Column("spearman_rho", sa.Double(), nullable=True),
        sa.Column("classification", sa.Text(), nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.CheckConstraint(
            "error IS NOT NULL OR treatment_result_ids IS NOT NULL", name="ck_eval_shadow_outcome"
        ),
        sa.PrimaryKeyConstraint("id"),
        sqlite_autoincrement=True,
    )
    op.create_index("idx_eval_shadow_created", "eval_shadow_runs", ["created_at"], unique=False)
    op.create_index("idx_eval_shadow_feature", "eval_shadow_runs", ["feature_id"], unique=False)
    op.create_table(
        "memory_confidence",
        sa.Column("memory_id", sa.Text(), nullable=False),
        sa.Column("confidence", sa.Double(), nullable=False),
        sa.Column("validations", sa.Integer(), nullable=False),
        sa.Column("updated_at", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint("memory_id"),
    )
    op.create_table(
        "suite_runs",
        sa.Column("run_id", sa.Text(), nullable=False),
        sa.Column("suite_name", sa.Text(), nullable=False),
        sa.Column("status", sa.Text(), nullable=False),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.Column("created_at", sa.Text(), nullable=False),
        sa.Column("started_at", sa.Text(), nullable=True),
        sa.Column("finished_at", sa.Text(), nullable=True),
        sa.Column("heartbeat_at", sa.Text(), nullable=True),
        sa.Column("pid", sa.Integer(), nullable=True),
        sa.Column("host", sa.Text(), nullable=True),
        sa.Column("suite_sha256", sa.Text(), nullable=False),
        sa.Column("suite_json", sa.Text(), nullable=False),
        sa.Column("suite_path", sa.Text(), nullable=True),
        sa.Column("settings_json", sa.Text(), nullable=False),
        sa.Column("provenance_json", sa.Text(), nullable=False),
        sa.Column("n_items", sa.Integer(), nullable=False),
        sa.Column("summary_json", PACKED, nullable=True),
        sa.Column("pid_start", sa.Text(), nullable=True),
        sa.Column("owner", sa.Text(), nullable=True),
        sa.Column("kind", sa.Text(), server_default="suite", nullable=False),
        sa.CheckConstraint(
            "status IN ('queued', 'running', 'completed', 'failed', 'cancelled')",
            name="ck_suite_runs_status",
        ),
        sa.PrimaryKeyConstraint("run_id"),
    )
    op.create_index(
        "idx_suite_runs_suite", "suite_runs", ["suite_name", "created_at"], unique=False
    )
    op.create_table(
        "eval_ab_test_pairs",
        sa.Column("feature_id", sa.Text(), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("query_id", sa.Text(), nullable=True),
        sa.Column("control", sa.Double(), nullable=False),
        sa.Column("treatment", sa.Double(), nullable=False),
        sa.Column("control_latency_ms", sa.Double(), nullable=True),
        sa.Column("treatment_latency_ms", sa.Double(), nullable=True),
        sa.Column("constitutional_delta", sa.Double(), nullable=True),
        sa.ForeignKeyConstraint(["feature_id"], ["eval_ab_tests.feature_id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("feature_id", "seq"),
    )
    op.create_table(
        "suite_run_failures",
        sa.Column("failure_id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("run_id", sa.Text(), nullable=False),
        sa.Column("subject", sa.Text(), nullable=False),
        sa.Column("task", sa.Text(), nullable=False),
        sa.Column("item_id", sa.Text(), nullable=True),
        sa.Column("stage", sa.Text(), nullable=False),
        sa.Column("kind", sa.Text(), nullable=False),
        sa.Column("message", sa.Text(), nullable=False),
        sa.Column("attempt", sa.Integer(), nullable=False),
        sa.Column("at", sa.Text(), nullable=False),
        sa.ForeignKeyConstraint(["run_id"], ["suite_runs.run_id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("failure_id"),
        sqlite_autoincrement=True,
    )
    op.create_index(
        "idx_suite_run_failures_run",
        "suite_run_failures",
        ["run_id", "subject", "task"],
        unique=False,
    )
    op.create_table(
        "suite_run_items",
        sa.Column("run_id", sa.Text(), nullable=False),
        sa.Column("subject", sa.Text(), nullable=False),
        sa.Column("task", sa.Text(), nullable=False),
        sa.Column("item_id", sa.Text(), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("status", sa.Text(), nullable=False),
        sa.Column("attempts", sa.Integer(), server_default="0", nullable=False),
        sa.Column("category", sa.Text(), nullable=True),
        sa.Column("input_json", sa.Text(), nullable=False),
        sa.Column("expected_json", sa.Text(), nullable=False),
        sa.Column("score", sa.Double(), nullable=True),
        sa.Column("started_at", sa.Text(), nullable=True),
        sa.Column("finished_at", sa.Text(), nullable=True),
        sa.Column("duration_ms", sa.Double(), nullable=True),
        sa.CheckConstraint(
            "status IN ('queued', 'running', 'completed', 'failed', 'cancelled')",
            name="ck_suite_run_items_status",
        ),
        sa.ForeignKeyConstraint(["run_id"], ["suite_runs.run_id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("run_id", "subject", "task", "item_id"),
    )
    op.create_index(
        "idx_suite_run_items_status", "suite_run_items", ["run_id", "status"], unique=False
    )
    op.create_table(
        "suite_run_setups",
        sa.Column("run_id", sa.Text(), nullable=False),
        sa.Column("subject", sa.Text(), nullable=False),
        sa.Column("task", sa.Text(), nullable=False),
        sa.Column("corpus", sa.Text(), nullable=True),
        sa.Column("seconds", sa.Double(), nullable=False),
        sa.Column("at", sa.Text(), nullable=False),
        sa.ForeignKeyConstraint(["run_id"], ["suite_runs.run_id"], ondelete="CASCADE"),
    )
    op.create_index("idx_suite_run_setups", "suite_run_setups", ["run_id"], unique=False)
    op.create_table(
        "suite_run_subjects",
        sa.Column("run_id", sa.Text(), nullable=False),
        sa.Column("subject", sa.Text(), nullable=False),
        sa.Column("spec_json", sa.Text(), nullable=False),
        sa.ForeignKeyConstraint(["run_id"], ["suite_runs.run_id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("run_id", "subject"),
    )
    op.create_table(
        "suite_run_tasks",
        sa.Column("run_id", sa.Text(), nullable=False),
        sa.Column("task", sa.Text(), nullable=False),
        sa.Column("kind", sa.Text(), nullable=False),
        sa.Column("dataset", sa.Text(), nullable=True),
        sa.Column("dataset_sha256", sa.Text(), nullable=True),
        sa.Column("spec_json", sa.Text(), nullable=False),
        sa.Column("n_items", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(["run_id"], ["suite_runs.run_id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("run_id", "task"),
    )
    op.create_table(
        "suite_run_usage",
        sa.Column("run_id", sa.Text(), nullable=False),
        sa.Column("model", sa.Text(), nullable=False),
        sa.Column("calls", sa.Integer(), server_default="0", nullable=False),
        sa.Column("cached", sa.Integer(), server_default="0", nullable=False),
        sa.Column("requests", sa.Integer(), server_default="0", nullable=False),
        sa.Column("failures", sa.Integer(), server_default="0", nullable=False),
        sa.Column("prompt_tokens", sa.Integer(), server_default="0", nullable=False),
        sa.Column("completion_tokens", sa.Integer(), server_default="0", nullable=False),
        sa.ForeignKeyConstraint(["run_id"], ["suite_runs.run_id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("run_id", "model"),
    )
    op.create_table(
        "suite_run_outputs",
        sa.Column("run_id", sa.Text(), nullable=False),
        sa.Column("subject", sa.Text(), nullable=False),
        sa.Column("task", sa.Text(), nullable=False),
        sa.Column("item_id", sa.Text(), nullable=False),
        sa.Column("output_json", PACKED, nullable=False),
        sa.Column("latency_json", sa.Text(), nullable=False),
        sa.Column("extra_json", sa.Text(), nullable=True),
        sa.ForeignKeyConstraint(
            ["run_id", "subject", "task", "item_id"],
            [
                "suite_run_items.run_id",
                "suite_run_items.subject",
                "suite_run_items.task",
                "suite_run_items.item_id",
            ],
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("run_id", "subject", "task", "item_id"),
    )
    op.create_table(
        "suite_run_scores",
        sa.Column("run_id", sa.Text(), nullable=False),
        sa.Column("subject", sa.Text(), nullable=False),
        sa.Column("task", sa.Text(), nullable=False),
        sa.Column("item_id", sa.Text(), nullable=False),
        sa.Column("evaluator", sa.Text(), nullable=False),
        sa.Column("value", sa.Double(), nullable=True),
        sa.Column("passed", sa.Integer(), nullable=True),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("detail_json", sa.Text(), nullable=False),
        sa.Column("raw_reply", sa.Text(), nullable=True),
        sa.ForeignKeyConstraint(
            ["run_id", "subject", "task", "item_id"],
            [
                "suite_run_items.run_id",
                "suite_run_items.subject",
                "suite_run_items.task",
                "suite_run_items.item_id",
            ],
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("run_id", "subject", "task", "item_id", "evaluator"),
    )
