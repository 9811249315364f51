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

The index is read from FTS5 on the first search, and again only when the table was written in
a way this process did not apply: by another connection (`PRAGMA data_version`), by another
user of this connection (`changes`), or by a write that says so (`invalidate`).
`MemoryIndex`'s own writes are applied as they commit (`written`): their rows are tokenized
once more by the same tokenizer and their postings put in their namespace's part
(`memgauge.store.lexical_postings`), so a search right after a write costs what a search
costs.

FTS5 is read (there and by the phrase fallback) only through `fts`, which first indexes the rows
that the triggers queued for it (`memgauge.store.memory_index`): a run whose searches are all
scored here never pays FTS5's indexing, and one that reads FTS5 pays it once. A read-only
connection cannot index them: it reads a temp copy of the table built from `memories`.

The scoring itself is `memgauge.store.lexical_scoring`.
"""

from __future__ import annotations

import sqlite3
import threading
from collections import Counter
from collections.abc import Sequence
from itertools import chain
from typing import Any

import numpy as np

from memgauge.store.lexical_postings import Batch, DocTerms, Postings, Stats, build
from memgauge.store.lexical_scoring import top

__all__ = ["TOKENIZER", "Lexical", "changes"]

#: by connection (its id), the changes its indexing of the queue made (`Lexical.fts`)
_INDEXED: dict[int, int] = {}

#: the FTS5 tokenizer of `memories_fts` (and of the scratch table that tokenizes queries)
TOKENIZER = "porter unicode61 remove_diacritics 2"

_WORD_CACHE = 100_000


class _Tokenizer:
    """Words to FTS5 terms, through an FTS5 table with the same tokenizer on a private
    in-memory connection (so nothing is written to the memory's database)."""

    def __init__(self) -> None:
        self._conn = sqlite3.connect(":memory:", check_same_thread=False)
        # contentless, so that emptying it (`delete-all`) does not tokenize its rows again
        self._conn.execute(
            f"CREATE VIRTUAL TABLE tok USING fts5(t, content='', tokenize='{TOKENIZER}')"
        )
        self._conn.execute("CREATE VIRTUAL TABLE tok_i USING fts5vocab(tok, instance)")
        self._cache: dict[str, tuple[str, ...]] = {}
        self._lock = threading.Lock()

    def _instances(self, texts: Sequence[str], select: str) -> list[tuple[Any, ...]]:
        """`select` over the instances of `texts`, each text a row (rowid: its index)."""
        with self._lock, self._conn:
            self._conn.executemany("INSERT INTO tok(rowid, t) VALUES (?, ?)", enumerate(texts))
            rows = self._conn.execute(select).fetchall()
            self._conn.execute("INSERT INTO tok(tok) VALUES ('delete-all')")
        return rows

    def documents(self, texts: Sequence[str]) -> list[DocTerms]:
        """Each text's terms and how often each occurs, as `memories_fts` indexes it.

        Whitespace is a separator to unicode61 (none of it is a letter, a number or private
        use), so a text's tokens are those of its whitespace-separated chunks in turn: each
        distinct chunk is tokenized once (cached, as a query's words are), which costs a
        fraction of reading a text's instances back from FTS5."""
        split = [text.split() for text in texts]
        terms_of = dict(zip(*self._chunks(split), strict=True))
        of = terms_of.__getitem__
        # counted in C, in the order terms first occur (as a dict filled term by term)
        return [dict(Counter(chain.from_iterable(map(of, chunks)))) for chunks in split]

    def postings(self, texts: Sequence[str]) -> Batch:
        """`documents` as a namespace's first write lays them out (`Postings.fill`): the terms
        in the order they first occur, and for each (term, text holding it), term by term and
        each term's texts in order, the term's number, the text's and the count. Counted in
        NumPy over the whole batch: a `Counter` per text cost half of an ingest's postings."""
        split = [text.split() for text in texts]
        distinct, terms = self._chunks(split)
        vocab: dict[str, int] = {}  # numbered as they first occur: chunks are, in order
        numbers = np.array([vocab.setdefault(t, len(vocab)) for ts in terms for t in ts], np.int64)
        n_of = np.fromiter(map(len, terms), np.int64, len(terms))  # each chunk's terms
        sizes = list(map(len, split))
        of = dict(zip(distinct, range(len(distinct)), strict=True)).__getitem__
        stream = np.fromiter(map(of, chain.from_iterable(split)), np.int64, sum(sizes))
        reps = n_of[stream]
        # each occurrence's terms: its chunk's run of `numbers`, in order
        skip = np.repeat(np.cumsum(n_of)[stream] - np.cumsum(reps), reps)
        term = numbers[skip + np.arange(skip.size)]
        doc = np.repeat(np.repeat(np.arange(len(texts), dtype=np.int64), sizes), reps)
        pairs, tf = np.unique(term * max(len(texts), 1) + doc, return_counts=True)
        term_of, doc_of = np.divmod(pairs, max(len(texts), 1))
        return list(vocab), term_of, doc_of, tf.astype(np.float64)

    def _chunks(self, split: Sequence[Sequence[str]]) -> tuple[list[str], list[tuple[str, ...]]]:
        distinct = list(dict.fromkeys(chain.from_iterable(split)))  # in C, no generator
        return distinct, self.words(distinct)

    def words(self, words: Sequence[str]) -> list[tuple[str, ...]]:
        """Each word's terms, in order (cached: one scratch write for a query's new words)."""
        cache = self._cache
        try:  # a query's words are known after its first search
            return [cache[w] for w in words]
        except KeyError:
            pass
        known: dict[str, tuple[str, ...]] = {}
        new: list[str] = []
        for w in dict.fromkeys(words):
            hit = cache.get(w)
            if hit is None:
                new.append(w)
            else:
                known[w] = hit
        if new:
            found: list[list[str]] = [[] for _ in new]
            for term, doc in self._instances(
                new, "SELECT term, doc FROM tok_i ORDER BY doc, offset"
            ):
                found[doc].append(str(term))
            fresh = dict(zip(new, map(tuple, found), strict=True))
            known.update(fresh)
            if len(cache) + len(fresh) > _WORD_CACHE:
                cache.clear()
            cache.update(fresh)
        return [known[w] for w in words]

    def terms(self, word: str) -> tuple[str, ...]:
        """One word's terms."""
        return self.words([word])[0]


_TOKENIZER: _Tokenizer | None = None
_TOKENIZER_LOCK = threading.Lock()


def _tokenizer() -> _Tokenizer:
    global _TOKENIZER
    with _TOKENIZER_LOCK:
        if _TOKENIZER is None:
            _TOKENIZER = _Tokenizer()
        return _TOKENIZER


def changes(conn: sqlite3.Connection) -> int:
    """The rows `conn` wrote since it was opened, not counting its indexing of the queue:
    that leaves the rows as they were, so what was known of them before still holds (for every
    index of the connection). Only the difference between two calls means anything (an id
    can be a closed connection's: its count is a constant offset)."""
    return conn.total_changes - _INDEXED.get(id(conn), 0)


class Lexical:
    """BM25 over the `memories_fts` table of one connection, scored in NumPy."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn
        with conn:
            conn.execute(
                "CREATE VIRTUAL TABLE IF NOT EXISTS temp.memories_fts_instance"
                " USING fts5vocab(main, memories_fts, instance)"
            )
        self._copied: int | None = None  # data_version when the read-only copy was built
        self._stats: Stats | None = None
        self._spaces: dict[str, Postings] = {}
        self._version: int | None = None
        self._changes = -1
        # one cursor for `PRAGMA data_version`, asked before every search: a new cursor per
        # ask cost a fair part of a 10k-row search
        self._pragma = conn.cursor()
        self._lock = threading.Lock()
        if conn.execute("SELECT 1 FROM memories LIMIT 1").fetchone() is None:
            self._stats = Stats()  # nothing to read: kept up to date from the first write
            self._seen()

    def _seen(self) -> None:
        """The table as this process knows it is the table: note its versions."""
        self._version = self._data_version()
        self._changes = changes(self._conn)

    def _known(self) -> bool:
        """Whether the postings in hand are the table's: nobody wrote it since, neither
        another connection (`PRAGMA data_version`) nor another user of this one (its total
        changes, which each write applied here notes)."""
        if self._stats is None or changes(self._conn) != self._changes:
            return False
        return self._data_version() == self._version

    def _data_version(self) -> int:
        return int(self._pragma.execute("PRAGMA data_version").fetchone()[0])

    def invalidate(self) -> None:
        """The table was written in a way not applied here: read it again before the next
        search."""
        with self._lock:
            self._stats = None
            self._spaces = {}

    def tracking(self) -> bool:
        """Whether a write should be applied here (`written`) rather than read again later:
        the postings are in hand and current. Asked before the write, inside its lock."""
        with self._lock:
            return self._known()

    def written(
        self,
        namespace: str,
        removed: Sequence[tuple[str, str]],
        added: Sequence[tuple[str, str]],
        *,
        cleared: bool = False,
    ) -> None:
        """Apply a committed write of `namespace`: rows `removed` (id, old text), then rows
        `added` (id, text); `cleared`: every row of the namespace was deleted first. Only
        after `tracking()` said so, with nothing else written in between."""
        tok = _tokenizer()
        with self._lock:
            stats = self._stats
            if stats is None:
                return
            space = self._spaces.get(namespace)
            if cleared and space is not None:
                stats.n_rows -= len(space.where)
                stats.tokens -= space.live_tokens()
                stats.subtract(space.live_df())
                space = None
                del self._spaces[namespace]
            if space is None:
                space = self._spaces[namespace] = Postings()
            gone = set(space.remove(rid for rid, _ in removed))
            olds = [text for rid, text in removed if rid in gone]
            for terms in tok.documents(olds):
                stats.remove(terms)
            texts = [text for _, text in added]
            ids = [str(rid) for rid, _ in added]  # str: the scoring hands them out as kept
            if space.empty() or (not space.pending and 4 * len(added) > len(space)):
                # laid out at once: a first write, or one large enough that its pending
                # postings would be merged in at once (`settle`)
                batch = vocab, term_of, _, tf_of = tok.postings(texts)
                held = np.bincount(term_of, minlength=len(vocab))
                stats.add_held(len(added), int(tf_of.sum()), vocab, held)
                space.merge(ids, batch)
            else:
                news = tok.documents(texts)
                stats.add_all(news)
                space.add(list(zip(ids, news, strict=True)))
            space.settle()
            self._seen()

    def fts(self) -> str:
        """The FTS5 table that holds every row, for FTS5 to read: `memories_fts`, once the
        rows queued for it are indexed, or a read-only connection's copy (`_copy`)."""
        with self._lock:
            return self._fts()

    def _fts(self) -> str:
        conn = self._conn
        try:
            queued = conn.execute("SELECT 1 FROM memories_fts_queue LIMIT 1").fetchone()
        except sqlite3.OperationalError as exc:
            if "no such table" not in str(exc):
                raise
            queued = None  # an earlier release's table opened read-only: FTS5 holds every row
        if queued is None:
            return "memories_fts"
        # a savepoint: its own transaction, or a part of the caller's (committed with it); the
        # INSERT takes the write lock before it reads
        conn.execute("SAVEPOINT memories_fts_queue")
        try:
            before = conn.total_changes
            conn.execute(
                "INSERT INTO memories_fts(rowid, text) SELECT rowid, text FROM memories"
                " WHERE rowid IN (SELECT rowid FROM memories_fts_queue)"
            )
            conn.execute("DELETE FROM memories_fts_queue")
        except sqlite3.OperationalError as exc:
            conn.execute("ROLLBACK TO memories_fts_queue")
            conn.execute("RELEASE memories_fts_queue")
            if exc.sqlite_errorcode & 0xFF != sqlite3.SQLITE_READONLY:
                raise
            return self._copy()
        conn.execute("RELEASE memories_fts_queue")
        _INDEXED[id(conn)] = _INDEXED.get(id(conn), 0) + conn.total_changes - before
        return "memories_fts"

    def _copy(self) -> str:
        """`memories_fts_ro`, a temp FTS5 table of every row of `memories`, built again when
        another connection wrote (a read-only connection writes nothing)."""
        version = self._data_version()
        if self._copied != version:
            with self._conn:
                self._conn.execute(
                    "CREATE TEMP VIEW IF NOT EXISTS memories_text AS"
                    " SELECT rowid, text FROM main.memories"
                )
                self._conn.execute(
                    "CREATE VIRTUAL TABLE IF NOT EXISTS temp.memories_fts_ro USING fts5(text,"
                    f" content='memories_text', content_rowid='rowid', tokenize='{TOKENIZER}')"
                )
                self._conn.execute(
                    "CREATE VIRTUAL TABLE IF NOT EXISTS temp.memories_fts_ro_instance"
                    " USING fts5vocab(temp, memories_fts_ro, instance)"
                )
                self._conn.execute(
                    "INSERT INTO memories_fts_ro(memories_fts_ro) VALUES ('rebuild')"
                )
            self._copied = version
        return "memories_fts_ro"

    def _current(self) -> tuple[Stats, dict[str, Postings]]:
        if not self._known():
            fts = self._fts()
            self._stats, self._spaces = build(self._conn, f"temp.{fts}_instance")
            self._seen()
        assert self._stats is not None
        return self._stats, self._spaces

    def search(
        self, words: Sequence[str], namespace: str, limit: int
    ) -> list[tuple[str, float]] | None:
        """Top `limit` (id, score) of `namespace` for the OR of `words` (as `fts_query` chose
        them), best first, score = -bm25; None when a word is a phrase to FTS5 (see the module
        docstring), for FTS5 to score."""
        phrases: list[str] = []
        for terms in _tokenizer().words(words):
            if len(terms) != 1:
                return None
            phrases += terms
        with self._lock:  # a write applies to the arrays in place
            stats, spaces = self._current()
            space = spaces.get(namespace)
            if not phrases or space is None or not space.where or limit <= 0:
                return []
            return top(stats, space, phrases, limit)
