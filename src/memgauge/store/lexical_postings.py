"""The lexical channel's postings, one namespace each, kept up to date as rows are written.

Why: rebuilding every namespace's postings from FTS5 after each write made the first search
after a write cost a scan of the whole table (3 s at 100k memories). A namespace's postings are
a compacted part (arrays, term-major, as FTS5's `fts5vocab` gives them) and a pending part (the
postings of rows written since, by term), with dead positions (deleted or replaced rows)
skipped when scored; the pending part is merged in once it is a quarter of the compacted one,
so a write costs what its own rows hold, amortized. The table-wide figures that bm25() uses
(rows, tokens, rows holding each term) are kept beside them, across namespaces.

Every count is an integer, so the scores computed from these parts are bit for bit those of a
from-scratch build: each row's score is summed term by term in the query's order either way.

A search reads a term's live postings as arrays and weighs them by bm25()'s length
normalization; both are kept per term until a write changes them (`live` and `weights`), so
searching again costs one multiplication and one scatter per posting, not a merge of the
pending lists and five array passes. A write drops the cached arrays of the terms it adds to
(and all of them when it kills a row or compacts); the weights depend on the table's mean row
length too, so they are dropped whenever that changes, which a search after a write then
recomputes for its own terms only, as before.
"""

from __future__ import annotations

import math
import sqlite3
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from itertools import chain

import numpy as np

from memgauge._types import BoolArray, FloatArray, IntArray

__all__ = ["Batch", "DocTerms", "Postings", "Stats", "Weights", "build"]

#: one row's terms and how often each occurs, as FTS5's tokenizer gives them
DocTerms = dict[str, int]

#: a batch of rows' terms as `Postings.fill` lays them out: the terms in the order they first
#: occur, and for each (term, row holding it), by term and each term's rows in order, the
#: term's number, the row's (in the batch) and how often it holds the term
Batch = tuple[list[str], IntArray, IntArray, FloatArray]


@dataclass
class Stats:
    """What bm25() reads from the whole table: its rows, their tokens, the rows per term."""

    n_rows: int = 0
    tokens: int = 0
    df: dict[str, int] = field(default_factory=dict)

    def add(self, terms: DocTerms) -> None:
        self.n_rows += 1
        self.tokens += sum(terms.values())
        df = self.df
        for t in terms:
            df[t] = df.get(t, 0) + 1

    def add_all(self, rows: Sequence[DocTerms]) -> None:
        """`add` each of `rows` (counted in C: a row's terms are distinct, so the rows holding a
        term are its count among the rows' keys)."""
        self.n_rows += len(rows)
        self.tokens += sum(map(sum, map(dict.values, rows)))
        df = self.df
        for t, c in Counter(chain.from_iterable(rows)).items():
            df[t] = df.get(t, 0) + c

    def add_held(self, n_rows: int, tokens: int, terms: Sequence[str], held: IntArray) -> None:
        """`add_all` of `n_rows` rows of `tokens` tokens in all, `held[j]` of them holding
        `terms[j]`."""
        self.n_rows += n_rows
        self.tokens += tokens
        df = self.df
        for t, c in zip(terms, held.tolist(), strict=True):
            df[t] = df.get(t, 0) + c

    def remove(self, terms: DocTerms) -> None:
        self.n_rows -= 1
        self.tokens -= sum(terms.values())
        self.subtract(dict.fromkeys(terms, 1))

    def subtract(self, rows_per_term: dict[str, int]) -> None:
        df = self.df
        for t, c in rows_per_term.items():
            left = df[t] - c
            if left:
                df[t] = left
            else:
                del df[t]  # no row holds it: a query term absent from the table


class Weights:
    """One term's per-row weights (bm25()'s tf part for one mean row length), and, cached,
    their product with the last idf asked and the r-th largest of them for the ranks asked."""

    __slots__ = ("_held", "_idf", "_idf_value", "_n", "_peaks", "_scaled", "docs", "reused", "w")

    def __init__(self, docs: IntArray, w: FloatArray) -> None:
        self.docs = docs  # the live positions these weights are of
        self.w = w
        self._peaks: dict[int, float] = {}
        self._idf = math.nan
        self._n = self._held = -1
        self._idf_value = 1e-6
        self._scaled = w
        self.reused = False  # asked for by a search after the one that computed them

    def idf(self, n: int, held: int) -> float:
        """bm25()'s idf of the term for `n` rows, `held` of them holding it (the last one
        asked kept: a search's fixed cost is a few such steps per term)."""
        if n != self._n or held != self._held:
            n_all, n_hit = float(n), float(held)
            idf = math.log((n_all - n_hit + 0.5) / (n_hit + 0.5))  # libm's log, as FTS5's
            self._idf_value = 1e-6 if idf <= 0.0 else idf
            self._n, self._held = n, held
        return self._idf_value

    def scaled(self, idf: float) -> FloatArray:
        """`idf * w` (the term's contribution to each row's score; not to be written to)."""
        if idf != self._idf:
            self._scaled = idf * self.w
            self._idf = idf
        return self._scaled

    def peak(self, rank: int) -> float | None:
        """The `rank`-th largest weight (1: the largest; `rank` at most the rows), or None
        while these weights served one search only: a search right after a write would pay a
        partition of every term's weights for a floor it uses once."""
        got = self._peaks.get(rank)
        if got is None:
            if not self.reused:
                return None
            w = self.w
            got = self._peaks[rank] = float(
                w.max() if rank == 1 else np.partition(w, w.size - rank)[w.size - rank]
            )
        return got


def _empty_i() -> IntArray:
    return np.zeros(0, dtype=np.int64)


def _empty_f() -> FloatArray:
    return np.zeros(0, dtype=np.float64)


class Postings:
    """One namespace's rows: position -> id, token counts, and postings by term."""

    def __init__(self) -> None:
        self.ids: list[str] = []
        self.id_array = np.zeros(0, dtype=object)
        self.where: dict[str, int] = {}  # live id -> position
        self.alive: BoolArray = np.zeros(0, dtype=bool)
        self.lengths: FloatArray = _empty_f()
        self.n_dead = 0
        # compacted: for term j, docs[starts[j]:starts[j + 1]] hold it tfs[...] times
        self.terms: dict[str, int] = {}
        self.docs: IntArray = _empty_i()
        self.tfs: FloatArray = _empty_f()
        self.starts: IntArray = np.zeros(1, dtype=np.int64)
        # written since the last compaction, by term: (positions, counts)
        self.pending: dict[str, tuple[list[int], list[float]]] = {}
        self.n_pending = 0
        # per term, what `postings` returned, and its weights for the mean row length `avgdl`
        self.live: dict[str, tuple[IntArray, FloatArray] | None] = {}
        self.weights: dict[str, Weights] = {}
        self.avgdl = -1.0
        self._scores: FloatArray = _empty_f()
        self._marks: BoolArray = np.zeros(0, dtype=bool)
        self._slots: IntArray = _empty_i()

    def __len__(self) -> int:
        return len(self.ids)

    def postings(self, term: str) -> tuple[IntArray, FloatArray] | None:
        """The live positions that hold `term` and how often, or None when none does (kept
        until a write changes them: the arrays must not be written to)."""
        live = self.live
        if term in live:
            return live[term]
        found = live[term] = self._postings(term)
        return found

    def weighed(self, avgdl: float) -> dict[str, Weights]:
        """The per-term weights kept for the mean row length `avgdl` (emptied when it changed
        since they were computed)."""
        if avgdl != self.avgdl:
            self.weights.clear()
            self.avgdl = avgdl
        return self.weights

    def scratch(self) -> tuple[FloatArray, BoolArray, IntArray]:
        """Zeroed arrays of one score and one mark per position, and one slot per position
        (any values: read only where just written), kept between searches (allocating and
        faulting in fresh ones costs more than a search at 100k rows): their user must zero
        the scores and marks it wrote before letting go."""
        if self._scores.size < len(self.ids):
            self._scores = np.zeros(self.alive.size, dtype=np.float64)
            self._marks = np.zeros(self.alive.size, dtype=bool)
            self._slots = np.zeros(self.alive.size, dtype=np.int64)
        return self._scores, self._marks, self._slots

    def _forget(self, terms: Iterable[str] | None = None) -> None:
        """Drop the arrays kept for `terms` (all: None)."""
        if terms is None:
            self.live.clear()
            self.weights.clear()
            return
        live, weights = self.live, self.weights
        for t in terms:
            live.pop(t, None)
            weights.pop(t, None)

    def _postings(self, term: str) -> tuple[IntArray, FloatArray] | None:
        parts_d: list[IntArray] = []
        parts_t: list[FloatArray] = []
        j = self.terms.get(term)
        if j is not None:
            lo, hi = int(self.starts[j]), int(self.starts[j + 1])
            parts_d.append(self.docs[lo:hi])
            parts_t.append(self.tfs[lo:hi])
        more = self.pending.get(term)
        if more is not None:
            parts_d.append(np.array(more[0], dtype=np.int64))
            parts_t.append(np.array(more[1], dtype=np.float64))
        if not parts_d:
            return None
        docs = parts_d[0] if len(parts_d) == 1 else np.concatenate(parts_d)
        tfs = parts_t[0] if len(parts_t) == 1 else np.concatenate(parts_t)
        if self.n_dead:
            keep = self.alive[docs]
            docs, tfs = docs[keep], tfs[keep]
        return docs, tfs

    def empty(self) -> bool:
        """Whether no row was added since it was made or last compacted empty."""
        return not self.ids and not self.pending

    def add(self, rows: Sequence[tuple[str, DocTerms]]) -> None:
        """Append rows (their ids must not be live: `remove` them first) through the pending
        lists (merged in by `compact`). A batch's first write or a large one is laid out from
        its arrays instead (`fill`, `merge`: `Lexical.written`)."""
        start = len(self.ids)
        lengths = np.empty(len(rows), dtype=np.float64)
        pending = self.pending
        n = 0
        for i, (_, terms) in enumerate(rows):
            pos = start + i
            lengths[i] = float(sum(terms.values()))
            for t, c in terms.items():
                slot = pending.get(t)
                if slot is None:
                    slot = pending[t] = ([], [])
                slot[0].append(pos)
                slot[1].append(float(c))
            n += len(terms)
            if self.live:
                self._forget(terms)
        self.n_pending += n
        self._place([r[0] for r in rows], lengths)

    def _place(self, ids: Sequence[str], lengths: FloatArray) -> None:
        """Give rows `ids` the next positions, live, with their token counts."""
        start, end = len(self.ids), len(self.ids) + len(ids)
        self.ids.extend(ids)
        self.where.update(zip(ids, range(start, end), strict=True))
        if end > self.alive.size:
            self._grow(end)
        self.id_array[start:end] = ids
        self.alive[start:end] = True
        self.lengths[start:end] = lengths

    def merge(self, ids: Sequence[str], batch: Batch) -> None:
        """`add` then `compact` of rows `ids` (their terms: `batch`), with nothing pending: a
        write whose postings would be merged in at once."""
        if self.empty():  # as `add` lays out a first write
            self.fill(ids, batch)
            return
        terms, term_of, doc_of, tf_of = batch
        number = np.array([self.terms.setdefault(t, len(self.terms)) for t in terms], np.int64)
        start = len(self.ids)
        lengths = np.bincount(doc_of, weights=tf_of, minlength=len(ids)).astype(np.float64)
        self._place(ids, lengths)
        self._merge(number[term_of], doc_of + start, tf_of)

    def fill(self, ids: Sequence[str], batch: Batch) -> None:
        """Lay out rows `ids` (their terms: `batch`) in a namespace with none (`empty`)."""
        terms, term_of, doc_of, tf_of = batch
        self._forget()
        self.terms = {t: j for j, t in enumerate(terms)}
        self.docs, self.tfs = doc_of, tf_of
        counts = np.bincount(term_of, minlength=len(terms))
        self.starts = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        self.ids = list(ids)
        self.where = {rid: i for i, rid in enumerate(self.ids)}
        self.n_dead = 0
        self.id_array = np.empty(len(ids), dtype=object)
        self.id_array[:] = self.ids
        self.alive = np.ones(len(ids), dtype=bool)
        self.lengths = np.bincount(doc_of, weights=tf_of, minlength=len(ids)).astype(np.float64)

    def _grow(self, size: int) -> None:
        """Room for `size` positions and more (doubling: a one-row write copies nothing, most
        times); positions past `len(self)` are dead and empty."""
        room = max(size, 2 * self.alive.size, 16)
        ids = np.empty(room, dtype=object)
        ids[: len(self.id_array)] = self.id_array
        alive = np.zeros(room, dtype=bool)
        alive[: self.alive.size] = self.alive
        lengths = np.zeros(room, dtype=np.float64)
        lengths[: self.lengths.size] = self.lengths
        self.id_array, self.alive, self.lengths = ids, alive, lengths

    def remove(self, ids: Iterable[str]) -> list[str]:
        """Mark the live rows of `ids` dead; the ids that were live."""
        gone = []
        for rid in ids:
            pos = self.where.pop(rid, None)
            if pos is not None:
                self.alive[pos] = False
                self.n_dead += 1
                gone.append(rid)
        if gone:
            self._forget()
        return gone

    def live_df(self) -> dict[str, int]:
        """Live rows per term (what this namespace adds to the table's counts)."""
        out: dict[str, int] = {}
        if self.docs.size:
            term_of = np.repeat(np.arange(len(self.terms), dtype=np.int64), np.diff(self.starts))
            held = np.bincount(term_of[self.alive[self.docs]], minlength=len(self.terms))
            for term, j in self.terms.items():
                if held[j]:
                    out[term] = int(held[j])
        for term, (docs, _) in self.pending.items():
            c = int(self.alive[np.array(docs, dtype=np.int64)].sum())
            if c:
                out[term] = out.get(term, 0) + c
        return out

    def live_tokens(self) -> int:
        return int(self.lengths[self.alive].sum())

    def settle(self) -> None:
        """Compact when the pending part or the dead rows are a quarter of the whole: a write
        then costs its own rows' postings, amortized."""
        if self.n_pending * 4 > self.docs.size or self.n_dead * 4 > len(self.ids):
            self.compact()

    def compact(self) -> None:
        """Merge the pending postings in (in one pass: both parts are sorted by term) and drop
        dead rows (positions renumbered). A term no live row holds keeps an empty run."""
        index = self.terms
        more_t: list[int] = []
        more_d: list[int] = []
        more_f: list[float] = []
        for term, (docs, tfs) in self.pending.items():
            j = index.setdefault(term, len(index))
            more_t.extend([j] * len(docs))
            more_d.extend(docs)
            more_f.extend(tfs)
        self._merge(
            np.array(more_t, dtype=np.int64),
            np.array(more_d, dtype=np.int64),
            np.array(more_f, dtype=np.float64),
        )

    def _merge(self, new_t: IntArray, new_d: IntArray, new_f: FloatArray) -> None:
        """`compact` with these postings (term numbers, positions, counts) as the pending ones."""
        self._forget()
        n_base = self.starts.size - 1  # the terms numbered before these postings
        base_t = np.repeat(np.arange(n_base, dtype=np.int64), np.diff(self.starts))
        order = np.argsort(new_t, kind="stable")
        at = np.searchsorted(base_t, new_t[order], side="right")
        t_all = np.insert(base_t, at, new_t[order])
        d_all = np.insert(self.docs, at, new_d[order])
        f_all = np.insert(self.tfs, at, new_f[order])
        self.pending = {}
        self.n_pending = 0
        if self.n_dead:
            keep = self.alive[d_all]
            t_all, f_all = t_all[keep], f_all[keep]
            d_all = (np.cumsum(self.alive, dtype=np.int64) - 1)[d_all[keep]]
            live = np.flatnonzero(self.alive)
            self.ids = [self.ids[i] for i in live.tolist()]
            self.id_array = self.id_array[live]
            self.where = {rid: i for i, rid in enumerate(self.ids)}
            self.lengths = self.lengths[live]
            self.alive = np.ones(len(self.ids), dtype=bool)
            self.n_dead = 0
        self.docs, self.tfs = d_all, f_all
        counts = np.bincount(t_all, minlength=len(self.terms))
        self.starts = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)

    def _set_arrays(
        self, names: Sequence[str], term_of: IntArray, doc_of: IntArray, tf_of: FloatArray
    ) -> None:
        used, local = np.unique(term_of, return_inverse=True)
        order = np.argsort(local, kind="stable")
        self.terms = {names[int(j)]: k for k, j in enumerate(used.tolist())}
        self.docs = doc_of[order]
        self.tfs = tf_of[order]
        self.starts = np.searchsorted(local[order], np.arange(len(used) + 1)).astype(np.int64)


def build(conn: sqlite3.Connection, instances: str) -> tuple[Stats, dict[str, Postings]]:
    """Every namespace's postings and the table's figures, read from FTS5 (through `instances`,
    the fts5vocab instance table of an FTS5 table holding every row): what a search needs when
    this process does not know the table (first use, or another connection wrote it)."""
    rows = conn.execute(
        f"SELECT term, doc, count(*) FROM {instances} GROUP BY term, doc ORDER BY term, doc"
    ).fetchall()
    meta = conn.execute("SELECT rowid, namespace, id FROM memories ORDER BY rowid").fetchall()
    rowids = np.fromiter((r[0] for r in meta), dtype=np.int64, count=len(meta))
    names = np.empty(len(rows), dtype=object)
    names[:] = [r[0] for r in rows]
    doc_of = np.searchsorted(rowids, np.fromiter((r[1] for r in rows), np.int64, len(rows)))
    tf_of = np.fromiter((r[2] for r in rows), dtype=np.float64, count=len(rows))
    first = np.ones(len(rows), dtype=bool)  # sorted by term: a new term starts a run
    first[1:] = names[1:] != names[:-1]
    term_of = np.cumsum(first, dtype=np.int64) - 1
    vocab: list[str] = names[first].tolist()
    stats = Stats(
        n_rows=len(meta),
        tokens=int(tf_of.sum()),
        df=dict(zip(vocab, np.bincount(term_of, minlength=len(vocab)).tolist(), strict=True)),
    )
    lengths = np.bincount(doc_of, weights=tf_of, minlength=len(meta)).astype(np.float64)
    spaces: dict[str, Postings] = {}
    code_of: dict[str, int] = {}
    ns_code = np.fromiter(
        (code_of.setdefault(str(r[1]), len(code_of)) for r in meta), np.int64, len(meta)
    )
    # each row's position in its namespace, in rowid (insertion) order
    by_ns = np.argsort(ns_code, kind="stable")
    counts = np.bincount(ns_code, minlength=len(code_of))
    bounds = np.concatenate([[0], np.cumsum(counts)])
    position = np.empty(len(meta), dtype=np.int64)
    position[by_ns] = np.arange(len(meta)) - np.repeat(bounds[:-1], counts)
    post_ns = ns_code[doc_of]
    post_order = np.argsort(post_ns, kind="stable")  # stays sorted by term within a namespace
    post_bounds = np.searchsorted(post_ns[post_order], np.arange(len(code_of) + 1))
    for ns, code in code_of.items():
        rows_of = by_ns[bounds[code] : bounds[code + 1]]
        space = Postings()
        space.ids = [str(meta[i][2]) for i in rows_of.tolist()]
        space.id_array = np.empty(len(space.ids), dtype=object)
        space.id_array[:] = space.ids
        space.where = {rid: i for i, rid in enumerate(space.ids)}
        space.alive = np.ones(len(space.ids), dtype=bool)
        space.lengths = lengths[rows_of]
        sel = post_order[post_bounds[code] : post_bounds[code + 1]]
        space._set_arrays(vocab, term_of[sel], position[doc_of[sel]], tf_of[sel])
        spaces[ns] = space
    return stats, spaces
