"""What an aggregate's result says beside its measures and shapes, typed: its `Facts`.

An aggregate whose result programs read (the settings the ir aggregate scored with, the cost
aggregate's encoding, the write path's per-subject summaries, the ranking's systems) gives it
as a pydantic model of its own, a subclass of `Facts`; a program reads it as that model
(`AggregateResult.facts_as(Model)`), never by key. The store keeps the model's JSON: read back
without the aggregate's code, it is a plain `Facts` that keeps every field it was given, and
`facts_as` types it again. A result stored before facts existed (forms 1 and 2) kept a free
`detail` dict: `facts_as` reads the same model from it, so every model validates from the
`detail` its aggregate wrote (the same field names).

The models here are the views the layers below the aggregates read: the store's query rows and
seed 002's `eval_results` rows read the retrieval facts as `IrView`.
"""

from __future__ import annotations

from pydantic import ConfigDict, Field

from memgauge._util.model import Model

__all__ = ["Facts", "IrPipeline", "IrQuery", "IrSystem", "IrView"]


class Facts(Model):
    """The typed facts of one aggregate's result (subclassed per aggregate); read back without
    its aggregate's model, the fields it was stored with, kept as they are."""

    model_config = ConfigDict(extra="allow")


class _View(Model):
    # a view names what its reader reads and keeps the rest as it was stored
    model_config = ConfigDict(extra="allow")


class IrPipeline(_View):
    """Seed 002's EvalPipelineConfig as a retrieval run had it."""

    sampling_rate: float = Field(default=1.0, description="The share of queries asked.")
    feature_id: str | None = Field(default=None, description="The feature evaluated.")
    run_type: str = Field(default="full", description="full, shadow, regression or ab_test.")
    n_judged: int = Field(default=0, description="Judged queries.")
    n_asked: int = Field(default=0, description="Of those, asked.")


class IrQuery(_View):
    """One query's record in a system's results (the rest kept as stored)."""

    query_id: str = Field(description="The query.")


class IrSystem(_View):
    """One system's results (the rest kept as stored)."""

    name: str = Field(description="The system's label.")
    per_query: list[IrQuery] = Field(default_factory=list, description="Each query's record.")


class IrView(Facts):
    """The retrieval aggregate's facts as the store reads them: each system's queries and the
    pipeline the run had (the rest kept as stored)."""

    pipeline: IrPipeline | None = Field(default=None, description="Seed 002's pipeline config.")
    systems: list[IrSystem] = Field(default_factory=list, description="One per system.")
