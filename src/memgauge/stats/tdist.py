"""Student's t and noncentral t upper tails, and the central t's upper quantile, in NumPy alone.

`memgauge sample-size` needs three numbers: a normal quantile (the standard library's
`statistics.NormalDist`, Wichura's AS 241), a central t quantile and the noncentral t's upper
tail. SciPy has them, but loading `scipy.stats` costs about half a second of CPU, more than the
whole command may take; so the two t functions are computed here, from one integral.

With T = (Z + nc) / S, Z standard normal, S = sqrt(V / k), V chi-square with k degrees of
freedom, Z and V independent, and x >= 0:

    P(T > x) = E[ Q(x S - nc) ] = integral over u of Q(x e^u - nc) f(u) du,

where Q is the standard normal upper tail and f the density of U = log S,
log f(u) = c(k) + k u - (k / 2) (e^{2u} - 1), c(k) = a log a - a - lgamma(a) + log 2, a = k / 2
(through Stirling's series for large a, where the terms cancel to 10 digits at k = 10^9). The
integrand is log-concave (log Q is concave and decreasing, x e^u - nc convex), so it has one peak:
found by bisection on the derivative of its log, it is scaled to 1, and the range ends where
the integrand is below e^-45 of it. Over that range, adaptive Gauss-Legendre panels (each halved
until its 10- and 20-node estimates agree to 1e-16 of the whole): Q's fall can be far steeper
than the density's long left tail (df 1). Kept in log space, a tail keeps its relative
precision far below 1e-300 (a t quantile at p = 1e-300). For x < 0,
P(T > x) = 1 - P(T' > -x) with T' at -nc.

Checked against a 40-digit quadrature (mpmath) and against `scipy.stats.nct.sf` / `t.isf`
(tests/stats/test_tdist.py).
"""

from __future__ import annotations

import functools
import math

import numpy as np
import numpy.typing as npt

__all__ = ["nct_sf", "t_isf"]

_F64 = npt.NDArray[np.float64]
# the integrand is cut where it is below e^-_TAIL of its peak: the mass left out is below 1e-19
_TAIL = 45.0
_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)
_EPS = float(np.finfo(np.float64).eps)
# panels halved at once at most: far more than a smooth integrand needs (a few dozen)
_MAX_PANELS = 4096
# below e^-_UNDERFLOW a tail is no double: its log is the Laplace approximation at the peak
_UNDERFLOW = 800.0
# from this noncentrality on, the integral is taken around u = log(nc / x) (see `_Integrand`)
_SHIFT_FROM = 2.0**24
_SQRT2 = math.sqrt(2.0)
# above this, Q comes from the Mills ratio (erfc would underflow near 38, and lose digits first)
_MILLS_FROM = 20.0


def _mills(z: _F64) -> _F64:
    """Q(z) / phi(z) for z >= 20: Laplace's continued fraction 1/(z+1/(z+2/(z+3/(z+...))))."""
    t = z.copy()
    for n in range(40, 0, -1):  # 40 levels: converged to a double's precision from z = 20
        t = z + n / t
    return 1.0 / t


def _mills_at(z: float) -> float:
    t = z
    for n in range(40, 0, -1):
        t = z + n / t
    return 1.0 / t


def _log_q_at(z: float) -> float:
    """The scalar `_log_q`."""
    if z < _MILLS_FROM:
        return math.log(0.5 * math.erfc(z / _SQRT2))
    return -0.5 * z * z - _LOG_SQRT_2PI + math.log(_mills_at(z))


def _log_q(z: _F64) -> _F64:
    """log Q(z), Q the standard normal upper tail, without underflow in either tail."""
    out = np.empty_like(z)
    small = z < _MILLS_FROM
    out[small] = [math.log(0.5 * math.erfc(v / _SQRT2)) for v in z[small].tolist()]
    big = z[~small]
    if big.size:
        out[~small] = -0.5 * big * big - _LOG_SQRT_2PI + np.log(_mills(big))
    return out


def _hazard(z: float) -> float:
    """phi(z) / Q(z): minus the derivative of log Q."""
    if z >= _MILLS_FROM:
        return 1.0 / _mills_at(z)
    return math.exp(-0.5 * z * z - _LOG_SQRT_2PI) / (0.5 * math.erfc(z / _SQRT2))


def _excess(w: _F64) -> _F64:
    """e^w - 1 - w without cancellation: its series below |w| = 0.5, else expm1."""
    small = np.abs(w) < 0.5
    ws = np.where(small, w, 0.0)
    series = np.zeros_like(w)
    term = ws * ws / 2.0
    for m in range(3, 24):  # 0.5^23 / 23! is far below a double's epsilon
        series += term
        term = term * ws / m
    return np.where(small, series, np.expm1(w) - w)


def _excess_at(w: float) -> float:
    """The scalar `_excess`."""
    if abs(w) >= 0.5:
        return math.expm1(w) - w
    total, term = 0.0, w * w / 2.0
    for m in range(3, 24):
        total += term
        term *= w / m
    return total


def _log_norm(k: float) -> float:
    """c(k) = a log a - a - lgamma(a) + log 2, a = k / 2 (see the module docstring)."""
    a = 0.5 * k
    if a < 20:
        return a * math.log(a) - a - math.lgamma(a) + math.log(2.0)
    # Stirling: lgamma(a) = (a - 1/2) log a - a + log(2 pi) / 2 + 1/(12a) - 1/(360a^3) + ...;
    # the first term left out is below 1e-17 from a = 20
    corr = (
        1 / (12 * a) - 1 / (360 * a**3) + 1 / (1260 * a**5) - 1 / (1680 * a**7) + 1 / (1188 * a**9)
    )
    return 0.5 * math.log(a) - _LOG_SQRT_2PI - corr + math.log(2.0)


class _Integrand:
    """log of Q(x e^u - nc) f(u), and the derivatives that place its grid (x > 0).

    From nc = _SHIFT_FROM on, Q's fall (about 1/nc wide in u) is narrower than the doubles
    beside u = log(nc / x), where it falls: x e^u - nc is then computed as nc expm1(v) on
    v = u - log(nc / x), and every method takes v. Each method's `u` is that v when `shifted`."""

    def __init__(self, x: float, k: float, nc: float) -> None:
        self.x, self.k, self.nc = x, k, nc
        self.c = _log_norm(k)
        self.shifted = nc >= _SHIFT_FROM
        self.u0 = math.log(nc) - math.log(x) if self.shifted else 0.0
        # the first step of the peak's search: Q falls about 1/nc from v = 0 when shifted
        self.step = 1.0 / nc if self.shifted else 1.0

    def log(self, u: _F64) -> _F64:
        if self.shifted:
            return (
                self.c - 0.5 * self.k * _excess(2.0 * (self.u0 + u)) + _log_q(self.nc * np.expm1(u))
            )
        z = self.x * np.exp(u) - self.nc
        return self.c - 0.5 * self.k * _excess(2.0 * u) + _log_q(z)

    def log_at(self, u: float) -> float:
        if self.shifted:
            z = self.nc * math.expm1(u)
            return self.c - 0.5 * self.k * _excess_at(2.0 * (self.u0 + u)) + _log_q_at(z)
        z = self.x * math.exp(u) - self.nc
        return self.c - 0.5 * self.k * _excess_at(2.0 * u) + _log_q_at(z)

    def _s_z(self, u: float) -> tuple[float, float, float]:
        """(x e^u, x e^u - nc, the u of the density) at `u`."""
        if self.shifted:
            return self.nc * math.exp(u), self.nc * math.expm1(u), self.u0 + u
        s = self.x * math.exp(u)
        return s, s - self.nc, u

    def slope(self, u: float) -> float:
        """d/du of the log: k (1 - e^{2u}) - hazard(z) x e^u; decreasing (log-concave)."""
        s, z, w = self._s_z(u)
        return self.k * -math.expm1(2.0 * w) - _hazard(z) * s

    def curvature(self, u: float) -> float:
        """d2/du2 of the log (negative): -2k e^{2u} - h(z)(h(z) - z) s^2 - h(z) s, s = x e^u."""
        s, z, w = self._s_z(u)
        h = _hazard(z)
        return -2.0 * self.k * math.exp(2.0 * w) - h * (h - z) * s * s - h * s


def _peak(f: _Integrand) -> float:
    """The u where the log of the integrand peaks: its slope decreases and tends to k > 0 as u
    falls, so bisection between the first u < 0 of positive slope and 0; or, where the slope at
    0 is still positive (only a shifted integrand's can be), 0 and the first u > 0 of negative
    slope. The bracket grows from `f.step` by doubling."""
    lo, hi = -f.step, 0.0
    if f.slope(hi) > 0:
        lo, hi = 0.0, f.step
        while f.slope(hi) > 0:
            lo, hi = hi, 2.0 * hi
    while f.slope(lo) <= 0:
        lo, hi = 2.0 * lo, lo
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if mid in (lo, hi):
            break
        if f.slope(mid) > 0:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


def _end(f: _Integrand, peak: float, top: float, step: float) -> float:
    """The u beyond `peak` (on the side of `step`'s sign) where the log falls _TAIL below `top`."""
    near, far = peak, peak + step
    while f.log_at(far) > top - _TAIL:
        near, far = far, far + 2.0 * (far - near)
    for _ in range(30):  # to within 1e-9 of the first bracket: the end need not be exact
        mid = 0.5 * (near + far)
        if f.log_at(mid) > top - _TAIL:
            near = mid
        else:
            far = mid
    return far


# Gauss-Legendre rules of 10 and 20 nodes on [-1, 1]: a panel's two estimates, whose gap says
# whether it must be split
_NODES_10, _WEIGHTS_10 = np.polynomial.legendre.leggauss(10)
_NODES_20, _WEIGHTS_20 = np.polynomial.legendre.leggauss(20)


def _panels(f: _Integrand, top: float, lo: float, hi: float) -> float:
    """The integral of exp(log - top) over [lo, hi]: adaptive Gauss-Legendre, each panel halved
    until its 10- and 20-node estimates agree to 1e-15 of the whole (the steep fall of Q beside
    the density's long tail needs panels of very different widths). The 20-node estimate of an
    accepted panel is far closer than that: the gap is the 10-node rule's error. The integrand's
    log is known to a few units of `top`'s last place, which bounds what agreement can mean."""
    tol = max(1e-15, 8 * _EPS * (1.0 + abs(top)))
    edges = np.linspace(lo, hi, 17)
    a, b = edges[:-1], edges[1:]
    total, done = 0.0, 0.0
    while a.size <= _MAX_PANELS:
        mid, half = (a + b) / 2.0, (b - a) / 2.0
        fine = np.exp(f.log(mid[:, None] + half[:, None] * _NODES_20) - top) @ _WEIGHTS_20
        coarse = np.exp(f.log(mid[:, None] + half[:, None] * _NODES_10) - top) @ _WEIGHTS_10
        fine, coarse = fine * half, coarse * half
        total = done + float(fine.sum())
        ok = np.abs(fine - coarse) <= tol * total
        done += float(fine[ok].sum())
        if ok.all():
            return done
        a, b = a[~ok], b[~ok]
        mid = (a + b) / 2.0
        a, b = np.concatenate([a, mid]), np.concatenate([mid, b])
    return total


def _log_sf(x: float, k: float, nc: float) -> float:
    """log P(T > x) for x > 0 (the module docstring's integral, in log space)."""
    f = _Integrand(x, k, nc)
    peak = _peak(f)
    top = f.log_at(peak)
    curvature = -f.curvature(peak)
    if top < -_UNDERFLOW:  # only t_isf's search reads it: the order of magnitude is enough
        if not curvature > 0:  # x e^u underflowed at the peak (x near the largest double)
            return top
        return top + math.log(1.0 / math.sqrt(curvature)) + _LOG_SQRT_2PI
    width = 1.0 / math.sqrt(curvature)
    lo = _end(f, peak, top, -width)
    hi = _end(f, peak, top, width)
    return top + math.log(_panels(f, top, lo, hi))


def nct_sf(x: float, df: float, nc: float) -> float:
    """P(T > x) for T noncentral t with `df` > 0 degrees of freedom and noncentrality `nc` (the
    central t at nc = 0): relative error about 1e-14 in the tail, absolute below 1e-15."""
    if not df > 0:
        raise ValueError("df must be positive")
    if x == 0:  # P(Z + nc > 0), whatever S is
        return 0.5 * math.erfc(-nc / _SQRT2)
    if x < 0:
        return max(0.0, 1.0 - math.exp(_log_sf(-x, df, -nc)))
    return min(1.0, math.exp(_log_sf(x, df, nc)))  # a probability, whatever the last bit


def _log_t_pdf(x: float, df: float) -> float:
    log_c = math.lgamma((df + 1) / 2) - math.lgamma(df / 2) - 0.5 * math.log(df * math.pi)
    return log_c - (df + 1) / 2 * math.log1p(x * x / df)


@functools.lru_cache(maxsize=1024)  # a power search asks the same quantile again and again
def t_isf(p: float, df: float) -> float:
    """The x with P(T > x) = p for T central t with `df` degrees of freedom, 0 < p < 0.5:
    Newton's method on log P(T > x) (its derivative is minus the density over the tail) from
    the normal quantile, kept inside a bracket that is halved when a step leaves it."""
    if not 0 < p < 0.5:
        raise ValueError("p must be in (0, 0.5)")
    if df == 1:  # Cauchy: closed form (cot, not tan(pi (1/2 - p)), which loses p's digits)
        return 1.0 / math.tan(math.pi * p)
    from statistics import NormalDist

    target = math.log(p)
    lo, hi = 0.0, math.inf
    x = -NormalDist().inv_cdf(p)
    for _ in range(200):
        log_tail = _log_sf(x, df, 0.0)
        if log_tail > target:
            lo = x
        else:
            hi = x
        nxt = x + (log_tail - target) * math.exp(log_tail - _log_t_pdf(x, df))
        if abs(nxt - x) <= 4e-16 * abs(x):
            return nxt
        if not lo < nxt < hi:  # a step out of the bracket: halve it (double it, unbounded)
            nxt = 0.5 * (lo + hi) if math.isfinite(hi) else 2.0 * x
        if nxt in (lo, hi):  # the bracket is two neighbouring doubles
            return nxt
        x = nxt
    return x
