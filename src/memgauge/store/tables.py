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

import json
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Dialect

from memgauge.data.records import USAGE_COUNTERS
from memgauge.store.columns import cols
from memgauge.store.stored_forms import ITERATION_SCORES, RESULT_METRICS, packed, unpacked

__all__ = ["ITERATION_SCORES", "Packed", "metadata", "packed", "stored_json", "unpacked"]


def stored_json(value: Any) -> str:
    """A JSON column's text: keys sorted, no spaces, a value JSON has no form for as its str()."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)


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


def _serial(name: str, *items: Any, key: str = "id") -> sa.Table:
    """A table keyed by a serial integer `key`, its first column (on SQLite AUTOINCREMENT: a
    deleted row's id is never given again), as `revisions.create_serial_table` creates it."""
    pk = _col(key, _I, primary_key=True, autoincrement=True)
    return sa.Table(name, metadata, pk, *items, sqlite_autoincrement=True)


def _fk_run() -> sa.ForeignKey:
    return sa.ForeignKey("suite_runs.run_id", ondelete="CASCADE")


_ITEM_KEY = ("run_id", "subject", "task", "item_id")
_ITEM_REF = [f"suite_run_items.{c}" for c in _ITEM_KEY]

suite_runs = sa.Table(
    "suite_runs",
    metadata,
    _col("run_id", _T, primary_key=True),
    *cols(_T, "suite_name", "status", nullable=False),
    *cols(_T, "reason"),
    *cols(_T, "created_at", nullable=False),
    *cols(_T, "started_at", "finished_at", "heartbeat_at"),
    *cols(_I, "pid"),
    *cols(_T, "host"),
    *cols(_T, "suite_sha256", "suite_json", nullable=False),
    *cols(_T, "suite_path"),
    *cols(_T, "settings_json", "provenance_json", nullable=False),
    *cols(_I, "n_items", nullable=False),
    *cols(Packed(), "summary_json"),
    *cols(_T, "pid_start", "owner"),
    *cols(_T, "kind", nullable=False, server_default="suite"),
    # the gate's last verdict (revision 0011): 'fail' leaves the run out of later baselines,
    # 'accepted' (`gate --accept`) puts it back; NULL: never gated, counted
    *cols(_T, "gate"),
    # the summary without its per-query detail (revision 0016, `memgauge.store.headline`)
    *cols(Packed(), "headline_json"),
    sa.CheckConstraint(_STATUS, name="ck_suite_runs_status"),
    sa.CheckConstraint(_GATE, name="ck_suite_runs_gate"),
    sa.Index("idx_suite_runs_suite", "suite_name", "created_at"),
)

suite_run_subjects = sa.Table(
    "suite_run_subjects",
    metadata,
    _col("run_id", _T, _fk_run(), primary_key=True),
    _col("subject", _T, primary_key=True),
    *cols(_T, "spec_json", nullable=False),
)

suite_run_tasks = sa.Table(
    "suite_run_tasks",
    metadata,
    _col("run_id", _T, _fk_run(), primary_key=True),
    _col("task", _T, primary_key=True),
    *cols(_T, "kind", nullable=False),
    *cols(_T, "dataset", "dataset_sha256"),
    *cols(_T, "spec_json", nullable=False),
    *cols(_I, "n_items", nullable=False),
    *cols(_I, "seq"),
)

suite_run_items = sa.Table(
    "suite_run_items",
    metadata,
    _col("run_id", _T, _fk_run(), primary_key=True),
    _col("subject", _T, primary_key=True),
    _col("task", _T, primary_key=True),
    _col("item_id", _T, primary_key=True),
    *cols(_I, "seq", nullable=False),
    *cols(_T, "status", nullable=False),
    *cols(_I, "attempts", nullable=False, server_default="0"),
    *cols(_T, "category"),
    *cols(_T, "input_json", "expected_json", nullable=False),
    *cols(_F, "score"),
    *cols(_T, "started_at", "finished_at"),
    *cols(_F, "duration_ms"),
    # revision 0020: which time the item went through its subject (`repeat: N`)
    *cols(_I, "repeat_index", nullable=False, server_default="0"),
    # a digest of the item's verdicts (evaluator, value, pass, error or not; revision 0022,
    # `stored_forms.verdicts_digest`): two runs' items with the same digest have the same verdicts,
    # so "changed against a baseline" compares verdicts only where the digests differ
    *cols(_T, "verdicts_digest"),
    sa.CheckConstraint(_STATUS, name="ck_suite_run_items_status"),
    sa.Index("idx_suite_run_items_status", "run_id", "status"),
    # a page of items in run order (revision 0016): read from the index, not sorted whole
    sa.Index("idx_suite_run_items_seq", "run_id", "subject", "task", "seq"),
)

suite_run_outputs = sa.Table(
    "suite_run_outputs",
    metadata,
    *(_col(c, _T, primary_key=True) for c in _ITEM_KEY),
    *cols(Packed(), "output_json", nullable=False),
    *cols(_T, "latency_json", nullable=False),
    *cols(_T, "extra_json"),
    sa.ForeignKeyConstraint(list(_ITEM_KEY), _ITEM_REF, ondelete="CASCADE"),
)

suite_run_scores = sa.Table(
    "suite_run_scores",
    metadata,
    *(_col(c, _T, primary_key=True) for c in _ITEM_KEY),
    _col("evaluator", _T, primary_key=True),
    *cols(_F, "value"),
    *cols(_I, "passed"),
    *cols(_T, "reason", nullable=False),
    *cols(_T, "error"),
    *cols(_T, "detail_json", nullable=False),
    *cols(_T, "raw_reply"),
    *cols(_I, "seq"),
    sa.ForeignKeyConstraint(list(_ITEM_KEY), _ITEM_REF, ondelete="CASCADE"),
)

suite_run_failures = _serial(
    "suite_run_failures",
    _col("run_id", _T, _fk_run(), nullable=False),
    *cols(_T, "subject", "task", nullable=False),
    *cols(_T, "item_id"),
    *cols(_T, "stage", "kind", "message", nullable=False),
    *cols(_I, "attempt", nullable=False),
    *cols(_T, "at", nullable=False),
    sa.Index("idx_suite_run_failures_run", "run_id", "subject", "task"),
    key="failure_id",
)

suite_run_usage = sa.Table(
    "suite_run_usage",
    metadata,
    _col("run_id", _T, _fk_run(), primary_key=True),
    _col("model", _T, primary_key=True),
    *(_col(c, _I, nullable=False, server_default="0") for c in USAGE_COUNTERS),
)

#: each query's detail in a run's ir aggregates (`systems[*].per_query`), by task, subject
#: (the system) and query id (revision 0022): one item's page reads its query's row, not the
#: run's whole summary (93 MB of JSON at 100,000 queries)
suite_run_queries = sa.Table(
    "suite_run_queries",
    metadata,
    _col("run_id", _T, _fk_run(), primary_key=True),
    _col("task", _T, primary_key=True),
    _col("subject", _T, primary_key=True),
    _col("query_id", _T, primary_key=True),
    *cols(Packed(), "detail_json", nullable=False),
)

#: each (subject, task, evaluator)'s values of a run, item by item (revision 0022): the item
#: ids in order (a JSON list) and their values as float64 (NaN: not scored), written with the
#: summary (`item_rows.replace_values`): what comparing two runs reads, 7 rows for a
#: 100,000-item retrieval run instead of 700,000 verdicts
suite_run_values = sa.Table(
    "suite_run_values",
    metadata,
    _col("run_id", _T, _fk_run(), primary_key=True),
    _col("subject", _T, primary_key=True),
    _col("task", _T, primary_key=True),
    _col("evaluator", _T, primary_key=True),
    *cols(Packed(), "item_ids_json", nullable=False),
    *cols(sa.LargeBinary(), "values_f8", nullable=False),
)

#: each item's searchable document (revision 0023, `store.search_docs`): the lower-case text of
#: the values the viewer's search looks in, so a search reads one text an item, not every
#: deflated output inflated
suite_run_search = sa.Table(
    "suite_run_search",
    metadata,
    *(_col(c, _T, primary_key=True) for c in _ITEM_KEY),
    *cols(_T, "doc", nullable=False),
    sa.ForeignKeyConstraint(list(_ITEM_KEY), _ITEM_REF, ondelete="CASCADE"),
)

#: a run's comparison with the suite's run before it, made when the run was recorded
#: (revision 0024, `store.compared_rows`): the compare page of a big run reads it instead of
#: resampling every measure; kept with the state of both runs it was made from (`state_key`)
suite_run_compared = sa.Table(
    "suite_run_compared",
    metadata,
    _col("run_id", _T, _fk_run(), primary_key=True),
    _col("baseline_id", _T, _fk_run(), primary_key=True),
    *cols(_T, "state_key", nullable=False),
    *cols(Packed(), "payload_json", nullable=False),
)

suite_run_setups = sa.Table(
    "suite_run_setups",
    metadata,
    _col("run_id", _T, _fk_run(), nullable=False),
    *cols(_T, "subject", "task", nullable=False),
    *cols(_T, "corpus"),
    *cols(_F, "seconds", nullable=False),
    *cols(_T, "at", nullable=False),
    sa.Index("idx_suite_run_setups", "run_id"),
)

# --- seed 002: production logging ------------------------------------------------------------

eval_queries = _serial(
    "eval_queries",
    _col("query_id", _T, nullable=False, unique=True),
    *cols(_T, "query", nullable=False),
    *cols(_T, "intent", "mode", "session_id"),
    *cols(_T, "tool_name", nullable=False),
    *cols(_T, "result_ids", nullable=False, server_default="[]"),
    *cols(_I, "result_count", nullable=False, server_default="0"),
    *cols(_T, "channel_contributions", server_default="{}"),
    *cols(_F, "total_latency_ms"),
    *cols(_T, "fusion_weights"),
    *cols(_F, "quality_proxy_score"),
    *cols(_T, "trace_id"),
    *cols(_T, "created_at", nullable=False),
    *cols(_I, "is_eval_corpus", nullable=False, server_default="0"),
    *cols(_T, "eval_category"),
    # revision 0014 (seed 002 section 1.1): fallback / degraded flags, the per-stage trace
    # (JSON list of {stage, input_count, output_count, duration_ms}), harvest time
    *cols(_I, "fallback_triggered"),
    *cols(_T, "fallback_reason"),
    *cols(_I, "degraded_mode"),
    *cols(_T, "stage_trace", "harvested_at"),
    # revision 0017 (seed 002 section 1.1): the share of its token budget the search's
    # context used, and the token pressure state the system reported
    *cols(_F, "token_usage_ratio"),
    *cols(_T, "pressure_level"),
    # revision 0018 (seed 002 section 1.1's quality telemetry, `memgauge.store.quality`)
    *cols(_F, "avg_relevance_score", "top_result_score", "boost_impact_delta"),
    *cols(_I, "dedup_tokens_saved"),
    sa.Index("idx_eval_queries_session", "session_id"),
    sa.Index("idx_eval_queries_created", "created_at"),
)

#: people's labels from `memgauge view --review` (revision 0019, `memgauge.store.review`): one
#: row per label given, never updated; a reviewer's latest on a target is their label
review_labels = _serial(
    "review_labels",
    *cols(_T, "run_id", "subject", "task", "item_id", "kind", nullable=False),
    *cols(_T, "target", nullable=False, server_default=""),
    *cols(_T, "reviewer", nullable=False),
    *cols(_I, "grade"),
    *cols(_T, "label", "machine"),
    *cols(_T, "note", nullable=False, server_default=""),
    *cols(_T, "created_at", nullable=False),
    sa.CheckConstraint(
        "kind IN ('hit', 'verdict', 'fact', 'operation')", name="ck_review_labels_kind"
    ),
    sa.CheckConstraint("grade IS NULL OR grade BETWEEN 0 AND 3", name="ck_review_labels_grade"),
    sa.Index("idx_review_labels_item", "run_id", "subject", "task", "item_id"),
)

eval_judgments = _serial(
    "eval_judgments",
    *cols(_T, "query_id", "memory_id", nullable=False),
    *cols(_I, "relevance", nullable=False),
    *cols(_T, "source", nullable=False),
    *cols(_T, "annotator"),
    *cols(_F, "confidence", server_default="1.0"),
    *cols(_T, "created_at", nullable=False),
    sa.CheckConstraint("relevance BETWEEN 0 AND 3", name="ck_eval_judgments_relevance"),
    sa.CheckConstraint(
        "source IN ('manual', 'implicit', 'bootstrapped', 'validated')",
        name="ck_eval_judgments_source",
    ),
    sa.UniqueConstraint("query_id", "memory_id", "source"),
)

FEEDBACK_EVENTS = (
    "'read_after_search', 're_search', 'scroll_past', 'reference', 'validate_useful',"
    " 'validate_not_useful'"
)

eval_feedback = _serial(
    "eval_feedback",
    *cols(_T, "event_type", "session_id", nullable=False),
    *cols(_T, "query_id", "memory_id"),
    *cols(_I, "rank_in_results"),
    *cols(_T, "metadata", server_default="{}"),
    *cols(_T, "created_at", nullable=False),
    sa.CheckConstraint(f"event_type IN ({FEEDBACK_EVENTS})", name="ck_eval_feedback_event"),
    sa.Index("idx_eval_feedback_query", "query_id"),
)

memory_confidence = sa.Table(
    "memory_confidence",
    metadata,
    _col("memory_id", _T, primary_key=True),
    *cols(_F, "confidence", nullable=False),
    *cols(_I, "validations", nullable=False),
    *cols(_T, "updated_at", nullable=False),
)

# --- seed 002 sections 5.3, 5.4: sessions, task outcomes, agent outputs (revision 0014) -------

eval_sessions = sa.Table(
    "eval_sessions",
    metadata,
    _col("session_id", _T, primary_key=True),
    *cols(_I, "turns"),
    *cols(_T, "started_at", nullable=False),
    *cols(_T, "ended_at"),
    *cols(_T, "updated_at", nullable=False),
    *cols(_T, "metadata", server_default="{}"),
)

eval_outcomes = _serial(
    "eval_outcomes",
    *cols(_T, "session_id", nullable=False),
    *cols(_T, "task_id"),
    *cols(_I, "success"),
    *cols(_F, "score", "knowledge_delta", "uncertainty_reduction", "learning_index"),
    *cols(_T, "spec_folder"),
    *cols(_T, "metadata", server_default="{}"),
    *cols(_T, "created_at", nullable=False),
    sa.CheckConstraint("success IS NULL OR success IN (0, 1)", name="ck_eval_outcomes_success"),
    sa.Index("idx_eval_outcomes_session", "session_id"),
)

eval_agent_outputs = _serial(
    "eval_agent_outputs",
    *cols(_T, "session_id", nullable=False),
    *cols(_T, "query_id"),
    *cols(_T, "text", "created_at", nullable=False),
    sa.Index("idx_eval_agent_outputs_session", "session_id"),
)

# --- seed 002: results, A/B tests, shadow runs -----------------------------------------------

eval_results = _serial(
    "eval_results",
    *cols(_T, "run_id", "run_type", nullable=False),
    *cols(_T, "feature_id"),
    *cols(_T, "system", nullable=False),
    *cols(_F, *RESULT_METRICS),
    *cols(_T, "channel_contribution_json"),
    *cols(_F, "result_diversity_score"),
    *cols(_I, "query_count", nullable=False),
    *cols(_F, "confidence_interval_lower", "confidence_interval_upper"),
    *cols(_T, "control_run_id", "control_system"),
    *cols(_F, "mrr_delta", "ndcg_delta", "p_value"),
    *cols(_I, "is_significant"),
    *cols(_T, "created_at", nullable=False),
    *cols(_T, "per_query_results"),
    sa.CheckConstraint(
        "run_type IN ('full', 'shadow', 'regression', 'ab_test')", name="ck_eval_results_type"
    ),
    sa.UniqueConstraint("run_id", "system"),
    sa.Index("idx_eval_results_run", "run_id"),
    sa.Index("idx_eval_results_feature", "feature_id"),
    sa.Index("idx_eval_results_type", "run_type"),
    sa.Index("idx_eval_results_created", "created_at"),
)

eval_ab_tests = _serial(
    "eval_ab_tests",
    _col("feature_id", _T, nullable=False, unique=True),
    *cols(_T, "status", nullable=False),
    *cols(_F, "log_likelihood_ratio", nullable=False, server_default="0"),
    *cols(_F, "upper_bound", "lower_bound", nullable=False),
    *cols(_I, "sample_count", nullable=False, server_default="0"),
    *cols(_F, "control_mrr_sum", "treatment_mrr_sum", "control_ndcg_sum", "treatment_ndcg_sum"),
    *cols(_I, "min_samples", nullable=False, server_default="100"),
    *cols(_F, "graduation_threshold", nullable=False, server_default="0.03"),
    *cols(_T, "started_at", "updated_at", nullable=False),
    *cols(_T, "graduated_at"),
    *cols(_T, "metric", "config_json", "state_json", nullable=False),
    sa.CheckConstraint(
        "status IN ('running', 'graduated', 'rejected', 'paused')", name="ck_eval_ab_status"
    ),
    sa.Index("idx_eval_ab_status", "status"),
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
    *cols(_T, "query_id"),
    *cols(_F, "control", "treatment", nullable=False),
    *cols(_F, "control_latency_ms", "treatment_latency_ms", "constitutional_delta"),
    _col("shadow_run_id", _I),  # revision 0013: the eval_shadow_runs row it came from
    _col("pair_key", _T),  # revision 0015: what identifies the pair (online.ab.pair_key)
    sa.Index("ux_eval_ab_test_pairs_key", "feature_id", "pair_key", unique=True),
)

eval_shadow_runs = _serial(
    "eval_shadow_runs",
    *cols(_T, "query_id", "feature_id", "control_result_ids", nullable=False),
    *cols(_T, "treatment_result_ids"),
    *cols(_F, "rank_correlation", "set_overlap"),
    *cols(_I, "top_result_changed", "order_differences"),
    *cols(_F, "mrr_delta", "ndcg_delta", "control_latency_ms", "treatment_latency_ms"),
    *cols(_T, "created_at", nullable=False),
    *cols(_F, "spearman_rho"),
    *cols(_T, "classification", "error"),
    # revision 0013: the query's context, the log level, each arm's RR and nDCG
    *cols(_T, "intent", "session_id", "log_level", "query_text"),
    *cols(_F, "control_mrr", "treatment_mrr", "control_ndcg", "treatment_ndcg"),
    sa.CheckConstraint(
        "error IS NOT NULL OR treatment_result_ids IS NOT NULL", name="ck_eval_shadow_outcome"
    ),
    sa.Index("idx_eval_shadow_feature", "feature_id"),
    sa.Index("idx_eval_shadow_created", "created_at"),
)

# shadowed queries a full queue dropped (revision 0013)
eval_shadow_drops = sa.Table(
    "eval_shadow_drops",
    metadata,
    _col("feature_id", _T, primary_key=True),
    *cols(_I, "dropped", nullable=False),
    *cols(_T, "updated_at", nullable=False),
)

# seed 002's feature flags (revision 0013; columns documented in store/flags.py)
eval_flags = sa.Table(
    "eval_flags",
    metadata,
    _col("feature_id", _T, primary_key=True),
    *cols(_F, "rollout_percent", nullable=False),
    *cols(_I, "shadow_enabled", nullable=False),
    *cols(_F, "shadow_percent", nullable=False),
    *cols(_I, "min_samples", nullable=False),
    *cols(_F, "graduation_threshold", nullable=False),
    *cols(_I, "feed_ab", nullable=False),
    *cols(_T, "created_at", "updated_at", nullable=False),
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
    *cols(_T, "suite_name", nullable=False),
    *cols(_T, "suite_path"),
    *cols(_T, "task", "measure", "subject", "strategy", "status", nullable=False),
    *cols(_T, "stopped_because"),
    *cols(_T, "config_json", nullable=False),
    *cols(_I, "best_step", "best_candidate"),
    *cols(_T, "holdout_json"),
    *cols(_T, "usage_json", nullable=False, server_default="{}"),
    *cols(_I, "pid"),
    *cols(_T, "pid_start", "host"),
    *cols(_T, "created_at", "updated_at", nullable=False),
    *cols(_T, "finished_at"),
    sa.CheckConstraint(
        "status IN ('running', 'completed', 'cancelled', 'failed')",
        name="ck_optimization_studies_status",
    ),
    sa.Index("idx_optimization_studies_created", "created_at"),
)

#: an iteration's scores: `stored_forms.ITERATION_SCORES` (columns documented in
#: store/optimization.py)
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
    *cols(_T, "target", "status", "params_json", "texts_json", nullable=False),
    *cols(_T, "run_id"),
    *cols(_F, *ITERATION_SCORES),
    *cols(_I, "accepted"),
    *cols(_T, "values_json", "note", "reason"),
    *cols(_T, "started_at", nullable=False),
    *cols(_T, "finished_at"),
    *cols(_F, "seconds"),
    # revision 0017: the bounded measure's value under a constrained objective
    *cols(_F, "constraint_value"),
    sa.CheckConstraint("phase IN ('tune', 'holdout')", name="ck_optimization_iterations_phase"),
    sa.CheckConstraint(
        "status IN ('running', 'completed', 'failed')", name="ck_optimization_iterations_status"
    ),
    sa.Index("idx_optimization_iterations_run", "run_id"),
)

#: whole traces (revision 0021, `memgauge.store.traces`): one row per trace, its spans in
#: `trace_spans`; nanosecond times are 64-bit (Unix nanoseconds pass 2**31 and 2**53)
traces = sa.Table(
    "traces",
    metadata,
    _col("trace_id", _T, primary_key=True),
    *cols(_T, "format", "source", nullable=False),
    *cols(_T, "session_id", "root_span_id", "root_name"),
    *cols(sa.BigInteger, "start_ns", "end_ns"),
    *cols(_T, "answer", "error"),
    *cols(_I, "n_spans", "n_retrievals", "n_tool_calls", "n_llm_calls", nullable=False),
    *cols(_I, "prompt_tokens", "completion_tokens", "total_tokens"),
    *cols(_T, "imported_at", nullable=False),
    sa.Index("idx_traces_session", "session_id", "start_ns"),
    sa.Index("idx_traces_start", "start_ns"),
)

trace_spans = sa.Table(
    "trace_spans",
    metadata,
    _col("trace_id", _T, sa.ForeignKey("traces.trace_id", ondelete="CASCADE"), primary_key=True),
    _col("span_id", _T, primary_key=True),
    *cols(_I, "seq", nullable=False),
    *cols(_T, "parent_id", "kind", "name", "session_id"),
    *cols(sa.BigInteger, "start_ns", "end_ns"),
    *cols(_I, "line"),
    *cols(_T, "error", "input_json", "output_json"),
    *cols(_T, "tags_json", nullable=False, server_default="[]"),
    *cols(_T, "query", "hits_json"),
    *cols(_F, "latency_ms"),
    *cols(_T, "tool_name", "tool_args_json", "tool_result_json", "tool_error"),
    *cols(_T, "model"),
    *cols(_I, "prompt_tokens", "completion_tokens", "total_tokens"),
    *cols(_T, "llm_output", "llm_error"),
)
