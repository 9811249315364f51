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
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from memgauge.metrics import MetricConfig, evaluate_ranked

__all__ = [
    "ShadowDiff",
    "ShadowRunner",
    "bucket",
    "classify",
    "diff_rankings",
    "in_shadow",
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

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return dict(self.__dict__)


def _ranks(ids: Sequence[str], universe: Sequence[str]) -> list[float]:
    pos = {d: i + 1 for i, d in enumerate(ids)}
    missing = len(ids) + 1  # after everything the list holds; all missing items tie there
    return [float(pos.get(d, missing)) for d in universe]


def _deltas(
    control: Sequence[str],
    treatment: Sequence[str],
    qrels: Mapping[str, int],
    k: int,
    config: MetricConfig | None,
) -> tuple[float, float]:
    """(RR@k, nDCG@k) of the treatment minus the control's, by the measures `evaluate` uses."""
    rr, ndcg = f"RR@{k}", f"nDCG@{k}"
    # control and treatment as two queries with the same judgments: one vectorised call
    ev = evaluate_ranked(
        {"c": qrels, "t": qrels}, {"c": control, "t": treatment}, [rr, ndcg], config
    )
    v_rr, v_ndcg = ev.per_query[rr], ev.per_query[ndcg]  # rows in query-id order: c, t
    return float(v_rr[1] - v_rr[0]), float(v_ndcg[1] - v_ndcg[0])


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
    if qrels:
        mrr, ndcg = _deltas(c, t, qrels, k, config)
    universe = list(dict.fromkeys([*c, *t]))
    if not universe:
        return ShadowDiff(1.0, 1.0, 1.0, False, 0, mrr, ndcg, "identical")
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
    return ShadowDiff(tau, rho, jaccard, top1, diffs, mrr, ndcg, classify(tau, jaccard, top1))


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
        "mean_mrr_delta": mean("mrr_delta"),
        "mean_ndcg_delta": mean("ndcg_delta"),
        "p95_latency_ms": {
            "control": p95("control_latency_ms"),
            "treatment": p95("treatment_latency_ms"),
        },
    }


class ShadowRecorder(Protocol):
    """Where shadow comparisons go (`memgauge.store.shadow.ShadowStore`)."""

    def record_shadow(self, experiment: str, row: Mapping[str, Any]) -> None:
        """Keep one comparison."""
        ...


Search = Callable[[str, int], Sequence[str]]


class ShadowRunner:
    """Wraps a production search: every query gets the control's answer; queries in the
    shadow share are also sent to the treatment, and the comparison is recorded."""

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
    ) -> None:
        self.experiment, self.control, self.treatment = experiment, control, treatment
        self.recorder, self.percent, self.salt, self.k = recorder, percent, salt, k
        self.metric_config = metric_config
        self.record_errors = 0
        self.last_record_error: str | None = None

    def search(
        self, query_id: str, query: str, qrels: Mapping[str, int] | None = None
    ) -> list[str]:
        """The control's ranking (what the user gets). Nothing the shadow side does (the
        treatment failing, the comparison failing to be recorded) reaches the caller: a
        failed recording is counted in `record_errors`, its message in `last_record_error`."""
        t0 = time.perf_counter()
        served = list(self.control(query, self.k))
        control_ms = (time.perf_counter() - t0) * 1000
        if in_shadow(query_id, self.percent, self.salt):
            try:
                self._shadow(query_id, query, qrels, served, control_ms)
            except Exception as exc:
                self.record_errors += 1
                self.last_record_error = f"{type(exc).__name__}: {exc}"
        return served

    def _shadow(
        self,
        query_id: str,
        query: str,
        qrels: Mapping[str, int] | None,
        served: list[str],
        control_ms: float,
    ) -> None:
        t1 = time.perf_counter()
        try:
            shadow = list(self.treatment(query, self.k))
        except Exception as exc:  # the treatment failing must never hurt the user
            self.recorder.record_shadow(
                self.experiment,
                {
                    "query_id": query_id,
                    "control": served,
                    "control_latency_ms": control_ms,
                    "error": f"{type(exc).__name__}: {exc}",
                },
            )
            return
        treatment_ms = (time.perf_counter() - t1) * 1000
        diff = diff_rankings(served, shadow, k=self.k, qrels=qrels, config=self.metric_config)
        self.recorder.record_shadow(
            self.experiment,
            {
                "query_id": query_id,
                "control": served,
                "treatment": shadow,
                "control_latency_ms": control_ms,
                "treatment_latency_ms": treatment_ms,
                **diff.as_dict(),
            },
        )
