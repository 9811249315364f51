"""Search latency under load (seed 002's benchmark layer): N concurrent clients drive a
subject's search for a fixed time or number of requests.

Each client is a thread that sends the next query as soon as its last one returns (a closed
loop). Latency is what the client sees, from sending to answer, including any wait for a
subject that takes one call at a time (such a subject runs in a lane of one thread, and the
report says it was serialized). Errors are counted with their first messages, never timed.

Beside what the client sees, each stage the subject timed itself (`SearchResult.latency_ms`:
the reference memory's `lexical`, `dense`, `fusion`, `boost` ...) gets its own percentiles, and
seed 002's per-component targets are checked on them (`COMPONENT_TARGETS`: a stage named
`boost` p95 < 10 ms, `causal` p95 < 20 ms, `hook` p95 < 5 ms; n/a, saying so, for a stage the
subject does not report). A query with session context is searched with it, so that a
session boost runs as it does in production.
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

__all__ = [
    "COMPONENT_TARGETS",
    "MAX_CLIENTS",
    "LoadResult",
    "component_targets",
    "drive_search",
    "load_test",
]

MAX_CLIENTS = 1000

#: seed 002's performance layer: p95 latency targets (ms) of the stages a subject times itself,
#: by stage name: session boost, causal traversal, extraction hook
COMPONENT_TARGETS: dict[str, float] = {"boost": 10.0, "causal": 20.0, "hook": 5.0}


def component_targets(stages: Mapping[str, Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Each of `COMPONENT_TARGETS` against the stage percentiles `stages` (stage -> {p95, ...}):
    `component`, `target_p95_ms`, `p95_ms` (None: not reported), `n`, `status` (met, missed,
    n/a) and, for n/a, why."""
    out = []
    for name, target in COMPONENT_TARGETS.items():
        got = stages.get(name)
        if got is None or got.get("p95") is None:
            out.append(
                {
                    "component": name,
                    "target_p95_ms": target,
                    "p95_ms": None,
                    "n": 0,
                    "status": "n/a",
                    "note": f"the subject reports no `{name}` stage in its latency_ms",
                }
            )
            continue
        p95 = float(got["p95"])
        out.append(
            {
                "component": name,
                "target_p95_ms": target,
                "p95_ms": p95,
                "n": int(got.get("n", 0)),
                "status": "met" if p95 < target else "missed",
                "note": None,
            }
        )
    return out


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
    #: stage -> {p50, p95, n}: the stages the subject timed itself
    stages: dict[str, dict[str, float]] = field(default_factory=dict)

    @property
    def targets(self) -> list[dict[str, Any]]:
        """Seed 002's per-component targets on `stages` (`component_targets`)."""
        return component_targets(self.stages)

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready (with `targets`)."""
        return {
            **{k: getattr(self, k) for k in self.__dataclass_fields__},
            "targets": self.targets,
        }


def drive_search(
    lane: SubjectLane,
    queries: Sequence[str | tuple[str, Any]],
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
    stage_ms: list[dict[str, list[float]]] = [{} for _ in range(clients)]
    start_gate = threading.Barrier(clients + 1)
    deadline: list[float] = [0.0]
    subject = lane.subject

    def client(i: int) -> None:
        mine, failed, staged = latencies[i], errors[i], stage_ms[i]
        start_gate.wait()
        while True:
            n = next(ticket)
            if requests is not None and n >= requests:
                return
            if duration is not None and time.perf_counter() >= deadline[0]:
                return
            query = queries[n % len(queries)]
            text, session = query if isinstance(query, tuple) else (query, None)
            call = (
                functools.partial(subject.search, text, k, session=session)
                if session is not None
                else functools.partial(subject.search, text, k)
            )
            t0 = time.perf_counter()
            try:
                result = lane.call(call)
            except Exception as exc:
                failed.append(f"{type(exc).__name__}: {exc}"[:300])
                continue
            mine.append((time.perf_counter() - t0) * 1000)
            for stage, ms in (getattr(result, "latency_ms", None) or {}).items():
                staged.setdefault(stage, []).append(float(ms))

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
        stages=_stage_percentiles(stage_ms),
    )


def _stage_percentiles(
    per_client: Sequence[Mapping[str, list[float]]],
) -> dict[str, dict[str, float]]:
    """stage -> {p50, p95, n} over every client's searches."""
    merged: dict[str, list[float]] = {}
    for staged in per_client:
        for stage, values in staged.items():
            merged.setdefault(stage, []).extend(values)
    out = {}
    for stage in sorted(merged):
        arr = np.asarray(merged[stage], dtype=np.float64)
        p50, p95 = np.percentile(arr, [50, 95])
        out[stage] = {"p50": float(p50), "p95": float(p95), "n": int(arr.size)}
    return out


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
    queries: list[str | tuple[str, Any]] = [
        (q.text, q.session_context) if q.session_context is not None else q.text
        for q in dataset.queries
    ]
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
