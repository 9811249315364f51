"""What the ir aggregate's result says beside its measures: the dataset, the settings it scored
with, every system's results (with each query's), the paired comparisons, seed 002's pipeline
config and the relevance judge's pool, typed (`IrFacts`). `memgauge evaluate`'s result.json, its
bootstrapped judgments, `runs show` and the viewer read them."""

from __future__ import annotations

from typing import Any

from pydantic import ConfigDict, Field, model_validator

from memgauge._util.model import Model
from memgauge.aggregates.retrieval_result import (
    Comparison,
    DatasetInfo,
    EvalSettings,
    SystemResult,
)
from memgauge.data.facts import Facts, IrPipeline
from memgauge.data.models import Judgment

__all__ = ["IrFacts", "PoolFailure", "PoolJudgeFacts"]


class PoolFailure(Model):
    """A pooled (query, memory) pair the judge could not grade."""

    model_config = ConfigDict(extra="forbid")

    query_id: str = Field(description="The query.")
    memory_id: str = Field(description="The memory.")
    error: str = Field(description="Why.")


class PoolJudgeFacts(Model):
    """The relevance judge's grades of the pool's unjudged memories (`--pool-judge`)."""

    model_config = ConfigDict(extra="forbid")

    judge: str | dict[str, Any] = Field(description="The judge's spec.")
    n_pooled: int = Field(description="Unjudged pairs in some system's top N.")
    n_graded: int = Field(description="Pairs it graded.")
    n_failed: int = Field(description="Pairs it could not grade.")
    judgments: list[Judgment] = Field(description="Its grades, as bootstrapped judgments.")
    failures: list[PoolFailure] = Field(description="The pairs it could not grade, with why.")


class IrFacts(Facts):
    """The ir aggregate's facts (module docstring)."""

    model_config = ConfigDict(extra="ignore")

    dataset: DatasetInfo = Field(description="What was evaluated (its source is the suite's).")
    settings: EvalSettings = Field(description="The settings it scored with.")
    systems: list[SystemResult] = Field(default_factory=list, description="One per system.")
    comparisons: list[Comparison] = Field(
        default_factory=list, description="Each system against the first."
    )
    pipeline: IrPipeline | None = Field(
        default=None, description="Seed 002's pipeline config, where one was given."
    )
    pool_judge: PoolJudgeFacts | None = Field(
        default=None, description="The judge's pool, where one graded it."
    )

    @model_validator(mode="before")
    @classmethod
    def _dataset(cls, data: Any) -> Any:
        # a result stored before facts may name its dataset's counts only in part
        if isinstance(data, dict):
            given = data.get("dataset") or {}
            if isinstance(given, dict):
                counts = {"name": "dataset", "n_memories": 0, "n_queries": 0, "n_judgments": 0}
                kept = {k: v for k, v in given.items() if v is not None}
                return {**data, "dataset": {**counts, **kept}}
        return data
