"""Shadow (dark) runs (seed 002 section 4): a share of production queries is also answered by
the treatment, out of the user's sight, and the two rankings are compared.

- Bucketing: a query id's bucket is the first 8 bytes of SHA-256(salt + id) as a fraction of
  2^64: the same query always lands in the same bucket, in every process, with no state.
- Diff metrics of one query, over the top `k` of each arm: Kendall tau-b and Spearman rho
  over the union of both lists (an item missing from a list ranks after all of that list's
  items, tied), Jaccard overlap of the two top-k sets, whether the top result changed, how
  many of the k positions differ, and with judgments the RR@k and nDCG@k deltas
  (treatment - control), computed by `memgauge.metrics` with `evaluate`'s conventions
  (relevant = grade >= 2, exp gain, unless a MetricConfig says otherwise); both latencies.
  A query with judgments but no hits in either arm has deltas 0; a query with no judgments
  has none (None, "n/a" in summaries: nothing to measure against).
- Classification, with the seed's thresholds: identical (tau >= 0.99 and Jaccard >= 0.95),
  minor (tau >= 0.95 and the top result unchanged), major (tau >= 0.85), else incompatible.

**Off the hot path.** `ShadowRunner.search` serves the control's ranking and, for a query in
the shadow share, only puts the work on a bounded queue (`queue_size`); background workers run
the treatment, diff the rankings and record the row. The served result never waits on the
treatment or the store. A full queue (the treatment slower than the traffic) drops the shadow
and counts it: `stats()["dropped"]` in the process, `eval_shadow_drops` in the store (written by
a worker, never by the caller), `n_dropped` in `memgauge shadow summary`. Shadows still queued
when the process exits without `close()` are lost (they are samples, not the user's result).

**Log levels** (what a row of `eval_shadow_runs` keeps besides the diff metrics, both
latencies, each arm's RR and nDCG where judged, the intent and the session):
- `full`: both top-k rankings (`control_result_ids`, `treatment_result_ids`) and the query text.
- `diff-only`: no query text, and per arm only the ids the other arm's top k lacks (the set
  difference, best first): what changed, not what was served. Seed 002's storage-lean level.
"""

from __future__ import annotations

import atexit
import hashlib
import queue
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from contextlib import suppress
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple, Protocol

import numpy as np

from memgauge.metrics import MetricConfig, evaluate_ranked

__all__ = [
    "LOG_LEVELS",
    "NO_INTENT",
    "ShadowDiff",
    "ShadowRunner",
    "bucket",
    "classify",
    "diff_rankings",
    "in_shadow",
    "summarize_by_intent",
    "summarize_shadow",
]

THRESHOLDS = {
    "identical_tau": 0.99,
    "identical_jaccard": 0.95,
    "minor_tau": 0.95,
    "major_tau": 0.85,
}


def bucket(query_id: str, salt: str = "") -> float:
    """The query's place in [0, 1), stable across processes and runs."""
    h = hashlib.sha256(f"{salt}{query_id}".encode()).digest()
    return int.from_bytes(h[:8], "big") / 2**64


def in_shadow(query_id: str, percent: float, salt: str = "") -> bool:
    """Whether the query is in the shadow share (`percent` of 0-100)."""
    return bucket(query_id, salt) < percent / 100


@dataclass(frozen=True)
class ShadowDiff:
    """How the treatment's ranking differs from the control's for one query."""

    kendall_tau_b: float
    spearman_rho: float
    jaccard: float
    top1_changed: bool
    order_differences: int
    mrr_delta: float | None
    ndcg_delta: float | None
    classification: str
    control_mrr: float | None = None
    treatment_mrr: float | None = None
    control_ndcg: float | None = None
    treatment_ndcg: float | None = None

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return dict(self.__dict__)


def _ranks(ids: Sequence[str], universe: Sequence[str]) -> list[float]:
    pos = {d: i + 1 for i, d in enumerate(ids)}
    missing = len(ids) + 1  # after everything the list holds; all missing items tie there
    return [float(pos.get(d, missing)) for d in universe]


def _arms(
    control: Sequence[str],
    treatment: Sequence[str],
    qrels: Mapping[str, int],
    k: int,
    config: MetricConfig | None,
) -> tuple[float, float, float, float]:
    """RR@k and nDCG@k of each arm (control's RR, treatment's RR, control's nDCG, treatment's
    nDCG), by the measures `evaluate` uses."""
    rr, ndcg = f"RR@{k}", f"nDCG@{k}"
    # control and treatment as two queries with the same judgments: one vectorised call
    ev = evaluate_ranked(
        {"c": qrels, "t": qrels}, {"c": control, "t": treatment}, [rr, ndcg], config
    )
    v_rr, v_ndcg = ev.per_query[rr], ev.per_query[ndcg]  # rows in query-id order: c, t
    return float(v_rr[0]), float(v_rr[1]), float(v_ndcg[0]), float(v_ndcg[1])


def classify(tau: float, jaccard: float, top1_changed: bool) -> str:
    """Seed 002's identical / minor / major / incompatible."""
    if tau >= THRESHOLDS["identical_tau"] and jaccard >= THRESHOLDS["identical_jaccard"]:
        return "identical"
    if tau >= THRESHOLDS["minor_tau"] and not top1_changed:
        return "minor"
    if tau >= THRESHOLDS["major_tau"]:
        return "major"
    return "incompatible"


def diff_rankings(
    control: Sequence[str],
    treatment: Sequence[str],
    *,
    k: int = 10,
    qrels: Mapping[str, int] | None = None,
    config: MetricConfig | None = None,
) -> ShadowDiff:
    """The diff metrics of two rankings (ids, best first); `qrels` are this query's judgments
    `{memory_id: grade}`, `config` the relevance threshold and gain (default: `evaluate`'s)."""
    from scipy import stats as sps  # scipy loads in ~0.5 s: only when used

    c, t = list(control)[:k], list(treatment)[:k]
    mrr = ndcg = None
    arms: tuple[float | None, ...] = (None, None, None, None)
    if qrels:
        arms = c_rr, t_rr, c_ndcg, t_ndcg = _arms(c, t, qrels, k, config)
        mrr, ndcg = t_rr - c_rr, t_ndcg - c_ndcg
    universe = list(dict.fromkeys([*c, *t]))
    if not universe:
        return ShadowDiff(1.0, 1.0, 1.0, False, 0, mrr, ndcg, "identical", *arms)
    rc, rt = _ranks(c, universe), _ranks(t, universe)
    if len(universe) < 2 or len(set(rc)) < 2 or len(set(rt)) < 2:
        same = rc == rt
        tau = rho = 1.0 if same else 0.0
    else:
        tau = float(sps.kendalltau(rc, rt, variant="b").statistic)
        rho = float(sps.spearmanr(rc, rt).statistic)
    sc, st = set(c), set(t)
    jaccard = len(sc & st) / len(sc | st)
    top1 = c[:1] != t[:1]
    diffs = sum(
        1
        for i in range(max(len(c), len(t)))
        if (c[i] if i < len(c) else None) != (t[i] if i < len(t) else None)
    )
    return ShadowDiff(
        tau, rho, jaccard, top1, diffs, mrr, ndcg, classify(tau, jaccard, top1), *arms
    )


def summarize_shadow(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Counts per class and means of the diff metrics and latencies over stored rows."""
    if not rows:
        return {"n": 0}
    classes = ("identical", "minor", "major", "incompatible")

    def mean(key: str) -> float | None:
        vals = [float(r[key]) for r in rows if r.get(key) is not None]
        return float(np.mean(vals)) if vals else None

    def p95(key: str) -> float | None:
        vals = [float(r[key]) for r in rows if r.get(key) is not None]
        return float(np.percentile(vals, 95)) if vals else None

    return {
        "n": len(rows),
        "classes": {c: sum(r["classification"] == c for r in rows) for c in classes},
        "mean_kendall_tau_b": mean("kendall_tau_b"),
        "mean_jaccard": mean("jaccard"),
        "mean_spearman_rho": mean("spearman_rho"),
        "mean_order_differences": mean("order_differences"),
        "top1_changed_rate": mean("top1_changed"),
        # the deltas are over the judged comparisons alone
        "n_judged": sum(r.get("mrr_delta") is not None for r in rows),
        "mean_mrr_delta": mean("mrr_delta"),
        "mean_ndcg_delta": mean("ndcg_delta"),
        "p95_latency_ms": {
            "control": p95("control_latency_ms"),
            "treatment": p95("treatment_latency_ms"),
        },
    }


#: The group of comparisons recorded with no intent (`search(..., intent=None)`).
NO_INTENT = "(no intent)"


def summarize_by_intent(
    rows: Sequence[Mapping[str, Any]], errors: Mapping[str | None, int] | None = None
) -> dict[str, dict[str, Any]]:
    """Seed 002's per-intent breakdown of a shadow experiment: `summarize_shadow` over the
    comparisons of each intent, with `n_errors` the treatment errors recorded with it. Intents in
    name order, `NO_INTENT` last; an intent whose only rows are errors has `n` 0 (n/a means)."""
    groups: dict[str, list[Mapping[str, Any]]] = {}
    for r in rows:
        groups.setdefault(r.get("intent") or NO_INTENT, []).append(r)
    failed: dict[str, int] = {}
    for intent, n in (errors or {}).items():
        key = intent or NO_INTENT
        failed[key] = failed.get(key, 0) + n
        groups.setdefault(key, [])
    order = sorted(groups, key=lambda i: (i == NO_INTENT, i))
    return {i: {**summarize_shadow(groups[i]), "n_errors": failed.get(i, 0)} for i in order}


class ShadowRecorder(Protocol):
    """Where shadow comparisons go (`memgauge.store.shadow.ShadowStore`)."""

    def record_shadow(self, experiment: str, row: Mapping[str, Any]) -> None:
        """Keep one comparison."""
        ...

    def record_shadow_dropped(self, experiment: str, n: int) -> None:
        """Add `n` shadowed queries dropped by a full queue."""
        ...


Search = Callable[[str, int], Sequence[str]]
LogLevel = Literal["full", "diff-only"]
LOG_LEVELS: tuple[LogLevel, ...] = ("full", "diff-only")


class _Job(NamedTuple):
    query_id: str
    query: str
    qrels: Mapping[str, int] | None
    served: list[str]
    control_ms: float
    intent: str | None
    session_id: str | None


class ShadowRunner:
    """Wraps a production search: every query gets the control's answer; queries in the
    shadow share are also sent to the treatment by background workers, and the comparison is
    recorded (see the module docstring: the queue, the drops, the log levels).

    `should_shadow(query_id)`, when given, chooses the shadowed queries instead of
    `percent` and `salt` (a feature flag's `should_shadow`); `after_record()` runs on a worker
    after each recorded comparison (a flag feeding its A/B test), and `on_close()` once the
    last one is recorded (the flag feeding what is left). Call `close()` (or use the runner in
    a `with` block) to finish the queued shadows; it also runs at interpreter exit, and closes
    the recorder too when `close_recorder` (a runner that opened its own store)."""

    def __init__(
        self,
        experiment: str,
        control: Search,
        treatment: Search,
        recorder: ShadowRecorder,
        *,
        percent: float = 10.0,
        salt: str = "",
        k: int = 10,
        metric_config: MetricConfig | None = None,
        log_level: LogLevel = "full",
        queue_size: int = 1000,
        workers: int = 1,
        should_shadow: Callable[[str], bool] | None = None,
        after_record: Callable[[], None] | None = None,
        on_close: Callable[[], None] | None = None,
        close_recorder: bool = False,
    ) -> None:
        if log_level not in LOG_LEVELS:
            raise ValueError(f"log_level must be one of {LOG_LEVELS}, not {log_level!r}")
        if queue_size < 1 or workers < 1:
            raise ValueError("queue_size and workers must be at least 1")
        from scipy import stats as _  # noqa: F401  loaded here, not by a worker mid-traffic

        self.experiment, self.control, self.treatment = experiment, control, treatment
        self.recorder, self.percent, self.salt, self.k = recorder, percent, salt, k
        self.metric_config, self.log_level = metric_config, log_level
        self._should = should_shadow or (lambda qid: in_shadow(qid, self.percent, self.salt))
        self._after_record = after_record
        self._on_close = on_close
        self._close_recorder = close_recorder
        self.record_errors = 0
        self.last_record_error: str | None = None
        self.recorded = self.treatment_errors = self.dropped = self.abandoned = 0
        self._dropped_saved = 0
        self._abandon = False
        self._lock = threading.Lock()
        self._queue: queue.Queue[_Job | None] = queue.Queue(queue_size)
        self._closed = False
        self._threads = [
            threading.Thread(target=self._work, name=f"memgauge-shadow-{i}", daemon=True)
            for i in range(workers)
        ]
        for t in self._threads:
            t.start()
        atexit.register(self.close)

    # --- the hot path -------------------------------------------------------------------

    def search(
        self,
        query_id: str,
        query: str,
        qrels: Mapping[str, int] | None = None,
        *,
        intent: str | None = None,
        session_id: str | None = None,
    ) -> list[str]:
        """The control's ranking (what the user gets), returned without waiting on the
        shadow side: the treatment runs later on a worker, and a full queue drops the shadow
        (counted in `dropped`)."""
        t0 = time.perf_counter()
        served = list(self.control(query, self.k))
        control_ms = (time.perf_counter() - t0) * 1000
        if not self._closed and self._should(query_id):
            job = _Job(query_id, query, qrels, served, control_ms, intent, session_id)
            try:
                self._queue.put_nowait(job)
            except queue.Full:
                with self._lock:  # callers on several threads: no count lost
                    self.dropped += 1
        return served

    # --- the workers --------------------------------------------------------------------

    def _work(self) -> None:
        while True:
            job = self._queue.get()
            try:
                if job is None:
                    return
                if self._abandon:  # closed past its timeout: what is left is not run
                    with self._lock:
                        self.abandoned += 1
                    continue
                self._shadow(job)
                self._save_dropped()
                if self._after_record is not None:
                    self._after_record()
            except Exception as exc:  # nothing the shadow side does reaches the user
                with self._lock:
                    self.record_errors += 1
                    self.last_record_error = f"{type(exc).__name__}: {exc}"
            finally:
                self._queue.task_done()

    def _save_dropped(self) -> None:
        with self._lock:
            n = self.dropped - self._dropped_saved
            self._dropped_saved = self.dropped
        if n:
            try:
                self.recorder.record_shadow_dropped(self.experiment, n)
            except BaseException:
                with self._lock:
                    self._dropped_saved -= n  # counted again next time
                raise

    def _row(self, job: _Job, treatment: list[str] | None) -> dict[str, Any]:
        control: list[str] = job.served
        if self.log_level == "diff-only" and treatment is not None:
            in_c, in_t = set(control), set(treatment)
            control = [d for d in control if d not in in_t]
            treatment = [d for d in treatment if d not in in_c]
        return {
            "query_id": job.query_id,
            "control": control,
            "treatment": treatment,
            "control_latency_ms": job.control_ms,
            "intent": job.intent,
            "session_id": job.session_id,
            "log_level": self.log_level,
            "query_text": job.query if self.log_level == "full" else None,
        }

    def _shadow(self, job: _Job) -> None:
        t1 = time.perf_counter()
        try:
            shadow = list(self.treatment(job.query, self.k))
        except Exception as exc:  # the treatment failing must never hurt the user
            with self._lock:
                self.treatment_errors += 1
            row = self._row(job, None)
            self.recorder.record_shadow(
                self.experiment, {**row, "error": f"{type(exc).__name__}: {exc}"}
            )
            return
        treatment_ms = (time.perf_counter() - t1) * 1000
        diff = diff_rankings(
            job.served, shadow, k=self.k, qrels=job.qrels, config=self.metric_config
        )
        self.recorder.record_shadow(
            self.experiment,
            {**self._row(job, shadow), "treatment_latency_ms": treatment_ms, **diff.as_dict()},
        )
        with self._lock:
            self.recorded += 1

    # --- waiting, closing, counting -----------------------------------------------------

    def flush(self, timeout: float = 30.0) -> None:
        """Block until every shadow queued before this call is recorded (or failed);
        `TimeoutError` after `timeout` seconds."""
        deadline = time.monotonic() + timeout
        done = self._queue.all_tasks_done
        with done:
            while self._queue.unfinished_tasks:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(f"shadow {self.experiment}: not done in {timeout:g} s")
                done.wait(left)

    def close(self, timeout: float = 30.0) -> None:
        """Stop taking shadows, finish the queued ones for up to `timeout` seconds (those
        still queued then are abandoned, counted in `abandoned`), record the drop count, stop
        the workers."""
        if self._closed:
            return
        self._closed = True
        atexit.unregister(self.close)
        with suppress(TimeoutError):
            self.flush(timeout)
        self._abandon = True
        for _ in self._threads:
            self._queue.put(None)  # the workers skip what is left, so there is room soon
        for t in self._threads:
            t.join(timeout)
        for finish in (self._save_dropped, self._on_close):
            if finish is None:
                continue
            try:
                finish()
            except Exception as exc:
                self.record_errors += 1
                self.last_record_error = f"{type(exc).__name__}: {exc}"
        close = getattr(self.recorder, "close", None)
        if self._close_recorder and callable(close):
            close()

    def stats(self) -> dict[str, int]:
        """Shadows recorded, treatment errors, recording errors, dropped (queue full),
        abandoned (queued when `close` timed out), and still queued."""
        with self._lock:
            return {
                "recorded": self.recorded,
                "treatment_errors": self.treatment_errors,
                "record_errors": self.record_errors,
                "dropped": self.dropped,
                "abandoned": self.abandoned,
                "queued": self._queue.qsize(),
            }

    def __enter__(self) -> ShadowRunner:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
