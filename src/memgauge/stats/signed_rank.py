"""The Wilcoxon signed-rank test's two-sided p-value, as `scipy.stats.wilcoxon(d,
zero_method="wilcox")` gives it, without SciPy's sign-flip enumeration where SciPy uses one.

Why: for 13 pairs or fewer with a tie or a zero difference, SciPy's default method enumerates
all 2**n sign flips through `permutation_test`, computing the statistic of each in Python-level
batches: 20-30 ms a call, more than half of `memgauge demo`'s CPU (its small categories compare
four systems on every measure). The null distribution of that enumeration is the distribution
of R+ (the sum of the ranks of the positive differences) when each nonzero difference's sign
is + or - with equal weight; zeros carry no rank under "wilcox" and only double every count.
Ranks are averages of tied positions, so twice a rank is a whole number and the distribution is
a product of polynomials over integer sums, counted exactly. SciPy counts the flips whose R+
is at most (at least) the observed one, within 100 epsilon of it, which for sums of half
integers is the exact comparison, divides by 2**n, doubles the smaller tail and clips at 1:
the same integers divided by the same power of two, so the same float.

Every other case (no tie and no zero, more than 13 pairs, a NaN) goes to SciPy as before.
`tests/stats/test_signed_rank.py` holds the two equal on thousands of cases.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

__all__ = ["wilcoxon_p"]

#: SciPy enumerates the sign flips up to this many pairs (2**13 flips within its 9,999 resamples)
_ENUMERATED = 13


def wilcoxon_p(d: npt.NDArray[np.float64]) -> float:
    """Two-sided p of the signed-rank test of paired differences `d` (zeros dropped)."""
    counted = _enumerated_p(d)
    if counted is not None:
        return counted
    from scipy import stats

    return float(stats.wilcoxon(d, zero_method="wilcox").pvalue)


def _enumerated_p(d: npt.NDArray[np.float64]) -> float | None:
    """The p SciPy's sign-flip enumeration gives, or None where SciPy would not enumerate."""
    n = int(d.size)
    if n < 2 or n > _ENUMERATED or not np.isfinite(d).all():
        return None
    nonzero = d[d != 0]
    if nonzero.size == 0:
        return 1.0  # every flip has the same (undefined) statistic: SciPy's p is 1
    size = np.abs(nonzero)
    distinct = np.unique(size)
    if distinct.size == size.size and nonzero.size == n:
        return None  # no tie, no zero: SciPy's exact distribution, not an enumeration
    # average ranks, doubled to whole numbers: positions lo..hi of a value share (lo + hi) / 2
    ranked = np.sort(size)
    below = np.searchsorted(ranked, distinct, side="left")
    above = np.searchsorted(ranked, distinct, side="right")
    twice = (below + 1 + above)[np.searchsorted(distinct, size)]
    observed = int(twice[nonzero > 0].sum())
    counts = np.zeros(int(twice.sum()) + 1, dtype=np.int64)
    counts[0] = 1
    for t in twice.tolist():
        shifted = np.zeros_like(counts)
        shifted[t:] = counts[: counts.size - t]
        counts += shifted
    total = float(1 << nonzero.size)  # the zeros' flips scale both tails and the total alike
    less = float(counts[: observed + 1].sum()) / total
    greater = float(counts[observed:].sum()) / total
    return min(max(min(less, greater) * 2, 0.0), 1.0)
