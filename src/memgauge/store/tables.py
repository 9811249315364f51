"""The results store's tables as SQLAlchemy Core sees them, for the queries of every store module
on either dialect.

This is the schema at the newest migration: the scripts under `store/alembic/versions` create it
(they never import this module, so a shipped migration never changes), and
`tests/store/test_schema.py` asserts that a migrated database matches these tables exactly, on
SQLite and on PostgreSQL.

Types: timestamps are ISO 8601 UTC text (as stored since 0001; they sort as text), JSON is text,
flags are 0/1 integers. `Packed` columns hold JSON that is deflated past a few hundred bytes:
SQLite keeps text or a BLOB in the one column, PostgreSQL a `bytea` (plain UTF-8 JSON, or zlib's
stream, told apart by its first byte).
"""

from __future__ import annotations

import zlib
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Dialect

__all__ = ["Packed", "metadata", "packed", "unpacked"]

_PACK_FROM = 512  # bytes of JSON from which an output or summary is stored deflated


def packed(text: str) -> str | bytes:
    """`text` as stored: deflated past `_PACK_FROM` bytes (a sixth of the size; these are read
    whole, never searched with SQL's JSON functions)."""
    if len(text) < _PACK_FROM:
        return text
    return zlib.compress(text.encode(), 1)


def unpacked(value: str | bytes) -> str:
    """The JSON text of a stored `Packed` value (zlib's stream starts with 0x78, which no JSON
    text does)."""
    if isinstance(value, str):
        return value
    if value[:1] == b"\x78":
        return zlib.decompress(value).decode()
    return bytes(value).decode()


class Packed(sa.types.TypeDecorator[Any]):
    """Text or deflated bytes in one column (see the module docstring); values pass through as
    given (`packed` makes them) and come back as stored (`unpacked` reads them)."""

    impl = sa.Text
    cache_ok = True

    def load_dialect_impl(self, dialect: Dialect) -> sa.types.TypeEngine[Any]:
        if dialect.name == "postgresql":
            # PostgreSQL's dialect, only when a store is there (50 ms of imports for SQLite)
            from sqlalchemy.dialects import postgresql

            return dialect.type_descriptor(postgresql.BYTEA())
        return dialect.type_descriptor(sa.Text())

    def process_bind_param(self, value: Any, dialect: Dialect) -> Any:
        if dialect.name == "postgresql" and isinstance(value, str):
            return value.encode()
        return value

    def process_result_value(self, value: Any, dialect: Dialect) -> Any:
        if isinstance(value, memoryview):
            return value.tobytes()
        return value


metadata = sa.MetaData()

_T, _I, _F = sa.Text, sa.Integer, sa.Double
_STATUS = "status IN ('queued', 'running', 'completed', 'failed', 'cancelled')"
_GATE = "gate IS NULL OR gate IN ('pass', 'fail', 'accepted')"


def _col(name: str, type_: Any, *args: Any, **kw: Any) -> sa.Column[Any]:
    return sa.Column(name, type_, *args, **kw)


def _fk_run(table: str = "suite_runs") -> sa.ForeignKey:
    return sa.ForeignKey(f"{table}.run_id", ondelete="CASCADE")


_ITEM_KEY = ("run_id", "subject", "task", "item_id")
_ITEM_REF = [f"suite_run_items.{c}" for c in _ITEM_KEY]

suite_runs = sa.Table(
    "suite_runs",
    metadata,
    _col("run_id", _T, primary_key=True),
    _col("suite_name", _T, nullable=False),
    _col("status", _T, nullable=False),
    _col("reason", _T),
    _col("created_at", _T, nullable=False),
    _col("started_at", _T),
    _col("finished_at", _T),
    _col("heartbeat_at", _T),
    _col("pid", _I),
    _col("host", _T),
    _col("suite_sha256", _T, nullable=False),
    _col("suite_json", _T, nullable=False),
    _col("suite_path", _T),
    _col("settings_json", _T, nullable=False),
    _col("provenance_json", _T, nullable=False),
    _col("n_items", _I, nullable=False),
    _col("summary_json", Packed()),
    _col("pid_start", _T),
    _col("owner", _T),
    _col("kind", _T, nullable=False, server_default="suite"),
    # the gate's last verdict (revision 0011): 'fail' leaves the run out of later baselines,
    # 'accepted' (`gate --accept`) puts it back; NULL: never gated, counted
    _col("gate", _T),
    # the summary without its per-query detail (revision 0016, `memgauge.store.headline`)
    _col("headline_json", Packed()),
    sa.CheckConstraint(_STATUS, name="ck_suite_runs_status"),
    sa.CheckConstraint(_GATE, name="ck_suite_runs_gate"),
    sa.Index("idx_suite_runs_suite", "suite_name", "created_at"),
)

suite_run_subjects = sa.Table(
    "suite_run_subjects",
    metadata,
    _col("run_id", _T, _fk_run(), primary_key=True),
    _col("subject", _T, primary_key=True),
    _col("spec_json", _T, nullable=False),
)

suite_run_tasks = sa.Table(
    "suite_run_tasks",
    metadata,
    _col("run_id", _T, _fk_run(), primary_key=True),
    _col("task", _T, primary_key=True),
    _col("kind", _T, nullable=False),
    _col("dataset", _T),
    _col("dataset_sha256", _T),
    _col("spec_json", _T, nullable=False),
    _col("n_items", _I, nullable=False),
    _col("seq", _I),
)

suite_run_items = sa.Table(
    "suite_run_items",
    metadata,
    _col("run_id", _T, _fk_run(), primary_key=True),
    _col("subject", _T, primary_key=True),
    _col("task", _T, primary_key=True),
    _col("item_id", _T, primary_key=True),
    _col("seq", _I, nullable=False),
    _col("status", _T, nullable=False),
    _col("attempts", _I, nullable=False, server_default="0"),
    _col("category", _T),
    _col("input_json", _T, nullable=False),
    _col("expected_json", _T, nullable=False),
    _col("score", _F),
    _col("started_at", _T),
    _col("finished_at", _T),
    _col("duration_ms", _F),
    sa.CheckConstraint(_STATUS, name="ck_suite_run_items_status"),
    sa.Index("idx_suite_run_items_status", "run_id", "status"),
    # a page of items in run order (revision 0016): read from the index, not sorted whole
    sa.Index("idx_suite_run_items_seq", "run_id", "subject", "task", "seq"),
)

suite_run_outputs = sa.Table(
    "suite_run_outputs",
    metadata,
    *(_col(c, _T, primary_key=True) for c in _ITEM_KEY),
    _col("output_json", Packed(), nullable=False),
    _col("latency_json", _T, nullable=False),
    _col("extra_json", _T),
    sa.ForeignKeyConstraint(list(_ITEM_KEY), _ITEM_REF, ondelete="CASCADE"),
)

suite_run_scores = sa.Table(
    "suite_run_scores",
    metadata,
    *(_col(c, _T, primary_key=True) for c in _ITEM_KEY),
    _col("evaluator", _T, primary_key=True),
    _col("value", _F),
    _col("passed", _I),
    _col("reason", _T, nullable=False),
    _col("error", _T),
    _col("detail_json", _T, nullable=False),
    _col("raw_reply", _T),
    _col("seq", _I),
    sa.ForeignKeyConstraint(list(_ITEM_KEY), _ITEM_REF, ondelete="CASCADE"),
)

suite_run_failures = sa.Table(
    "suite_run_failures",
    metadata,
    _col("failure_id", _I, primary_key=True, autoincrement=True),
    _col("run_id", _T, _fk_run(), nullable=False),
    _col("subject", _T, nullable=False),
    _col("task", _T, nullable=False),
    _col("item_id", _T),
    _col("stage", _T, nullable=False),
    _col("kind", _T, nullable=False),
    _col("message", _T, nullable=False),
    _col("attempt", _I, nullable=False),
    _col("at", _T, nullable=False),
    sa.Index("idx_suite_run_failures_run", "run_id", "subject", "task"),
    sqlite_autoincrement=True,
)

suite_run_usage = sa.Table(
    "suite_run_usage",
    metadata,
    _col("run_id", _T, _fk_run(), primary_key=True),
    _col("model", _T, primary_key=True),
    *(
        _col(c, _I, nullable=False, server_default="0")
        for c in ("calls", "cached", "requests", "failures", "prompt_tokens", "completion_tokens")
    ),
)

suite_run_setups = sa.Table(
    "suite_run_setups",
    metadata,
    _col("run_id", _T, _fk_run(), nullable=False),
    _col("subject", _T, nullable=False),
    _col("task", _T, nullable=False),
    _col("corpus", _T),
    _col("seconds", _F, nullable=False),
    _col("at", _T, nullable=False),
    sa.Index("idx_suite_run_setups", "run_id"),
)

# --- seed 002: production logging ------------------------------------------------------------

eval_queries = sa.Table(
    "eval_queries",
    metadata,
    _col("id", _I, primary_key=True, autoincrement=True),
    _col("query_id", _T, nullable=False, unique=True),
    _col("query", _T, nullable=False),
    _col("intent", _T),
    _col("mode", _T),
    _col("session_id", _T),
    _col("tool_name", _T, nullable=False),
    _col("result_ids", _T, nullable=False, server_default="[]"),
    _col("result_count", _I, nullable=False, server_default="0"),
    _col("channel_contributions", _T, server_default="{}"),
    _col("total_latency_ms", _F),
    _col("fusion_weights", _T),
    _col("quality_proxy_score", _F),
    _col("trace_id", _T),
    _col("created_at", _T, nullable=False),
    _col("is_eval_corpus", _I, nullable=False, server_default="0"),
    _col("eval_category", _T),
    # revision 0014 (seed 002 section 1.1): fallback / degraded flags, the per-stage trace
    # (JSON list of {stage, input_count, output_count, duration_ms}), harvest time
    _col("fallback_triggered", _I),
    _col("fallback_reason", _T),
    _col("degraded_mode", _I),
    _col("stage_trace", _T),
    _col("harvested_at", _T),
    # revision 0017 (seed 002 section 1.1): the share of its token budget the search's
    # context used, and the token pressure state the system reported
    _col("token_usage_ratio", _F),
    _col("pressure_level", _T),
    # revision 0018 (seed 002 section 1.1's quality telemetry, `memgauge.store.quality`)
    _col("avg_relevance_score", _F),
    _col("top_result_score", _F),
    _col("boost_impact_delta", _F),
    _col("dedup_tokens_saved", _I),
    sa.Index("idx_eval_queries_session", "session_id"),
    sa.Index("idx_eval_queries_created", "created_at"),
    sqlite_autoincrement=True,
)

eval_judgments = sa.Table(
    "eval_judgments",
    metadata,
    _col("id", _I, primary_key=True, autoincrement=True),
    _col("query_id", _T, nullable=False),
    _col("memory_id", _T, nullable=False),
    _col("relevance", _I, nullable=False),
    _col("source", _T, nullable=False),
    _col("annotator", _T),
    _col("confidence", _F, server_default="1.0"),
    _col("created_at", _T, nullable=False),
    sa.CheckConstraint("relevance BETWEEN 0 AND 3", name="ck_eval_judgments_relevance"),
    sa.CheckConstraint(
        "source IN ('manual', 'implicit', 'bootstrapped', 'validated')",
        name="ck_eval_judgments_source",
    ),
    sa.UniqueConstraint("query_id", "memory_id", "source"),
    sqlite_autoincrement=True,
)

FEEDBACK_EVENTS = (
    "'read_after_search', 're_search', 'scroll_past', 'reference', 'validate_useful',"
    " 'validate_not_useful'"
)

eval_feedback = sa.Table(
    "eval_feedback",
    metadata,
    _col("id", _I, primary_key=True, autoincrement=True),
    _col("event_type", _T, nullable=False),
    _col("session_id", _T, nullable=False),
    _col("query_id", _T),
    _col("memory_id", _T),
    _col("rank_in_results", _I),
    _col("metadata", _T, server_default="{}"),
    _col("created_at", _T, nullable=False),
    sa.CheckConstraint(f"event_type IN ({FEEDBACK_EVENTS})", name="ck_eval_feedback_event"),
    sa.Index("idx_eval_feedback_query", "query_id"),
    sqlite_autoincrement=True,
)

memory_confidence = sa.Table(
    "memory_confidence",
    metadata,
    _col("memory_id", _T, primary_key=True),
    _col("confidence", _F, nullable=False),
    _col("validations", _I, nullable=False),
    _col("updated_at", _T, nullable=False),
)

# --- seed 002 sections 5.3, 5.4: sessions, task outcomes, agent outputs (revision 0014) -------

eval_sessions = sa.Table(
    "eval_sessions",
    metadata,
    _col("session_id", _T, primary_key=True),
    _col("turns", _I),
    _col("started_at", _T, nullable=False),
    _col("ended_at", _T),
    _col("updated_at", _T, nullable=False),
    _col("metadata", _T, server_default="{}"),
)

eval_outcomes = sa.Table(
    "eval_outcomes",
    metadata,
    _col("id", _I, primary_key=True, autoincrement=True),
    _col("session_id", _T, nullable=False),
    _col("task_id", _T),
    _col("success", _I),
    _col("score", _F),
    _col("knowledge_delta", _F),
    _col("uncertainty_reduction", _F),
    _col("learning_index", _F),
    _col("spec_folder", _T),
    _col("metadata", _T, server_default="{}"),
    _col("created_at", _T, nullable=False),
    sa.CheckConstraint("success IS NULL OR success IN (0, 1)", name="ck_eval_outcomes_success"),
    sa.Index("idx_eval_outcomes_session", "session_id"),
    sqlite_autoincrement=True,
)

eval_agent_outputs = sa.Table(
    "eval_agent_outputs",
    metadata,
    _col("id", _I, primary_key=True, autoincrement=True),
    _col("session_id", _T, nullable=False),
    _col("query_id", _T),
    _col("text", _T, nullable=False),
    _col("created_at", _T, nullable=False),
    sa.Index("idx_eval_agent_outputs_session", "session_id"),
    sqlite_autoincrement=True,
)

# --- seed 002: results, A/B tests, shadow runs -----------------------------------------------

_RESULT_METRICS = (
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
)

eval_results = sa.Table(
    "eval_results",
    metadata,
    _col("id", _I, primary_key=True, autoincrement=True),
    _col("run_id", _T, nullable=False),
    _col("run_type", _T, nullable=False),
    _col("feature_id", _T),
    _col("system", _T, nullable=False),
    *(_col(c, _F) for c in _RESULT_METRICS),
    _col("channel_contribution_json", _T),
    _col("result_diversity_score", _F),
    _col("query_count", _I, nullable=False),
    _col("confidence_interval_lower", _F),
    _col("confidence_interval_upper", _F),
    _col("control_run_id", _T),
    _col("control_system", _T),
    _col("mrr_delta", _F),
    _col("ndcg_delta", _F),
    _col("p_value", _F),
    _col("is_significant", _I),
    _col("created_at", _T, nullable=False),
    _col("per_query_results", _T),
    sa.CheckConstraint(
        "run_type IN ('full', 'shadow', 'regression', 'ab_test')", name="ck_eval_results_type"
    ),
    sa.UniqueConstraint("run_id", "system"),
    sa.Index("idx_eval_results_run", "run_id"),
    sa.Index("idx_eval_results_feature", "feature_id"),
    sa.Index("idx_eval_results_type", "run_type"),
    sa.Index("idx_eval_results_created", "created_at"),
    sqlite_autoincrement=True,
)

eval_ab_tests = sa.Table(
    "eval_ab_tests",
    metadata,
    _col("id", _I, primary_key=True, autoincrement=True),
    _col("feature_id", _T, nullable=False, unique=True),
    _col("status", _T, nullable=False),
    _col("log_likelihood_ratio", _F, nullable=False, server_default="0"),
    _col("upper_bound", _F, nullable=False),
    _col("lower_bound", _F, nullable=False),
    _col("sample_count", _I, nullable=False, server_default="0"),
    _col("control_mrr_sum", _F),
    _col("treatment_mrr_sum", _F),
    _col("control_ndcg_sum", _F),
    _col("treatment_ndcg_sum", _F),
    _col("min_samples", _I, nullable=False, server_default="100"),
    _col("graduation_threshold", _F, nullable=False, server_default="0.03"),
    _col("started_at", _T, nullable=False),
    _col("updated_at", _T, nullable=False),
    _col("graduated_at", _T),
    _col("metric", _T, nullable=False),
    _col("config_json", _T, nullable=False),
    _col("state_json", _T, nullable=False),
    sa.CheckConstraint(
        "status IN ('running', 'graduated', 'rejected', 'paused')", name="ck_eval_ab_status"
    ),
    sa.Index("idx_eval_ab_status", "status"),
    sqlite_autoincrement=True,
)

eval_ab_test_pairs = sa.Table(
    "eval_ab_test_pairs",
    metadata,
    _col(
        "feature_id",
        _T,
        sa.ForeignKey("eval_ab_tests.feature_id", ondelete="CASCADE"),
        primary_key=True,
    ),
    _col("seq", _I, primary_key=True),
    _col("query_id", _T),
    _col("control", _F, nullable=False),
    _col("treatment", _F, nullable=False),
    _col("control_latency_ms", _F),
    _col("treatment_latency_ms", _F),
    _col("constitutional_delta", _F),
    _col("shadow_run_id", _I),  # revision 0013: the eval_shadow_runs row it came from
    _col("pair_key", _T),  # revision 0015: what identifies the pair (online.ab.pair_key)
    sa.Index("ux_eval_ab_test_pairs_key", "feature_id", "pair_key", unique=True),
)

eval_shadow_runs = sa.Table(
    "eval_shadow_runs",
    metadata,
    _col("id", _I, primary_key=True, autoincrement=True),
    _col("query_id", _T, nullable=False),
    _col("feature_id", _T, nullable=False),
    _col("control_result_ids", _T, nullable=False),
    _col("treatment_result_ids", _T),
    _col("rank_correlation", _F),
    _col("set_overlap", _F),
    _col("top_result_changed", _I),
    _col("order_differences", _I),
    _col("mrr_delta", _F),
    _col("ndcg_delta", _F),
    _col("control_latency_ms", _F),
    _col("treatment_latency_ms", _F),
    _col("created_at", _T, nullable=False),
    _col("spearman_rho", _F),
    _col("classification", _T),
    _col("error", _T),
    # revision 0013: the query's context, the log level, each arm's RR and nDCG
    _col("intent", _T),
    _col("session_id", _T),
    _col("log_level", _T),
    _col("query_text", _T),
    _col("control_mrr", _F),
    _col("treatment_mrr", _F),
    _col("control_ndcg", _F),
    _col("treatment_ndcg", _F),
    sa.CheckConstraint(
        "error IS NOT NULL OR treatment_result_ids IS NOT NULL", name="ck_eval_shadow_outcome"
    ),
    sa.Index("idx_eval_shadow_feature", "feature_id"),
    sa.Index("idx_eval_shadow_created", "created_at"),
    sqlite_autoincrement=True,
)

# shadowed queries a full queue dropped (revision 0013)
eval_shadow_drops = sa.Table(
    "eval_shadow_drops",
    metadata,
    _col("feature_id", _T, primary_key=True),
    _col("dropped", _I, nullable=False),
    _col("updated_at", _T, nullable=False),
)

# seed 002's feature flags (revision 0013; columns documented in store/flags.py)
eval_flags = sa.Table(
    "eval_flags",
    metadata,
    _col("feature_id", _T, primary_key=True),
    _col("rollout_percent", _F, nullable=False),
    _col("shadow_enabled", _I, nullable=False),
    _col("shadow_percent", _F, nullable=False),
    _col("min_samples", _I, nullable=False),
    _col("graduation_threshold", _F, nullable=False),
    _col("feed_ab", _I, nullable=False),
    _col("created_at", _T, nullable=False),
    _col("updated_at", _T, nullable=False),
    sa.CheckConstraint(
        "rollout_percent >= 0 AND rollout_percent <= 100", name="ck_eval_flags_rollout"
    ),
    sa.CheckConstraint(
        "shadow_percent >= 0 AND shadow_percent <= 100", name="ck_eval_flags_shadow"
    ),
)


# `memgauge optimize`'s history (revision 0012; columns documented in store/optimization.py)
optimization_studies = sa.Table(
    "optimization_studies",
    metadata,
    _col("study_id", _T, primary_key=True),
    _col("suite_name", _T, nullable=False),
    _col("suite_path", _T),
    _col("task", _T, nullable=False),
    _col("measure", _T, nullable=False),
    _col("subject", _T, nullable=False),
    _col("strategy", _T, nullable=False),
    _col("status", _T, nullable=False),
    _col("stopped_because", _T),
    _col("config_json", _T, nullable=False),
    _col("best_step", _I),
    _col("best_candidate", _I),
    _col("holdout_json", _T),
    _col("usage_json", _T, nullable=False, server_default="{}"),
    _col("pid", _I),
    _col("pid_start", _T),
    _col("host", _T),
    _col("created_at", _T, nullable=False),
    _col("updated_at", _T, nullable=False),
    _col("finished_at", _T),
    sa.CheckConstraint(
        "status IN ('running', 'completed', 'cancelled', 'failed')",
        name="ck_optimization_studies_status",
    ),
    sa.Index("idx_optimization_studies_created", "created_at"),
)

optimization_iterations = sa.Table(
    "optimization_iterations",
    metadata,
    _col(
        "study_id",
        _T,
        sa.ForeignKey("optimization_studies.study_id", ondelete="CASCADE"),
        primary_key=True,
    ),
    _col("phase", _T, primary_key=True),
    _col("step", _I, primary_key=True),
    _col("candidate", _I, primary_key=True),
    _col("target", _T, nullable=False),
    _col("status", _T, nullable=False),
    _col("params_json", _T, nullable=False),
    _col("texts_json", _T, nullable=False),
    _col("run_id", _T),
    *(
        _col(name, _F)
        for name in (
            "score",
            "ci_low",
            "ci_high",
            "delta",
            "delta_ci_low",
            "delta_ci_high",
            "baseline_delta",
            "baseline_delta_ci_low",
            "baseline_delta_ci_high",
        )
    ),
    _col("accepted", _I),
    _col("values_json", _T),
    _col("note", _T),
    _col("reason", _T),
    _col("started_at", _T, nullable=False),
    _col("finished_at", _T),
    _col("seconds", _F),
    # revision 0017: the bounded measure's value under a constrained objective
    _col("constraint_value", _F),
    sa.CheckConstraint("phase IN ('tune', 'holdout')", name="ck_optimization_iterations_phase"),
    sa.CheckConstraint(
        "status IN ('running', 'completed', 'failed')", name="ck_optimization_iterations_status"
    ),
    sa.Index("idx_optimization_iterations_run", "run_id"),
)
