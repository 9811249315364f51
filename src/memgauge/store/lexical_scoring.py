"""A query's top k over one namespace's postings, with FTS5's bm25() scores and order.

Each row's score is summed term by term in the query's order, from 0.0, in fts5_aux.c's
floating-point operations, so it equals FTS5's bit for bit; the top k are ordered by score,
ties by id (`ORDER BY bm25(...), id`).

Why not score every matched row: at 100k rows a query's common words match tens of thousands,
and adding their weights into every one of them cost more than the rest of the search
(BENCHMARKS.md, "Lexical search at 1k, 10k and 100k"). A floor on the k-th best score comes
free: any term held by at least k rows gives k rows scoring at least idf times its k-th largest
weight (the other terms add nothing negative). The terms whose largest contributions, summed,
stay below that floor are the common ones (MaxScore, Turtle and Flood 1995): a row that holds
only those cannot reach the k-th place nor tie at it, so the candidates are the rows holding any
other term, and the common terms are added to those rows only (found through a mark per row),
still in the query's order. The candidates scoring below the floor are dropped before the
selection.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Sequence

import numpy as np

from memgauge._types import BoolArray, FloatArray, IntArray
from memgauge.store.lexical_postings import Postings, Stats, Weights

__all__ = ["top"]

_K1 = 1.2
_B = 0.75
# the summed bounds of the terms left out must stay below the floor by more than the rounding
# of a sum of at most 64 terms (query_words keeps 64 words) can move it
_MARGIN = 1.0 + 1e-9
# up to this many postings a query's terms are all added to every row they hold: the floor and
# the marks cost more than they save
_SMALL = 512


def top(
    stats: Stats, space: Postings, phrases: Sequence[str], limit: int
) -> list[tuple[str, float]]:
    """Top `limit` (id, score) of `space` for the OR of `phrases` (FTS5 terms), best first."""
    n = float(stats.n_rows)
    avgdl = float(stats.tokens) / n
    weighed = space.weighed(avgdl)
    terms: list[tuple[float, IntArray, Weights]] = []
    for term in phrases:
        held = stats.df.get(term)
        if held is None:
            continue  # no row holds it: it adds nothing to any score
        found = space.postings(term)
        if found is None:
            continue
        docs, tf = found
        n_hit = float(held)
        idf = math.log((n - n_hit + 0.5) / (n_hit + 0.5))  # libm's log, as FTS5's
        if idf <= 0.0:
            idf = 1e-6
        weights = weighed.get(term)
        if weights is not None:
            weights.reused = True
        else:
            # fts5_aux.c's operations in its order: (tf * (k1 + 1)) / (tf + k1 * (1 - b +
            # b * D / avgdl)), times idf, added term by term
            norm = _K1 * (1 - _B + _B * space.lengths[docs] / avgdl)
            weights = weighed[term] = Weights((tf * (_K1 + 1.0)) / (tf + norm))
        terms.append((idf, docs, weights))
    if not terms:
        return []
    if len(terms) == 1:
        idf, docs, wt = terms[0]
        return _best(space, docs, wt.scaled(idf), _floor(terms, limit), limit)
    if sum(docs.size for _, docs, _ in terms) <= _SMALL:
        floor, common = 0.0, set()
    else:
        floor = _floor(terms, limit)
        common = _common(terms, floor)
    if not common:
        return _every_row(space, terms, floor, limit)
    scores, marks = space.scratch()
    essential = [docs for i, (_, docs, _) in enumerate(terms) if i not in common]
    try:
        for docs in essential:
            marks[docs] = True
        for i, (idf, docs, wt) in enumerate(terms):
            if i in common:  # only to the candidates' scores
                has = marks[docs]
                np.add.at(scores, docs[has], wt.scaled(idf)[has])
            elif i == 0:  # every score is 0.0 yet, and 0.0 + x is x
                scores[docs] = wt.scaled(idf)
            else:
                np.add.at(scores, docs, wt.scaled(idf))
        candidates = _candidates(essential, scores, marks, floor)
        values = scores[candidates]
    finally:
        for docs in essential:
            scores[docs] = 0.0
            marks[docs] = False
    return _best(space, candidates, values, floor, limit)


def _floor(terms: Sequence[tuple[float, IntArray, Weights]], limit: int) -> float:
    """A score that the limit-th best reaches: a term held by `limit` rows or more gives them
    at least idf times its limit-th largest weight each (0.0: none known)."""
    floor = 0.0
    for idf, docs, wt in terms:
        if docs.size >= limit and (peak := wt.peak(limit)) is not None:
            floor = max(floor, idf * peak)
    return floor


def _common(terms: Sequence[tuple[float, IntArray, Weights]], floor: float) -> set[int]:
    """The terms (by index) whose largest contributions sum below `floor`: the smallest first."""
    if floor <= 0.0:
        return set()
    bounds = []
    for i, (idf, _, wt) in enumerate(terms):
        peak = wt.peak(1)
        if peak is not None:  # else the term is not known to stay below anything
            bounds.append((idf * peak, i))
    bounds.sort()
    out: set[int] = set()
    total = 0.0
    for bound, i in bounds:
        if (total + bound) * _MARGIN >= floor:
            break
        total += bound
        out.add(i)
    return out


def _every_row(
    space: Postings, terms: Sequence[tuple[float, IntArray, Weights]], floor: float, limit: int
) -> list[tuple[str, float]]:
    """`top` with no term left out: each term added to every row it holds."""
    scores, marks = space.scratch()
    parts = [docs for _, docs, _ in terms]
    n = len(space)
    cleared = False
    try:
        for i, (idf, docs, wt) in enumerate(terms):
            if i == 0:  # every score is 0.0 yet, and 0.0 + x is x
                scores[docs] = wt.scaled(idf)
            elif docs.size > 1024:  # faster than `+=` on many rows; the same sums
                np.add.at(scores, docs, wt.scaled(idf))
            else:
                scores[docs] += wt.scaled(idf)  # a term's rows are distinct
        if sum(p.size for p in parts) * 32 >= n:  # a scan of the marks beats the rest
            for docs in parts:
                marks[docs] = True
            candidates = np.flatnonzero(marks[:n])
        else:
            candidates = _first_seen(parts, marks)
        values = scores[candidates]
        scores[candidates] = 0.0
        marks[candidates] = False
        cleared = True
    finally:
        if not cleared:
            for docs in parts:
                scores[docs] = 0.0
                marks[docs] = False
    return _best(space, candidates, values, floor, limit)


def _first_seen(parts: Sequence[IntArray], marks: BoolArray) -> IntArray:
    """The distinct positions of `parts`, marked as they are taken (sorting them cost more);
    the marks must be clear."""
    out = []
    for p in parts:
        new = p[~marks[p]]
        marks[new] = True
        out.append(new)
    return np.concatenate(out)


def _candidates(
    parts: Sequence[IntArray], scores: FloatArray, marks: BoolArray, floor: float
) -> IntArray:
    """The distinct positions of `parts` (all marked) that score at least `floor`, told apart
    by their marks (cleared as they are taken)."""
    parts = [p[scores[p] >= floor] for p in parts]
    if len(parts) == 1:
        return parts[0]
    out = []
    for p in parts:
        new = p[marks[p]]
        marks[new] = False
        out.append(new)
    return np.concatenate(out)


def _best(
    space: Postings, candidates: IntArray, values: FloatArray, floor: float, limit: int
) -> list[tuple[str, float]]:
    """The top `limit` of `candidates` by score, ties by id; none below `floor` (no higher
    than the limit-th best) is among them."""
    if floor > 0.0 and candidates.size > 2 * limit:
        keep = values >= floor
        candidates, values = candidates[keep], values[keep]
    if candidates.size > limit:
        # every candidate scoring at least the limit-th best (ties at the cut go by id)
        kth = np.partition(values, candidates.size - limit)[candidates.size - limit]
        keep = values >= kth
        candidates, values = candidates[keep], values[keep]
        if candidates.size > 4 * limit:  # many tie at the cut: their smallest ids, in C
            above = values > kth
            tied = heapq.nsmallest(
                limit - int(above.sum()), space.id_array[candidates[~above]].tolist()
            )
            ranked = _ranked(space, candidates[above], values[above], limit)
            return ranked + [(str(i), float(kth)) for i in tied]
    return _ranked(space, candidates, values, limit)


def _ranked(
    space: Postings, candidates: IntArray, values: FloatArray, limit: int
) -> list[tuple[str, float]]:
    """`candidates` best first, ties by id, at most `limit` (sorted as (-score, id) tuples:
    compared in C, unlike a key function)."""
    ranked = sorted(zip((-values).tolist(), space.id_array[candidates].tolist(), strict=True))
    return [(str(i), -v) for v, i in ranked[:limit]]
