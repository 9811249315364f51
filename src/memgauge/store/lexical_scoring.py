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
from collections.abc import Sequence

import numpy as np

from memgauge._types import FloatArray, IntArray
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
    n_rows = stats.n_rows
    avgdl = float(stats.tokens) / float(n_rows)
    weighed = space.weighed(avgdl)
    df = stats.df
    terms: list[tuple[float, IntArray, Weights]] = []
    total = 0
    for term in phrases:
        held = df.get(term)
        if held is None:
            continue  # no row holds it: it adds nothing to any score
        weights = weighed.get(term)
        if weights is not None:
            weights.reused = True
        else:
            found = space.postings(term)
            if found is None:
                continue
            docs, tf = found
            # fts5_aux.c's operations in its order: (tf * (k1 + 1)) / (tf + k1 * (1 - b +
            # b * D / avgdl)), times idf, added term by term
            norm = _K1 * (1 - _B + _B * space.lengths[docs] / avgdl)
            weights = weighed[term] = Weights(docs, (tf * (_K1 + 1.0)) / (tf + norm))
        terms.append((weights.idf(n_rows, held), weights.docs, weights))
        total += weights.docs.size
    if not terms:
        return []
    if len(terms) == 1:
        idf, docs, wt = terms[0]
        return _best(space, docs, wt.scaled(idf), _floor(terms, limit), limit)
    if total <= _SMALL:
        floor, common = 0.0, set[int]()
    else:
        floor, common = _plan(terms, limit)
    if not common:
        return _every_row(space, terms, floor, limit)
    scores, marks, slots = space.scratch()
    rows: IntArray | None = None
    try:
        for i, (_, docs, _) in enumerate(terms):
            if i not in common:
                marks[docs] = True
        # every term's contributions in the query's order, the common ones to the candidates
        # only, added in one pass: np.add.at adds in index order, so each row's sum is taken
        # term by term from 0.0 as FTS5 takes it, in a few NumPy calls whatever the terms
        parts_d, parts_w = [], []
        for i, (idf, docs, wt) in enumerate(terms):
            w = wt.scaled(idf)
            if i in common:
                has = marks[docs]
                docs, w = docs[has], w[has]
            parts_d.append(docs)
            parts_w.append(w)
        # the common terms' rows are marked ones: these are the candidates, with repeats
        rows = np.concatenate(parts_d)
        np.add.at(scores, rows, np.concatenate(parts_w))
        candidates = _distinct(rows[scores[rows] >= floor], slots)
        values = scores[candidates]
    finally:
        if rows is not None:
            scores[rows] = 0.0
            marks[rows] = False
        else:
            for _, docs, _ in terms:
                scores[docs] = 0.0
                marks[docs] = False
    return _best(space, candidates, values, 0.0, limit)  # none below the floor left


def _floor(terms: Sequence[tuple[float, IntArray, Weights]], limit: int) -> float:
    """A score that the limit-th best reaches: a term held by `limit` rows or more gives them
    at least idf times its limit-th largest weight each (0.0: none known)."""
    floor = 0.0
    for idf, docs, wt in terms:
        if docs.size >= limit and (peak := wt.peak(limit)) is not None:
            floor = max(floor, idf * peak)
    return floor


def _plan(terms: Sequence[tuple[float, IntArray, Weights]], limit: int) -> tuple[float, set[int]]:
    """`_floor`, and the terms (by index) whose largest contributions sum below it, the
    smallest first, in one pass over the terms (a search's fixed cost is Python steps)."""
    floor = 0.0
    bounds = []
    for i, (idf, docs, wt) in enumerate(terms):
        peak = wt.peak(1)
        if peak is None:  # not known to stay below anything (nor its limit-th weight known)
            continue
        if docs.size >= limit and (kth := wt.peak(limit)) is not None:
            floor = max(floor, idf * kth)
        bounds.append((idf * peak, i))
    out: set[int] = set()
    if floor <= 0.0:
        return floor, out
    bounds.sort()
    total = 0.0
    for bound, i in bounds:
        if (total + bound) * _MARGIN >= floor:
            break
        total += bound
        out.add(i)
    return floor, out


def _every_row(
    space: Postings, terms: Sequence[tuple[float, IntArray, Weights]], floor: float, limit: int
) -> list[tuple[str, float]]:
    """`top` with no term left out: each term added to every row it holds (in one pass, in
    the query's order, as `top` adds them)."""
    scores, _, slots = space.scratch()
    rows = np.concatenate([docs for _, docs, _ in terms])
    try:
        np.add.at(scores, rows, np.concatenate([wt.scaled(idf) for idf, _, wt in terms]))
        kept = rows[scores[rows] >= floor] if floor > 0.0 else rows
        candidates = _distinct(kept, slots)
        values = scores[candidates]
    finally:
        scores[rows] = 0.0
    return _best(space, candidates, values, 0.0, limit)  # none below the floor left


def _distinct(rows: IntArray, slots: IntArray) -> IntArray:
    """The distinct positions of `rows`, each once, in no particular order: each position
    is written its places in `rows` and the one place it kept is taken (whichever write
    won), in linear time (sorting them cost more)."""
    if rows.size <= 1:
        return rows
    places = np.arange(rows.size)
    slots[rows] = places
    out: IntArray = rows[slots[rows] == places]
    return out


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
            return ranked + [(i, float(kth)) for i in tied]
    return _ranked(space, candidates, values, limit)


def _ranked(
    space: Postings, candidates: IntArray, values: FloatArray, limit: int
) -> list[tuple[str, float]]:
    """`candidates` best first, ties by id, at most `limit` (sorted as (-score, id) tuples:
    compared in C, unlike a key function)."""
    ranked = sorted(zip((-values).tolist(), space.id_array[candidates].tolist(), strict=True))
    return [(i, -v) for v, i in ranked[:limit]]  # the ids are str
