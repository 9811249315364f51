"""The Wilson score interval of a proportion (Wilson 1927), computed as scipy's
`binomtest(k, n).proportion_ci(method="wilson")` computes it (Newcombe 1998's formula, term
for term, so the bounds are the same floats): better behaved than the normal approximation
near 0 and 1 and for small n. None for n = 0 (no data: n/a, not a rate).

Not through `scipy.stats` itself: importing it costs about 0.75 CPU-seconds, more than a
one-system `memgauge evaluate` spends on scoring; `scipy.special`, for the normal quantile,
still about 0.3, so the 95% interval's quantile is a constant (the float `ndtri` gives)."""

from __future__ import annotations

from math import sqrt

from memgauge._util.numbers import CONFIDENCE

__all__ = ["wilson_ci"]

#: `scipy.special.ndtri(0.975)`: the two-sided 95% normal quantile, as scipy computes it
Z_95 = 1.959963984540054


def wilson_ci(k: int, n: int, confidence: float = CONFIDENCE) -> tuple[float, float] | None:
    """The two-sided interval of `k` successes in `n` trials, or None without trials."""
    if n == 0:
        return None
    if not 0 <= k <= n:
        raise ValueError(f"k ({k}) must be between 0 and n ({n})")
    p = k / n
    if confidence == 0.95:  # Z_95 is its quantile
        z = Z_95
    else:
        from scipy.special import ndtri  # loaded only when used

        z = float(ndtri(0.5 + 0.5 * confidence))
    denom = 2 * (n + z**2)
    center = (2 * n * p + z**2) / denom
    delta = z / denom * sqrt(4 * n * p * (1 - p) + z**2)
    lo = 0.0 if k == 0 else center - delta
    hi = 1.0 if k == n else center + delta
    return float(lo), float(hi)
