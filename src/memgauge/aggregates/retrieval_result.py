"""The persisted result of a retrieval evaluation: what reports render and the store keeps.

A metric with no data has `value=None` and its counts, never 0. Every aggregate carries
`n_scored` and `n_failed`.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import ConfigDict, Field, model_validator

from memgauge._util.model import Model
from memgauge._util.numbers import ALPHA
from memgauge.metrics.conventions import (
    NO_RELEVANT_IF_UNSTATED,
    Gain,
    NoRelevant,
    conventions_text,
)

__all__ = [
    "AgentMetric",
    "Comparison",
    "DatasetInfo",
    "EvalSettings",
    "ExpansionImpact",
    "LatencySummary",
    "MetricComparison",
    "MetricSummary",
    "QueryResult",
    "RetrievalEvalResult",
    "SystemResult",
]


class _Model(Model):
    model_config = ConfigDict(extra="forbid")


class MetricSummary(_Model):
    """Mean of one measure over queries, with a bootstrap CI and counts."""

    value: float | None = Field(description="Mean over scored queries; None when none scored.")
    ci_low: float | None = Field(default=None, description="Lower CI bound.")
    ci_high: float | None = Field(default=None, description="Upper CI bound.")
    n_scored: int = Field(description="Queries that contributed a value.")
    n_failed: int = Field(default=0, description="Queries that could not be scored.")


class AgentMetric(_Model):
    """An agent-memory metric (seed 002 section 3.3): value or n/a, its count and target."""

    value: float | None = Field(description="The value; None = n/a (no applicable data).")
    n: int = Field(description="How many searches / chains / pairs it is computed over.")
    ci_low: float | None = Field(
        default=None, description="Lower bound of its 95% CI, where it has one (tier precision)."
    )
    ci_high: float | None = Field(default=None, description="Upper bound of its 95% CI.")
    target: str | None = Field(default=None, description="The seed's target, e.g. '>= 0.90'.")
    meets_target: bool | None = Field(default=None, description="Whether the target is met.")
    note: str | None = Field(default=None, description="Why n/a, or how it was computed.")
    detail: dict[str, Any] = Field(default_factory=dict, description="Per-tier, per-channel, ...")


class LatencySummary(_Model):
    """Latency percentiles of one search stage, in milliseconds."""

    p50: float = Field(description="Median.")
    p95: float = Field(description="95th percentile.")
    p99: float = Field(description="99th percentile.")
    mean: float = Field(description="Mean.")
    n: int = Field(description="Searches measured.")


class QueryResult(_Model):
    """One query's outcome for one system."""

    query_id: str = Field(description="Query id.")
    text: str = Field(description="Query text.")
    intent: str | None = Field(default=None, description="Intent.")
    category: str | None = Field(default=None, description="Category.")
    metrics: dict[str, float | None] = Field(description="Measure -> value (None = skipped).")
    hits: list[str] = Field(description="Returned ids, best first.")
    channels: list[list[str]] = Field(default_factory=list, description="Channels per hit.")
    relevant: list[str] = Field(default_factory=list, description="Ids judged relevant.")
    relevant_channels: dict[str, list[str]] = Field(
        default_factory=dict,
        description="Judged memory id -> the channels its judgment says produced it "
        "(seed 002 `sourceChannels`); only judgments that name channels.",
    )
    agent_metrics: dict[str, float] = Field(
        default_factory=dict,
        description="This query's own values of the agent-memory metrics that have one "
        "(importance-weighted recall, tier precision, ...); absent = not applicable.",
    )
    latency_ms: dict[str, float] = Field(default_factory=dict, description="Stage latencies.")
    pre_expansion: list[str] | None = Field(
        default=None, description="Returned ids before query expansion, when reported."
    )
    error: str | None = Field(default=None, description="Why the search failed, if it did.")


class ExpansionImpact(_Model):
    """Seed 002's query-expansion impact: the rankings before and after expansion compared
    (a = before, b = after) on the queries whose search reported both."""

    n_queries: int = Field(description="Queries with a ranking before and after expansion.")
    metrics: list[MetricComparison] = Field(
        description="Per measure: before (mean_a), after (mean_b), delta with its paired CI, "
        "Holm-corrected p across measures."
    )
    new_hit_share: float | None = Field(
        default=None,
        description="Mean over queries of the share of returned memories found only after "
        "expansion; None when no search returned anything.",
    )
    new_relevant: int = Field(
        default=0, description="Relevant memories that only the expanded searches returned."
    )


class SystemResult(_Model):
    """Everything measured for one subject configuration."""

    name: str = Field(description="Label, e.g. reference-hybrid.")
    spec: dict[str, Any] = Field(description="The subject's spec {name: {args}}.")
    status: Literal["ok", "unavailable", "failed"] = Field(description="Whether it ran.")
    reason: str | None = Field(default=None, description="Why unavailable/failed.")
    metrics: dict[str, MetricSummary] = Field(default_factory=dict, description="IR metrics.")
    agent_metrics: dict[str, AgentMetric] = Field(
        default_factory=dict, description="Agent-memory metrics."
    )
    breakdown: dict[str, dict[str, dict[str, MetricSummary]]] = Field(
        default_factory=dict,
        description="dimension (intent/category) -> group -> measure -> summary.",
    )
    counts: dict[str, int] = Field(default_factory=dict, description="Query accounting.")
    notes: list[str] = Field(default_factory=list, description="Accounting notes for the reader.")
    latency_ms: dict[str, LatencySummary] = Field(
        default_factory=dict, description="Per-stage latency."
    )
    ingest_seconds: float | None = Field(default=None, description="Time to ingest the corpus.")
    per_query: list[QueryResult] = Field(default_factory=list, description="Per-query detail.")
    expansion: ExpansionImpact | None = Field(
        default=None,
        description="Query-expansion impact, for a system that reports its rankings before "
        "expansion (`SearchResult.pre_expansion`); None otherwise.",
    )


class MetricComparison(_Model):
    """Paired comparison of one measure between two systems."""

    measure: str = Field(description="Canonical measure string.")
    mean_a: float | None = Field(description="Baseline mean over paired queries.")
    mean_b: float | None = Field(description="Candidate mean over paired queries.")
    delta: float | None = Field(description="mean_b - mean_a.")
    ci_low: float | None = Field(default=None, description="Delta CI lower bound.")
    ci_high: float | None = Field(default=None, description="Delta CI upper bound.")
    p_value: float | None = Field(default=None, description="Raw p of the primary test.")
    p_holm: float | None = Field(default=None, description="Holm-adjusted p across measures.")
    p_t: float | None = Field(default=None, description="Paired t-test p.")
    p_wilcoxon: float | None = Field(default=None, description="Wilcoxon signed-rank p.")
    effect_size: float | None = Field(default=None, description="Cohen's d_z.")
    mark: str = Field(default="", description="Significance mark from p_holm.")
    n: int = Field(description="Paired queries.")


class SequentialTest(_Model):
    """Seed 002's sequential test of a comparison: the SPRT (`stats.sequential`) run over the
    paired per-query differences of one measure, in query order."""

    measure: str = Field(description="The measure tested (RR@10, seed 002's MRR, when run).")
    sequential_test_decision: Literal["continue", "accept-treatment", "accept-control"] = Field(
        description="Seed 002's sequentialTestDecision."
    )
    decision: str = Field(
        description="The SPRT's own: continue, treatment_better, no_difference, inconclusive."
    )
    log_lr: float | None = Field(description="Log likelihood ratio (None: not started).")
    n: int = Field(description="Pairs read before it decided.")
    n_pairs: int = Field(description="Pairs it could read.")
    n_informative: int = Field(description="Pairs read whose arms differ.")
    delta: float = Field(description="Minimum detectable effect.")
    alpha: float = Field(description="Type I error.")
    beta: float = Field(description="Type II error.")
    bounds: Literal["ville", "wald"] = Field(description="The stopping bounds' formula.")
    upper: float = Field(description="Stop for the treatment at or above.")
    lower: float = Field(description="Stop for the control at or below.")
    min_samples: int = Field(description="Informative pairs before any decision.")


class Comparison(_Model):
    """Candidate system against baseline system."""

    baseline: str = Field(description="Baseline system name.")
    candidate: str = Field(description="Candidate system name.")
    test: str = Field(description="Primary test, e.g. randomization.")
    metrics: list[MetricComparison] = Field(description="Per-measure comparisons.")
    by_category: dict[str, list[MetricComparison]] = Field(
        default_factory=dict,
        description="Query category -> the same paired comparisons over that category's "
        "queries, Holm-corrected across measures within the category.",
    )
    sequential_test_decision: Literal["continue", "accept-treatment", "accept-control"] | None = (
        Field(default=None, description="Seed 002's sequentialTestDecision (`sequential`).")
    )
    sequential: SequentialTest | None = Field(
        default=None, description="The SPRT behind `sequential_test_decision`."
    )


class DatasetInfo(_Model):
    """What was evaluated."""

    name: str = Field(description="Dataset name.")
    source: str | None = Field(default=None, description="Path it was read from.")
    sha256: str | None = Field(default=None, description="Content hash of the dataset.")
    n_memories: int = Field(description="Corpus size.")
    n_queries: int = Field(description="Queries.")
    n_judgments: int = Field(description="Judgments.")
    protocol: str | None = Field(
        default=None,
        description="The benchmark protocol the dataset was imported under, e.g. "
        "longmemeval-paper (turn): which conventions its numbers follow.",
    )
    synthetic: str | None = Field(
        default=None,
        description="`synthetic data: generated by MODEL on DATE from N memories` when the "
        "dataset was generated (`memgauge synth`); None for data people wrote or harvested.",
    )
    coverage: dict[str, Any] | None = Field(
        default=None,
        description="Judged queries per category against seed 002's rule (`stats.coverage`:"
        " at least 15 per category for a per-category comparison; the seed's targets when the"
        " dataset uses its categories).",
    )
    warnings: list[str] = Field(
        default_factory=list, description="Each shortfall of `coverage`, as `health` words it."
    )


class EvalSettings(_Model):
    """The settings of an evaluation."""

    measures: list[str] = Field(description="Canonical measure strings.")
    k: int = Field(description="Search depth requested from every system.")
    rel_threshold: int = Field(description="Grade at or above which a memory is relevant.")
    gain: Gain = Field(description="nDCG gain.")
    no_relevant: NoRelevant | Literal["fail"] = Field(
        default=NO_RELEVANT_IF_UNSTATED,
        description="What a judged query with no relevant memory scored: 0, 1.0 where the "
        "measure is 0/0 (seed 002's Recall), or nothing (skipped; `fail`: counted as failed).",
    )
    n_resamples: int = Field(description="Bootstrap resamples.")
    confidence: float = Field(description="CI level.")
    seed: int = Field(description="Random seed.")
    alpha: float = Field(default=ALPHA, description="Significance level for marks.")
    ingested: bool = Field(
        default=True,
        description="Whether each system was reset and given the dataset's memories; false when"
        " the systems were searched as they stood (a live system holding its own memories).",
    )
    conventions: str = Field(
        default="",
        description="The conventions above as one line (`relevant: grade >= 2, gain: exp`), the"
        " text every report prints beside its numbers; always derived from them.",
    )

    @model_validator(mode="after")
    def _state_conventions(self) -> EvalSettings:
        # derived, never trusted from a file: a hand-edited result cannot print other
        # conventions than its numbers were computed with
        self.conventions = conventions_text(
            self.rel_threshold, self.gain, no_relevant=self.no_relevant, measures=self.measures
        )
        return self


class RetrievalEvalResult(_Model):
    """A whole retrieval evaluation run."""

    schema_version: Literal[1] = Field(default=1, description="Format version.")
    run_id: str = Field(description="Unique run id.")
    created_at: datetime = Field(description="UTC start time.")
    memgauge_version: str = Field(description="memgauge version.")
    dataset: DatasetInfo = Field(description="The dataset.")
    settings: EvalSettings = Field(description="The settings.")
    systems: list[SystemResult] = Field(description="One entry per subject configuration.")
    comparisons: list[Comparison] = Field(default_factory=list, description="Pairwise.")
    duration_seconds: float | None = Field(default=None, description="Wall time of the run.")

    def shapes_source(self) -> dict[str, Any]:
        """The result as JSON without the systems' per-query records, which no shape reads
        (`aggregates.ir_shapes`): dumping LoCoMo's 1,536 of them took 33 ms of CPU for each of
        the terminal tables and summary.md, against 1 ms for the rest."""
        return self.model_dump(mode="json", exclude={"systems": {"__all__": {"per_query"}}})
