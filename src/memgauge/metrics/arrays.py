"""IR measures straight from NumPy arrays: one row per query, in chunks of rows, on every core.

A measure sees a ranking only through where the judged documents are, so nothing sorts a row.
A returned document's grade is found through a small hash table of its row's judged ids (one
gather for the whole chunk, then a comparison for the few candidates); when rows are not ranked
yet, only the judged documents are ranked, by counting the entries ahead of each one (score
descending, then id descending, then column: the order of a stable sort). NumPy releases the
GIL in its loops, so chunks run in a thread pool, one thread per available core.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, overload

import numpy as np
import numpy.typing as npt

from memgauge._types import BoolArray, FloatArray, IntArray
from memgauge.metrics.ir import (
    Evaluation,
    MetricConfig,
    check_grades,
    measure_depth,
    parse_measures,
    score_hits,
    summarize,
    thresholds,
)
from memgauge.metrics.measures import Measure
from memgauge.metrics.ranking import PAD, POOLED, UNJUDGED, Hits, Judged, grade_dtype

__all__ = ["RowNames", "evaluate_arrays", "from_arrays"]

_CELLS = (
    1 << 19
)  # run cells per chunk: each thread takes a chunk; fewer, larger chunks pay less overhead
_TABLE_BYTES = 1 << 20  # per-row hash tables of judged ids at a time in _matches
_HASH_JUDGED = 1024  # more judged columns than this: _matches_sorted
_GATHER_CELLS = 1 << 22  # run cells gathered at once to rank unranked rows (32 MB of scores)
_MAX_WORKERS = 8


class RowNames(Sequence[str]):
    """The default query ids of n rows, "0" to str(n - 1), made when read: a million rows do
    not cost a million strings unless someone asks for them."""

    def __init__(self, n: int) -> None:
        self._n = n

    def __len__(self) -> int:
        return self._n

    @overload
    def __getitem__(self, i: int) -> str: ...
    @overload
    def __getitem__(self, i: slice) -> list[str]: ...
    def __getitem__(self, i: int | slice) -> str | list[str]:
        if isinstance(i, slice):
            return list(map(str, range(self._n)[i]))
        return str(range(self._n)[i])

    def __eq__(self, other: object) -> bool:
        if isinstance(other, str) or not isinstance(other, Sequence):
            return NotImplemented
        return list(self) == list(other)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"RowNames({self._n})"


@dataclass(frozen=True)
class _Batch:
    """Validated arrays (int64 ids, float64 scores) and what every chunk shares."""

    ids: IntArray
    scores: FloatArray
    judged: IntArray  # judged ids; negative = padding
    grades: IntArray  # their grades (read where the judged id is not padding)
    dtype: np.dtype[np.signedinteger[Any]]
    top: int  # the highest grade
    width: int  # ranks returned (the depth asked for)
    keep: int  # ranks scored: no deeper than the deepest measure looks
    ranked: bool
    names: Sequence[str]

    @property
    def n(self) -> int:
        return int(self.ids.shape[0])

    def chunks(self) -> list[tuple[int, int]]:
        rows = max(64, _CELLS // max(self.ids.shape[1], 1))
        return [(lo, min(self.n, lo + rows)) for lo in range(0, self.n, rows)]

    def hits(self, lo: int, hi: int) -> Hits:
        """The hits of rows lo..hi (rows numbered from 0 within the chunk)."""
        ids, judged = self.ids[lo:hi], self.judged[lo:hi]
        grades = self.grades[lo:hi]
        # a judgment below 0 is POOLED (trec_eval: in the pool, not judged): a hit that is
        # never relevant, kept for bpref, infAP and Judged@k
        grades = _once(
            judged,
            np.where(judged >= 0, np.where(grades >= 0, grades, POOLED), UNJUDGED),
        )
        c, d = ids.shape
        look = ids[:, : self.keep] if self.ranked else ids
        row, col, jg = _matches(look, judged, grades)
        full = bool(ids.min(initial=0) >= 0)  # no padding: the common case, no mask needed
        valid = np.ones((0, 0), dtype=bool) if full else ids >= 0
        n_valid = np.full(c, d) if full else np.count_nonzero(valid, axis=1)
        if self.ranked:
            pos = col
            n_returned = (
                np.full(c, self.width) if full else np.count_nonzero(valid[:, : self.width], axis=1)
            )
        else:
            pos = _rank(ids, self.scores[lo:hi], None if full else valid, row, col)
            n_returned = np.minimum(n_valid, self.width)
        keep = pos < self.keep
        row, pos, jg = row[keep], pos[keep], jg[keep]
        if not self.ranked:  # ranks, unlike columns, are not in the order _matches found them
            order = np.argsort(row * d + pos, kind="stable")
            row, pos, jg = row[order], pos[order], jg[order]
        ideal = np.maximum(np.sort(grades.astype(self.dtype), axis=1)[:, ::-1], PAD)
        return Hits(
            query_ids=[],  # rows are numbered within the chunk; names stay in the batch
            row=row,
            pos=pos,
            grade=jg.astype(self.dtype),
            ideal=ideal if ideal.size else np.full((c, 1), PAD, dtype=self.dtype),
            n_returned=np.asarray(n_returned, dtype=np.int64),
            in_run=n_valid > 0,
            run_only=[],
            width=max(self.keep, 1),
        )


def _once(judged: IntArray, grades: IntArray) -> IntArray:
    """`grades` with each document judged more than once in a row kept once, at its highest
    grade (the other copies UNJUDGED): R, the ideal ranking and the hits then count it once,
    as the dict API (one grade per document) and trec_eval do. Only rows holding a repeated
    judged id are rearranged; one sort of the judged ids per row finds them."""
    if judged.shape[1] < 2:
        return grades
    s = np.sort(judged, axis=1)
    rows = np.flatnonzero(((s[:, 1:] == s[:, :-1]) & (s[:, 1:] >= 0)).any(axis=1))
    if not rows.size:
        return grades
    ids, g = judged[rows], grades[rows]
    order = np.lexsort((-g, ids), axis=1)  # each row by id, its highest grade first
    ids, g = np.take_along_axis(ids, order, axis=1), np.take_along_axis(g, order, axis=1)
    g[:, 1:][ids[:, 1:] == ids[:, :-1]] = UNJUDGED
    out = grades.copy()
    out[rows[:, None], order] = g
    return out


@functools.lru_cache(maxsize=8)
def _offsets(rows: int, width: int, buckets: int) -> IntArray:
    """Each cell's row offset into the stacked per-row hash tables (read-only, shared)."""
    out = np.repeat(np.arange(rows, dtype=np.int64) * buckets, width)
    out.flags.writeable = False
    return out


_GOLDEN = np.uint64(0x9E3779B97F4A7C15)  # Fibonacci hashing: structured ids spread over buckets


def _bucket(ids: IntArray, bits: int) -> IntArray:
    """The top `bits` bits of id x 2^64/phi: ids with structure in their low bits (multiples
    of 1,000,000, ids << 16) still spread evenly over the buckets."""
    h = ids.view(np.uint64) * _GOLDEN  # wraps mod 2^64, as intended
    h >>= np.uint64(64 - bits)
    return h.view(np.int64)


def _matches(look: IntArray, judged: IntArray, grades: IntArray) -> tuple[IntArray, ...]:
    """(row, column, grade) of every returned document that is judged (grade >= 0 or POOLED), in
    (row, column) order (a document judged twice: once per usable judgment; `_once` leaves
    one).

    Each row gets a small hash table of its judged ids (value: the judged column + 1, or FULL
    where two of the row's judged ids share a bucket). Every returned id is looked up in its
    row's table in one gather; the few candidates (the matches and about 1 in 16 of the rest)
    are confirmed against the judged id the bucket names, or against all the row's judged ids
    in a shared bucket. Rows with more than _HASH_JUDGED judgments are matched by sorting.
    """
    c, w = look.shape
    j = judged.shape[1]
    empty = np.zeros(0, dtype=np.int64)
    if not c or not w or not j:
        return empty, empty, empty
    if j > _HASH_JUDGED:
        return _matches_sorted(look, judged, grades)
    bits = max(6, (16 * j - 1).bit_length())
    buckets = 1 << bits
    vtype = np.uint8 if j < 255 else np.uint16
    full = np.iinfo(vtype).max
    step = max(1, _TABLE_BYTES // buckets)  # rows per table
    offsets = _offsets(min(step, c), w, buckets)
    found = []
    for lo in range(0, c, step):
        hi = min(c, lo + step)
        ids, jids, jg = look[lo:hi], judged[lo:hi], grades[lo:hi]
        flat_ids, flat_j = np.ascontiguousarray(ids).ravel(), np.ascontiguousarray(jids).ravel()
        usable = np.flatnonzero((flat_j >= 0) & (jg.ravel() != UNJUDGED))
        u_row, u_col = np.divmod(usable, j)
        u_slot = _bucket(flat_j[usable], bits) + u_row * buckets
        table = np.zeros((hi - lo) * buckets, dtype=vtype)
        table[u_slot] = u_col + 1
        table[u_slot[table[u_slot] != u_col + 1]] = full  # two judged ids in one bucket
        slot = _bucket(flat_ids, bits)
        slot += offsets[: slot.size]
        value = table[slot]
        cand = np.flatnonzero(value != 0)  # nonzero of a bool array is the fast one
        row, col = np.divmod(cand, w)
        named = value[cand].astype(np.int64)
        one = named != full
        # a bucket naming one judged column: compare with that judged id
        jcol = np.where(one, named - 1, 0)
        ok = one & (flat_j[row * j + jcol] == flat_ids[cand])
        rows, cols, which = [row[ok]], [col[ok]], [jcol[ok]]
        shared = np.flatnonzero(~one)  # shared buckets: every judged id of the row
        for s in range(0, shared.size, max(1, _GATHER_CELLS // j)):
            part = shared[s : s + max(1, _GATHER_CELLS // j)]
            same = jids[row[part]] == flat_ids[cand[part]][:, None]
            pair, jj = np.divmod(np.flatnonzero(same), j)
            rows.append(row[part][pair])
            cols.append(col[part][pair])
            which.append(jj)
        r, k, jj = (np.concatenate(x) for x in (rows, cols, which))
        g = jg[r, jj]
        keep = g != UNJUDGED
        found.append((r[keep] + lo, k[keep], g[keep]))
    out = tuple(np.concatenate([f[i] for f in found]) for i in range(3))
    order = np.argsort(out[0] * w + out[1], kind="stable")  # (row, column), as in the run
    return tuple(x[order] for x in out)


def _matches_sorted(look: IntArray, judged: IntArray, grades: IntArray) -> tuple[IntArray, ...]:
    """`_matches` for rows with very many judgments: ids become their rank among the chunk's
    judged ids, and (row, rank) keys are looked up in the sorted judged keys. A document
    judged twice in a row matches its highest grade."""
    w = look.shape[1]
    usable = (judged >= 0) & (grades != UNJUDGED)
    jrow = np.nonzero(usable)[0]
    jid, jg = judged[usable], grades[usable]
    uniq = np.unique(jid)
    span = np.int64(uniq.size + 1)
    jkey = jrow * span + np.searchsorted(uniq, jid)
    order = np.lexsort((-jg, jkey))  # equal keys: the highest grade first
    jkey, jg = jkey[order], jg[order]
    flat = np.ascontiguousarray(look).ravel()
    at = np.minimum(np.searchsorted(uniq, flat), uniq.size - 1)
    cand = np.flatnonzero(uniq[at] == flat) if uniq.size else np.zeros(0, dtype=np.int64)
    row, col = np.divmod(cand, w)
    key = row * span + at[cand]
    hit = np.minimum(np.searchsorted(jkey, key), max(jkey.size - 1, 0))
    ok = jkey[hit] == key if jkey.size else np.zeros(0, dtype=bool)
    return row[ok], col[ok], jg[hit[ok]]


def _rank(
    ids: IntArray, scores: FloatArray, valid: BoolArray | None, row: IntArray, col: IntArray
) -> IntArray:
    """0-based rank of the entries at (row, col) in their rows: the entries with a higher
    score, or an equal score and a larger id, or both equal and an earlier column (`valid`:
    which entries are not padding; None: all)."""
    if not np.isfinite(scores if valid is None else scores[valid]).all():
        raise ValueError("run scores must be finite numbers")
    s = scores if valid is None else np.where(valid, scores, -np.inf)  # padding ranks last
    rank = np.empty(row.size, dtype=np.int64)
    step = max(1, _GATHER_CELLS // max(s.shape[1], 1))  # entries whose rows are gathered at once
    for lo in range(0, row.size, step):
        r, c = row[lo : lo + step], col[lo : lo + step]
        x = s[r, c][:, None]
        mine = s[r]  # each entry's row
        above = np.count_nonzero(mine > x, axis=1)
        tp, tc = np.divmod(np.flatnonzero(mine == x), s.shape[1])  # ties, the entry among them
        tied, own = ids[r[tp], tc], ids[r[tp], c[tp]]
        ahead = (tied > own) | ((tied == own) & (tc < c[tp]))
        rank[lo : lo + step] = above + np.bincount(tp[ahead], minlength=r.size)
    return rank


def _batch(
    run_ids: npt.ArrayLike,
    run_scores: npt.ArrayLike | None,
    qrel_ids: npt.ArrayLike,
    qrel_grades: npt.ArrayLike,
    query_ids: Sequence[str] | None,
    depth: int | None,
    ranked: bool,
    keep: int | None = None,
) -> _Batch:
    rid = np.asarray(run_ids, dtype=np.int64)
    if run_scores is None:
        if not ranked:
            raise ValueError("run_scores is needed to rank the rows (or pass ranked=True)")
        rsc = np.broadcast_to(np.float64(0.0), rid.shape)  # never read: costs no memory
    else:
        rsc = np.asarray(run_scores, dtype=np.float64)
    qid = np.asarray(qrel_ids, dtype=np.int64)
    qgr = np.asarray(qrel_grades, dtype=np.int64)
    if rid.ndim != 2 or rid.shape != rsc.shape or qid.ndim != 2 or qid.shape != qgr.shape:
        raise ValueError("run_ids/run_scores and qrel_ids/qrel_grades must be matching 2-D arrays")
    if rid.shape[0] != qid.shape[0]:
        raise ValueError("run and qrels arrays need the same number of rows (queries)")
    n = rid.shape[0]
    names = list(query_ids) if query_ids is not None else RowNames(n)
    if len(names) != n:
        raise ValueError(f"{len(names)} query ids for {n} rows")
    width = rid.shape[1] if depth is None else max(min(depth, rid.shape[1]), 0)
    qvalid = qid >= 0
    top = int(np.max(qgr, where=qvalid, initial=0))
    return _Batch(
        ids=np.ascontiguousarray(rid),
        scores=rsc,
        judged=np.ascontiguousarray(qid),
        grades=qgr,
        dtype=grade_dtype(top),
        top=top,
        width=width,
        keep=width if keep is None else min(width, keep),
        ranked=ranked,
        names=names,
    )


def _workers(workers: int | None, chunks: int) -> int:
    if workers is None:
        try:
            workers = len(os.sched_getaffinity(0))
        except AttributeError:  # not Linux
            workers = os.cpu_count() or 1
    return max(1, min(workers, chunks, _MAX_WORKERS))


def from_arrays(
    run_ids: npt.ArrayLike,
    run_scores: npt.ArrayLike | None,
    qrel_ids: npt.ArrayLike,
    qrel_grades: npt.ArrayLike,
    *,
    query_ids: Sequence[str] | None = None,
    depth: int | None = None,
    ranked: bool = False,
) -> Judged:
    """Build matrices from NumPy arrays, one row per query.

    Args:
        run_ids: (n, d) integer doc ids of each query's results; negative = padding.
        run_scores: (n, d) scores; ranked by score descending, then doc id descending, then
            column (a doc id repeated in a row counts at each of its ranks). None with
            `ranked`.
        qrel_ids: (n, j) integer doc ids of each query's judged documents; negative = padding.
        qrel_grades: (n, j) their grades (at most MAX_GRADE; below 0 reads as unjudged; a doc
            judged twice in a row counts once, at its highest grade, in every measure: in R
            and the ideal ranking as in its hits).
        query_ids: names for the rows (default "0", "1", ...).
        depth: keep only the top `depth` results.
        ranked: rows are already in rank order (best first, padding last): scores are not read
            (and may be None).
    """
    b = _batch(run_ids, run_scores, qrel_ids, qrel_grades, query_ids, depth, ranked)
    parts = [(lo, b.hits(lo, hi)) for lo, hi in b.chunks()] or [(0, b.hits(0, 0))]
    cat = np.concatenate
    return Hits(
        query_ids=b.names,
        row=cat([h.row + lo for lo, h in parts]),
        pos=cat([h.pos for _, h in parts]),
        grade=cat([h.grade for _, h in parts]),
        ideal=cat([h.ideal for _, h in parts]),
        n_returned=cat([h.n_returned for _, h in parts]),
        in_run=cat([h.in_run for _, h in parts]),
        run_only=[],
        width=max(b.width, 1),
    ).to_judged()


def evaluate_arrays(
    run_ids: npt.ArrayLike,
    run_scores: npt.ArrayLike | None,
    qrel_ids: npt.ArrayLike,
    qrel_grades: npt.ArrayLike,
    measures: Iterable[Measure | str],
    config: MetricConfig | None = None,
    *,
    query_ids: Sequence[str] | None = None,
    depth: int | None = None,
    ranked: bool = False,
    workers: int | None = None,
) -> Evaluation:
    """Score a batch given as NumPy arrays, one row per query (arguments as `from_arrays`).

    The fastest entry point: rows are ranked (when `ranked` is False) and scored a chunk at a
    time, only as deep as the deepest measure looks, on `workers` threads (default: one per
    available core, at most 8). Values equal `evaluate_judged(from_arrays(...))`'s exactly.
    """
    cfg = config or MetricConfig()
    parsed = parse_measures(measures)
    b = _batch(
        run_ids, run_scores, qrel_ids, qrel_grades, query_ids, depth, ranked, measure_depth(parsed)
    )
    check_grades(b.top, parsed, cfg)
    n = b.n
    values = {str(m): np.empty(n) for m in parsed}
    n_rel = {t: np.empty(n, dtype=np.int64) for t in thresholds(parsed, cfg)}
    n_returned = np.empty(n, dtype=np.int64)
    in_run = np.empty(n, dtype=bool)
    ideal_top = np.empty(n, dtype=np.int64)

    def score(bounds: tuple[int, int]) -> None:
        lo, hi = bounds
        hits = b.hits(lo, hi)
        chunk, rel = score_hits(parsed, hits, cfg)
        for name, v in chunk.items():
            values[name][lo:hi] = v
        for t, r in rel.items():
            n_rel[t][lo:hi] = r
        n_returned[lo:hi] = hits.n_returned
        in_run[lo:hi] = hits.in_run
        ideal_top[lo:hi] = hits.ideal[:, 0]

    chunks = b.chunks()
    threads = _workers(workers, len(chunks))
    if threads == 1:
        for bounds in chunks:
            score(bounds)
    else:
        with ThreadPoolExecutor(threads, thread_name_prefix="memgauge-metrics") as pool:
            list(pool.map(score, chunks))
    return summarize(
        values,
        cfg,
        query_ids=b.names,
        n_rel=n_rel,
        in_run=in_run,
        n_returned=n_returned,
        ideal_top=ideal_top,
        run_only=[],
    )
