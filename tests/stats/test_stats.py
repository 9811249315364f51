"""Statistics against SciPy and hand-worked examples."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from memgauge.stats import (
    bootstrap_ci,
    bootstrap_cis,
    breakdown,
    compare_many,
    holm,
    minimum_detectable_effect,
    paired_compare,
    randomization_test,
    sample_size_paired,
    significance_mark,
)


def test_bootstrap_matches_scipy_percentile_within_monte_carlo_error() -> None:
    x = np.random.default_rng(7).beta(2, 5, size=300)
    ours = bootstrap_ci(x, n_resamples=20_000, seed=1)
    ref = stats.bootstrap(
        (x,), np.mean, n_resamples=20_000, method="percentile", random_state=2
    ).confidence_interval
    se = x.std(ddof=1) / math.sqrt(x.size)
    assert ours.mean == pytest.approx(x.mean())
    assert ours.low == pytest.approx(ref.low, abs=0.05 * se * 4)
    assert ours.high == pytest.approx(ref.high, abs=0.05 * se * 4)
    # and close to the normal-theory interval mean +- 1.96 se
    assert ours.low == pytest.approx(x.mean() - 1.96 * se, abs=0.15 * se)


def test_bootstrap_is_seeded_and_rows_share_resamples() -> None:
    x = np.random.default_rng(3).random(50)
    a = bootstrap_ci(x, seed=5)
    b = bootstrap_ci(x, seed=5)
    assert (a.low, a.high) == (b.low, b.high)
    rows = bootstrap_cis(np.vstack([x, x * 2]), seed=5)
    assert rows[1].low == pytest.approx(2 * rows[0].low)
    assert rows[1].high == pytest.approx(2 * rows[0].high)


def test_bootstrap_excludes_nan_and_reports_no_data_as_none() -> None:
    ci = bootstrap_ci([1.0, np.nan, 0.0, 1.0])
    assert ci.n == 3
    assert ci.n_excluded == 1
    assert ci.mean == pytest.approx(2 / 3)
    empty = bootstrap_ci([np.nan, np.nan])
    assert empty.mean is None
    assert empty.low is None
    assert empty.n == 0
    one = bootstrap_ci([0.4])
    assert (one.mean, one.low, one.high) == (0.4, 0.4, 0.4)
    assert one.note


def test_randomization_test_matches_scipy_permutation_test() -> None:
    rng = np.random.default_rng(11)
    a = rng.random(40)
    b = a + rng.normal(0.05, 0.15, 40)
    ours = randomization_test(b - a, n_permutations=20_000, seed=3)
    ref = stats.permutation_test(
        (b, a),
        lambda x, y: np.mean(x - y),
        permutation_type="samples",
        n_resamples=20_000,
        random_state=4,
    ).pvalue
    assert ours == pytest.approx(ref, abs=0.02)


def test_paired_compare_against_scipy_tests() -> None:
    rng = np.random.default_rng(2)
    a = rng.random(60)
    b = np.clip(a + rng.normal(0.08, 0.1, 60), 0, 1)
    c = paired_compare(a, b, seed=0)
    assert c.delta == pytest.approx((b - a).mean())
    assert c.p_t == pytest.approx(stats.ttest_rel(b, a).pvalue)
    assert c.p_wilcoxon == pytest.approx(stats.wilcoxon(b - a).pvalue)
    d = b - a
    assert c.effect_size == pytest.approx(d.mean() / d.std(ddof=1))
    assert c.delta_ci_low is not None
    assert c.delta_ci_low < c.delta < c.delta_ci_high


def test_paired_compare_edge_cases() -> None:
    same = paired_compare([0.5, 1.0, 0.0], [0.5, 1.0, 0.0])
    assert same.p_t == 1.0
    assert same.p_randomization == 1.0
    assert same.note
    dropped = paired_compare([1.0, np.nan, 0.0, 0.5], [0.0, 1.0, np.nan, 0.5])
    assert dropped.n == 2
    assert dropped.n_dropped == 2
    none = paired_compare([np.nan], [1.0])
    assert none.n == 0
    assert none.delta is None
    with pytest.raises(ValueError, match="same shape"):
        paired_compare([1.0], [1.0, 2.0])


def test_holm_hand_worked() -> None:
    # p = 0.01, 0.04, 0.03, 0.005 (m = 4). Sorted: 0.005*4 = 0.02, 0.01*3 = 0.03,
    # 0.03*2 = 0.06, 0.04*1 = 0.04 -> running max 0.06.
    assert holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert holm([None, 0.2]) == [None, 0.2]


def test_compare_many_applies_holm_and_marks() -> None:
    rng = np.random.default_rng(5)
    a = rng.random(100)
    out = compare_many({"big": a, "none": a}, {"big": a + 0.2, "none": a}, seed=1)
    assert out["big"].mark == "**"
    assert out["big"].p_holm is not None
    assert out["none"].mark == ""
    assert out["none"].p_holm == 1.0
    assert significance_mark(0.03) == "*"
    assert significance_mark(0.2) == ""


def test_breakdown_counts_and_none_group() -> None:
    out = breakdown([1.0, 0.0, np.nan, 0.5], ["a", "a", "b", None])
    assert out["a"].n == 2
    assert out["a"].mean == 0.5
    assert out["b"].n == 1
    assert out["b"].n_scored == 0
    assert out["b"].mean is None
    assert out["(none)"].mean == 0.5


def test_sample_size_seed_002() -> None:
    s = sample_size_paired(0.05, 0.15)
    # normal approximation ((1.95996 + 0.84162) * 3)^2 = 70.6 -> 71; the exact t needs 73
    assert s.n_normal == 71
    assert s.n_t == 73
    assert s.n_normal <= 72 <= s.n_t  # the seed's figure
    mde = minimum_detectable_effect(15, 0.15)
    assert 0.10 < mde < 0.13  # "15 per category detects about 0.10" holds to the first digit
    with pytest.raises(ValueError, match="must be positive"):
        sample_size_paired(0, 0.15)


def test_wilson_interval_is_scipys_to_the_last_bit() -> None:
    """The Wilson interval is computed without importing scipy (0.75 CPU-s), and gives
    exactly the floats `binomtest(k, n).proportion_ci(method="wilson")` gives."""
    from scipy.special import ndtri

    from memgauge.stats.proportion import Z_95, wilson_ci

    assert float(ndtri(0.5 + 0.5 * 0.95)) == Z_95
    assert wilson_ci(0, 0) is None
    checked = 0
    for n in (1, 2, 3, 7, 10, 49, 100, 1536, 7672, 100_003):
        for k in sorted({0, 1, n // 3, n // 2, n - 1, n}):
            for confidence in (0.8, 0.9, 0.95, 0.99, 0.999):
                ci = stats.binomtest(k, n).proportion_ci(confidence, method="wilson")
                assert wilson_ci(k, n, confidence) == (float(ci.low), float(ci.high))
                checked += 1
    assert checked > 200
    with pytest.raises(ValueError, match="between 0 and n"):
        wilson_ci(4, 3)
