"""Sample size for a paired comparison (seed 002 section 2.3).

Normal approximation: n = ceil(((z_{1-alpha/2} + z_{1-beta}) * sigma / delta)^2). Exact paired
t: the smallest n whose power under the noncentral t distribution (df = n - 1, noncentrality
delta * sqrt(n) / sigma) reaches the target. At delta 0.05, sigma 0.15, alpha 0.05, power 0.80
these give 71 and 73; the seed's "n >= 72" lies between them (it rounds the normal figure up
with a small-sample allowance). Minimum detectable effect for a given n inverts the same
relation.

Power, two-sided: P(T > c) + P(T < -c), c = t_{1-alpha/2, n-1}, T noncentral t with df n - 1 and
noncentrality nc = effect * sqrt(n). The lower tail is taken as the upper tail at -nc (T's law at
-nc is the mirror image of its law at nc): under scipy 1.17 `nct.cdf` returns NaN for nc from
about 6 to 2000 while `nct.sf` stays accurate (checked to 1e-15 against a 40-digit quadrature
over the chi-square law of the sample variance, for df 1 to 10^6 and nc up to 60). No shortcut
for large nc: at n = 2 (df 1) the power at nc = 31 is still only about 0.985.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

__all__ = ["SampleSize", "minimum_detectable_effect", "paired_t_power", "sample_size_paired"]


@dataclass(frozen=True)
class SampleSize:
    """Queries needed to detect a mean paired difference `delta` with the given power."""

    n_normal: int
    n_t: int
    delta: float
    sigma: float
    alpha: float
    power: float
    two_sided: bool


def paired_t_power(n: int, effect: float, alpha: float = 0.05, two_sided: bool = True) -> float:
    """Power of a paired t-test on `n` differences at standardized effect `effect` (mean
    difference / sd of the differences); one-sided tests the direction of a positive effect."""
    from scipy import stats  # scipy loads in ~0.5 s: only when used

    if n < 2:
        raise ValueError("n must be at least 2")
    df = n - 1
    nc = effect * math.sqrt(n)
    crit = stats.t.isf(alpha / 2 if two_sided else alpha, df)
    power = stats.nct.sf(crit, df, nc)
    if two_sided:
        power += stats.nct.sf(crit, df, -nc)  # = P(T < -crit) at nc, by symmetry
    if not math.isfinite(power):  # never a silent NaN (it would end the searches below early)
        raise ArithmeticError(f"power not computable at n={n}, effect={effect}")
    return float(power)


#: the most queries a sample size may come to (beyond it the t distribution's quantiles are
#: computed on integers NumPy cannot hold, and no evaluation has that many)
_MAX_N = 2**31 - 1


def _check(alpha: float, power: float) -> None:
    if not (0 < alpha < 1 and 0 < power < 1):
        raise ValueError("alpha and power must be in (0, 1)")
    if power <= alpha:
        raise ValueError("power must exceed alpha (with no effect the test rejects at rate alpha)")


def sample_size_paired(
    delta: float, sigma: float, alpha: float = 0.05, power: float = 0.80, two_sided: bool = True
) -> SampleSize:
    """Queries needed for a paired test to detect `delta` when differences have sd `sigma`."""
    from scipy import stats  # scipy loads in ~0.5 s: only when used

    if delta <= 0 or sigma <= 0:
        raise ValueError("delta and sigma must be positive")
    _check(alpha, power)
    z_a = stats.norm.ppf(1 - alpha / 2 if two_sided else 1 - alpha)
    z_b = stats.norm.ppf(power)
    # compared before squaring, in Python floats: NumPy's square would overflow with a warning
    root = float(z_a + z_b) * sigma / delta
    if not abs(root) <= math.sqrt(_MAX_N):  # infinite too (alpha so small its quantile is)
        raise ValueError(
            f"detecting {delta} at sigma {sigma} (alpha {alpha}, power {power}) needs more than"
            f" {_MAX_N:,} queries: no test of that size can be run; ask for a larger delta"
        )
    n_normal = max(2, math.ceil(root**2))
    n = max(2, n_normal - 2)
    while paired_t_power(n, delta / sigma, alpha, two_sided) < power:
        n += 1
    return SampleSize(n_normal, n, delta, sigma, alpha, power, two_sided)


def minimum_detectable_effect(
    n: int, sigma: float, alpha: float = 0.05, power: float = 0.80, two_sided: bool = True
) -> float:
    """Smallest mean difference a paired t-test on `n` queries detects with `power`."""
    from scipy import optimize  # scipy loads in ~0.5 s: only when used

    if n < 2:
        raise ValueError("n must be at least 2")
    if sigma <= 0:
        raise ValueError("sigma must be positive")
    _check(alpha, power)

    def gap(d: float) -> float:
        return paired_t_power(n, d / sigma, alpha, two_sided) - power

    hi = 20.0 * sigma
    while gap(hi) < 0:  # tiny n and high power need effects of many sigma
        hi *= 4
    return float(optimize.brentq(gap, 1e-9 * sigma, hi, xtol=1e-12 * sigma, rtol=1e-12))
