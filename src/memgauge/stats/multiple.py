"""Multiple-comparison corrections: adjusted p-values for a family of tests.

Holm (1979, "A simple sequentially rejective multiple test procedure", Scand. J. Statist.)
and Bonferroni both control the family-wise error rate under any dependence between the
tests; Holm is uniformly more powerful, so it is the default. Both equal statsmodels'
`multipletests(method="holm" | "bonferroni")`. None (a test that could not be run) is passed
through and does not count towards the family's size.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, get_args

__all__ = ["CORRECTIONS", "Correction", "adjust", "bonferroni", "holm"]

Correction = Literal["holm", "bonferroni", "none"]
CORRECTIONS: tuple[Correction, ...] = get_args(Correction)


def holm(pvalues: Sequence[float | None]) -> list[float | None]:
    """Holm-Bonferroni adjusted p-values (Holm 1979), None passed through.

    Sort the m p-values ascending p_(1) <= ... <= p_(m); adjusted p_(i) = max_{j<=i}
    min(1, (m - j + 1) * p_(j)). Same as statsmodels' multipletests(method="holm").
    """
    present = [(i, p) for i, p in enumerate(pvalues) if p is not None]
    m = len(present)
    out: list[float | None] = [None] * len(pvalues)
    running = 0.0
    for rank, (i, p) in enumerate(sorted(present, key=lambda x: x[1])):
        running = max(running, min(1.0, (m - rank) * p))
        out[i] = running
    return out


def bonferroni(pvalues: Sequence[float | None]) -> list[float | None]:
    """Bonferroni adjusted p-values min(1, m * p) over the m p-values present."""
    m = sum(p is not None for p in pvalues)
    return [None if p is None else min(1.0, m * p) for p in pvalues]


def adjust(pvalues: Sequence[float | None], method: Correction) -> list[float | None]:
    """`pvalues` adjusted over their family by `method` ("none": as given)."""
    if method == "holm":
        return holm(pvalues)
    if method == "bonferroni":
        return bonferroni(pvalues)
    if method == "none":
        return list(pvalues)
    raise ValueError(f"unknown correction {method!r}; use one of {', '.join(CORRECTIONS)}")
