"""Turning runs and judgments into what every measure is computed from: `Hits`, the ranks of
the judged documents, and `Judged`, the same batch as a padded grade matrix.

Tie order: trec_eval's. Documents are ranked by score descending and, on equal scores, by
document id descending (byte order) — trec_eval ignores the rank column of a run file. A
memory system's own ranked list (`from_ranked`) is taken as given.

Grades, as trec_eval reads them (form_res_rels.c): a judged document keeps its grade (>= 0); a
returned document nobody judged is UNJUDGED (-2, trec_eval's RELVALUE_NONPOOL), and one judged
below 0 is POOLED (-3, trec_eval's RELVALUE_UNJUDGED: in the pool, not judged): neither is ever
relevant at any threshold >= 0, nor gains anything, nor counts in R; bpref and infAP skip a
POOLED document where they count an UNJUDGED one as not in the pool, and Judged@k counts it as
judged. So at threshold 0 (trec_eval `-l0`) judged grade-0 documents are relevant and the
others never are. The ideal ranking is padded with PAD (-1), which no
threshold >= 0 counts into R. The matrices are int8 when every grade fits (the usual 0-3
scale, and the cheap case at a million queries), else int16 or int32; a grade above
2^31 - 1 is refused (ValueError).
"""

from __future__ import annotations

import math
import operator
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from itertools import repeat
from typing import Any

import numpy as np

from memgauge._types import BoolArray, FloatArray, GradeArray, IntArray
from memgauge._util.numbers import MAX_GRADE

__all__ = [
    "MAX_GRADE",
    "PAD",
    "POOLED",
    "UNJUDGED",
    "Hits",
    "Judged",
    "from_ranked",
    "from_run",
    "grade_dtype",
    "hits_from_run",
    "order_run",
]

PAD = -1  # "no document at this rank" (grades) / "no judgment at this position" (ideal)
UNJUDGED = -2  # a returned document with no judgment: never relevant
POOLED = -3  # a returned document judged below 0 (pooled, not judged): never relevant


@dataclass(frozen=True)
class Judged:
    """A batch of queries ready for scoring.

    Attributes:
        query_ids: the judged queries, sorted.
        grades: (n_queries, depth) int8/16/32 (`grade_dtype`): grade of the document at each
            rank; UNJUDGED (-2) = returned but not judged; POOLED (-3) = returned, judged
            below 0; PAD (-1) = nothing at this rank.
        ideal: (n_queries, max_judged), same dtype: each query's judged grades (>= 0) sorted
            descending, PAD-padded; the ideal ranking for nDCG, and R.
        n_returned: (n_queries,) documents returned per query.
        in_run: (n_queries,) bool: whether the run has the query at all.
        run_only: queries in the run with no judgments (not scored, counted).
    """

    query_ids: Sequence[str]
    grades: GradeArray
    ideal: GradeArray
    n_returned: IntArray
    in_run: BoolArray
    run_only: list[str]

    def n_relevant(self, threshold: int) -> IntArray:
        """Judged documents with grade >= threshold (>= 0: padding never counts), per query."""
        return _n_relevant(self.ideal, threshold)


def _n_relevant(ideal: GradeArray, threshold: int) -> IntArray:
    if threshold < 0:
        raise ValueError(f"relevance threshold {threshold} is negative; use 0 or more")
    return np.asarray((ideal >= threshold).sum(axis=1), dtype=np.int64)


def order_run(scores: Mapping[str, float]) -> list[str]:
    """Document ids in trec_eval order: score descending, then id descending."""
    return [d for d, _ in sorted(scores.items(), key=lambda kv: (kv[1], kv[0]), reverse=True)]


def grade_dtype(max_grade: int) -> np.dtype[np.signedinteger[Any]]:
    """The narrowest of int8, int16, int32 holding grades up to `max_grade` (and the negative
    markers PAD, UNJUDGED and POOLED). ValueError above MAX_GRADE."""
    for dtype in (np.int8, np.int16, np.int32):
        if max_grade <= np.iinfo(dtype).max:
            return np.dtype(dtype)
    raise ValueError(
        f"grade {max_grade} is above {MAX_GRADE}, the largest grade memgauge stores; "
        "rescale the judgments"
    )


def _ideal(qrels: Mapping[str, Mapping[str, int]], qids: list[str]) -> GradeArray:
    """Each query's judged grades sorted descending, PAD-padded (see `_ideal_rows`)."""
    lens = np.fromiter((len(qrels[q]) for q in qids), dtype=np.int64, count=len(qids))
    flat: list[int] = []
    for q in qids:
        flat.extend(qrels[q].values())
    return _ideal_rows(flat, lens)


def _ideal_rows(flat: list[int], lens: IntArray) -> GradeArray:
    """Grades `flat`, `lens[i]` of them for row i, as rows sorted descending and PAD-padded;
    negative grades are dropped (trec_eval reads them as unjudged). Its dtype is the batch's
    grade dtype, chosen before any int64 conversion could overflow."""
    dtype = grade_dtype(max(flat, default=0))
    width = max(int(lens.max()) if lens.size else 0, 1)
    ideal = np.full((len(lens), width), PAD, dtype=np.int64)
    if flat:
        row = np.repeat(np.arange(len(lens)), lens)
        col = np.arange(len(flat)) - np.repeat(np.cumsum(lens) - lens, lens)
        ideal[row, col] = np.maximum(np.asarray(flat, dtype=np.int64), PAD)
    return (-np.sort(-ideal, axis=1)).astype(dtype)


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
    ideal = _ideal(qrels, qids)
    grades = np.full((len(qids), max(width, 1)), PAD, dtype=ideal.dtype)
    for i, (q, docs) in enumerate(zip(qids, lists, strict=True)):
        if docs:
            judged = qrels[q]
            grades[i, : len(docs)] = [
                g if (g := judged.get(d, UNJUDGED)) >= 0 or g == UNJUDGED else POOLED for d in docs
            ]
    return Judged(
        query_ids=qids,
        grades=grades,
        ideal=ideal,
        n_returned=np.asarray([len(x) for x in lists], dtype=np.int64),
        in_run=np.asarray([q in ranked for q in qids], dtype=bool),
        run_only=sorted(set(ranked) - set(qrels)),
    )


@dataclass(frozen=True)
class Hits:
    """A batch as the ranks of its judged documents: the form every measure is computed from.

    A measure sees a ranking only through where the judged documents are (an unjudged document
    is never relevant and gains nothing), so a batch is its hits: one per judged document
    (grade >= 0, or POOLED for one judged below 0) the run returned within the depth, in
    (row, rank) order, and each query's ideal ranking. Building them needs the rank of each judged document, never a sort of a
    whole run (`hits_from_run`, `memgauge.metrics.arrays`).

    Attributes:
        query_ids: the rows' query ids.
        row: (m,) each hit's query row, ascending.
        pos: (m,) its 0-based rank, ascending within a row.
        grade: (m,) its grade (>= 0, or POOLED), in the batch's grade dtype.
        ideal: as `Judged.ideal`.
        n_returned: (n,) documents returned per query, within the depth.
        in_run: (n,) whether the run has the query at all.
        run_only: queries in the run with no judgments.
        width: the depth of the ranking (the columns of `Judged.grades`, at least 1): nDCG
            without a cutoff sums over this many ranks.
    """

    query_ids: Sequence[str]
    row: IntArray
    pos: IntArray
    grade: GradeArray
    ideal: GradeArray
    n_returned: IntArray
    in_run: BoolArray
    run_only: list[str]
    width: int

    def n_relevant(self, threshold: int) -> IntArray:
        """Judged documents with grade >= threshold, per query (see `Judged.n_relevant`)."""
        return _n_relevant(self.ideal, threshold)

    @classmethod
    def from_judged(cls, judged: Judged) -> Hits:
        """The hits of a grade matrix: its judged cells, in row-major order."""
        row, pos = np.nonzero((judged.grades >= 0) | (judged.grades == POOLED))
        return cls(
            query_ids=judged.query_ids,
            row=row.astype(np.int64),
            pos=pos.astype(np.int64),
            grade=judged.grades[row, pos],
            ideal=judged.ideal,
            n_returned=judged.n_returned,
            in_run=judged.in_run,
            run_only=judged.run_only,
            width=judged.grades.shape[1],
        )

    def to_judged(self) -> Judged:
        """The grade matrix: a hit's grade at its rank, UNJUDGED at the other returned ranks,
        PAD after them."""
        n = len(self.n_returned)
        grades = np.full((n, self.width), PAD, dtype=self.ideal.dtype)
        grades[np.arange(self.width)[None, :] < self.n_returned[:, None]] = UNJUDGED
        grades[self.row, self.pos] = self.grade
        return Judged(
            query_ids=self.query_ids,
            grades=grades,
            ideal=self.ideal,
            n_returned=self.n_returned,
            in_run=self.in_run,
            run_only=self.run_only,
        )


def from_run(
    qrels: Mapping[str, Mapping[str, int]],
    run: Mapping[str, Mapping[str, float]],
    depth: int | None = None,
) -> Judged:
    """Build matrices from a scored run `{qid: {docid: score}}`, ranking in trec_eval order."""
    return hits_from_run(qrels, run, depth).to_judged()


def hits_from_run(
    qrels: Mapping[str, Mapping[str, int]],
    run: Mapping[str, Mapping[str, float]],
    depth: int | None = None,
) -> Hits:
    """The hits of a scored run `{qid: {docid: score}}`, in trec_eval's order.

    Only judged documents are ranked: a judged document's rank is the number of the query's
    documents with a higher score, plus those with an equal score and a larger id (code-point
    order, which is UTF-8 byte order). Entries leave the dicts through C-level operations
    (`list.extend`, `map(dict.get, ...)`); string ids are compared only between tied scores.
    """
    qids = sorted(qrels)
    n = len(qids)
    run_lens: list[int] = []
    judged_lens: list[int] = []
    present: list[bool] = []
    ids: list[str] = []
    scores: list[float] = []
    jids: list[str] = []
    jgrades: list[int] = []
    jscores: list[float] = []  # each judged document's score in the run; NaN: not returned
    nan = math.nan
    for q in qids:
        judged = qrels[q]
        judged_lens.append(len(judged))
        jids.extend(judged)
        jgrades.extend(judged.values())
        docs = run.get(q)
        present.append(docs is not None)
        if docs:
            run_lens.append(len(docs))
            ids.extend(docs)
            scores.extend(docs.values())
            jscores.extend(map(docs.get, judged, repeat(nan)))
        else:
            run_lens.append(0)
            jscores.extend(repeat(nan, len(judged)))
    lens = np.asarray(run_lens, dtype=np.int64)
    jlens = np.asarray(judged_lens, dtype=np.int64)
    score_arr = np.asarray(scores, dtype=np.float64)
    ideal = _ideal_rows(jgrades, jlens)  # refuses an unstorable grade before int64 could overflow
    jgrade_arr = np.asarray(jgrades, dtype=np.int64)
    jscore_arr = np.asarray(jscores, dtype=np.float64)
    found = np.flatnonzero(~np.isnan(jscore_arr))
    if score_arr.size and not np.isfinite(score_arr).all():
        score_arr, jscore_arr = _finite_order(score_arr, jscore_arr, found)
    row = np.repeat(np.arange(n, dtype=np.int64), jlens)[found]
    pos = _ranks(score_arr, lens, row, jscore_arr[found], ids, _pick(jids, found))
    cap = max(int(lens.max(initial=0)), 1)
    if depth is not None:
        cap = min(cap, depth)
    keep = pos < cap
    row, pos = row[keep], pos[keep]
    grade = jgrade_arr[found][keep]
    grade = np.where(grade >= 0, grade, POOLED)
    order = np.argsort(row * cap + pos, kind="stable")
    return Hits(
        query_ids=qids,
        row=row[order],
        pos=pos[order],
        grade=grade[order].astype(ideal.dtype),
        ideal=ideal,
        n_returned=np.minimum(lens, depth) if depth is not None else lens,
        in_run=np.asarray(present, dtype=bool),
        run_only=sorted(run.keys() - qrels.keys()),
        width=cap,
    )


_BLOCK_CELLS = 1 << 20  # padded scores per block of queries in _ranks


def _finite_order(
    scores: FloatArray, judged: FloatArray, found: IntArray
) -> tuple[FloatArray, FloatArray]:
    """A run's scores with infinities (trec_eval, pytrec_eval and ir_measures order `inf` and
    `-inf`) as finite numbers in the same order: each score becomes its place among the run's
    distinct scores, so ties stay ties and no score meets the -inf that pads `_slices`' rows.
    The judged documents' scores (`judged` at `found`; NaN elsewhere: not returned) alike.
    ValueError for a NaN score, which has no place in an order."""
    if np.isnan(scores).any():
        raise ValueError("run scores must be numbers: NaN has no place in a ranking")
    distinct = np.unique(scores)
    judged = judged.copy()
    judged[found] = np.searchsorted(distinct, judged[found])
    return np.searchsorted(distinct, scores).astype(np.float64), judged


def _ranks(
    scores: FloatArray,
    lens: IntArray,
    row: IntArray,
    score: FloatArray,
    ids: Sequence[str],
    doc_ids: Sequence[str],
) -> IntArray:
    """0-based trec_eval rank of each judged document (its query `row`, its `score` and id
    `doc_ids[i]`) among its query's run entries (`scores`/`ids`, grouped by query, `lens` per
    query): the entries scored higher, plus the tied ones with a larger id.

    Tied ids are compared as strings pair by pair while the pairs stay fewer than the run's
    entries; past that (runs where most scores tie) every id gets its integer rank once and
    the ties are counted like the scores."""
    rank = np.zeros(row.size, dtype=np.int64)
    tie_of: list[IntArray] = []
    tie_doc: list[IntArray] = []
    pairs, limit = 0, scores.size + row.size
    for f, g, mine, _, base in _slices(scores, lens, row):
        x = score[f:g, None]
        rank[f:g] = np.count_nonzero(mine > x, axis=1)
        if pairs <= limit:
            tp, tc = np.divmod(np.flatnonzero(mine == x), mine.shape[1])  # the document too
            pairs += tp.size
            tie_of.append(tp + f)
            tie_doc.append(base[tp] + tc)
    if pairs > limit:  # many ties: integer ranks of the ids, ties counted per block
        index = {d: i for i, d in enumerate(sorted(set(ids)))}
        keys = np.fromiter(map(index.__getitem__, ids), dtype=np.int64, count=len(ids))
        own = np.fromiter(map(index.__getitem__, doc_ids), dtype=np.int64, count=len(doc_ids))
        for f, g, mine, kmine, _ in _slices(scores, lens, row, keys):
            assert kmine is not None
            tied = (mine == score[f:g, None]) & (kmine > own[f:g, None])
            rank[f:g] += np.count_nonzero(tied, axis=1)
    elif tie_of:
        of, doc = np.concatenate(tie_of), np.concatenate(tie_doc)
        theirs, own_ids = _pick(ids, doc), _pick(doc_ids, of)
        larger = np.fromiter(map(operator.gt, theirs, own_ids), dtype=bool, count=of.size)
        rank += np.bincount(of[larger], minlength=row.size)
    return rank


def _slices(
    scores: FloatArray, lens: IntArray, row: IntArray, keys: IntArray | None = None
) -> Iterator[tuple[int, int, FloatArray, IntArray | None, IntArray]]:
    """For judged documents f..g (their query `row`s ascending): their queries' scores (and
    `keys`) as padded rows (-inf / -1 after a query's end), and where each query's entries
    start; blocks of queries and slices of documents are bounded by _BLOCK_CELLS cells."""
    starts = np.cumsum(lens) - lens
    lo, n = 0, len(lens)
    while lo < n:
        hi = min(n, lo + 4096)
        while hi - lo > 1 and int(lens[lo:hi].max()) * (hi - lo) > _BLOCK_CELLS:
            hi = lo + (hi - lo) // 2
        a, b = (int(x) for x in np.searchsorted(row, [lo, hi]))
        if a < b:
            seg = lens[lo:hi]
            width = max(int(seg.max()), 1)
            r = np.repeat(np.arange(hi - lo), seg)
            c = np.arange(r.size) - np.repeat(np.cumsum(seg) - seg, seg)
            src = slice(int(starts[lo]), int(starts[lo]) + r.size)
            block = np.full((hi - lo, width), -np.inf)
            block[r, c] = scores[src]
            kblock = None
            if keys is not None:
                kblock = np.full((hi - lo, width), -1, dtype=np.int64)
                kblock[r, c] = keys[src]
            step = max(1, _BLOCK_CELLS // width)  # documents whose rows are gathered at once
            for f in range(a, b, step):
                g = min(b, f + step)
                sel = row[f:g] - lo
                yield f, g, block[sel], None if kblock is None else kblock[sel], starts[row[f:g]]
        lo = hi


def _pick(items: Sequence[str], index: IntArray) -> Sequence[str]:
    """items[i] for each i in index, gathered in C (operator.itemgetter)."""
    if index.size < 2:  # itemgetter of one index returns the item, not a tuple
        return [items[i] for i in index.tolist()]
    picked: tuple[str, ...] = operator.itemgetter(*index.tolist())(items)
    return picked
