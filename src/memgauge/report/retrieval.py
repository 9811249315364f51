"""A retrieval run as `memgauge evaluate` reports it: the `RetrievalEvalResult` its JSON,
Markdown, HTML and terminal views render, rebuilt from the run's record (its `ir` aggregate)."""

from __future__ import annotations

from datetime import datetime

from memgauge.aggregates.retrieval_result import (
    Comparison,
    DatasetInfo,
    EvalSettings,
    RetrievalEvalResult,
    SystemResult,
)
from memgauge.data.records import RunRecord
from memgauge.errors import UsageError

__all__ = ["retrieval_result"]


def retrieval_result(run: RunRecord, task: str | None = None) -> RetrievalEvalResult:
    """The retrieval result of `run` (of its task `task`, else its first retrieval task)."""
    summary = run.summary
    agg = summary.aggregate("ir", task) if summary is not None else None
    if agg is None:
        raise UsageError(f"run {run.run_id} has no retrieval results to report")
    detail = agg.detail
    source = next(
        (t.get("dataset") for t in run.suite.get("tasks", []) if t.get("name") == agg.task), None
    )
    started = datetime.fromisoformat(run.started_at or run.created_at)
    duration = None
    if run.finished_at and run.started_at:
        duration = (datetime.fromisoformat(run.finished_at) - started).total_seconds()
    ds = detail.get("dataset") or {}
    return RetrievalEvalResult(
        run_id=run.run_id,
        created_at=datetime.fromisoformat(run.created_at),
        memgauge_version=str(run.provenance.get("memgauge_version", "")),
        dataset=DatasetInfo(
            name=str(ds.get("name", "dataset")),
            source=source,
            sha256=ds.get("sha256"),
            n_memories=int(ds.get("n_memories", 0)),
            n_queries=int(ds.get("n_queries", 0)),
            n_judgments=int(ds.get("n_judgments", 0)),
            protocol=ds.get("protocol"),
            synthetic=ds.get("synthetic"),
            coverage=ds.get("coverage"),
            warnings=list(ds.get("warnings") or []),
        ),
        settings=EvalSettings.model_validate(detail["settings"]),
        systems=[SystemResult.model_validate(s) for s in detail.get("systems", [])],
        comparisons=[Comparison.model_validate(c) for c in detail.get("comparisons", [])],
        duration_seconds=duration,
    )
