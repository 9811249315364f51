"""Search latency and throughput of a live subject under concurrent clients."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from memgauge.data.models import RetrievalDataset
from memgauge.runs.loadtest import LoadResult, load_test
from memgauge.subjects.parse import parse_system

__all__ = ["bench_search", "bench_versus"]


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


def bench_versus(
    baseline: Sequence[tuple[str, LoadResult]], boosted: Sequence[tuple[str, LoadResult]]
) -> list[dict[str, Any]]:
    """Seed 002's baseline-against-boosted comparison, one row per level of each boosted
    subject against the baseline level with as many clients: both p50 / p95 (ms), both
    throughputs, the p95 change in ms and as a share of the baseline's (None where either side
    has no latency: every request failed)."""
    by_clients = {res.clients: (label, res) for label, res in baseline}
    rows = []
    for label, res in boosted:
        found = by_clients.get(res.clients)
        if found is None:
            continue
        base_label, base = found
        change = None if base.p95 is None or res.p95 is None else res.p95 - base.p95
        rows.append(
            {
                "clients": res.clients,
                "baseline": base_label,
                "boosted": label,
                "p50_ms": [base.p50, res.p50],
                "p95_ms": [base.p95, res.p95],
                "throughput": [base.throughput, res.throughput],
                "p95_change_ms": change,
                "p95_change": None if change is None or not base.p95 else change / base.p95,
            }
        )
    return rows
