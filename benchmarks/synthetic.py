"""Synthetic runs for the metric benchmarks: n queries x depth ranked results with tied scores
and about 10 graded judgments per query, as NumPy arrays and as plain dicts."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["Synthetic", "make"]


@dataclass
class Synthetic:
    run_ids: np.ndarray  # (n, depth) int64 doc ids
    run_scores: np.ndarray  # (n, depth) float64, rounded so that ties occur
    qrel_ids: np.ndarray  # (n, j) int64
    qrel_grades: np.ndarray  # (n, j) int64, 0-3

    def dicts(self) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]:
        """`{qid: {docid: grade}}` and `{qid: {docid: score}}` with string ids."""
        qrels = {
            f"q{i}": {f"d{d}": int(g) for d, g in zip(ids, grades, strict=True)}
            for i, (ids, grades) in enumerate(
                zip(self.qrel_ids.tolist(), self.qrel_grades.tolist(), strict=True)
            )
        }
        run = {
            f"q{i}": {f"d{d}": s for d, s in zip(ids, scores, strict=True)}
            for i, (ids, scores) in enumerate(
                zip(self.run_ids.tolist(), self.run_scores.tolist(), strict=True)
            )
        }
        return qrels, run


def make(n: int, depth: int = 100, judged: int = 10, pool: int = 400, seed: int = 0) -> Synthetic:
    """Doc ids drawn without replacement from a per-query pool; half the judged docs come from
    the run so that metrics are not trivially zero; scores have 2 decimals (many ties)."""
    rng = np.random.default_rng(seed)
    # distinct ids per row: a random permutation prefix of the pool (argsort of noise), made in
    # chunks so that generating 1,000,000 queries does not dominate the memory measured
    perm = np.empty((n, depth + judged), dtype=np.int64)
    for lo in range(0, n, 50_000):
        hi = min(n, lo + 50_000)
        noise = rng.random((hi - lo, pool), dtype=np.float32)
        perm[lo:hi] = np.argsort(noise, axis=1)[:, : depth + judged]
    run_ids = perm[:, :depth]
    from_run = perm[:, : judged // 2]
    outside = perm[:, depth : depth + judged - judged // 2]
    qrel_ids = np.concatenate([from_run, outside], axis=1)
    qrel_grades = rng.integers(0, 4, size=qrel_ids.shape)
    scores = np.round(np.sort(rng.random((n, depth)), axis=1)[:, ::-1], 2)
    return Synthetic(run_ids, scores, qrel_ids, qrel_grades)
