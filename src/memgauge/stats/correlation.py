"""A correlation with its 95% CI and n, or n/a: Pearson (point-biserial when one side is 0/1)
or Spearman's rank correlation, through scipy.

CI: Fisher's z-transform, z = atanh(r) +- 1.96 * se, back through tanh, with se = 1/sqrt(n-3)
for Pearson and 1.03/sqrt(n-3) for Spearman (Fieller, Hartley and Pearson 1957). Edge cases:
fewer than `min_n` pairs, or a side that does not vary (a correlation is undefined), give
`value=None` with a note saying why, never 0; |r| = 1 gives the degenerate CI (r, r).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = ["Correlation", "correlation"]

_Z975 = 1.959963984540054


@dataclass(frozen=True)
class Correlation:
    """r with its 95% CI, the two-sided p-value, n, and why it is n/a when it is."""

    method: str
    n: int
    value: float | None = None
    ci: tuple[float, float] | None = None
    p_value: float | None = None
    note: str | None = None
    detail: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return {
            "method": self.method,
            "n": self.n,
            "value": self.value,
            "ci": list(self.ci) if self.ci else None,
            "p_value": self.p_value,
            "note": self.note,
            **self.detail,
        }


def correlation(
    x: Sequence[float],
    y: Sequence[float],
    method: Literal["pearson", "spearman"] = "pearson",
    *,
    min_n: int = 10,
) -> Correlation:
    """The correlation of paired `x`, `y` (same length)."""
    from scipy import stats as sps  # loaded only when used

    n = len(x)
    if n != len(y):
        raise ValueError(f"x has {n} values, y {len(y)}")
    if n < max(min_n, 4):
        return Correlation(method, n, note=f"needs at least {max(min_n, 4)} pairs, has {n}")
    if len(set(x)) < 2 or len(set(y)) < 2:
        return Correlation(method, n, note="one side does not vary: a correlation is undefined")
    res = sps.pearsonr(x, y) if method == "pearson" else sps.spearmanr(x, y)
    r = float(res.statistic)
    p = float(res.pvalue)
    if abs(r) >= 1.0:
        return Correlation(method, n, r, (r, r), p)
    se = (1.0 if method == "pearson" else 1.03) / math.sqrt(n - 3)
    z = math.atanh(r)
    ci = (math.tanh(z - _Z975 * se), math.tanh(z + _Z975 * se))
    return Correlation(method, n, r, ci, p)
