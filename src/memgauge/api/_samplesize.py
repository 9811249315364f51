"""How many judged queries a paired comparison needs (seed 002 section 2.3)."""

from __future__ import annotations

from memgauge._util.numbers import ALPHA, POWER
from memgauge.errors import UsageError
from memgauge.stats.samplesize import SampleSize, sample_size_paired
from memgauge.stats.samplesize import minimum_detectable_effect as _minimum_detectable_effect

__all__ = ["minimum_detectable_effect", "sample_size"]


def sample_size(
    delta: float,
    sigma: float,
    *,
    alpha: float = ALPHA,
    power: float = POWER,
    two_sided: bool = True,
) -> SampleSize:
    """Queries a paired comparison needs to detect a mean difference `delta` when per-query
    differences have standard deviation `sigma` (paired t, and its normal approximation);
    a UsageError for values no test can have (delta or sigma not positive, power <= alpha)."""
    try:
        return sample_size_paired(delta, sigma, alpha=alpha, power=power, two_sided=two_sided)
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def minimum_detectable_effect(
    n: int, sigma: float, alpha: float = ALPHA, power: float = POWER, two_sided: bool = True
) -> float:
    """Smallest mean difference a paired t-test on `n` queries detects with `power`
    (`stats.samplesize`); a UsageError, as `sample_size` gives, for values no test can have
    (n below 2, sigma not positive or subnormal, power <= alpha)."""
    try:
        return _minimum_detectable_effect(n, sigma, alpha, power, two_sided)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
