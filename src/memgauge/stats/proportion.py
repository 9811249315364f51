"""The Wilson score interval of a proportion (Wilson 1927), through scipy's
`binomtest(k, n).proportion_ci(method="wilson")`: better behaved than the normal
approximation near 0 and 1 and for small n. None for n = 0 (no data: n/a, not a rate)."""

from __future__ import annotations

__all__ = ["wilson_ci"]


def wilson_ci(k: int, n: int, confidence: float = 0.95) -> tuple[float, float] | None:
    """The interval of `k` successes in `n` trials, or None without trials."""
    from scipy import stats as sps  # scipy loads in ~0.5 s: only when used

    if n == 0:
        return None
    ci = sps.binomtest(k, n).proportion_ci(confidence, method="wilson")
    return float(ci.low), float(ci.high)
