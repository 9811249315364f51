"""The signed-rank test's p counted without SciPy's enumeration equals SciPy's, bit for bit."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
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


@pytest.mark.parametrize("seed", range(2))
def test_the_p_is_scipys_on_ties_zeros_and_every_size(seed: int) -> None:
    counted = 0
    for d in _cases(seed, 150):
        assert wilcoxon_p(d) == _scipy(d), d.tolist()
        counted += _enumerated_p(d) is not None
    assert counted > 75  # most cases take the counted path, not SciPy's


def test_the_cases_scipy_enumerates_are_the_ones_counted() -> None:
    tied = np.array([0.5, 0.5, -1.0, 0.25])
    assert _enumerated_p(tied) is not None
    assert _enumerated_p(np.array([0.5, 0.0, -1.0, 0.25])) is not None
    assert _enumerated_p(np.array([0.5, 0.75, -1.0, 0.25])) is None  # SciPy's exact distribution
    assert _enumerated_p(np.tile(tied, 4)) is None  # 16 pairs: SciPy's normal approximation
    assert _enumerated_p(np.zeros(3)) == 1.0 == _scipy(np.zeros(3))
    assert wilcoxon_p(tied) == _scipy(tied) == 0.875
