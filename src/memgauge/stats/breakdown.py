"""Per-group statistics (by intent, by category) with counts."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from memgauge.stats.bootstrap import ConfidenceInterval, bootstrap_ci

__all__ = ["NO_GROUP", "GroupStat", "breakdown"]

NO_GROUP = "(none)"


@dataclass(frozen=True)
class GroupStat:
    """Mean and CI of one group; `n` items in the group, `n_scored` of them not NaN."""

    n: int
    n_scored: int
    mean: float | None
    ci: ConfidenceInterval | None


def breakdown(
    values: npt.ArrayLike,
    groups: Sequence[str | None],
    *,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> dict[str, GroupStat]:
    """Group `values` by label (None -> "(none)") and give each group's mean, CI and counts.

    Groups are returned sorted by label. A group whose items are all NaN has mean None.
    """
    vals = np.asarray(values, dtype=np.float64)
    if vals.shape[0] != len(groups):
        raise ValueError(f"{vals.shape[0]} values but {len(groups)} group labels")
    labels = np.asarray([NO_GROUP if g is None else g for g in groups], dtype=object)
    out: dict[str, GroupStat] = {}
    for label in sorted(set(labels.tolist())):
        member = vals[labels == label]
        ci = bootstrap_ci(member, n_resamples=n_resamples, confidence=confidence, seed=seed)
        out[label] = GroupStat(n=int(member.size), n_scored=ci.n, mean=ci.mean, ci=ci)
    return out
