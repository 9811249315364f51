"""Sample size for a paired comparison (seed 002 section 2.3).

Normal approximation: n = ceil(((z_{1-alpha/2} + z_{1-beta}) * sigma / delta)^2). Exact paired
t: the smallest n whose power under the noncentral t distribution (df = n - 1, noncentrality
delta * sqrt(n) / sigma) reaches the target. At delta 0.05, sigma 0.15, alpha 0.05, power 0.80
these give 71 and 73; the seed's "n >= 72" lies between them (it rounds the normal figure up
with a small-sample allowance). Minimum detectable effect for a given n inverts the same
relation.

Power, two-sided: P(T > c) + P(T < -c), c = t_{1-alpha/2, n-1}, T noncentral t with df n - 1 and
noncentrality nc = effect * sqrt(n). The lower tail is taken as the upper tail at -nc (T's law at
-nc is the mirror image of its law at nc). Both tails and the quantile come from
`stats.tdist` (NumPy and the standard library: `memgauge sample-size` does not load SciPy),
which agrees with `scipy.stats.nct.sf` to 1e-13 and with a 40-digit quadrature to 1e-15 (where
SciPy's own `nct.cdf` returns NaN, for nc from about 6 to 2000). No shortcut for large nc: at
n = 2 (df 1) the power at nc = 31 is still only about 0.985.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable
from dataclasses import dataclass
from statistics import NormalDist

from memgauge._util.numbers import ALPHA, POWER
from memgauge.errors import argument
from memgauge.stats.tdist import nct_sf, t_isf

__all__ = [
    "MAX_N",
    "SampleSize",
    "minimum_detectable_effect",
    "paired_t_power",
    "sample_size_paired",
]


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


def paired_t_power(n: int, effect: float, alpha: float = ALPHA, two_sided: bool = True) -> float:
    """Power of a paired t-test on `n` differences at standardized effect `effect` (mean
    difference / sd of the differences); one-sided tests the direction of a positive effect."""
    if n < 2:
        raise ValueError("n must be at least 2")
    df = n - 1
    nc = effect * math.sqrt(n)
    crit = t_isf(alpha / 2 if two_sided else alpha, df)
    power = nct_sf(crit, df, nc)
    if two_sided:
        power += nct_sf(crit, df, -nc)  # = P(T < -crit) at nc, by symmetry
    if not math.isfinite(power):  # never a silent NaN (it would end the searches below early)
        raise ArithmeticError(f"power not computable at n={n}, effect={effect}")
    return min(1.0, power)  # two tails that each round up by a last bit


#: the most queries a sample size may come to (a 32-bit count; no evaluation has that many)
MAX_N = 2**31 - 1
#: the largest standardized effect (delta / sigma) whose power is computed: far past any real
#: one, and below where the noncentral t's tail overflows (about 1e299 sigma: an
#: OverflowError, or a ZeroDivisionError for a subnormal sigma)
_MAX_EFFECT = 1e150


def _positive(name: str, value: float, example: str) -> None:
    if value <= 0:  # NaN is refused further on, as no finite number
        raise ValueError(f"{argument(name, value)}: {name} must be positive (e.g. {example})")


def _check(alpha: float, power: float, two_sided: bool) -> None:
    for name, value, example in (("alpha", alpha, "0.05"), ("power", power, "0.8")):
        if not 0 < value < 1:
            raise ValueError(
                f"{argument(name, value)}: {name} must be between 0 and 1 (e.g. {example})"
            )
    if not two_sided and alpha >= 0.5:  # the critical value would be 0 or below
        raise ValueError(
            f"{argument('alpha', alpha)}: a one-sided test's alpha must be below 0.5: at 0.5 it"
            " rejects whenever the mean difference is positive; give a smaller alpha"
        )
    if power <= alpha:
        raise ValueError(
            f"{argument('power', power)} must exceed {argument('alpha', alpha)}: with no effect"
            " the test rejects at rate alpha; give a larger power or a smaller alpha"
        )


def sample_size_paired(
    delta: float, sigma: float, alpha: float = ALPHA, power: float = POWER, two_sided: bool = True
) -> SampleSize:
    """Queries needed for a paired test to detect `delta` when differences have sd `sigma`."""
    _positive("delta", delta, "0.05")
    _positive("sigma", sigma, "0.15")
    if not delta / sigma <= _MAX_EFFECT:  # inf too
        raise ValueError(
            f"{argument('delta', delta)} is {delta / sigma:.3g} times {argument('sigma', sigma)}:"
            f" past {_MAX_EFFECT:.0e}"
            " sigma no test's power is computed; sigma is the standard deviation of the"
            " per-query differences (e.g. 0.15)"
        )
    _check(alpha, power, two_sided)
    # the upper quantile as minus the lower one: 1 - alpha would round a tiny alpha away
    z_a = -NormalDist().inv_cdf(alpha / 2 if two_sided else alpha)
    z_b = NormalDist().inv_cdf(power)
    # compared before squaring: the square of a huge root would overflow
    root = (z_a + z_b) * sigma / delta
    if not abs(root) <= math.sqrt(MAX_N):  # infinite too (alpha so small its quantile is)
        raise ValueError(
            f"detecting {argument('delta', delta)} at {argument('sigma', sigma)}"
            f" ({argument('alpha', alpha)}, {argument('power', power)}) needs more than"
            f" {MAX_N:,} queries: no test of that size can be run; ask for a larger delta"
        )
    n_normal = max(2, math.ceil(root**2))

    def enough(n: int) -> bool:
        return paired_t_power(n, delta / sigma, alpha, two_sided) >= power

    # power grows with n, and the t test needs at least the normal figure less 2: the smallest
    # n that is enough, by steps that double from there and then halve (a tiny alpha puts it
    # hundreds of queries above the normal figure)
    low = max(2, n_normal - 2)
    if enough(low):
        return SampleSize(n_normal, low, delta, sigma, alpha, power, two_sided)
    step = 1
    while not enough(low + step):
        low, step = low + step, 2 * step
    high = low + step  # enough; low is not
    while high - low > 1:
        mid = (low + high) // 2
        if enough(mid):
            high = mid
        else:
            low = mid
    return SampleSize(n_normal, high, delta, sigma, alpha, power, two_sided)


def minimum_detectable_effect(
    n: int, sigma: float, alpha: float = ALPHA, power: float = POWER, two_sided: bool = True
) -> float:
    """Smallest mean difference a paired t-test on `n` queries detects with `power`."""
    if n < 2:
        raise ValueError("n must be at least 2")
    if n > MAX_N:
        # the noncentral t's series at 1e30 degrees of freedom ran for hours
        raise ValueError(
            f"{argument('n', n, flag='--per-group')} is more than {MAX_N:,} queries: no test of"
            " that size can be run"
        )
    _positive("sigma", sigma, "0.15")
    if not math.isfinite(sigma):  # nan: the search for the effect never ended
        raise ValueError(
            f"{argument('sigma', sigma)} is no finite number; sigma is the standard deviation of the"
            " per-query differences (e.g. 0.15)"
        )
    if sigma < sys.float_info.min:  # a subnormal: the search's steps of 1e-9 sigma vanish
        raise ValueError(
            f"{argument('sigma', sigma)} is below {sys.float_info.min:.3g}, the smallest normal double;"
            " sigma is the standard deviation of the per-query differences (e.g. 0.15)"
        )
    _check(alpha, power, two_sided)

    def gap(d: float) -> float:
        return paired_t_power(n, d / sigma, alpha, two_sided) - power

    hi = 20.0 * sigma
    while gap(hi) < 0:  # tiny n and high power need effects of many sigma
        hi *= 4
    return _root(gap, 1e-9 * sigma, hi, xtol=1e-12 * sigma, rtol=1e-12)


def _root(f: Callable[[float], float], lo: float, hi: float, *, xtol: float, rtol: float) -> float:
    """The root of increasing `f` in [lo, hi] (f(lo) < 0 <= f(hi)), to within xtol + rtol * x:
    regula falsi with the Illinois rule (the end kept twice in a row has its value halved),
    which keeps a bracket like bisection and converges superlinearly like the secant."""
    f_lo, f_hi = f(lo), f(hi)
    if f_lo >= 0:
        return lo
    side = 0
    while hi - lo > xtol + rtol * abs(hi):
        x = hi - f_hi * (hi - lo) / (f_hi - f_lo)
        if not lo < x < hi:  # rounding at the ends: a bisection step instead
            x = 0.5 * (lo + hi)
        fx = f(x)
        if fx < 0:
            lo, f_lo = x, fx
            if side == -1:
                f_hi /= 2
            side = -1
        else:
            hi, f_hi = x, fx
            if side == 1:
                f_lo /= 2
            side = 1
    return 0.5 * (lo + hi)
