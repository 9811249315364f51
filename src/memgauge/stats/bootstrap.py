"""Seeded, vectorised bootstrap confidence intervals (Efron & Tibshirani 1993).

All rows of a batch share one set of resampled item indices, so the CIs of the metrics of one
run come from the same resamples. NaN values (items that could not be scored) are excluded per
row and counted, never treated as 0.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import TypedDict, Unpack

import numpy as np
import numpy.typing as npt

from memgauge._util.numbers import CONFIDENCE, N_RESAMPLES, fmean
from memgauge.stats.shared_draws import drawn

__all__ = [
    "CONFIDENCE",
    "N_RESAMPLES",
    "ConfidenceInterval",
    "Resampling",
    "bootstrap_ci",
    "bootstrap_cis",
    "resample_means",
]

_CHUNK = 5_000_000  # indices drawn per chunk: bounds memory at ~40 MB
_PART = 1 << 17  # gathered elements per row at a time: 1 MB of float64, in a core's cache
_CODED_FROM = 10_000  # items from which coding the columns can pay for itself


@dataclass(frozen=True)
class ConfidenceInterval:
    """A mean with its bootstrap CI; mean/low/high are None when there is no data (n = 0).

    With n = 1 the interval is degenerate (low = high = mean) and `note` says so.
    """

    mean: float | None
    low: float | None
    high: float | None
    n: int
    n_excluded: int
    n_resamples: int
    confidence: float
    method: str
    note: str | None = None


class Resampling(TypedDict, total=False):
    """A percentile bootstrap's keywords, as `bootstrap_cis` takes them (defaults: 1,000
    resamples, 95% confidence, seed 0), for a function that hands them on."""

    n_resamples: int
    confidence: float
    seed: int


def resample_means(
    values: npt.NDArray[np.float64], n_resamples: int, rng: np.random.Generator | int | None
) -> npt.NDArray[np.float64]:
    """Means of `n_resamples` bootstrap resamples of each row of `values` (no NaNs allowed).

    Formula: for resample b, mean_b = (1/n) * sum_i values[idx_b,i] with idx_b uniform on
    [0, n). Every row uses the same idx_b. Indices are drawn in chunks so memory stays bounded
    (~40 MB) whatever n_resamples is; a gather is faster here than multinomial counts. `rng`
    an int: the seed of a fresh generator, whose draws `stats.shared_draws` may share (None:
    one seeded from fresh entropy, as `default_rng(None)`).
    """
    matrix = np.ascontiguousarray(np.atleast_2d(values), dtype=np.float64)
    # rows alike to the bit (nDCG@10 and @20 of runs whose hits are all in the top 10) have
    # the same resample means: each is gathered and summed once
    first: dict[bytes, int] = {}
    same = [first.setdefault(row.tobytes(), r) for r, row in enumerate(matrix)]
    if len(first) < len(same):
        once = resample_means(matrix[sorted(first.values())], n_resamples, rng)
        index_of = {r: i for i, r in enumerate(sorted(first.values()))}
        return once[[index_of[r] for r in same]]
    rows, n = matrix.shape
    out = np.empty((rows, n_resamples), dtype=np.float64)
    step = max(1, _CHUNK // max(n * rows, 1))
    # a few resamples at a time through buffers that stay in the cache: a fresh 40 MB gather a
    # chunk spent most of its time faulting pages in (100,000 items: about 4x the gather)
    part = max(1, min(step, _PART // max(n, 1)))
    coded = _coded(matrix)
    gathered = np.empty((rows, part, n), dtype=np.float64)
    chunks = (
        (
            rng.integers(0, n, size=(min(n_resamples, start + step) - start, n), dtype=np.intp)
            for start in range(0, n_resamples, step)
        )
        if isinstance(rng, np.random.Generator)
        else drawn(rng, n, n_resamples, step)
    )
    for start, idx in zip(range(0, n_resamples, step), chunks, strict=True):
        stop = start + idx.shape[0]
        for at in range(0, stop - start, part):
            some = idx[at : at + part]
            into = gathered[:, : some.shape[0]]
            # the indices are in range: `clip` clips none, and spares the copy `raise` (the
            # default) gathers into before writing to `out` (a third of the gather's time)
            if coded is None:
                for r in range(rows):
                    np.take(matrix[r], some, out=into[r], mode="clip")
            else:
                codes, table = coded
                which = np.take(codes, some, mode="clip")
                for r in range(rows):
                    np.take(table[r], which, out=into[r], mode="clip")
            # summed as the (rows, resamples, n) gather always was: the same pairwise sums
            out[:, start + at : start + at + some.shape[0]] = into.sum(axis=-1) / n
    return out


def _coded(
    matrix: npt.NDArray[np.float64],
) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.float64]] | None:
    """Each column's code and the table of the distinct columns (`table[:, codes]` is
    `matrix`), when there are few: per-query measures take a few values (a hit, a reciprocal
    rank), and gathering a small code array and a tiny table is cheaper than the values. Bit
    patterns are compared, so -0.0 stays -0.0. None when the columns are mostly distinct."""
    rows, n = matrix.shape
    if n < _CODED_FROM:
        return None
    bits = matrix.view(np.int64)
    codes = np.zeros(n, dtype=np.int64)
    first = np.zeros(1, dtype=np.intp)
    for r in range(rows):
        level, inverse = np.unique(bits[r], return_inverse=True)
        # the columns told apart by the rows so far, numbered again (the numbers stay < n)
        pair = codes * level.size + inverse.reshape(-1)
        _, first, codes = np.unique(pair, return_index=True, return_inverse=True)
        if first.size * 8 > n:
            return None
    table = np.ascontiguousarray(matrix[:, first])
    return codes.reshape(-1).astype(np.intp, copy=False), table


def _percentile_ci(
    means: npt.NDArray[np.float64], confidence: float
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    tail = (1.0 - confidence) / 2.0 * 100.0
    low, high = np.percentile(means, [tail, 100.0 - tail], axis=-1)
    return np.asarray(low), np.asarray(high)


def bootstrap_cis(
    matrix: npt.ArrayLike,
    *,
    n_resamples: int = N_RESAMPLES,
    confidence: float = CONFIDENCE,
    seed: int = 0,
) -> list[ConfidenceInterval]:
    """Percentile bootstrap CIs of the mean of each row of `matrix` (rows = metrics, cols = items).

    Rows without NaN share the same resamples (one multinomial draw for the batch); a row with
    NaNs is resampled over its scored items with the same seed.
    Edge cases: a row with no scored item gives mean/low/high None; one scored item gives a
    degenerate interval.
    """
    data = np.atleast_2d(np.asarray(matrix, dtype=np.float64))
    if not 0.0 < confidence < 1.0:
        raise ValueError("confidence must be in (0, 1)")
    results: list[ConfidenceInterval | None] = [None] * data.shape[0]
    # every interval here: mean, low, high, n, n_excluded (and a note) of the same resampling
    interval = partial(
        ConfidenceInterval, n_resamples=n_resamples, confidence=confidence, method="percentile"
    )
    finite = ~np.isnan(data)
    complete = finite.all(axis=1)
    if complete.any() and data.shape[1] > 1:
        rows = np.flatnonzero(complete)
        means = resample_means(data[rows], n_resamples, seed)
        lows, highs = _percentile_ci(means, confidence)
        for j, r in enumerate(rows.tolist()):
            mean = fmean(data[r])
            results[r] = interval(mean, float(lows[j]), float(highs[j]), data.shape[1], 0)
    for row in range(data.shape[0]):
        if results[row] is not None:
            continue
        vals = data[row][finite[row]]
        excluded = data.shape[1] - vals.size
        if vals.size == 0:
            results[row] = interval(None, None, None, 0, excluded, note="no scored items")
        elif vals.size == 1:
            v = float(vals[0])
            note = "one scored item: the interval is degenerate"
            results[row] = interval(v, v, v, 1, excluded, note=note)
        else:
            means = resample_means(vals[None, :], n_resamples, seed)
            low, high = _percentile_ci(means, confidence)
            mean = fmean(vals)
            results[row] = interval(mean, float(low[0]), float(high[0]), int(vals.size), excluded)
    return [r for r in results if r is not None]


def bootstrap_ci(values: npt.ArrayLike, **resampling: Unpack[Resampling]) -> ConfidenceInterval:
    """Percentile bootstrap CI of the mean of `values` (see `bootstrap_cis`)."""
    return bootstrap_cis(np.asarray(values, dtype=np.float64)[None, :], **resampling)[0]
