"""pass@k and pass^k (unbiased, Chen et al. 2021; Yao et al. 2024) and the cluster bootstrap
against values worked out by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest

from memgauge.stats.bootstrap import bootstrap_ci
from memgauge.stats.repeats import (
    cluster_bootstrap_ci,
    pass_at_k,
    pass_hat_k,
    pass_k_over_items,
)


def test_pass_at_k_and_pass_hat_k_by_hand() -> None:
    # n = 5 attempts, c = 2 passed: pass@2 = 1 - C(3,2)/C(5,2) = 1 - 3/10; pass^2 = C(2,2)/C(5,2)
    assert pass_at_k(5, 2, 2) == pytest.approx(0.7)
    assert pass_hat_k(5, 2, 2) == pytest.approx(0.1)
    # k = 1: both are c / n
    assert pass_at_k(4, 1, 1) == pass_hat_k(4, 1, 1) == pytest.approx(0.25)
    # k = n: pass@n is 1 when any passed, pass^n 1 only when all did
    assert (pass_at_k(3, 1, 3), pass_hat_k(3, 1, 3)) == (1.0, 0.0)
    assert (pass_at_k(3, 3, 3), pass_hat_k(3, 3, 3)) == (1.0, 1.0)
    assert (pass_at_k(3, 0, 2), pass_hat_k(3, 0, 2)) == (0.0, 0.0)
    with pytest.raises(ValueError, match="k <= n"):
        pass_at_k(2, 1, 3)


def test_over_items_leaves_out_items_with_too_few_attempts() -> None:
    outcomes = [[True, False, False], [True, True, True], [False, True]]
    # k = 2 over the two items with 3 attempts: pass@2 = (1 - 1/3 + 1) / 2; pass^2 = (0 + 1) / 2
    # the third has 2 attempts: counted at k = 2 too; k = 3 leaves it out
    at, hat, n, left = pass_k_over_items(outcomes, 3)
    assert (at, hat, n, left) == (pytest.approx(1.0), pytest.approx(0.5), 2, 1)
    at, hat, n, left = pass_k_over_items(outcomes, 2)
    # items: pass@2 2/3, 1, 1; pass^2 0, 1, 0
    assert at == pytest.approx((2 / 3 + 1 + 1) / 3)
    assert hat == pytest.approx(1 / 3)
    assert (n, left) == (3, 0)
    assert pass_k_over_items([], 1) == (None, None, 0, 0)


def test_cluster_bootstrap_mean_counts_and_degenerate_cases() -> None:
    ci = cluster_bootstrap_ci([[1.0, 0.0], [1.0, 1.0], [0.0, math.nan]], seed=3)
    # each item weighs one, the mean of its scored repeats (NaN left out): (0.5 + 1 + 0) / 3
    assert ci.mean == pytest.approx(1.5 / 3)
    assert (ci.n, ci.n_excluded, ci.method) == (3, 1, "cluster")
    assert ci.low is not None
    assert ci.high is not None
    assert ci.low <= ci.mean <= ci.high
    one = cluster_bootstrap_ci([[0.5, 1.0]])
    assert (one.mean, one.low, one.high, one.n) == (0.75, 0.75, 0.75, 1)
    none = cluster_bootstrap_ci([[math.nan]])
    assert (none.mean, none.n, none.n_excluded) == (None, 0, 1)


def test_clusters_widen_the_interval_that_independent_draws_would_give() -> None:
    # 20 items, each asked 5 times with the same verdict: 5 repeats carry one item's worth
    rng = np.random.default_rng(0)
    per_item = rng.integers(0, 2, size=20).astype(float)
    clusters = [[v] * 5 for v in per_item]
    cluster = cluster_bootstrap_ci(clusters, seed=1)
    naive = bootstrap_ci(np.repeat(per_item, 5), seed=1)
    items = bootstrap_ci(per_item, seed=1)
    assert cluster.mean == pytest.approx(naive.mean)
    width = lambda c: c.high - c.low  # noqa: E731
    assert width(cluster) > 1.8 * width(naive)
    # the cluster interval is the interval of the items themselves
    assert width(cluster) == pytest.approx(width(items), rel=0.25)
