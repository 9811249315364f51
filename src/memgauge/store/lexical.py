"""The reference memory's lexical channel scored in NumPy: FTS5's own BM25, without FTS5 scoring
every matched row.

Why: a query's words are OR-ed, so over LoCoMo's 5,882 turns a median query matches about 1,200
rows, and FTS5 calls `bm25()` on each of them, which costs ten times what bm25s takes for the
same search (BENCHMARKS.md, "Lexical search"). This module keeps an inverted index of the FTS5
table in NumPy arrays, read from FTS5 itself through an `fts5vocab` table (so its terms are the
tokenizer's: `porter unicode61 remove_diacritics 2`, stems and all) and scores a query's
candidates at once with the formula of FTS5's `bm25()` (fts5_aux.c), term by term in the
query's order and in the same floating-point operations, so the scores equal FTS5's and the
ranking, ties broken by id, is the one `ORDER BY bm25(...), id` gives:

    idf(t) = ln((N - n(t) + 0.5) / (n(t) + 0.5)), or 1e-6 where that is not positive
    score(d) = sum over the query's phrases t of
               idf(t) * tf(t, d) * (k1 + 1) / (tf(t, d) + k1 * (1 - b + b * |d| / avgdl))

with k1 = 1.2, b = 0.75, N the rows of the whole FTS table (every namespace), n(t) the rows
holding t, |d| the row's token count and avgdl the table's mean. A query's words become FTS5
terms through the same tokenizer (a scratch FTS5 table on a private in-memory connection, each
word's terms cached). A word that the tokenizer splits into several terms is a phrase to FTS5,
with positional matching this module does not do: such a query is scored by FTS5 as before
(`Lexical.search` returns None).

The index is rebuilt, on the next search, after this process writes the table (the caller
says so with `invalidate`) or another connection commits to the file (`PRAGMA data_version`).
"""

from __future__ import annotations

import math
import sqlite3
import threading
from collections.abc import Sequence

import numpy as np

from memgauge._types import FloatArray, IntArray

__all__ = ["TOKENIZER", "Lexical"]

#: the FTS5 tokenizer of `memories_fts` (and of the scratch table that tokenizes queries)
TOKENIZER = "porter unicode61 remove_diacritics 2"

_K1 = 1.2
_B = 0.75
_WORD_CACHE = 100_000


class _Tokenizer:
    """Words to FTS5 terms, through an FTS5 table with the same tokenizer on a private
    in-memory connection (so nothing is written to the memory's database)."""

    def __init__(self) -> None:
        self._conn = sqlite3.connect(":memory:", check_same_thread=False)
        self._conn.execute(f"CREATE VIRTUAL TABLE tok USING fts5(t, tokenize='{TOKENIZER}')")
        self._conn.execute("CREATE VIRTUAL TABLE tok_i USING fts5vocab(tok, instance)")
        self._cache: dict[str, tuple[str, ...]] = {}
        self._lock = threading.Lock()

    def terms(self, word: str) -> tuple[str, ...]:
        found = self._cache.get(word)
        if found is not None:
            return found
        with self._lock:
            with self._conn:
                self._conn.execute("INSERT INTO tok(rowid, t) VALUES (1, ?)", (word,))
                rows = self._conn.execute("SELECT term FROM tok_i ORDER BY offset").fetchall()
                self._conn.execute("DELETE FROM tok WHERE rowid = 1")
            out = tuple(str(r[0]) for r in rows)
            if len(self._cache) >= _WORD_CACHE:
                self._cache.clear()
            self._cache[word] = out
            return out


_TOKENIZER: _Tokenizer | None = None
_TOKENIZER_LOCK = threading.Lock()


def _tokenizer() -> _Tokenizer:
    global _TOKENIZER
    with _TOKENIZER_LOCK:
        if _TOKENIZER is None:
            _TOKENIZER = _Tokenizer()
        return _TOKENIZER


class _Snapshot:
    """The FTS table's postings as arrays: for term j, `docs[starts[j]:starts[j+1]]` are the
    row positions that hold it and `tfs[...]` how often."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        rows = conn.execute(
            "SELECT term, doc, count(*) FROM temp.memories_fts_instance GROUP BY term, doc"
        ).fetchall()
        rowids = conn.execute("SELECT rowid, namespace, id FROM memories ORDER BY rowid").fetchall()
        self.n_rows = len(rowids)
        self.ids = np.array([str(r[2]) for r in rowids], dtype=object)
        self.namespaces = np.array([str(r[1]) for r in rowids], dtype=object)
        position = {int(r[0]): i for i, r in enumerate(rowids)}
        terms: dict[str, int] = {}
        term_of = np.empty(len(rows), dtype=np.int64)
        doc_of = np.empty(len(rows), dtype=np.int64)
        tf_of = np.empty(len(rows), dtype=np.float64)
        for i, (term, doc, count) in enumerate(rows):
            term_of[i] = terms.setdefault(str(term), len(terms))
            doc_of[i] = position[int(doc)]
            tf_of[i] = float(count)
        self.terms = terms
        order = np.argsort(term_of, kind="stable")
        self.docs: IntArray = doc_of[order]
        self.tfs: FloatArray = tf_of[order]
        self.starts: IntArray = np.searchsorted(term_of[order], np.arange(len(terms) + 1))
        self.lengths: FloatArray = np.bincount(doc_of, weights=tf_of, minlength=self.n_rows).astype(
            np.float64
        )
        total = float(tf_of.sum())
        self.avgdl = total / float(self.n_rows) if self.n_rows else 0.0
        self._masks: dict[str, np.ndarray] = {}

    def in_namespace(self, namespace: str) -> np.ndarray:
        mask = self._masks.get(namespace)
        if mask is None:
            mask = self.namespaces == namespace
            self._masks[namespace] = mask
        return mask


class Lexical:
    """BM25 over the `memories_fts` table of one connection, scored in NumPy."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn
        with conn:
            conn.execute(
                "CREATE VIRTUAL TABLE IF NOT EXISTS temp.memories_fts_instance"
                " USING fts5vocab(main, memories_fts, instance)"
            )
        self._snapshot: _Snapshot | None = None
        self._version: int | None = None
        self._lock = threading.Lock()

    def invalidate(self) -> None:
        """This process wrote the table: rebuild before the next search."""
        with self._lock:
            self._snapshot = None

    def _current(self) -> _Snapshot:
        with self._lock:
            version = int(self._conn.execute("PRAGMA data_version").fetchone()[0])
            if self._snapshot is None or version != self._version:
                self._snapshot = _Snapshot(self._conn)
                self._version = version
            return self._snapshot

    def search(
        self, words: Sequence[str], namespace: str, limit: int
    ) -> list[tuple[str, float]] | None:
        """Top `limit` (id, score) of `namespace` for the OR of `words` (as `fts_query` chose
        them), best first, score = -bm25; None when a word is a phrase to FTS5 (see the module
        docstring), for FTS5 to score."""
        tok = _tokenizer()
        phrases = []
        for word in words:
            terms = tok.terms(word)
            if len(terms) != 1:
                return None
            phrases.append(terms[0])
        snap = self._current()
        if not phrases or snap.n_rows == 0 or limit <= 0:
            return []
        n = float(snap.n_rows)
        scores = np.zeros(snap.n_rows, dtype=np.float64)
        hit = np.zeros(snap.n_rows, dtype=bool)
        for term in phrases:
            j = snap.terms.get(term)
            if j is None:
                continue  # no row holds it: it adds nothing to any score
            lo, hi = int(snap.starts[j]), int(snap.starts[j + 1])
            docs, tf = snap.docs[lo:hi], snap.tfs[lo:hi]
            n_hit = float(hi - lo)
            idf = math.log((n - n_hit + 0.5) / (n_hit + 0.5))  # libm's log, as FTS5's
            if idf <= 0.0:
                idf = 1e-6
            # fts5_aux.c's operations in its order: (tf * (k1 + 1)) / (tf + k1 * (1 - b +
            # b * D / avgdl)), times idf, added term by term
            norm = _K1 * (1 - _B + _B * snap.lengths[docs] / snap.avgdl)
            scores[docs] += idf * ((tf * (_K1 + 1.0)) / (tf + norm))
            hit[docs] = True
        candidates = np.flatnonzero(hit & snap.in_namespace(namespace))
        if candidates.size == 0:
            return []
        values = scores[candidates]
        if candidates.size > limit:
            # every candidate scoring at least the limit-th best (ties at the cut go by id)
            kth = np.partition(values, candidates.size - limit)[candidates.size - limit]
            keep = values >= kth
            candidates, values = candidates[keep], values[keep]
        ids = snap.ids[candidates]
        order = sorted(range(candidates.size), key=lambda i: (-values[i], ids[i]))[:limit]
        return [(str(ids[i]), float(values[i])) for i in order]
