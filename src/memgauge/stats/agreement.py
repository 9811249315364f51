"""Agreement between raters: judges against humans, and judges against each other.

- Cohen's kappa (two raters): `k = (p_o - p_e) / (1 - p_e)`, `p_o` the observed agreement,
  `p_e = sum_c p_a(c) p_b(c)` the agreement expected by chance from each rater's marginals
  (Cohen 1960). 1 when both raters use one and the same label throughout (`p_e = 1`), by
  convention: they agree and nothing else was possible.
- Fleiss' kappa (m raters, each item rated by the same number n >= 2): per item
  `P_i = (sum_c n_ic^2 - n) / (n (n - 1))`, `P_bar = mean P_i`, `p_c = sum_i n_ic / (N n)`,
  `P_e = sum_c p_c^2`, `k = (P_bar - P_e) / (1 - P_e)` (Fleiss 1971). None when `P_e = 1`.
- Percent agreement: `P_bar`, the chance that two raters picked at random agree on an item.
- Accuracy with a Wilson score interval (scipy's `binomtest(...).proportion_ci`).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from memgauge._types import AnyArray
from memgauge.stats.proportion import wilson_ci

__all__ = ["Calibration", "calibrate", "cohen_kappa", "fleiss_kappa", "percent_agreement"]


def cohen_kappa(a: Sequence[Hashable], b: Sequence[Hashable]) -> float | None:
    """Cohen's kappa of two raters' labels on the same items (None for no items)."""
    if len(a) != len(b):
        raise ValueError("both raters must label the same items")
    if not a:
        return None
    labels = sorted(set(a) | set(b), key=str)
    index = {lab: i for i, lab in enumerate(labels)}
    m = np.zeros((len(labels), len(labels)))
    np.add.at(m, ([index[x] for x in a], [index[y] for y in b]), 1)
    n = m.sum()
    p_o = float(np.trace(m) / n)
    p_e = float((m.sum(axis=1) / n) @ (m.sum(axis=0) / n))
    if p_e >= 1.0:
        return 1.0
    return (p_o - p_e) / (1 - p_e)


def _counts(ratings: Sequence[Sequence[Hashable]]) -> AnyArray:
    """items x categories count table from each item's list of labels."""
    labels = sorted({x for row in ratings for x in row}, key=str)
    index = {lab: i for i, lab in enumerate(labels)}
    table = np.zeros((len(ratings), max(1, len(labels))))
    for i, row in enumerate(ratings):
        for x in row:
            table[i, index[x]] += 1
    return table


def percent_agreement(ratings: Sequence[Sequence[Hashable]]) -> float | None:
    """Mean over items of the share of rater pairs that agree (None without items)."""
    rows = [r for r in ratings if len(r) >= 2]
    if not rows:
        return None
    table = _counts(rows)
    n = table.sum(axis=1)
    return float(np.mean(((table**2).sum(axis=1) - n) / (n * (n - 1))))


def fleiss_kappa(ratings: Sequence[Sequence[Hashable]]) -> float | None:
    """Fleiss' kappa; `ratings[i]` holds every rater's label for item i (same count each)."""
    rows = [r for r in ratings if len(r) >= 2]
    if not rows:
        return None
    if len({len(r) for r in rows}) != 1:
        raise ValueError("Fleiss' kappa needs the same number of ratings for every item")
    table = _counts(rows)
    n = table.sum(axis=1)[0]
    p_i = ((table**2).sum(axis=1) - n) / (n * (n - 1))
    p_bar = float(p_i.mean())
    p_c = table.sum(axis=0) / table.sum()
    p_e = float((p_c**2).sum())
    if p_e >= 1.0:
        return None
    return (p_bar - p_e) / (1 - p_e)


@dataclass(frozen=True)
class Calibration:
    """A judge's labels against human labels."""

    n: int
    labels: list[str]
    confusion: list[list[int]]  # rows: human label, columns: judge label
    accuracy: float | None
    accuracy_ci: tuple[float, float] | None
    kappa: float | None

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready (`kappa` as `cohen_kappa`)."""
        out = asdict(self)
        out["accuracy_ci"] = list(self.accuracy_ci) if self.accuracy_ci else None
        out["cohen_kappa"] = out.pop("kappa")
        return out


def calibrate(human: Sequence[Hashable], judge: Sequence[Hashable]) -> Calibration:
    """Confusion matrix, accuracy with a 95% Wilson interval, and Cohen's kappa."""
    if len(human) != len(judge):
        raise ValueError("human and judge labels must cover the same items")
    labels = sorted({str(x) for x in human} | {str(x) for x in judge})
    index = {lab: i for i, lab in enumerate(labels)}
    m = np.zeros((len(labels), len(labels)), dtype=np.int64)
    for h, j in zip(human, judge, strict=True):
        m[index[str(h)], index[str(j)]] += 1
    n = len(human)
    correct = int(np.trace(m))
    ci = wilson_ci(correct, n)
    return Calibration(
        n=n,
        labels=labels,
        confusion=m.tolist(),
        accuracy=correct / n if n else None,
        accuracy_ci=ci,
        kappa=cohen_kappa([str(x) for x in human], [str(x) for x in judge]),
    )
