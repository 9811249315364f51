"""Per-group statistics (by intent, by category) with counts."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Unpack

import numpy as np
import numpy.typing as npt

from memgauge._util.numbers import CONFIDENCE, N_RESAMPLES
from memgauge.stats.bootstrap import ConfidenceInterval, Resampling, bootstrap_cis

__all__ = ["NO_GROUP", "GroupStat", "breakdown", "breakdowns"]

NO_GROUP = "(none)"


@dataclass(frozen=True)
class GroupStat:
    """Mean and CI of one group; `n` items in the group, `n_scored` of them not NaN."""

    n: int
    n_scored: int
    mean: float | None
    ci: ConfidenceInterval | None


def breakdown(
    values: npt.ArrayLike, groups: Sequence[str | None], **resampling: Unpack[Resampling]
) -> dict[str, GroupStat]:
    """Group `values` by label (None -> "(none)") and give each group's mean, CI and counts.

    Groups are returned sorted by label. A group whose items are all NaN has mean None.
    `resampling`: the bootstrap's keywords.
    """
    vals = np.asarray(values, dtype=np.float64)
    if vals.ndim != 1:
        raise ValueError("breakdown takes one row of values: use breakdowns for several")
    return breakdowns(vals[None, :], groups, **resampling)[0]


def breakdowns(
    values: npt.ArrayLike,
    groups: Sequence[str | None],
    *,
    n_resamples: int = N_RESAMPLES,
    confidence: float = CONFIDENCE,
    seed: int = 0,
) -> list[dict[str, GroupStat]]:
    """`breakdown` of each row of `values` (rows: measures; columns: the items `groups`
    labels). A group's rows are bootstrapped in one call, from the resamples each row alone
    is drawn (`bootstrap_cis`: the same indices, the same sums): the same numbers as a
    `breakdown` per row, without drawing every group's indices again for each measure."""
    matrix = np.asarray(values, dtype=np.float64)
    if matrix.ndim != 2:
        raise ValueError("breakdowns takes a matrix: one row of values per measure")
    if matrix.shape[1] != len(groups):
        raise ValueError(f"{matrix.shape[1]} values but {len(groups)} group labels")
    labels = np.asarray([NO_GROUP if g is None else g for g in groups], dtype=object)
    out: list[dict[str, GroupStat]] = [{} for _ in range(matrix.shape[0])]
    if not matrix.shape[0]:
        return out
    for label in sorted(set(labels.tolist())):
        member = matrix[:, labels == label]
        cis = bootstrap_cis(member, n_resamples=n_resamples, confidence=confidence, seed=seed)
        for row, ci in zip(out, cis, strict=True):
            row[label] = GroupStat(n=int(member.shape[1]), n_scored=ci.n, mean=ci.mean, ci=ci)
    return out
