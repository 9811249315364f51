"""The `Recorder` protocol through which runs are kept, and an in-memory recorder for tests.

`runs` never imports `store`; `memgauge.store.results.ResultStore` satisfies this protocol.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from memgauge.runs.result import RetrievalEvalResult

__all__ = ["InMemoryRecorder", "Recorder", "record_result"]


class Recorder(Protocol):
    """Somewhere runs are kept."""

    def save_run(
        self,
        run: Mapping[str, Any],
        systems: Sequence[Mapping[str, Any]],
        queries: Sequence[Mapping[str, Any]],
    ) -> None:
        """Keep one run, its systems and its per-query rows, all or nothing."""
        ...


class InMemoryRecorder:
    """Keeps runs in lists; for tests and for callers that want no files."""

    def __init__(self) -> None:
        self.runs: list[dict[str, Any]] = []
        self.systems: list[dict[str, Any]] = []
        self.queries: list[dict[str, Any]] = []

    def save_run(
        self,
        run: Mapping[str, Any],
        systems: Sequence[Mapping[str, Any]],
        queries: Sequence[Mapping[str, Any]],
    ) -> None:
        """Append copies of the rows."""
        self.runs.append(dict(run))
        self.systems.extend(dict(s) for s in systems)
        self.queries.extend(dict(q) for q in queries)


def record_result(recorder: Recorder, result: RetrievalEvalResult) -> None:
    """Flatten a retrieval evaluation into run, system and per-query rows and record them."""
    run = {
        "run_id": result.run_id,
        "kind": "retrieval",
        "created_at": result.created_at.isoformat(),
        "memgauge_version": result.memgauge_version,
        "dataset_name": result.dataset.name,
        "dataset_sha256": result.dataset.sha256,
        "settings": result.settings.model_dump(mode="json"),
        "result_json": result.model_dump_json(),
        "duration_seconds": result.duration_seconds,
    }
    systems = [
        {
            "system": s.name,
            "status": s.status,
            "reason": s.reason,
            "spec": s.spec,
            "metrics": {k: v.model_dump(mode="json") for k, v in s.metrics.items()},
        }
        for s in result.systems
    ]
    queries = [
        {
            "system": s.name,
            "query_id": q.query_id,
            "category": q.category,
            "intent": q.intent,
            "metrics": q.metrics,
            "hits": q.hits,
            "latency_ms": q.latency_ms,
            "error": q.error,
        }
        for s in result.systems
        for q in s.per_query
    ]
    recorder.save_run(run, systems, queries)
