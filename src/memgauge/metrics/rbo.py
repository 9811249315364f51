"""Rank-biased overlap (Webber, Moffat & Zobel 2010, "A similarity measure for indefinite
rankings", ACM TOIS 28(4)): how alike two rankings are, weighting agreement near the top.

With X_d the size of the overlap of the two lists' first d items (A_d = X_d / d, the agreement at
depth d) and persistence p, the extrapolated RBO of lists S and L (s = |S| <= l = |L|) is the
paper's equation 32:

    RBO_ext = (1 - p) / p * [ sum_{d=1..l} X_d / d * p^d
                              + sum_{d=s+1..l} X_s * (d - s) / (s * d) * p^d ]
              + [ (X_l - X_s) / l + X_s / s ] * p^l

which for lists of one length k is (1 - p) / p * sum_{d=1..k} A_d p^d + A_k p^k (equation 30).
It extrapolates the agreement seen at the deepest depth to the unseen tail, so two identical
lists score exactly 1 and two disjoint ones 0. p = 0.9 puts 86% of the weight on the top 10.

Edge cases: an item repeated in a list counts at its first rank only; two empty lists are
identical (1.0); one empty list beside a non-empty one shares nothing (0.0).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from itertools import combinations

__all__ = ["DEFAULT_P", "mean_pairwise_rbo", "rbo_ext"]

#: the persistence memgauge uses (the paper's examples use 0.9 and 0.98)
DEFAULT_P = 0.9


def _unique(items: Sequence[Hashable]) -> list[Hashable]:
    seen: set[Hashable] = set()
    out = []
    for x in items:
        if x not in seen:
            seen.add(x)
            out.append(x)
    return out


def rbo_ext(a: Sequence[Hashable], b: Sequence[Hashable], p: float = DEFAULT_P) -> float:
    """The extrapolated RBO of rankings `a` and `b` at persistence `p` (module docstring)."""
    if not 0.0 < p < 1.0:
        raise ValueError(f"p must be in (0, 1), got {p}")
    x, y = _unique(a), _unique(b)
    short, long = (x, y) if len(x) <= len(y) else (y, x)
    s, l_ = len(short), len(long)
    if l_ == 0:
        return 1.0
    if s == 0:
        return 0.0
    seen_short: set[Hashable] = set()
    seen_long: set[Hashable] = set()
    overlap = 0
    total = 0.0
    x_s = 0
    for d in range(1, l_ + 1):
        item_l = long[d - 1]
        if d <= s:
            item_s = short[d - 1]
            if item_s == item_l:
                overlap += 1
            else:
                overlap += (item_s in seen_long) + (item_l in seen_short)
            seen_short.add(item_s)
        else:
            overlap += item_l in seen_short
        seen_long.add(item_l)
        if d == s:
            x_s = overlap
        total += overlap / d * p**d
        if d > s:
            total += x_s * (d - s) / (s * d) * p**d
    return (1 - p) / p * total + ((overlap - x_s) / l_ + x_s / s) * p**l_


def mean_pairwise_rbo(rankings: Sequence[Sequence[Hashable]], p: float = DEFAULT_P) -> float | None:
    """The mean RBO over every pair of `rankings` (the repeats of one query); None with fewer
    than two."""
    pairs = [rbo_ext(a, b, p) for a, b in combinations(rankings, 2)]
    return sum(pairs) / len(pairs) if pairs else None
