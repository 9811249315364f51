"""The signed-rank test's p counted without SciPy's enumeration equals SciPy's, bit for bit."""

from __future__ import annotations

import warnings

import numpy as np
from scipy import stats

from memgauge.stats.signed_rank import _enumerated_p, wilcoxon_p


def _scipy(d: np.ndarray) -> float:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(stats.wilcoxon(d, zero_method="wilcox").pvalue)


def _cases(seed: int, count: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    grid = np.array([-1.0, -0.5, -1 / 3, -0.25, 0.0, 0.0, 0.25, 1 / 3, 0.5, 1.0, 2.0])
    out = []
    for _ in range(count):
        n = int(rng.integers(2, 16))
        if rng.random() < 0.7:  # per-query metric differences: few values, many ties and zeros
            out.append(rng.choice(grid, size=n))
        else:
            out.append(rng.normal(size=n).round(int(rng.integers(0, 3))))
    return out


def _flipped(d: np.ndarray) -> float:
    """SciPy's enumeration written out: R+ of every one of the 2**n sign flips (zeros dropped
    from the ranks), each tail counted within 100 epsilon, the smaller doubled and clipped."""
    nonzero = d != 0
    ranks = np.zeros(d.size)
    ranks[nonzero] = stats.rankdata(np.abs(d[nonzero]))
    signs = 1 - 2 * ((np.arange(1 << d.size)[:, None] >> np.arange(d.size)) & 1)
    null = ((signs * d) > 0) @ ranks
    observed = ranks[d > 0].sum()
    gamma = abs(observed) * np.finfo(float).eps * 100
    less = float((null <= observed + gamma).sum()) / null.size
    greater = float((null >= observed - gamma).sum()) / null.size
    return min(max(min(less, greater) * 2, 0.0), 1.0)


def test_the_p_is_scipys_on_ties_zeros_and_every_size() -> None:
    # one case of each size, 2 to 15 pairs (the first of that size the seed draws): SciPy
    # enumerates 2**n sign flips in Python batches, 0.9 CPU-s at 13 pairs, so a second case of
    # a large size costs more than all the small ones
    by_size: dict[int, np.ndarray] = {}
    for d in _cases(0, 200):
        by_size.setdefault(d.size, d)
    cases = [by_size[n] for n in range(2, 16)]
    assert sum(_enumerated_p(d) is not None for d in cases) > 10
    for d in cases:
        assert wilcoxon_p(d) == _scipy(d), d.tolist()


def test_the_p_is_the_enumerations_on_many_more_cases() -> None:
    counted = 0
    for d in _cases(1, 1500):
        got = _enumerated_p(d)
        if got is not None:
            counted += 1
            assert got == _flipped(d), d.tolist()
    assert counted > 750


def test_the_cases_scipy_enumerates_are_the_ones_counted() -> None:
    tied = np.array([0.5, 0.5, -1.0, 0.25])
    assert _enumerated_p(tied) is not None
    assert _enumerated_p(np.array([0.5, 0.0, -1.0, 0.25])) is not None
    assert _enumerated_p(np.array([0.5, 0.75, -1.0, 0.25])) is None  # SciPy's exact distribution
    assert _enumerated_p(np.tile(tied, 4)) is None  # 16 pairs: SciPy's normal approximation
    assert _enumerated_p(np.zeros(3)) == 1.0 == _scipy(np.zeros(3))
    assert wilcoxon_p(tied) == _scipy(tied) == 0.875
