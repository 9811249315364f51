"""Tukey's HSD over several systems scored on the same queries, queries as blocks.

IR experiments are a randomized block design: every system answers every query, and queries
differ far more than systems do. Tukey's HSD then takes its error variance from the two-way
ANOVA without replication (system + query, additive), not from the one-way within-system
spread, which would count the queries' difficulty as noise (Carterette 2012, "Multiple testing
in statistical analysis of systems-based information retrieval experiments", ACM TOIS 30(1);
Sakai 2018, "Laboratory Experiments in Information Retrieval", sections 4.4 and 4.5):

    x_ij  score of system i (of m) on query j (of n); x̄_i., x̄_.j, x̄.. the row, column, grand means
    e_ij  = x_ij - x̄_i. - x̄_.j + x̄..          (residual of the additive model)
    V_E   = sum e_ij^2 / ((m - 1)(n - 1))        (residual mean square, df = (m - 1)(n - 1))
    q_ab  = |x̄_a. - x̄_b.| / sqrt(V_E / n)
    p_ab  = P(Q_{m, df} >= q_ab)                 (studentized range, scipy.stats.studentized_range)

The p-values hold the family-wise error rate over all m(m-1)/2 pairs. With m = 2 this is the
paired t-test (q = sqrt(2) |t|). ranx's `tukey` runs scipy's one-way `tukey_hsd` instead: on
IR data its error term includes the query effect, so it finds fewer differences.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

__all__ = ["TukeyHSD", "tukey_hsd_blocked"]


@dataclass(frozen=True)
class TukeyHSD:
    """Tukey's HSD over the rows of a (systems, queries) matrix, queries as blocks."""

    n: int
    """Queries used: those every system scored."""
    n_dropped: int
    """Queries left out because some system has no value (NaN) there."""
    df: int
    """Residual degrees of freedom (m - 1)(n - 1)."""
    mse: float | None
    """Residual mean square V_E; None when df is 0."""
    means: tuple[float, ...]
    """Each system's mean over the queries used."""
    pvalue: npt.NDArray[np.float64]
    """(m, m) p-values, symmetric, 1 on the diagonal; NaN when there is no test (df 0)."""
    statistic: npt.NDArray[np.float64]
    """(m, m) studentized range statistics q (inf when V_E is 0 and the means differ)."""


def tukey_hsd_blocked(scores: npt.ArrayLike) -> TukeyHSD:
    """Tukey's HSD of the rows of `scores` (systems x queries), queries as blocks.

    A query where any system is NaN is dropped (and counted): the design needs complete
    blocks. Fewer than 2 systems or 2 queries: no test (p NaN). A residual variance of 0 (every
    system differs from another by the same amount on every query) makes q infinite: p is 0
    where the means differ and 1 where they are equal, as `paired_compare` does for a constant
    difference.
    """
    from scipy.stats import studentized_range  # scipy loads in ~0.5 s: only when used

    x = np.asarray(scores, dtype=np.float64)
    if x.ndim != 2:
        raise ValueError(f"scores must be a (systems, queries) matrix, got shape {x.shape}")
    complete = ~np.isnan(x).any(axis=0)
    x = x[:, complete]
    m, n = x.shape
    dropped = int((~complete).sum())
    means = x.mean(axis=1) if n else np.full(m, np.nan)
    df = (m - 1) * (n - 1)
    nan = np.full((m, m), np.nan)
    if m < 2 or n < 2:
        return TukeyHSD(n, dropped, max(df, 0), None, tuple(map(float, means)), nan, nan.copy())
    resid = x - means[:, None] - x.mean(axis=0)[None, :] + x.mean()
    mse = float((resid**2).sum() / df)
    diff = np.abs(means[:, None] - means[None, :])
    scale = float(np.abs(x).max()) or 1.0
    if mse <= (1e-12 * scale) ** 2:
        differs = diff > 1e-12 * scale
        q = np.where(differs, np.inf, 0.0)
        p = np.where(differs, 0.0, 1.0)
    else:
        q = diff / np.sqrt(mse / n)
        p = np.ones((m, m))
        upper = np.triu_indices(m, 1)  # the distribution is integrated numerically: once a pair
        p[upper] = np.clip(studentized_range.sf(q[upper], m, df), 0.0, 1.0)
        p.T[upper] = p[upper]
    return TukeyHSD(n, dropped, df, mse, tuple(map(float, means)), p, q)
