"""Search latency under load (seed 002's benchmark layer): N concurrent clients drive a
subject's search for a fixed time or number of requests.

Each client is a thread that sends the next query as soon as its last one returns (a closed
loop). Latency is what the client sees, from sending to answer, including any wait for a
subject that takes one call at a time (such a subject runs in a lane of one thread, and the
report says it was serialized). Errors are counted with their first messages, never timed.
"""

from __future__ import annotations

import functools
import itertools
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from memgauge.data.models import RetrievalDataset
from memgauge.runs.lanes import SubjectLane
from memgauge.subjects.registry import build_subject

__all__ = ["MAX_CLIENTS", "LoadResult", "drive_search", "load_test"]

MAX_CLIENTS = 1000


@dataclass(frozen=True)
class LoadResult:
    """Latency percentiles (ms), throughput and errors of one load test."""

    clients: int
    requests: int
    errors: int
    seconds: float
    throughput: float
    p50: float | None
    p95: float | None
    p99: float | None
    mean: float | None
    max: float | None
    serialized: bool
    error_samples: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


def drive_search(
    lane: SubjectLane,
    queries: Sequence[str],
    *,
    clients: int,
    k: int = 10,
    duration: float | None = None,
    requests: int | None = None,
) -> LoadResult:
    """Run the load test: stop after `duration` seconds or `requests` requests (one is needed).

    Raises ValueError for an empty query list, no stop condition, or clients outside 1..1000.
    """
    if not queries:
        raise ValueError("no queries to send")
    if (duration is None) == (requests is None):
        raise ValueError("give exactly one of duration and requests")
    if not 1 <= clients <= MAX_CLIENTS:
        raise ValueError(f"clients must be 1..{MAX_CLIENTS}, got {clients}")
    ticket = itertools.count()  # next() on a count is atomic under the GIL
    latencies: list[list[float]] = [[] for _ in range(clients)]
    errors: list[list[str]] = [[] for _ in range(clients)]
    start_gate = threading.Barrier(clients + 1)
    deadline: list[float] = [0.0]
    subject = lane.subject

    def client(i: int) -> None:
        mine, failed = latencies[i], errors[i]
        start_gate.wait()
        while True:
            n = next(ticket)
            if requests is not None and n >= requests:
                return
            if duration is not None and time.perf_counter() >= deadline[0]:
                return
            query = queries[n % len(queries)]
            t0 = time.perf_counter()
            try:
                lane.call(functools.partial(subject.search, query, k))
            except Exception as exc:
                failed.append(f"{type(exc).__name__}: {exc}"[:300])
                continue
            mine.append((time.perf_counter() - t0) * 1000)

    threads = [
        threading.Thread(target=client, args=(i,), name=f"load-client-{i}", daemon=True)
        for i in range(clients)
    ]
    for t in threads:
        t.start()
    began = time.perf_counter()
    deadline[0] = began + (duration or 0.0)
    start_gate.wait()
    for t in threads:
        t.join()
    seconds = time.perf_counter() - began
    lat = np.fromiter(itertools.chain.from_iterable(latencies), dtype=np.float64)
    n_errors = sum(len(e) for e in errors)
    pct = np.percentile(lat, [50, 95, 99]) if lat.size else [None, None, None]
    return LoadResult(
        clients=clients,
        requests=int(lat.size) + n_errors,
        errors=n_errors,
        seconds=seconds,
        throughput=lat.size / seconds if seconds > 0 else 0.0,
        p50=None if pct[0] is None else float(pct[0]),
        p95=None if pct[1] is None else float(pct[1]),
        p99=None if pct[2] is None else float(pct[2]),
        mean=float(lat.mean()) if lat.size else None,
        max=float(lat.max()) if lat.size else None,
        serialized=not lane.concurrent,
        error_samples=list(dict.fromkeys(itertools.chain.from_iterable(errors)))[:5],
    )


def _refill(subject: Any, dataset: RetrievalDataset) -> None:
    """Empty `subject` and give it the dataset's memories."""
    subject.reset()
    subject.ingest(dataset.memories)


def load_test(
    label: str,
    spec: Mapping[str, Any],
    dataset: RetrievalDataset,
    *,
    clients: Sequence[int],
    k: int = 10,
    duration: float | None = None,
    requests: int | None = None,
    ingest: bool = True,
    on_level: Callable[[str, int], None] | None = None,
) -> list[LoadResult]:
    """One load test of subject `spec` per level of `clients`, each on a subject built for it:
    reset and given the dataset's memories first (unless `ingest` is False: it is full
    already), then driven with the dataset's queries. `on_level(label, n)` is called as each
    level starts sending."""
    queries = [q.text for q in dataset.queries]
    results = []
    for n in clients:
        lane = SubjectLane(label, spec, n, build_subject)
        try:
            if ingest:
                lane.call(functools.partial(_refill, lane.subject, dataset))
                flush = getattr(lane.subject, "flush", None)
                if callable(flush):
                    lane.call(flush)
            if on_level is not None:
                on_level(label, n)
            results.append(
                drive_search(lane, queries, clients=n, k=k, duration=duration, requests=requests)
            )
        finally:
            lane.close()
    return results
