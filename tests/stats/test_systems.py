"""Several systems compared: Tukey's HSD with queries as blocks against statsmodels' two-way
ANOVA and the paired t-test, Fisher's randomization test against its exact distribution
(every sign assignment enumerated), Holm and Bonferroni against statsmodels, and the marks
(who beats whom) on hand-built data."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from tests.helpers import lazy_import

from memgauge.stats import (
    adjust,
    bonferroni,
    compare_systems,
    holm,
    randomization_test,
    resolve_correction,
    tukey_hsd_blocked,
)

sm = lazy_import("statsmodels.api")
stats = lazy_import("scipy.stats")
_multicomp = lazy_import("statsmodels.sandbox.stats.multicomp")
_multitest = lazy_import("statsmodels.stats.multitest")


def _ir_like(rng: np.random.Generator, m: int, n: int, effects: list[float]) -> np.ndarray:
    """Per-query scores in [0, 1] with a strong query effect, as IR scores have."""
    difficulty = rng.beta(2, 2, n)
    noise = rng.normal(0, 0.08, (m, n))
    return np.clip(difficulty[None, :] + np.asarray(effects)[:, None] + noise, 0.0, 1.0)


def _two_way_anova(x: np.ndarray) -> tuple[float, float]:
    """Residual mean square and df of the additive model score ~ system + query, fitted by
    statsmodels' OLS on dummy columns."""
    m, n = x.shape
    system = np.repeat(np.arange(m), n)
    query = np.tile(np.arange(n), m)
    design = np.column_stack(
        [np.ones(m * n)]
        + [(system == i).astype(float) for i in range(1, m)]
        + [(query == j).astype(float) for j in range(1, n)]
    )
    fit = sm.OLS(x.ravel(), design).fit()
    return float(fit.mse_resid), float(fit.df_resid)


@pytest.mark.parametrize("seed", range(4))
def test_tukey_blocked_equals_statsmodels_two_way_anova_and_tukeyhsd(seed: int) -> None:
    rng = np.random.default_rng(seed)
    m = int(rng.integers(3, 7))
    n = int(rng.integers(8, 60))
    x = _ir_like(rng, m, n, list(rng.normal(0, 0.05, m)))
    ours = tukey_hsd_blocked(x)
    mse, df = _two_way_anova(x)
    assert ours.mse == pytest.approx(mse, rel=1e-9)
    assert ours.df == df == (m - 1) * (n - 1)
    # statsmodels' Tukey HSD from the group means, n per group and the two-way residual
    # variance (its `df` is per group: the total is m * df)
    result = _multicomp.tukeyhsd(x.mean(axis=1), n, mse, df=df / m)
    (i, j), pvalues = result[0], result[8]
    assert ours.pvalue[i, j] == pytest.approx(pvalues, abs=1e-9)
    assert np.allclose(ours.pvalue, ours.pvalue.T)
    assert np.all(np.diag(ours.pvalue) == 1.0)


@pytest.mark.parametrize("seed", range(5))
def test_tukey_blocked_with_two_systems_is_the_paired_t_test(seed: int) -> None:
    rng = np.random.default_rng(100 + seed)
    x = _ir_like(rng, 2, int(rng.integers(5, 80)), [0.0, float(rng.normal(0, 0.03))])
    ours = tukey_hsd_blocked(x)
    t = stats.ttest_rel(x[1], x[0])
    assert ours.pvalue[0, 1] == pytest.approx(t.pvalue, rel=1e-6, abs=1e-12)
    assert ours.statistic[0, 1] == pytest.approx(np.sqrt(2) * abs(t.statistic), rel=1e-9)


def test_tukey_blocked_finds_what_the_one_way_test_misses_on_ir_data() -> None:
    # the query effect dominates: one-way Tukey (scipy, ranx) counts it as noise
    rng = np.random.default_rng(0)
    x = _ir_like(rng, 3, 60, [0.0, 0.03, 0.06])
    blocked = tukey_hsd_blocked(x).pvalue[0, 2]
    one_way = stats.tukey_hsd(*x).pvalue[0, 2]
    assert blocked < 0.001
    assert one_way > 0.05


def test_tukey_blocked_drops_incomplete_queries_and_handles_degenerate_data() -> None:
    x = np.array([[0.1, 0.5, 0.9, np.nan], [0.2, 0.5, 0.7, 0.3], [0.4, 0.6, 0.8, 0.2]])
    r = tukey_hsd_blocked(x)
    assert (r.n, r.n_dropped, r.df) == (3, 1, 4)
    assert r.pvalue[0, 1] == pytest.approx(tukey_hsd_blocked(x[:, :3]).pvalue[0, 1])
    # every system differs by a constant: no residual variance, q infinite where means differ
    shifted = np.array([[0.1, 0.5, 0.2], [0.2, 0.6, 0.3], [0.1, 0.5, 0.2]])
    d = tukey_hsd_blocked(shifted)
    assert d.mse == pytest.approx(0.0, abs=1e-30)
    assert d.pvalue[0, 1] == 0.0
    assert d.pvalue[0, 2] == 1.0
    one_query = tukey_hsd_blocked([[0.1], [0.2]])
    assert one_query.mse is None
    assert np.isnan(one_query.pvalue[0, 1])


def _exact_fisher(d: np.ndarray) -> float:
    """Fisher's randomization test with every one of the 2^n sign assignments."""
    signs = np.array(list(itertools.product([-1.0, 1.0], repeat=d.size)))
    means = np.abs(signs @ d) / d.size
    return float(np.mean(means >= abs(d.mean()) - 1e-12))


@pytest.mark.parametrize("seed", range(4))
def test_fisher_randomization_test_converges_to_the_exact_test(seed: int) -> None:
    rng = np.random.default_rng(200 + seed)
    n = int(rng.integers(8, 14))
    d = rng.normal(0.08, 0.2, n).round(2)  # rounded: ties among |d| as IR scores have
    exact = _exact_fisher(d)
    b = 100_000
    ours = randomization_test(d, n_permutations=b, seed=seed)
    se = np.sqrt(exact * (1 - exact) / b)
    assert abs(ours - exact) <= 4 * se + 1 / (b + 1)


def test_compare_systems_fisher_p_is_the_randomization_test_of_the_pair() -> None:
    rng = np.random.default_rng(9)
    x = _ir_like(rng, 3, 12, [0.0, 0.05, 0.1])
    cmp = compare_systems(["a", "b", "c"], {"m": x}, test="fisher", correction="none")
    by_pair = {(p.a, p.b): p for p in cmp.pairs}
    assert list(by_pair) == [(0, 1), (0, 2), (1, 2)]
    for (a, b), p in by_pair.items():
        assert p.p_value == randomization_test(x[b] - x[a], 10_000, 0)
        assert p.paired.delta == pytest.approx(float((x[b] - x[a]).mean()))
        assert abs(p.p_value - _exact_fisher(x[b] - x[a])) < 0.02


def test_student_and_wilcoxon_per_pair_equal_scipy() -> None:
    rng = np.random.default_rng(3)
    x = _ir_like(rng, 3, 40, [0.0, 0.02, 0.05])
    t = compare_systems(["a", "b", "c"], {"m": x}, test="student", correction="none")
    w = compare_systems(["a", "b", "c"], {"m": x}, test="wilcoxon", correction="none")
    for pt, pw in zip(t.pairs, w.pairs, strict=True):
        assert pt.p_value == pytest.approx(stats.ttest_rel(x[pt.b], x[pt.a]).pvalue, rel=1e-12)
        assert pw.p_value == pytest.approx(stats.wilcoxon(x[pw.b] - x[pw.a]).pvalue, rel=1e-12)
        assert pt.paired.p_randomization is None  # not asked for: not computed


def test_holm_and_bonferroni_equal_statsmodels() -> None:
    rng = np.random.default_rng(4)
    p = list(rng.uniform(0, 0.2, 15))
    for method in ("holm", "bonferroni"):
        ref = _multitest.multipletests(p, method=method)[1]
        assert adjust(p, method) == pytest.approx(list(ref), rel=1e-12)
    with_none: list[float | None] = [0.01, None, 0.04, 0.03]
    assert holm(with_none) == pytest.approx([0.03, None, 0.06, 0.06])
    assert bonferroni(with_none) == pytest.approx([0.03, None, 0.12, 0.09])
    assert adjust(with_none, "none") == with_none


def test_correction_families_table_and_measure() -> None:
    rng = np.random.default_rng(12)
    values = {m: _ir_like(rng, 3, 30, [0.0, 0.03, 0.05]) for m in ("AP", "nDCG@10")}
    raw = compare_systems(["a", "b", "c"], values, test="student", correction="none")
    table = compare_systems(["a", "b", "c"], values, test="student", family="table")
    per = compare_systems(
        ["a", "b", "c"], values, test="student", correction="bonferroni", family="measure"
    )
    ps = [p.p_value for p in raw.pairs]
    assert table.correction == "holm"
    assert [p.p_adjusted for p in table.pairs] == pytest.approx(
        list(_multitest.multipletests(ps, method="holm")[1])
    )
    assert table.family_size == 6
    assert [p.p_adjusted for p in per.pairs] == pytest.approx(
        [min(1.0, 3 * p) for p in ps]  # 3 pairs per measure
    )


def test_tukey_correction_rules() -> None:
    assert resolve_correction("tukey", "table", None) == "bonferroni"
    assert resolve_correction("tukey", "measure", None) == "none"
    assert resolve_correction("fisher", "measure", None) == "holm"
    with pytest.raises(ValueError, match="Holm's step-down"):
        resolve_correction("tukey", "table", "holm")
    with pytest.raises(ValueError, match="its own correction"):
        resolve_correction("tukey", "measure", "bonferroni")
    rng = np.random.default_rng(8)
    values = {m: _ir_like(rng, 4, 25, [0.0, 0.02, 0.04, 0.08]) for m in ("AP", "RR")}
    cmp = compare_systems(list("wxyz"), values, test="tukey")
    for p in cmp.pairs:
        hsd = tukey_hsd_blocked(values[p.measure]).pvalue[p.a, p.b]
        assert p.p_value == pytest.approx(hsd)
        assert p.p_adjusted == pytest.approx(min(1.0, 2 * hsd))  # two measures
    assert cmp.notes == {}  # every query complete: nothing to say
    values["AP"][1, :3] = np.nan
    dropped = compare_systems(list("wxyz"), values, test="tukey")
    assert dropped.notes == {"AP": "Tukey's HSD on the 22 queries every system scored (3 left out)"}


def test_beaten_names_the_systems_a_value_is_significantly_better_than() -> None:
    rng = np.random.default_rng(1)
    base = rng.uniform(0.2, 0.6, 60)
    # c > b > a by clear margins; d equals a
    x = np.vstack([base, base + 0.1, base + 0.2, base]) + rng.normal(0, 0.01, (4, 60))
    x[3] = x[0]
    cmp = compare_systems(["a", "b", "c", "d"], {"AP": x}, test="student")
    assert [cmp.beaten("AP", i) for i in range(4)] == [[], [0, 3], [0, 1, 3], []]
    as_dict = cmp.as_dict()
    assert as_dict["beats"]["AP"]["c"] == ["a", "b", "d"]
    assert as_dict["means"]["AP"]["b"] == pytest.approx(float(x[1].mean()))
    # the baseline against each other system only
    baseline = compare_systems(["a", "b", "c", "d"], {"AP": x}, test="student", pairing="baseline")
    assert [(p.a, p.b) for p in baseline.pairs] == [(0, 1), (0, 2), (0, 3)]
    assert [baseline.beaten("AP", i) for i in range(4)] == [[], [0], [0], []]


def test_missing_values_are_left_out_of_means_and_pairs_and_counted() -> None:
    x = np.array([[0.5, np.nan, 0.2, 0.4], [0.6, 0.3, np.nan, 0.5]])
    cmp = compare_systems(["a", "b"], {"m": x}, test="student")
    assert cmp.means["m"] == pytest.approx((1.1 / 3, 1.4 / 3))
    assert cmp.counts["m"] == (3, 3)
    (pair,) = cmp.pairs
    assert (pair.paired.n, pair.paired.n_dropped) == (2, 2)
    one = compare_systems(["a"], {"m": x[:1]})
    assert (one.pairs, one.means["m"]) == ((), (pytest.approx(1.1 / 3),))
    with pytest.raises(ValueError, match="no systems"):
        compare_systems([], {})
    with pytest.raises(ValueError, match=r"\(2, queries\) matrix"):
        compare_systems(["a", "b"], {"m": x[0]})
