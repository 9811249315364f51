"""trec_eval's and ir_measures' measures beyond the ranking basics, vectorised over `Hits`.

Notation, per query: hits in rank order; `rel_i` = 1 if the document at rank i (1-based) has
grade >= T (the threshold); a judged non-relevant document has 0 <= grade < T; a POOLED one was
judged below 0 (trec_eval: in the pool, not judged); any other returned document is not in the
pool. `R` = judged documents with grade >= T; `N` = judged documents with 0 <= grade < T; `n` =
documents returned (after `--depth`); `k` the cutoff.

- NumQ = 1 per scored query; NumRet = n; NumRel = R; NumRelRet = sum_i rel_i (ir_measures'
  NumRet(rel=T) is NumRelRet at T). Summed over queries, not averaged (trec_eval's `num_q`, `num_ret`, `num_rel`, `num_rel_ret`;
  ir_measures' NumQ, NumRet, NumRel, NumRelRet).
- SetP = NumRelRet / n (0 when n = 0), SetP(relative=True) = NumRelRet / min(n, R) (trec_eval's
  set_relative_P, ir_measures' SetP(relative=True)); SetR = NumRelRet / R (0 when R = 0); SetF = (x + 1) P R /
  (x P + R) of those two, x = beta (1: 2 P R / (P + R); 0 when nothing relevant is returned):
  trec_eval's `set_P`, `set_recall`, `set_F`, ir_measures' SetP, SetR, SetF(beta=x).
- gm_map: per query AP (as `AP`); over queries exp(mean(log(max(AP, 1e-5)))), trec_eval's
  `gm_map` (1e-5 is its MIN_GEO_MEAN).
- Bpref = (1/R) sum over relevant returned documents r of (1 - min(nonrel_above(r), R) /
  min(N, R)), a term being 1 when no judged non-relevant document is above r (Buckley &
  Voorhees, SIGIR 2004; trec_eval `bpref`, ir_measures Bpref). Unjudged and POOLED documents
  are skipped.
- infAP (Yilmaz & Aslam, CIKM 2006, as trec_eval computes it): (1/R) sum over relevant returned
  documents at 0-based rank j of 1 if j = 0, else 1/(j+1) + (j/(j+1)) ((r + m + u)/j)
  ((r + e)/(r + m + 2e)), where r, m, u are the relevant, judged non-relevant and POOLED
  documents above it and e = 1e-5. A document not in the pool counts only through j.
- IPrec@x: interpolated precision at recall x (trec_eval `iprec_at_recall_x`, ir_measures
  IPrec@x): with c = round(x R) (half away from zero, trec_eval 10's `lround`), the largest
  precision j / rank_j over the j-th relevant returned documents for j >= max(c, 1); 0 when c
  exceeds NumRelRet or nothing is returned.
- RBP(p)@k = (1 - p) sum_{i <= k} rel_i p^(i-1) (Moffat & Zobel, TOIS 2008), binary relevance
  (grade >= T): ir_measures' `RBP(rel=T, p=p)`. trec_eval's `rbp` weights graded gains
  instead and so is not this measure on graded judgments.
- RBP_resid(p) = p^n + (1 - p) sum over returned documents i not judged >= 0 of p^(i-1), the
  most RBP could still rise if every unjudged document and everything past the run were fully
  relevant; as trec_eval's `rbp_resid`, it is 0 when every returned document is judged.
- Judged@k = (judged returned documents in the top k, POOLED ones included) / min(k, n), 0 when
  n = 0 (ir_measures' Judged@k; no cutoff: over all n).

Edge cases: R = 0 makes Bpref, infAP, SetR, SetF and IPrec 0 (trec_eval); every measure here
is 0 for a judged query absent from the run, like the others (`missing_from_run`).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from memgauge._types import BoolArray, FloatArray, IntArray
from memgauge.metrics.measures import Measure
from memgauge.metrics.ranking import POOLED, Hits

__all__ = ["COMPUTE", "MIN_GEO_MEAN", "ratio"]

MIN_GEO_MEAN = 1e-5  # trec_eval's floor on AP before the log of gm_map
_INFAP_EPSILON = 1e-5  # trec_eval's INFAP_EPSILON

Compute = Callable[[Measure, Hits, int, IntArray], FloatArray]


def ratio(num: FloatArray, den: FloatArray) -> FloatArray:
    """num / den elementwise, 0 where den is 0 (trec_eval's convention for an empty base)."""
    out = np.zeros_like(num, dtype=np.float64)
    np.divide(num, den, out=out, where=den > 0)
    return out


def _count(h: Hits, select: BoolArray) -> FloatArray:
    return np.bincount(h.row[select], minlength=len(h.n_returned)).astype(np.float64)


def _above(h: Hits, x: BoolArray) -> IntArray:
    """For each hit, how many hits of its own row above it have `x` (an exclusive per-row
    cumulative count; integers, so exact)."""
    n = len(h.n_returned)
    xi = x.astype(np.int64)
    excl = np.cumsum(xi) - xi
    counts = np.bincount(h.row, minlength=n)
    starts = np.cumsum(counts) - counts
    offset = np.zeros(n, dtype=np.int64)
    has = counts > 0
    offset[has] = excl[starts[has]]
    return np.asarray(excl - offset[h.row], dtype=np.int64)


def _num_q(m: Measure, h: Hits, t: int, n_rel: IntArray) -> FloatArray:
    return np.ones(len(h.n_returned), dtype=np.float64)


def _num_ret(m: Measure, h: Hits, t: int, n_rel: IntArray) -> FloatArray:
    if m.rel is not None:  # ir_measures' NumRet(rel=T): the returned documents graded >= T
        return _count(h, h.grade >= t)
    return h.n_returned.astype(np.float64)


def _num_rel(m: Measure, h: Hits, t: int, n_rel: IntArray) -> FloatArray:
    return n_rel.astype(np.float64)


def _num_rel_ret(m: Measure, h: Hits, t: int, n_rel: IntArray) -> FloatArray:
    return _count(h, h.grade >= t)


def _set_p(m: Measure, h: Hits, t: int, n_rel: IntArray) -> FloatArray:
    most = np.minimum(h.n_returned, n_rel) if m.relative else h.n_returned
    return ratio(_count(h, h.grade >= t), most.astype(np.float64))


def _set_r(m: Measure, h: Hits, t: int, n_rel: IntArray) -> FloatArray:
    return ratio(_count(h, h.grade >= t), n_rel.astype(np.float64))


def _set_f(m: Measure, h: Hits, t: int, n_rel: IntArray) -> FloatArray:
    found = _count(h, h.grade >= t)
    p = ratio(found, h.n_returned.astype(np.float64))
    r = ratio(found, n_rel.astype(np.float64))
    # trec_eval's (x + 1) P R / (x P + R), x = beta (1 by default), in its order of operations
    x = m.beta
    return ratio((x + 1.0) * p * r, np.where(found > 0, x * p + r, 0.0))


def _bpref(m: Measure, h: Hits, t: int, n_rel: IntArray) -> FloatArray:
    judged = h.grade >= 0
    rel = h.grade >= t
    nonrel_above = _above(h, judged & ~rel)[rel]
    rows = h.row[rel]
    n_nonrel = ((h.ideal >= 0) & (h.ideal < t)).sum(axis=1)
    cap = np.minimum(n_nonrel, n_rel)[rows].astype(np.float64)
    penalty = ratio(np.minimum(nonrel_above, n_rel[rows]).astype(np.float64), cap)
    terms = np.where(nonrel_above > 0, 1.0 - penalty, 1.0)
    total = np.bincount(rows, weights=terms, minlength=len(h.n_returned))
    return ratio(total.astype(np.float64), n_rel.astype(np.float64))


def _infap(m: Measure, h: Hits, t: int, n_rel: IntArray) -> FloatArray:
    rel = h.grade >= t
    nonrel = (h.grade >= 0) & ~rel
    r = _above(h, rel)[rel].astype(np.float64)
    nr = _above(h, nonrel)[rel].astype(np.float64)
    u = _above(h, h.grade == POOLED)[rel].astype(np.float64)
    j = h.pos[rel].astype(np.float64)
    safe_j = np.where(j > 0, j, 1.0)
    e = _INFAP_EPSILON
    later = 1.0 / (j + 1.0) + (j / (j + 1.0)) * ((r + nr + u) / safe_j) * (
        (r + e) / (r + nr + 2 * e)
    )
    terms = np.where(j == 0, 1.0, later)
    total = np.bincount(h.row[rel], weights=terms, minlength=len(h.n_returned))
    return ratio(total.astype(np.float64), n_rel.astype(np.float64))


def _lround(x: FloatArray) -> IntArray:
    """C's lround for x >= 0: halves away from zero (x - floor(x) is exact for doubles)."""
    f = np.floor(x)
    return (f + (x - f >= 0.5)).astype(np.int64)


def _iprec(m: Measure, h: Hits, t: int, n_rel: IntArray) -> FloatArray:
    assert m.param is not None
    n = len(h.n_returned)
    rel = h.grade >= t
    rows, pos = h.row[rel], h.pos[rel]
    found = np.bincount(rows, minlength=n)
    starts = np.cumsum(found) - found
    nth = np.arange(rows.size) - starts[rows] + 1
    prec = nth / (pos + 1.0)
    c = np.maximum(_lround(m.param * n_rel.astype(np.float64)), 1)
    out = np.zeros(n, dtype=np.float64)
    ok = (c <= found) & (found > 0)
    if not ok.any():
        return out
    # max of prec over the row's relevant hits c..found: reduceat on (start, end) pairs, with a
    # sentinel so that an end at the very last hit is still a valid index
    lo = starts[ok] + c[ok] - 1
    hi = starts[ok] + found[ok]
    padded = np.append(prec, 0.0)
    idx = np.column_stack([lo, hi]).ravel()
    out[ok] = np.maximum.reduceat(padded, idx)[::2]
    return out


def _rbp(m: Measure, h: Hits, t: int, n_rel: IntArray) -> FloatArray:
    assert m.param is not None
    p = m.param
    rel = h.grade >= t if m.cutoff is None else (h.grade >= t) & (h.pos < m.cutoff)
    total = np.bincount(h.row[rel], weights=p ** h.pos[rel], minlength=len(h.n_returned))
    return np.asarray((1.0 - p) * total, dtype=np.float64)


def _rbp_resid(m: Measure, h: Hits, t: int, n_rel: IntArray) -> FloatArray:
    assert m.param is not None
    p = m.param
    judged = h.grade >= 0
    seen = np.bincount(h.row[judged], weights=p ** h.pos[judged], minlength=len(h.n_returned))
    unjudged = h.n_returned - _count(h, judged).astype(np.int64)
    # p^n + (1 - p) (sum_{i < n} p^i - sum over judged p^i) = 1 - (1 - p) sum over judged p^i
    return np.where(unjudged > 0, 1.0 - (1.0 - p) * seen, 0.0)


def _judged(m: Measure, h: Hits, t: int, n_rel: IntArray) -> FloatArray:
    k = m.cutoff
    within = np.ones(h.row.size, dtype=bool) if k is None else h.pos < k
    shown = h.n_returned if k is None else np.minimum(h.n_returned, k)
    return ratio(_count(h, within), shown.astype(np.float64))


#: canonical measure name -> its computation (gm_map is AP per query: `ir._compute`)
COMPUTE: dict[str, Compute] = {
    "NumQ": _num_q,
    "NumRet": _num_ret,
    "NumRel": _num_rel,
    "NumRelRet": _num_rel_ret,
    "SetP": _set_p,
    "SetR": _set_r,
    "SetF": _set_f,
    "Bpref": _bpref,
    "infAP": _infap,
    "IPrec": _iprec,
    "RBP": _rbp,
    "RBP_resid": _rbp_resid,
    "Judged": _judged,
}
