"""Turning runs and judgments into padded NumPy matrices every measure is computed from.

Tie order: trec_eval's. Documents are ranked by score descending and, on equal scores, by
document id descending (byte order) — trec_eval ignores the rank column of a run file. A
memory system's own ranked list (`from_ranked`) is taken as given.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from memgauge._types import BoolArray, GradeArray, IntArray

__all__ = ["Judged", "from_ranked", "from_run", "order_run"]

PAD = -1  # grade of "no document at this rank"


@dataclass(frozen=True)
class Judged:
    """A batch of queries ready for scoring.

    Attributes:
        query_ids: the judged queries, sorted.
        grades: (n_queries, depth) int8: grade of the document at each rank; 0 = unjudged;
            PAD (-1) = nothing at this rank.
        ideal: (n_queries, max_judged) int8: each query's judged grades sorted descending,
            0-padded; the ideal ranking for nDCG.
        n_returned: (n_queries,) documents returned per query.
        in_run: (n_queries,) bool: whether the run has the query at all.
        run_only: queries in the run with no judgments (not scored, counted).
    """

    query_ids: list[str]
    grades: GradeArray
    ideal: GradeArray
    n_returned: IntArray
    in_run: BoolArray
    run_only: list[str]

    def n_relevant(self, threshold: int) -> IntArray:
        """Judged documents with grade >= threshold, per query."""
        return np.asarray((self.ideal >= threshold).sum(axis=1), dtype=np.int64)


def order_run(scores: Mapping[str, float]) -> list[str]:
    """Document ids in trec_eval order: score descending, then id descending."""
    return [d for d, _ in sorted(scores.items(), key=lambda kv: (kv[1], kv[0]), reverse=True)]


def _ideal(qrels: Mapping[str, Mapping[str, int]], qids: list[str]) -> GradeArray:
    width = max((len(qrels[q]) for q in qids), default=0)
    ideal = np.zeros((len(qids), max(width, 1)), dtype=np.int8)
    for i, q in enumerate(qids):
        grades = sorted(qrels[q].values(), reverse=True)
        if grades:
            ideal[i, : len(grades)] = np.maximum(np.asarray(grades, dtype=np.int64), 0)
    return ideal


def from_ranked(
    qrels: Mapping[str, Mapping[str, int]],
    ranked: Mapping[str, Sequence[str]],
    depth: int | None = None,
) -> Judged:
    """Build matrices from already-ranked id lists (a memory system's hits, best first).

    Duplicate ids in one list count once, at their first rank (as trec_eval would read a run
    with one row per document).
    """
    qids = sorted(qrels)
    lists: list[list[str]] = []
    for q in qids:
        seen: set[str] = set()
        uniq: list[str] = []
        for d in ranked.get(q, ()):
            if d not in seen:
                seen.add(d)
                uniq.append(d)
        lists.append(uniq if depth is None else uniq[:depth])
    width = max((len(x) for x in lists), default=0)
    grades = np.full((len(qids), max(width, 1)), PAD, dtype=np.int8)
    for i, (q, docs) in enumerate(zip(qids, lists, strict=True)):
        if docs:
            judged = qrels[q]
            grades[i, : len(docs)] = [max(judged.get(d, 0), 0) for d in docs]
    return Judged(
        query_ids=qids,
        grades=grades,
        ideal=_ideal(qrels, qids),
        n_returned=np.asarray([len(x) for x in lists], dtype=np.int64),
        in_run=np.asarray([q in ranked for q in qids], dtype=bool),
        run_only=sorted(set(ranked) - set(qrels)),
    )


def from_run(
    qrels: Mapping[str, Mapping[str, int]],
    run: Mapping[str, Mapping[str, float]],
    depth: int | None = None,
) -> Judged:
    """Build matrices from a scored run `{qid: {docid: score}}`, ranking in trec_eval order."""
    ranked = {q: order_run(docs) for q, docs in run.items() if q in qrels}
    judged = from_ranked(qrels, ranked, depth)
    return Judged(
        query_ids=judged.query_ids,
        grades=judged.grades,
        ideal=judged.ideal,
        n_returned=judged.n_returned,
        in_run=np.asarray([q in run for q in judged.query_ids], dtype=bool),
        run_only=sorted(set(run) - set(qrels)),
    )
