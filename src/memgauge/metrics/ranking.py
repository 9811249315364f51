"""Turning runs and judgments into padded NumPy matrices every measure is computed from.

Tie order: trec_eval's. Documents are ranked by score descending and, on equal scores, by
document id descending (byte order) — trec_eval ignores the rank column of a run file. A
memory system's own ranked list (`from_ranked`) is taken as given.

Grades, as trec_eval reads them (form_res_rels.c): a judged document keeps its grade (>= 0); a
returned document nobody judged, or one judged below 0, is UNJUDGED (-2): never relevant at any
threshold >= 0, gain 0. So at threshold 0 (trec_eval `-l0`) judged grade-0 documents are
relevant and unjudged ones never are. The ideal ranking is padded with PAD (-1), which no
threshold >= 0 counts into R. The matrices are int8 when every grade fits (the usual 0-3
scale, and the cheap case at a million queries), else int16 or int32; a grade above
2^31 - 1 is refused (ValueError).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import repeat
from typing import Any

import numpy as np
import numpy.typing as npt

from memgauge._types import BoolArray, GradeArray, IntArray
from memgauge._util.numbers import MAX_GRADE

__all__ = [
    "MAX_GRADE",
    "PAD",
    "UNJUDGED",
    "Judged",
    "from_arrays",
    "from_ranked",
    "from_run",
    "grade_dtype",
    "order_run",
]

PAD = -1  # "no document at this rank" (grades) / "no judgment at this position" (ideal)
UNJUDGED = -2  # a returned document with no judgment (or a negative one): never relevant
_CHUNK = 65_536  # rows per chunk in from_arrays


@dataclass(frozen=True)
class Judged:
    """A batch of queries ready for scoring.

    Attributes:
        query_ids: the judged queries, sorted.
        grades: (n_queries, depth) int8/16/32 (`grade_dtype`): grade of the document at each
            rank; UNJUDGED (-2) = returned but not judged (or judged below 0); PAD (-1) =
            nothing at this rank.
        ideal: (n_queries, max_judged), same dtype: each query's judged grades (>= 0) sorted
            descending, PAD-padded; the ideal ranking for nDCG, and R.
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
        """Judged documents with grade >= threshold (>= 0: padding never counts), per query."""
        if threshold < 0:
            raise ValueError(f"relevance threshold {threshold} is negative; use 0 or more")
        return np.asarray((self.ideal >= threshold).sum(axis=1), dtype=np.int64)


def order_run(scores: Mapping[str, float]) -> list[str]:
    """Document ids in trec_eval order: score descending, then id descending."""
    return [d for d, _ in sorted(scores.items(), key=lambda kv: (kv[1], kv[0]), reverse=True)]


def grade_dtype(max_grade: int) -> np.dtype[np.signedinteger[Any]]:
    """The narrowest of int8, int16, int32 holding grades up to `max_grade` (and the negative
    markers PAD and UNJUDGED). ValueError above MAX_GRADE."""
    for dtype in (np.int8, np.int16, np.int32):
        if max_grade <= np.iinfo(dtype).max:
            return np.dtype(dtype)
    raise ValueError(
        f"grade {max_grade} is above {MAX_GRADE}, the largest grade memgauge stores; "
        "rescale the judgments"
    )


def _ideal(qrels: Mapping[str, Mapping[str, int]], qids: list[str]) -> GradeArray:
    """Each query's judged grades sorted descending, PAD-padded; negative grades are dropped
    (trec_eval reads them as unjudged). Its dtype is the batch's grade dtype."""
    lens = np.fromiter((len(qrels[q]) for q in qids), dtype=np.int64, count=len(qids))
    flat: list[int] = []
    for q in qids:
        flat.extend(qrels[q].values())
    dtype = grade_dtype(max(flat, default=0))  # before any int64 conversion can overflow
    width = max(int(lens.max()) if lens.size else 0, 1)
    ideal = np.full((len(qids), width), PAD, dtype=np.int64)
    if flat:
        row = np.repeat(np.arange(len(qids)), lens)
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
                g if (g := judged.get(d, UNJUDGED)) >= 0 else UNJUDGED for d in docs
            ]
    return Judged(
        query_ids=qids,
        grades=grades,
        ideal=ideal,
        n_returned=np.asarray([len(x) for x in lists], dtype=np.int64),
        in_run=np.asarray([q in ranked for q in qids], dtype=bool),
        run_only=sorted(set(ranked) - set(qrels)),
    )


def _rank_rows(
    lens: IntArray, score_key: IntArray, id_key: IntArray, grades: GradeArray, depth: int | None
) -> GradeArray:
    """Order each row's items by (score_key desc, id_key desc); return the padded grade matrix.

    Items arrive grouped by row (`lens` items per row). Keys are small non-negative ints, so a
    single composite int64 key sorted along axis 1 replaces a (slow) multi-key lexsort.
    """
    n = len(lens)
    width = int(lens.max()) if n else 0
    n_id = int(id_key.max()) + 1 if id_key.size else 1
    composite = score_key.astype(np.int64) * n_id + id_key
    keys = np.full((n, max(width, 1)), -1, dtype=np.int64)  # padding sorts last
    vals = np.full((n, max(width, 1)), PAD, dtype=grades.dtype)
    col = np.arange(composite.size) - np.repeat(np.cumsum(lens) - lens, lens)
    row = np.repeat(np.arange(n), lens)
    keys[row, col] = composite
    vals[row, col] = grades
    order = np.argsort(-keys, axis=1, kind="stable")
    out = np.take_along_axis(vals, order, axis=1)
    return out if depth is None else out[:, :depth]


def from_run(
    qrels: Mapping[str, Mapping[str, int]],
    run: Mapping[str, Mapping[str, float]],
    depth: int | None = None,
) -> Judged:
    """Build matrices from a scored run `{qid: {docid: score}}`, ranking in trec_eval order.

    Vectorised: one pass gathers ids, scores and grades with C-level dict operations; scores
    and ids are turned into dense integer ranks (ids in code-point order, which is UTF-8 byte
    order) and each row is sorted once on a composite key.
    """
    qids = sorted(qrels)
    ids: list[str] = []
    scores: list[float] = []
    grades: list[int] = []
    lens = np.zeros(len(qids), dtype=np.int64)
    for i, q in enumerate(qids):
        docs = run.get(q)
        if not docs:
            continue
        judged = qrels[q]
        ids.extend(docs)
        scores.extend(docs.values())
        grades.extend(map(judged.get, docs, repeat(UNJUDGED)))
        lens[i] = len(docs)
    score_arr = np.asarray(scores, dtype=np.float64)
    if score_arr.size and not np.isfinite(score_arr).all():
        raise ValueError("run scores must be finite numbers")
    score_rank = np.unique(score_arr, return_inverse=True)[1]
    id_index = {d: i for i, d in enumerate(sorted(set(ids)))}
    id_rank = np.fromiter(map(id_index.__getitem__, ids), dtype=np.int64, count=len(ids))
    ideal = _ideal(qrels, qids)  # refuses an unstorable grade before int64 could overflow
    graded = np.asarray(grades, dtype=np.int64)
    grade_arr = np.where(graded >= 0, graded, UNJUDGED).astype(ideal.dtype)
    matrix = _rank_rows(lens, score_rank.astype(np.int64), id_rank, grade_arr, depth)
    return Judged(
        query_ids=qids,
        grades=matrix,
        ideal=ideal,
        n_returned=np.minimum(lens, depth) if depth is not None else lens,
        in_run=np.asarray([q in run for q in qids], dtype=bool),
        run_only=sorted(set(run) - set(qrels)),
    )


def _lookup(
    ranked: IntArray, judged: IntArray, grades: IntArray, dtype: np.dtype[np.signedinteger[Any]]
) -> GradeArray:
    """Grade of each ranked id from its row's judged ids (-2 = no judgment; never matches);
    UNJUDGED where the row has no judgment of it. A doc judged twice keeps its highest grade."""
    n, depth = ranked.shape
    if judged.shape[1] <= 64:
        # One vectorised comparison per judged column (fast when rows have few judgments).
        # Columns go in ascending grade order so that a doc judged twice keeps its highest.
        by_grade = np.argsort(grades, axis=1, kind="stable")
        judged = np.take_along_axis(judged, by_grade, axis=1)
        g8 = np.take_along_axis(grades, by_grade, axis=1).astype(dtype)
        small = max(ranked.max(initial=0), judged.max(initial=0)) < 2**31
        r = ranked.astype(np.int32) if small else ranked
        jj = judged.astype(np.int32) if small else judged
        out8 = np.full((n, depth), UNJUDGED, dtype=dtype)
        for j in range(jj.shape[1]):
            np.copyto(out8, g8[:, j : j + 1], where=r == jj[:, j : j + 1])
        return out8
    # many judgments per row: binary search on row-offset keys
    span = int(max(ranked.max(initial=0), judged.max(initial=0))) + 2
    offset = np.arange(n, dtype=np.int64)[:, None] * span
    keys = (judged + 2 + offset).ravel()
    vals = grades.ravel()
    srt = np.lexsort((-vals, keys))  # equal keys (a doc judged twice): highest grade first
    keys, vals = keys[srt], vals[srt]
    look = (np.where(ranked >= 0, ranked, -1) + 2 + offset).ravel()
    pos = np.minimum(np.searchsorted(keys, look), keys.size - 1)
    found = keys[pos] == look
    return np.where(found, vals[pos], UNJUDGED).reshape(n, depth).astype(dtype)


def from_arrays(
    run_ids: npt.ArrayLike,
    run_scores: npt.ArrayLike,
    qrel_ids: npt.ArrayLike,
    qrel_grades: npt.ArrayLike,
    *,
    query_ids: Sequence[str] | None = None,
    depth: int | None = None,
    ranked: bool = False,
) -> Judged:
    """Build matrices from NumPy arrays, one row per query (the array-level entry point).

    Args:
        run_ids: (n, d) integer doc ids of each query's results; negative = padding.
        run_scores: (n, d) scores; ranked by score descending, then doc id descending.
        qrel_ids: (n, j) integer doc ids of each query's judged documents; negative = padding.
        qrel_grades: (n, j) their grades (at most MAX_GRADE; below 0 reads as unjudged).
        query_ids: names for the rows (default "0", "1", ...).
        depth: keep only the top `depth` results.
        ranked: rows are already in rank order (best first, padding last): skip the sort.
    """
    rid = np.asarray(run_ids, dtype=np.int64)
    rsc = np.asarray(run_scores, dtype=np.float64)
    qid_ = np.asarray(qrel_ids, dtype=np.int64)
    qgr = np.asarray(qrel_grades, dtype=np.int64)
    if rid.ndim != 2 or rid.shape != rsc.shape or qid_.ndim != 2 or qid_.shape != qgr.shape:
        raise ValueError("run_ids/run_scores and qrel_ids/qrel_grades must be matching 2-D arrays")
    if rid.shape[0] != qid_.shape[0]:
        raise ValueError("run and qrels arrays need the same number of rows (queries)")
    n = rid.shape[0]
    width = rid.shape[1] if depth is None else min(depth, rid.shape[1])
    qvalid = qid_ >= 0
    dtype = grade_dtype(int(qgr[qvalid].max(initial=0)))
    matrix: GradeArray = np.empty((n, width), dtype=dtype)
    n_returned = np.empty(n, dtype=np.int64)
    qg = np.where(qvalid & (qgr >= 0), qgr, UNJUDGED)
    judged_ids = np.where(qvalid, qid_, -2)
    # rows in chunks: bounded temporaries at a million queries, same speed at a thousand
    for lo in range(0, n, _CHUNK):
        hi = min(n, lo + _CHUNK)
        ids, valid = rid[lo:hi], rid[lo:hi] >= 0
        if not ranked:  # score desc, then id desc; padding last
            sort_scores = np.where(valid, rsc[lo:hi], -np.inf)
            order = np.lexsort((-np.where(valid, ids, -1), -sort_scores), axis=1)
            ids = np.take_along_axis(ids, order, axis=1)
            valid = np.take_along_axis(valid, order, axis=1)
        ids, valid = ids[:, :width], valid[:, :width]
        grades = _lookup(ids, judged_ids[lo:hi], qg[lo:hi], dtype)
        matrix[lo:hi] = np.where(valid, grades, PAD)
        n_returned[lo:hi] = np.count_nonzero(valid, axis=1)
    in_run = np.asarray((rid >= 0).any(axis=1), dtype=bool)
    ideal = np.maximum(-np.sort(-qg, axis=1), PAD).astype(dtype)  # unjudged -> padding
    names = list(query_ids) if query_ids is not None else list(map(str, range(n)))
    if len(names) != n:
        raise ValueError(f"{len(names)} query ids for {n} rows")
    return Judged(
        query_ids=names,
        grades=matrix if matrix.size else np.full((n, 1), PAD, dtype=dtype),
        ideal=ideal if ideal.size else np.full((n, 1), PAD, dtype=dtype),
        n_returned=n_returned,
        in_run=in_run,
        run_only=[],
    )
