"""Percentile bootstrap CIs of statistics other than the mean: quantiles (the median and p95 of
context tokens and latency) and a ratio of two means (accuracy per 1,000 context tokens).

Resamples are drawn as `stats.bootstrap` draws them (uniform item indices from a generator
seeded by `seed`), so a run's intervals are reproducible. Quantiles are NumPy's default
(linear interpolation between order statistics, Hyndman & Fan type 7). Edge cases: no value
gives n/a (None) with n = 0; one value a degenerate interval.

A resample's quantiles are read from its order statistics, found by sorting the drawn ranks
as 16-bit integers, or counting them past 32,768 values (`_resampled_quantiles`), rather than
by partitioning each resample's values: the same floats as `np.percentile` of each resample, a
fifth of the CPU at 1,000 resamples of 1,536 values.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from memgauge._util.numbers import CONFIDENCE, N_RESAMPLES
from memgauge.stats.bootstrap import ConfidenceInterval
from memgauge.stats.shared_draws import drawn

__all__ = ["quantile_cis", "ratio_ci"]

_CHUNK = 5_000_000  # gathered elements per chunk, as `stats.bootstrap` bounds memory
_RADIX = 1 << 15  # the most values whose ranks are 16-bit integers
_F64 = npt.NDArray[np.float64]


def _indices(n: int, n_resamples: int, seed: int) -> Iterator[npt.NDArray[np.intp]]:
    return drawn(seed, n, n_resamples, max(1, _CHUNK // max(n, 1)))


def _lerp(a: _F64, b: _F64, t: float) -> _F64:
    """NumPy's own interpolation between two order statistics (`_lerp` of its quantile
    functions, term for term: from the upper one when `t >= 0.5`), so the floats are its."""
    diff = b - a
    out = np.asarray(a + diff * t)
    if t >= 0.5:
        np.subtract(b, diff * (1 - t), out=out)
    return out


def _resampled_quantiles(kept: _F64, qs: _F64, idx: npt.NDArray[np.intp]) -> _F64 | None:
    """`np.percentile(kept[idx], qs, axis=1)` (linear), from ranks: with `kept` sorted, a
    resample's j-th smallest value is the sorted value at its j-th smallest drawn rank: found
    by sorting its ranks (up to `_RADIX` values), else where the running count of its ranks
    passes j. None where NumPy's edge rules would apply (a quantile of 100, a value not
    finite), or where its partition's order of 0.0 and -0.0 would show: the caller
    partitions then."""
    n = kept.size
    virtual = (n - 1) * (qs / 100.0)
    if not (np.all((qs >= 0.0) & (virtual < n - 1)) and np.isfinite(kept).all()):
        return None
    if np.any((kept == 0.0) & np.signbit(kept)):
        return None
    order = np.argsort(kept, kind="stable")
    ordered = kept[order]
    small = n <= _RADIX
    rank: npt.NDArray[np.signedinteger[Any]] = np.empty(n, np.int16 if small else np.intp)
    rank[order] = np.arange(n, dtype=rank.dtype)
    rows = idx.shape[0]
    shift = np.arange(rows, dtype=np.intp)
    drawn = rank.take(idx)
    if small:
        # a resample's ranks sorted (NumPy's stable sort of 16-bit integers is a radix sort,
        # two thirds of the counts' CPU at 1,536 values): its j-th smallest is column j
        drawn.sort(axis=1, kind="stable")
    else:
        # each row's ranks counted in a block of its own, the running counts made one
        # increasing sequence (a row's block offset by n + 1 past the last's) for one search
        drawn += (shift * n)[:, None]
        running = np.bincount(drawn.ravel(), minlength=rows * n).reshape(rows, n)
        np.cumsum(running, axis=1, out=running)
        running += (shift * (n + 1))[:, None]
        flat = running.ravel()

    def smallest(j: int) -> _F64:
        if small:
            found: _F64 = ordered[drawn[:, j]]
            return found
        at = np.searchsorted(flat, shift * (n + 1) + j, side="right") - shift * n
        found = ordered[at]
        return found

    lower = np.floor(virtual)
    return np.vstack(
        [
            _lerp(smallest(int(lo)), smallest(int(lo) + 1), float(v - lo))
            for v, lo in zip(virtual.tolist(), lower.tolist(), strict=True)
        ]
    )


def _quantile_draws(kept: _F64, qs: _F64, n_resamples: int, seed: int) -> _F64:
    """Each quantile of each resample of `kept` (a row per quantile)."""
    parts = []
    for idx in _indices(kept.size, n_resamples, seed):
        counted = _resampled_quantiles(kept, qs, idx)
        parts.append(counted if counted is not None else np.percentile(kept[idx], qs, axis=1))
    return np.concatenate(parts, axis=1)


def _ci(
    value: float, draws: _F64, n: int, n_resamples: int, confidence: float, method: str
) -> ConfidenceInterval:
    tail = (1.0 - confidence) / 2.0 * 100.0
    finite = draws[np.isfinite(draws)]
    if finite.size == 0:
        return ConfidenceInterval(value, None, None, n, 0, n_resamples, confidence, method)
    low, high = np.percentile(finite, [tail, 100.0 - tail])
    return ConfidenceInterval(value, float(low), float(high), n, 0, n_resamples, confidence, method)


def _empty(n_resamples: int, confidence: float, method: str) -> ConfidenceInterval:
    return ConfidenceInterval(
        None, None, None, 0, 0, n_resamples, confidence, method, note="no values"
    )


def quantile_cis(
    values: npt.ArrayLike,
    quantiles: Sequence[float],
    *,
    n_resamples: int = N_RESAMPLES,
    confidence: float = CONFIDENCE,
    seed: int = 0,
) -> list[ConfidenceInterval]:
    """Each quantile `q` (0-100) of `values` with its percentile bootstrap CI; every quantile
    from the same resamples. NaNs are left out (counted in `n_excluded`)."""
    data = np.asarray(values, dtype=np.float64)
    kept = data[~np.isnan(data)]
    method = "percentile bootstrap of the quantile"
    if kept.size == 0:
        return [_empty(n_resamples, confidence, method) for _ in quantiles]
    qs = np.asarray(quantiles, dtype=np.float64)
    point = np.percentile(kept, qs)
    if kept.size == 1:
        v = float(kept[0])
        return [
            ConfidenceInterval(v, v, v, 1, 0, n_resamples, confidence, method, note="one value")
            for _ in quantiles
        ]
    draws = _quantile_draws(kept, qs, n_resamples, seed)
    out = []
    for i in range(qs.size):
        ci = _ci(float(point[i]), draws[i], kept.size, n_resamples, confidence, method)
        out.append(
            ConfidenceInterval(
                ci.mean,
                ci.low,
                ci.high,
                ci.n,
                int(data.size - kept.size),
                n_resamples,
                confidence,
                method,
            )
        )
    return out


def ratio_ci(
    numerator: npt.ArrayLike,
    denominator: npt.ArrayLike,
    *,
    scale: float = 1.0,
    n_resamples: int = N_RESAMPLES,
    confidence: float = CONFIDENCE,
    seed: int = 0,
) -> ConfidenceInterval:
    """`scale * mean(numerator) / mean(denominator)` over the pairs where both are numbers,
    with its percentile bootstrap CI (pairs resampled together). n/a when there is no pair or
    the denominator's mean is 0; a resample whose denominator's mean is 0 is left out of the
    interval."""
    num = np.asarray(numerator, dtype=np.float64)
    den = np.asarray(denominator, dtype=np.float64)
    both = ~(np.isnan(num) | np.isnan(den))
    num, den = num[both], den[both]
    method = "percentile bootstrap of the ratio of means"
    if num.size == 0:
        return _empty(n_resamples, confidence, method)
    total = float(den.mean())
    if total == 0.0:
        return ConfidenceInterval(
            None, None, None, int(num.size), 0, n_resamples, confidence, method,
            note="the denominator's mean is 0",
        )  # fmt: skip
    value = scale * float(num.mean()) / total
    if num.size == 1:
        return ConfidenceInterval(
            value, value, value, 1, 0, n_resamples, confidence, method, note="one value"
        )
    parts = []
    for idx in _indices(num.size, n_resamples, seed):
        d = den[idx].mean(axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            parts.append(np.where(d > 0, scale * num[idx].mean(axis=1) / d, np.nan))
    return _ci(value, np.concatenate(parts), int(num.size), n_resamples, confidence, method)
