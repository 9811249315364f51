"""`stats.tdist`: the t and noncentral t tails `memgauge sample-size` computes without SciPy,
against SciPy where SciPy is right, against a 40-digit quadrature (mpmath) where it is not
(df 10^7, tails below 1e-300), and against the closed forms of 1 and 2 degrees of freedom."""

from __future__ import annotations

import math

import pytest
from scipy import stats

from memgauge.stats.tdist import nct_sf, t_isf

mp = pytest.importorskip("mpmath")

# SciPy 1.17's noncentral tail drifts from 10^6 degrees of freedom (1e-13 there, 8e-12 at
# 10^7): those are checked against the quadrature below
DFS = [1, 2, 3, 5, 9, 14, 49, 199, 999, 9999, 99_999]


@pytest.mark.parametrize("df", DFS)
def test_the_noncentral_tail_equals_scipy(df: int) -> None:
    for x in (-3.0, 0.0, 0.5, 1.96, 4.3, 12.7, 63.66):
        for nc in (-30.0, -5.0, -1.0, 0.0, 0.3, 1.0, 3.0, 10.0, 28.28, 60.0, 300.0, 20_000.0):
            theirs = float(stats.nct.sf(x, df, nc))
            if math.isfinite(theirs):
                assert nct_sf(x, df, nc) == pytest.approx(theirs, abs=1e-13), (x, df, nc)


@pytest.mark.parametrize("df", [*DFS, 1_000_000])
def test_the_quantile_equals_scipy(df: int) -> None:
    for p in (0.4, 0.05, 0.025, 0.005, 1e-4, 1e-8):
        assert t_isf(p, df) == pytest.approx(float(stats.t.isf(p, df)), rel=1e-13), (p, df)


def _reference(x: float, df: int, nc: float) -> float:
    """P(T > x) by mpmath's quadrature at 40 digits over the chi law of S, split where the
    integrand turns (its peak and the fall of the normal tail)."""
    mp.mp.dps = 40
    x_, k, d = mp.mpf(x), mp.mpf(df), mp.mpf(nc)
    c = (k / 2) * mp.log(k / 2) - mp.loggamma(k / 2) + mp.log(2)

    def f(u: object) -> object:
        return (
            mp.erfc((x_ * mp.e**u - d) / mp.sqrt(2))
            / 2
            * mp.e ** (c + k * u - k / 2 * mp.e ** (2 * u))
        )

    s = 1 / mp.sqrt(2 * k)
    turns = [0, mp.log(max(d, mp.mpf("1e-30")) / x_)] if d > 0 else [0]
    points = sorted(
        {-50 / k - 60 * s - 1, *turns, *(t + j * s for t in turns for j in (-8, -3, 3, 8))}
    )
    points.append(mp.log(1 + 100 / k) + max(turns) + 1)
    return float(mp.quad(f, points, maxdegree=10))


@pytest.mark.parametrize(
    ("x", "df", "nc"),
    [
        (2.5, 10_000_000, 1.0),  # SciPy 1.17 is off by 8e-12 here
        (-3.0, 1_000_000, -1.0),  # and by 1e-13 here
        (1.96, 70, 2.8),
        (12.7, 1, 28.28),  # Q's fall is far steeper than df 1's long left tail
        (63.66, 1, 40.0),
        (40.0, 5, 0.0),  # a tail of 1e-7
        (4.3, 2, -5.0),
    ],
)
def test_the_noncentral_tail_equals_a_40_digit_quadrature(x: float, df: int, nc: float) -> None:
    assert nct_sf(x, df, nc) == pytest.approx(_reference(x, df, nc), rel=1e-13)


def test_tails_far_below_a_double_keep_their_digits() -> None:
    """A quantile at p = 5e-301 (alpha 1e-300, two-sided): SciPy gives -inf at df 5."""
    for df in (2, 5, 30, 12_950):
        x = t_isf(5e-301, df)
        assert math.isfinite(x)
        assert x > 0
        assert math.log(nct_sf(x, df, 0.0)) == pytest.approx(math.log(5e-301), rel=1e-12)
    assert t_isf(5e-301, 12_950) == pytest.approx(float(stats.t.isf(5e-301, 12_950)), rel=1e-13)


@pytest.mark.parametrize("p", [0.25, 0.025, 1e-8, 5e-301])
def test_the_quantile_equals_the_closed_forms_of_one_and_two_degrees(p: float) -> None:
    """df 1 (Cauchy): cot(pi p); df 2: sqrt(2) (1 - 2p) / (2 sqrt(p (1 - p)))."""
    mp.mp.dps = 40
    q = mp.mpf(p)
    assert t_isf(p, 1) == pytest.approx(float(mp.cot(mp.pi * q)), rel=1e-14)
    two = mp.sqrt(2) * (1 - 2 * q) / (2 * mp.sqrt(q * (1 - q)))
    assert t_isf(p, 2) == pytest.approx(float(two), rel=1e-13)


@pytest.mark.parametrize(
    ("x", "df", "nc"), [(3e7, 3, 2e7), (1e8, 5, 1.2e8), (1e20, 1, 8e19), (1.5e75, 4, 1e75)]
)
def test_a_huge_noncentrality_gives_the_chi_square_limit(x: float, df: int, nc: float) -> None:
    """From nc about 10^7, Z in T = (Z + nc) / S is nothing beside nc: P(T > x) is P(S < nc / x),
    a chi-square probability. Q's fall is then narrower than the doubles of u (SciPy gives 0.012
    for 0.279 at the first, NaN from 10^9); before the integral was shifted onto it, the search for
    its ends stood still (a hang) or ran past e^709 (OverflowError). The limit is the truth to
    1e-15 here (a 30-digit integral over Z agrees); the quadrature is off by up to 1e-6 near
    nc = 10^7, as it was unshifted (3e-5 at nc = 7e5: far beyond any sample size's power)."""
    want = float(stats.chi2.cdf(df * (nc / x) ** 2, df))
    assert nct_sf(x, df, nc) == pytest.approx(want, rel=1e-5)
