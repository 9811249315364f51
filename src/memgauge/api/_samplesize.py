"""How many judged queries a paired comparison needs (seed 002 section 2.3)."""

from __future__ import annotations

from memgauge.errors import UsageError
from memgauge.stats.samplesize import SampleSize, sample_size_paired

__all__ = ["sample_size"]


def sample_size(
    delta: float,
    sigma: float,
    *,
    alpha: float = 0.05,
    power: float = 0.80,
    two_sided: bool = True,
) -> SampleSize:
    """Queries a paired comparison needs to detect a mean difference `delta` when per-query
    differences have standard deviation `sigma` (paired t, and its normal approximation);
    a UsageError for values no test can have (delta or sigma not positive, power <= alpha)."""
    try:
        return sample_size_paired(delta, sigma, alpha=alpha, power=power, two_sided=two_sided)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
