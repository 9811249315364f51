"""A retrieval run as `memgauge evaluate` reports it: the `RetrievalEvalResult` its JSON,
Markdown, HTML and terminal views render, rebuilt from the run's record (its `ir` aggregate's facts)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from memgauge.aggregates.ir_facts import IrFacts
from memgauge.aggregates.retrieval_result import RetrievalEvalResult
from memgauge.data.facts import IrView
from memgauge.data.models import Judgment
from memgauge.data.records import AggregateResult, RunRecord
from memgauge.errors import UsageError

__all__ = ["pipelines", "pool_judgments", "ranking_json", "retrieval_result"]


def retrieval_result(run: RunRecord, task: str | None = None) -> RetrievalEvalResult:
    """The retrieval result of `run` (of its task `task`, else its first retrieval task)."""
    summary = run.summary
    agg = summary.aggregate("ir", task) if summary is not None else None
    if agg is None:
        raise UsageError(f"run {run.run_id} has no retrieval results to report")
    facts = agg.facts_as(IrFacts)
    if facts is None:
        raise UsageError(f"run {run.run_id} has no retrieval results to report")
    source = next(
        (t.get("dataset") for t in run.suite.get("tasks", []) if t.get("name") == agg.task), None
    )
    started = datetime.fromisoformat(run.started_at or run.created_at)
    duration = None
    if run.finished_at and run.started_at:
        duration = (datetime.fromisoformat(run.finished_at) - started).total_seconds()
    return RetrievalEvalResult(
        run_id=run.run_id,
        created_at=datetime.fromisoformat(run.created_at),
        memgauge_version=str(run.provenance.get("memgauge_version", "")),
        dataset=facts.dataset.model_copy(update={"source": source}),
        settings=facts.settings,
        systems=facts.systems,
        comparisons=facts.comparisons,
        duration_seconds=duration,
    )


def pool_judgments(ir: AggregateResult) -> list[Judgment] | None:
    """The relevance judge's grades of the pool's unjudged memories, where it graded them."""
    facts = ir.facts_as(IrFacts)
    return facts.pool_judge.judgments if facts is not None and facts.pool_judge else None


def pipelines(aggregates: Sequence[AggregateResult | Mapping[str, Any]]) -> dict[str, Any]:
    """Per retrieval task, seed 002's EvalPipelineConfig the run had (its JSON), where one was
    given; `aggregates` as stored, or their JSON."""
    out = {}
    for a in aggregates:
        agg = a if isinstance(a, AggregateResult) else AggregateResult.model_validate(a)
        facts = agg.facts_as(IrView) if agg.aggregate == "ir" else None
        if facts is not None and facts.pipeline is not None:
            out[agg.task] = facts.pipeline.model_dump(mode="json")
    return out


def ranking_json(ranking: AggregateResult) -> dict[str, Any]:
    """A ranking aggregate's systems, as bench's result.json lists them."""
    # here, not at import: a run without a ranking (every `evaluate`) loads no other
    # aggregate's facts models
    from memgauge.aggregates.facts import RankingFacts

    facts = ranking.facts_as(RankingFacts)
    return facts.model_dump(mode="json") if facts is not None else {}
