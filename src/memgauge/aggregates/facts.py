"""The facts of the aggregates whose results programs read beside their measures and shapes
(`data.facts`): the documents the write path and the audit write per subject, and the
ranking's systems. The ir aggregate's are `ir_facts.IrFacts`, the cost aggregate's
`cost_shapes.CostFacts`, the repeats aggregate's `data.records.RepeatsFacts`."""

from __future__ import annotations

from typing import Any

from pydantic import ConfigDict, Field

from memgauge._util.model import Model
from memgauge.data.facts import Facts

__all__ = ["AuditFacts", "AuditSubject", "RankedSystem", "RankingFacts", "SubjectsFacts"]


class SubjectsFacts(Facts):
    """Per subject the summary its command writes as it is (`extraction.json`'s and
    `operations.json`'s summary, the audit's attribution of wrong answers)."""

    model_config = ConfigDict(extra="ignore")

    subjects: dict[str, dict[str, Any]] = Field(
        default_factory=dict, description="Subject -> its summary, in the task's order."
    )


class AuditSubject(Model):
    """One subject's audit, as the audit's results.json lists it."""

    model_config = ConfigDict(extra="ignore")

    metrics: dict[str, Any] = Field(default_factory=dict, description="Rate per probe type.")
    counts: dict[str, Any] = Field(default_factory=dict, description="Rate, CI and counts.")
    locomo_qa: dict[str, Any] | None = Field(
        default=None, description="LoCoMo's own scores of the answers, where they apply."
    )
    probes: list[dict[str, Any]] = Field(
        default_factory=list, description="Every probe with its answer and verdict."
    )


class AuditFacts(Facts):
    """The audit aggregate's facts: each subject's audit."""

    model_config = ConfigDict(extra="ignore")

    subjects: dict[str, AuditSubject] = Field(default_factory=dict, description="Per subject.")


class RankedSystem(Model):
    """One system of a ranking, ranked or with why not."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(description="The system.")
    rank: int | None = Field(
        default=None, description="Its rank, shared by equal values (None: not ranked)."
    )
    value: float | None = Field(default=None, description="Its value of the ranking's measure.")
    ci: tuple[float | None, float | None] | None = Field(default=None, description="Its CI.")
    n: int = Field(default=0, description="Items scored.")
    n_failed: int = Field(default=0, description="Items failed.")
    tokens_p50: float | None = Field(default=None, description="Median context tokens.")
    latency_p50: float | None = Field(default=None, description="Median latency, ms.")
    n_items: int = Field(default=0, description="Items.")
    note: str | None = Field(default=None, description="Why it is not ranked, or a caveat.")
    status: str = Field(description="ranked, or why not.")


class RankingFacts(Facts):
    """The ranking aggregate's facts: bench's result.json lists them as they are."""

    model_config = ConfigDict(extra="ignore")

    task: str = Field(description="The task ranked.")
    measure: str = Field(description="The measure it ranks by.")
    encoding: str | None = Field(default=None, description="The cost aggregate's encoding.")
    systems: list[RankedSystem] = Field(
        default_factory=list, description="Ranked first, then the unranked."
    )
