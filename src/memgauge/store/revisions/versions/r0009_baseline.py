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

from memgauge.store.columns import cols
from memgauge.store.revisions import PACKED, create_serial_table
from memgauge.store.stored_forms import RESULT_METRICS

revision = "0009"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Create every table of the results store."""
    create_serial_table(
        "eval_ab_tests",
        *cols(sa.Text(), "feature_id", "status", nullable=False),
        *cols(sa.Double(), "log_likelihood_ratio", server_default="0", nullable=False),
        *cols(sa.Double(), "upper_bound", "lower_bound", nullable=False),
        *cols(sa.Integer(), "sample_count", server_default="0", nullable=False),
        *cols(
            sa.Double(),
            "control_mrr_sum",
            "treatment_mrr_sum",
            "control_ndcg_sum",
            "treatment_ndcg_sum",
        ),
        *cols(sa.Integer(), "min_samples", server_default="100", nullable=False),
        *cols(sa.Double(), "graduation_threshold", server_default="0.03", nullable=False),
        *cols(sa.Text(), "started_at", "updated_at", nullable=False),
        *cols(sa.Text(), "graduated_at"),
        *cols(sa.Text(), "metric", "config_json", "state_json", nullable=False),
        sa.CheckConstraint(
            "status IN ('running', 'graduated', 'rejected', 'paused')", name="ck_eval_ab_status"
        ),
        sa.UniqueConstraint("feature_id"),
    )
    op.create_index("idx_eval_ab_status", "eval_ab_tests", ["status"], unique=False)
    create_serial_table(
        "eval_feedback",
        *cols(sa.Text(), "event_type", "session_id", nullable=False),
        *cols(sa.Text(), "query_id", "memory_id"),
        *cols(sa.Integer(), "rank_in_results"),
        *cols(sa.Text(), "metadata", server_default="{}"),
        *cols(sa.Text(), "created_at", nullable=False),
        sa.CheckConstraint(
            "event_type IN ('read_after_search', 're_search', 'scroll_past', 'reference', 'validate_useful', 'validate_not_useful')",
            name="ck_eval_feedback_event",
        ),
    )
    op.create_index("idx_eval_feedback_query", "eval_feedback", ["query_id"], unique=False)
    create_serial_table(
        "eval_judgments",
        *cols(sa.Text(), "query_id", "memory_id", nullable=False),
        *cols(sa.Integer(), "relevance", nullable=False),
        *cols(sa.Text(), "source", nullable=False),
        *cols(sa.Text(), "annotator"),
        *cols(sa.Double(), "confidence", server_default="1.0"),
        *cols(sa.Text(), "created_at", nullable=False),
        sa.CheckConstraint(
            "source IN ('manual', 'implicit', 'bootstrapped', 'validated')",
            name="ck_eval_judgments_source",
        ),
        sa.CheckConstraint("relevance BETWEEN 0 AND 3", name="ck_eval_judgments_relevance"),
        sa.UniqueConstraint("query_id", "memory_id", "source"),
    )
    create_serial_table(
        "eval_queries",
        *cols(sa.Text(), "query_id", "query", nullable=False),
        *cols(sa.Text(), "intent", "mode", "session_id"),
        *cols(sa.Text(), "tool_name", nullable=False),
        *cols(sa.Text(), "result_ids", server_default="[]", nullable=False),
        *cols(sa.Integer(), "result_count", server_default="0", nullable=False),
        *cols(sa.Text(), "channel_contributions", server_default="{}"),
        *cols(sa.Double(), "total_latency_ms"),
        *cols(sa.Text(), "fusion_weights"),
        *cols(sa.Double(), "quality_proxy_score"),
        *cols(sa.Text(), "trace_id"),
        *cols(sa.Text(), "created_at", nullable=False),
        *cols(sa.Integer(), "is_eval_corpus", server_default="0", nullable=False),
        *cols(sa.Text(), "eval_category"),
        sa.UniqueConstraint("query_id"),
    )
    op.create_index("idx_eval_queries_created", "eval_queries", ["created_at"], unique=False)
    op.create_index("idx_eval_queries_session", "eval_queries", ["session_id"], unique=False)
    create_serial_table(
        "eval_results",
        *cols(sa.Text(), "run_id", "run_type", nullable=False),
        *cols(sa.Text(), "feature_id"),
        *cols(sa.Text(), "system", nullable=False),
        *cols(sa.Double(), *RESULT_METRICS),
        *cols(sa.Text(), "channel_contribution_json"),
        *cols(sa.Double(), "result_diversity_score"),
        *cols(sa.Integer(), "query_count", nullable=False),
        *cols(sa.Double(), "confidence_interval_lower", "confidence_interval_upper"),
        *cols(sa.Text(), "control_run_id", "control_system"),
        *cols(sa.Double(), "mrr_delta", "ndcg_delta", "p_value"),
        *cols(sa.Integer(), "is_significant"),
        *cols(sa.Text(), "created_at", nullable=False),
        *cols(sa.Text(), "per_query_results"),
        sa.CheckConstraint(
            "run_type IN ('full', 'shadow', 'regression', 'ab_test')", name="ck_eval_results_type"
        ),
        sa.UniqueConstraint("run_id", "system"),
    )
    op.create_index("idx_eval_results_created", "eval_results", ["created_at"], unique=False)
    op.create_index("idx_eval_results_feature", "eval_results", ["feature_id"], unique=False)
    op.create_index("idx_eval_results_run", "eval_results", ["run_id"], unique=False)
    op.create_index("idx_eval_results_type", "eval_results", ["run_type"], unique=False)
    create_serial_table(
        "eval_shadow_runs",
        *cols(sa.Text(), "query_id", "feature_id", "control_result_ids", nullable=False),
        *cols(sa.Text(), "treatment_result_ids"),
        *cols(sa.Double(), "rank_correlation", "set_overlap"),
        *cols(sa.Integer(), "top_result_changed", "order_differences"),
        *cols(sa.Double(), "mrr_delta", "ndcg_delta", "control_latency_ms", "treatment_latency_ms"),
        *cols(sa.Text(), "created_at", nullable=False),
        *cols(sa.Double(), "spearman_rho"),
        *cols(sa.Text(), "classification", "error"),
        sa.CheckConstraint(
            "error IS NOT NULL OR treatment_result_ids IS NOT NULL", name="ck_eval_shadow_outcome"
        ),
    )
    op.create_index("idx_eval_shadow_created", "eval_shadow_runs", ["created_at"], unique=False)
    op.create_index("idx_eval_shadow_feature", "eval_shadow_runs", ["feature_id"], unique=False)
    op.create_table(
        "memory_confidence",
        *cols(sa.Text(), "memory_id", nullable=False),
        *cols(sa.Double(), "confidence", nullable=False),
        *cols(sa.Integer(), "validations", nullable=False),
        *cols(sa.Text(), "updated_at", nullable=False),
        sa.PrimaryKeyConstraint("memory_id"),
    )
    op.create_table(
        "suite_runs",
        *cols(sa.Text(), "run_id", "suite_name", "status", nullable=False),
        *cols(sa.Text(), "reason"),
        *cols(sa.Text(), "created_at", nullable=False),
        *cols(sa.Text(), "started_at", "finished_at", "heartbeat_at"),
        *cols(sa.Integer(), "pid"),
        *cols(sa.Text(), "host"),
        *cols(sa.Text(), "suite_sha256", "suite_json", nullable=False),
        *cols(sa.Text(), "suite_path"),
        *cols(sa.Text(), "settings_json", "provenance_json", nullable=False),
        *cols(sa.Integer(), "n_items", nullable=False),
        *cols(PACKED, "summary_json"),
        *cols(sa.Text(), "pid_start", "owner"),
        *cols(sa.Text(), "kind", server_default="suite", nullable=False),
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
        *cols(sa.Text(), "feature_id", nullable=False),
        *cols(sa.Integer(), "seq", nullable=False),
        *cols(sa.Text(), "query_id"),
        *cols(sa.Double(), "control", "treatment", nullable=False),
        *cols(sa.Double(), "control_latency_ms", "treatment_latency_ms", "constitutional_delta"),
        sa.ForeignKeyConstraint(["feature_id"], ["eval_ab_tests.feature_id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("feature_id", "seq"),
    )
    create_serial_table(
        "suite_run_failures",
        *cols(sa.Text(), "run_id", "subject", "task", nullable=False),
        *cols(sa.Text(), "item_id"),
        *cols(sa.Text(), "stage", "kind", "message", nullable=False),
        *cols(sa.Integer(), "attempt", nullable=False),
        *cols(sa.Text(), "at", nullable=False),
        sa.ForeignKeyConstraint(["run_id"], ["suite_runs.run_id"], ondelete="CASCADE"),
        key="failure_id",
    )
    op.create_index(
        "idx_suite_run_failures_run",
        "suite_run_failures",
        ["run_id", "subject", "task"],
        unique=False,
    )
    op.create_table(
        "suite_run_items",
        *cols(sa.Text(), "run_id", "subject", "task", "item_id", nullable=False),
        *cols(sa.Integer(), "seq", nullable=False),
        *cols(sa.Text(), "status", nullable=False),
        *cols(sa.Integer(), "attempts", server_default="0", nullable=False),
        *cols(sa.Text(), "category"),
        *cols(sa.Text(), "input_json", "expected_json", nullable=False),
        *cols(sa.Double(), "score"),
        *cols(sa.Text(), "started_at", "finished_at"),
        *cols(sa.Double(), "duration_ms"),
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
        *cols(sa.Text(), "run_id", "subject", "task", nullable=False),
        *cols(sa.Text(), "corpus"),
        *cols(sa.Double(), "seconds", nullable=False),
        *cols(sa.Text(), "at", nullable=False),
        sa.ForeignKeyConstraint(["run_id"], ["suite_runs.run_id"], ondelete="CASCADE"),
    )
    op.create_index("idx_suite_run_setups", "suite_run_setups", ["run_id"], unique=False)
    op.create_table(
        "suite_run_subjects",
        *cols(sa.Text(), "run_id", "subject", "spec_json", nullable=False),
        sa.ForeignKeyConstraint(["run_id"], ["suite_runs.run_id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("run_id", "subject"),
    )
    op.create_table(
        "suite_run_tasks",
        *cols(sa.Text(), "run_id", "task", "kind", nullable=False),
        *cols(sa.Text(), "dataset", "dataset_sha256"),
        *cols(sa.Text(), "spec_json", nullable=False),
        *cols(sa.Integer(), "n_items", nullable=False),
        sa.ForeignKeyConstraint(["run_id"], ["suite_runs.run_id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("run_id", "task"),
    )
    op.create_table(
        "suite_run_usage",
        *cols(sa.Text(), "run_id", "model", nullable=False),
        *cols(
            sa.Integer(),
            "calls",
            "cached",
            "requests",
            "failures",
            "prompt_tokens",
            "completion_tokens",
            server_default="0",
            nullable=False,
        ),
        sa.ForeignKeyConstraint(["run_id"], ["suite_runs.run_id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("run_id", "model"),
    )
    op.create_table(
        "suite_run_outputs",
        *cols(sa.Text(), "run_id", "subject", "task", "item_id", nullable=False),
        *cols(PACKED, "output_json", nullable=False),
        *cols(sa.Text(), "latency_json", nullable=False),
        *cols(sa.Text(), "extra_json"),
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
        *cols(sa.Text(), "run_id", "subject", "task", "item_id", "evaluator", nullable=False),
        *cols(sa.Double(), "value"),
        *cols(sa.Integer(), "passed"),
        *cols(sa.Text(), "reason", nullable=False),
        *cols(sa.Text(), "error"),
        *cols(sa.Text(), "detail_json", nullable=False),
        *cols(sa.Text(), "raw_reply"),
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
