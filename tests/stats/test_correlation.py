"""The correlation's CI is Fisher's z interval (scipy's own Pearson CI is the oracle), and too
few pairs or a constant side are n/a, never 0."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as sps

from memgauge.stats.correlation import correlation


def test_pearson_ci_is_fishers_z_interval() -> None:
    rng = np.random.default_rng(3)
    x = rng.normal(size=40)
    y = 0.5 * x + rng.normal(size=40)
    got = correlation(x.tolist(), y.tolist())
    oracle = sps.pearsonr(x, y)
    ci = oracle.confidence_interval(0.95)
    assert got.value == pytest.approx(oracle.statistic)
    assert got.ci == pytest.approx((ci.low, ci.high))
    assert got.n == 40


def test_spearman_widens_the_interval_by_1_03() -> None:
    x = [float(i) for i in range(20)]
    y = [float((i * 7) % 20) for i in range(20)]
    got = correlation(x, y, "spearman")
    assert got.value == pytest.approx(sps.spearmanr(x, y).statistic)
    assert got.ci is not None
    z = np.arctanh(got.value)
    assert np.arctanh(got.ci[1]) - z == pytest.approx(1.959963984540054 * 1.03 / np.sqrt(17))


def test_too_few_pairs_or_a_constant_side_are_na() -> None:
    few = correlation([1.0, 2.0, 3.0], [1.0, 2.0, 4.0], min_n=10)
    assert (few.value, few.ci, few.n) == (None, None, 3)
    assert "at least 10" in (few.note or "")
    flat = correlation([1.0] * 12, [float(i) for i in range(12)])
    assert flat.value is None
    assert "does not vary" in (flat.note or "")
    with pytest.raises(ValueError, match="x has 2 values"):
        correlation([1.0, 2.0], [1.0])
