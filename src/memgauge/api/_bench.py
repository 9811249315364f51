"""Search latency and throughput of a live subject under concurrent clients."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from memgauge.data.models import RetrievalDataset
from memgauge.runs.loadtest import LoadResult, load_test
from memgauge.subjects.parse import parse_system

__all__ = ["bench_search"]


def bench_search(
    subject: str,
    dataset: RetrievalDataset,
    *,
    clients: Sequence[int] = (8,),
    k: int = 10,
    duration: float | None = None,
    requests: int | None = None,
    ingest: bool = True,
    on_level: Callable[[str, int], None] | None = None,
) -> list[tuple[str, LoadResult]]:
    """Drive the search of `subject` (as `evaluate -s` takes it; a spec file may hold several)
    with `dataset`'s queries, at each level of concurrent `clients`, for `duration` seconds or
    `requests` requests per level: (subject label, p50 / p95 / p99 latency, throughput,
    errors) per level. See `runs.loadtest.load_test`."""
    return [
        (label, result)
        for label, spec in parse_system(subject, "SUBJECT")
        for result in load_test(
            label,
            spec,
            dataset,
            clients=clients,
            k=k,
            duration=duration,
            requests=requests,
            ingest=ingest,
            on_level=on_level,
        )
    ]
