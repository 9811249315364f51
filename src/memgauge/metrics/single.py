"""One query's measure in plain Python: what a per-item evaluator needs, without the matrix
machinery of `metrics.ir` (which pays NumPy's fixed cost per call: about 90 us against 5 here).

The definitions and conventions are exactly `metrics.ir`'s (see its docstring): a ranked list
counts each document once, at its first rank; a document nobody judged (or judged below 0) is
never relevant and gains 0; R counts the judgments at or above the threshold. The property test
`tests/metrics/test_single.py` holds the two to 1e-12 on thousands of random cases. Measures
this module does not implement (and exp-gain grades past 960, which `metrics.ir` rescales,
and measures given ir_measures' parameters: `rel=`, `judged_only=`, `gains=`) return None: the caller uses `metrics.ir`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from memgauge.metrics.ir import MetricConfig
from memgauge.metrics.measures import Measure

__all__ = ["Prepared", "score_one", "score_prepared"]

_EXP_UNSCALED = 960


def _gain(grade: int, kind: str) -> float:
    g = float(max(grade, 0))
    return 2.0**g - 1.0 if kind == "exp" else g


class Prepared:
    """What every measure of one query reads: the ranking with each document once (at its
    first rank), the judged grades, R, and whether each ranked document is relevant."""

    __slots__ = ("R", "docs", "gains", "grades", "judged", "rel", "threshold")

    def __init__(self, grades: Mapping[str, int], ranked: Sequence[str], threshold: int) -> None:
        docs = list(dict.fromkeys(ranked))  # each document once, at its first rank
        self.grades, self.docs, self.threshold = grades, docs, threshold
        self.judged = [g for g in grades.values() if g >= 0]
        self.R = sum(1 for g in self.judged if g >= threshold)
        self.rel = [d in grades and grades[d] >= 0 and grades[d] >= threshold for d in docs]
        #: gain kind -> nDCG's discounted gains of the ranking (rank, term) and of the ideal
        #: ranking, made for the first cutoff asked and summed to each (nDCG@5, @10, @20)
        self.gains: dict[str, tuple[list[tuple[int, float]], list[float]]] = {}


def score_one(
    grades: Mapping[str, int], ranked: Sequence[str], m: Measure, cfg: MetricConfig
) -> float | None:
    """The value of `m` for one query (`grades`: its judgments; `ranked`: ids, best first),
    or None when this module does not compute it."""
    return score_prepared(Prepared(grades, ranked, cfg.rel_threshold), m, cfg)


def score_prepared(p: Prepared, m: Measure, cfg: MetricConfig) -> float | None:
    """`score_one` on a query prepared once for all its measures (`cfg.rel_threshold` must be
    the one `p` was prepared with)."""
    if m.options:  # its own threshold, judged-only ranking or gain table: metrics.ir
        return None
    assert p.threshold == cfg.rel_threshold
    grades, judged, R = p.grades, p.judged, p.R
    k = m.cutoff
    rel = p.rel if k is None else p.rel[:k]
    name = m.name
    if name == "P":
        assert k is not None
        return sum(rel) / k
    if name in ("Recall", "Hit", "recall_any", "recall_all"):
        found = sum(rel)
        if name == "Recall":
            return found / R if R > 0 else 0.0
        if name == "recall_all":
            return 1.0 if R > 0 and found >= R else 0.0
        return 1.0 if found > 0 else 0.0
    if name == "RR":
        return next((1.0 / (i + 1) for i, r in enumerate(rel) if r), 0.0)
    if name == "AP":
        total, hits = 0.0, 0
        for i, r in enumerate(rel):
            if r:
                hits += 1
                total += hits / (i + 1)
        return total / R if R > 0 else 0.0
    if name == "R-prec":
        found = sum(rel[:R])
        return found / R if R > 0 else 0.0
    if name == "nDCG":
        if cfg.gain == "exp" and max(judged, default=0) > _EXP_UNSCALED:
            return None  # metrics.ir rescales these; keep one implementation of that
        gains = p.gains.get(cfg.gain)
        if gains is None:
            gains = p.gains[cfg.gain] = (
                [
                    (i, _gain(grades[d], cfg.gain) / math.log2(i + 2))
                    for i, d in enumerate(p.docs)
                    if d in grades and grades[d] >= 0
                ],
                [
                    _gain(g, cfg.gain) / math.log2(i + 2)
                    for i, g in enumerate(sorted(judged, reverse=True))
                ],
            )
        at_rank, ideal = gains
        # the same terms summed in the same order as over the cut ranking: the same floats
        dcg = sum(t for i, t in at_rank if k is None or i < k)
        idcg = sum(ideal if k is None else ideal[:k])
        return dcg / idcg if idcg > 0 else 0.0
    if name == "ndcg_any":
        assert k is not None
        dcg = sum(1.0 / math.log2(max(i + 1, 2)) for i, r in enumerate(rel) if r)
        idcg = sum(1.0 / math.log2(max(i + 1, 2)) for i in range(min(R, k)))
        return dcg / idcg if idcg > 0 else 0.0
    return None
