"""The reference memory's SQL: memories with FTS5 (bm25) and float32 vectors, per namespace."""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from memgauge._types import Float32Array
from memgauge.store.lexical import TOKENIZER, Lexical, changes

__all__ = ["IndexedMemory", "MemoryIndex", "fts_query", "query_words"]

_SCHEMA = [
    """CREATE TABLE IF NOT EXISTS memories (
        rowid INTEGER PRIMARY KEY,
        namespace TEXT NOT NULL,
        id TEXT NOT NULL,
        text TEXT NOT NULL,
        tier TEXT NOT NULL,
        folder TEXT,
        session TEXT,
        corpus TEXT,
        created_at TEXT,
        metadata TEXT NOT NULL DEFAULT '{}',
        vector BLOB,
        UNIQUE(namespace, id)
    )""",
    f"""CREATE VIRTUAL TABLE IF NOT EXISTS memories_fts USING fts5(
        text, content='memories', content_rowid='rowid', tokenize='{TOKENIZER}'
    )""",
    # the rowids of rows not yet in memories_fts: see `Lexical.fts`
    "CREATE TABLE IF NOT EXISTS memories_fts_queue (rowid INTEGER PRIMARY KEY)",
]

# A new or re-texted row is queued for FTS5, not indexed: FTS5's indexing was nearly all of an
# ingest's write, and a search is scored from the NumPy postings, which read FTS5 only when
# this process did not see the writes; whatever reads FTS5 first indexes the queue
# (`Lexical.fts`). A queued row deleted or re-texted is not in FTS5: nothing to delete there.
_TRIGGERS = [
    """CREATE TRIGGER memories_ai AFTER INSERT ON memories BEGIN
        INSERT INTO memories_fts_queue(rowid) VALUES (new.rowid);
    END""",
    """CREATE TRIGGER memories_ad AFTER DELETE ON memories BEGIN
        INSERT INTO memories_fts(memories_fts, rowid, text) SELECT 'delete', old.rowid, old.text
            WHERE NOT EXISTS (SELECT 1 FROM memories_fts_queue WHERE rowid = old.rowid);
        DELETE FROM memories_fts_queue WHERE rowid = old.rowid;
    END""",
    """CREATE TRIGGER memories_au AFTER UPDATE OF text ON memories BEGIN
        INSERT INTO memories_fts(memories_fts, rowid, text) SELECT 'delete', old.rowid, old.text
            WHERE NOT EXISTS (SELECT 1 FROM memories_fts_queue WHERE rowid = old.rowid);
        DELETE FROM memories_fts_queue WHERE rowid = old.rowid;
        INSERT INTO memories_fts_queue(rowid) VALUES (new.rowid);
    END""",
]

# Dropped from lexical queries when something else remains: they match nearly every memory.
# fmt: off
_STOPWORDS = frozenset((
    "a", "an", "and", "are", "as", "at", "be", "by", "do", "does", "did", "for", "from", "how",
    "i", "in", "is", "it", "its", "of", "on", "or", "our", "so", "that", "the", "this", "to",
    "was", "we", "what", "when", "where", "which", "who", "why", "will", "with", "you", "your",
))
# fmt: on
_TOKEN = re.compile(r"\w+", re.UNICODE)


def query_words(text: str) -> list[str]:
    """The words of free user text that a lexical search looks for, in order: lower-cased word
    tokens, stopwords dropped when something else remains, each once, at most 64."""
    tokens = [t.lower() for t in _TOKEN.findall(text)]
    content = [t for t in tokens if t not in _STOPWORDS]
    return list(dict.fromkeys(content or tokens))[:64]


def fts_query(text: str) -> str | None:
    """A safe FTS5 MATCH expression for free user text, or None if it has no searchable token.

    Each word of `query_words` is double-quoted (so FTS5 syntax such as `AND`, `NOT`, `NEAR`,
    `*`, `:`, `^`, `-` and quotes in the input is inert) and the words are OR-ed, letting bm25
    rank memories by how many and how rare the matched terms are.
    """
    chosen = query_words(text)
    if not chosen:
        return None
    return " OR ".join(f'"{t}"' for t in chosen)


@dataclass(frozen=True)
class IndexedMemory:
    """A stored memory row."""

    id: str
    text: str
    tier: str
    folder: str | None
    session: str | None
    corpus: str | None
    created_at: str | None
    metadata: dict[str, Any]


#: a row of `memories`: its columns in the order of `IndexedMemory`'s fields, metadata as JSON
_Row = tuple[str, str, str, str | None, str | None, str | None, str | None, str]


def _row(r: _Row) -> IndexedMemory:
    return IndexedMemory(*r[:7], json.loads(r[7]))


def _queued(conn: sqlite3.Connection) -> bool:
    """Whether the triggers queue rows for FTS5 (`_TRIGGERS`), not index them at once."""
    found = conn.execute(
        "SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name = 'memories_ai'"
    ).fetchone()
    return found is not None and "memories_fts_queue" in found[0]


def _schema(conn: sqlite3.Connection) -> None:
    """Create the tables and triggers, or give a database of an earlier release (whose
    triggers index each row at once: its FTS5 table is complete) the queueing triggers."""
    if _queued(conn):
        return
    if conn.in_transaction:
        conn.commit()  # as the schema's `with conn:` did before the queue
    try:
        conn.execute("BEGIN IMMEDIATE")
        if not _queued(conn):  # not done meanwhile by another connection
            for statement in _SCHEMA:
                conn.execute(statement)
            for name in ("memories_ai", "memories_ad", "memories_au"):
                conn.execute(f"DROP TRIGGER IF EXISTS {name}")
            for statement in _TRIGGERS:
                conn.execute(statement)
        conn.commit()
    except sqlite3.OperationalError as exc:
        conn.rollback()
        # read-only: an earlier release's table is read as it is (its FTS5 table complete)
        if exc.sqlite_errorcode & 0xFF != sqlite3.SQLITE_READONLY:
            raise


class MemoryIndex:
    """Memories of one namespace in one SQLite database."""

    def __init__(self, conn: sqlite3.Connection, namespace: str) -> None:
        self._conn = conn
        self.namespace = namespace
        _schema(conn)
        self._lexical = Lexical(conn)
        # (text, tier) of each of the namespace's rows, while every write since it was known
        # was this index's own (None: not known; `shown` asks SQLite): a search's hits are
        # shown without a query per search (a fifth of a LoCoMo search's cost)
        self._shown: dict[str, tuple[str, str]] | None = None
        self._shown_at = (-1, -1)
        self._pragma = conn.cursor()
        held = conn.execute(
            "SELECT 1 FROM memories WHERE namespace = ? LIMIT 1", (namespace,)
        ).fetchone()
        if held is None:
            self._shown = {}
            self._shown_at = self._state()

    def _state(self) -> tuple[int, int]:
        """What tells whether the database was written since: `PRAGMA data_version` (another
        connection's commits) and this connection's total changes (any of its writes)."""
        version = int(self._pragma.execute("PRAGMA data_version").fetchone()[0])
        return version, changes(self._conn)

    def _shown_rows(self) -> dict[str, tuple[str, str]] | None:
        """The kept (text, tier) by id, if nothing but this index wrote since they were kept."""
        if self._shown is not None and self._state() != self._shown_at:
            self._shown = None
        return self._shown

    def clear(self) -> None:
        """Delete every memory of this namespace."""
        tracking = self._lexical.tracking()
        with self._conn:
            self._conn.execute("DELETE FROM memories WHERE namespace = ?", (self.namespace,))
        self._shown = {}
        self._shown_at = self._state()
        if tracking:
            self._lexical.written(self.namespace, [], [], cleared=True)
        else:
            self._lexical.invalidate()

    def ids_with_tier(self, tier: str) -> list[str]:
        """Ids of this namespace's memories of one importance tier, in insertion order."""
        rows = self._conn.execute(
            "SELECT id FROM memories WHERE namespace = ? AND tier = ? ORDER BY rowid",
            (self.namespace, tier),
        ).fetchall()
        return [str(r[0]) for r in rows]

    def upsert(self, rows: Sequence[IndexedMemory], vectors: Float32Array | None) -> None:
        """Insert or replace memories (and their FTS rows) in one transaction."""
        self.upsert_rows(
            [
                (
                    r.id,
                    r.text,
                    r.tier,
                    r.folder,
                    r.session,
                    r.corpus,
                    r.created_at,
                    json.dumps(r.metadata),
                )
                for r in rows
            ],
            vectors,
        )

    def upsert_rows(self, rows: Sequence[_Row], vectors: Float32Array | None) -> None:
        """`upsert` of rows as `memories` holds them (`_Row`: `IndexedMemory`'s fields in
        order, the metadata as JSON): the reference memory's ingest builds these, without an
        `IndexedMemory` each (a frozen dataclass costs 1.7 us to make)."""
        blobs: Iterable[bytes | None]
        if vectors is not None:
            blobs = [np.asarray(v, dtype=np.float32).tobytes() for v in vectors]
        else:
            blobs = [None] * len(rows)
        tracking = self._lexical.tracking()
        kept = self._shown_rows()
        ids = [r[0] for r in rows]
        # every id new to the namespace (its rows known here): nothing to look up or delete
        new = kept is not None and kept.keys().isdisjoint(ids)
        ns = self.namespace
        with self._conn:
            # the replaced rows' texts, for their postings to leave the lexical index
            replaced = self._texts(ids) if tracking and not new else []
            self._conn.executemany(
                "DELETE FROM memories WHERE namespace = ? AND id = ?",
                [] if new else [(ns, i) for i in ids],
            )
            self._conn.executemany(
                "INSERT INTO memories(namespace, id, text, tier, folder, session, corpus,"
                " created_at, metadata, vector) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [(ns, *r, b) for r, b in zip(rows, blobs, strict=True)],
            )
        if kept is not None:
            kept.update((r[0], (r[1], r[2])) for r in rows)
            self._shown_at = self._state()
        if tracking:
            self._lexical.written(ns, replaced, [(r[0], r[1]) for r in rows])
        else:
            self._lexical.invalidate()

    def _texts(self, ids: Sequence[str]) -> list[tuple[str, str]]:
        """(id, text) of the stored rows of `ids`."""
        out: list[tuple[str, str]] = []
        for start in range(0, len(ids), 500):
            chunk = list(ids[start : start + 500])
            marks = ",".join("?" * len(chunk))
            out.extend(
                (str(i), str(t))
                for i, t in self._conn.execute(
                    f"SELECT id, text FROM memories WHERE namespace = ? AND id IN ({marks})",
                    (self.namespace, *chunk),
                )
            )
        return out

    def search_lexical(self, text: str, limit: int) -> list[tuple[str, float]]:
        """Top `limit` (id, score) by bm25, best first; score = -bm25 (higher is better).
        Scored in NumPy from FTS5's own postings (`memgauge.store.lexical`), or by FTS5 when a
        word is a phrase to it; both give FTS5's scores and order."""
        words = query_words(text)
        if not words:
            return []
        found = self._lexical.search(words, self.namespace, limit)
        if found is not None:
            return found
        return self.search_lexical_fts(text, limit)

    def search_lexical_fts(self, text: str, limit: int) -> list[tuple[str, float]]:
        """`search_lexical` as FTS5 scores it: `bm25()` on every matched row."""
        expr = fts_query(text)
        if expr is None:
            return []
        fts = self._lexical.fts()
        rows = self._conn.execute(
            f"SELECT m.id, bm25({fts}) AS s FROM {fts}"
            f" JOIN memories m ON m.rowid = {fts}.rowid"
            f" WHERE {fts} MATCH ? AND m.namespace = ?"
            " ORDER BY s, m.id LIMIT ?",
            (expr, self.namespace, limit),
        ).fetchall()
        return [(str(i), -float(s)) for i, s in rows]

    def vectors(self, dim: int) -> tuple[list[str], Float32Array]:
        """Ids and the (n, dim) float32 matrix of every memory that has a vector."""
        rows = self._conn.execute(
            "SELECT id, vector FROM memories WHERE namespace = ? AND vector IS NOT NULL"
            " ORDER BY rowid",
            (self.namespace,),
        ).fetchall()
        if not rows:
            return [], np.zeros((0, dim), dtype=np.float32)
        matrix = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32).reshape(-1, dim)
        return [str(r[0]) for r in rows], matrix

    def get(self, ids: Sequence[str]) -> dict[str, IndexedMemory]:
        """Rows by id."""
        out: dict[str, IndexedMemory] = {}
        for start in range(0, len(ids), 500):
            chunk = list(ids[start : start + 500])
            marks = ",".join("?" * len(chunk))
            for row in self._conn.execute(
                "SELECT id, text, tier, folder, session, corpus, created_at, metadata"
                f" FROM memories WHERE namespace = ? AND id IN ({marks})",
                (self.namespace, *chunk),
            ):
                out[row[0]] = _row(row)
        return out

    def shown(self, ids: Sequence[str]) -> dict[str, tuple[str, str]]:
        """(text, tier) by id: what a search hit shows, without parsing whole rows."""
        kept = self._shown_rows()
        if kept is not None:
            return {i: kept[i] for i in ids if i in kept}
        out: dict[str, tuple[str, str]] = {}
        for start in range(0, len(ids), 500):
            chunk = list(ids[start : start + 500])
            marks = ",".join("?" * len(chunk))
            for mid, text, tier in self._conn.execute(
                f"SELECT id, text, tier FROM memories WHERE namespace = ? AND id IN ({marks})",
                (self.namespace, *chunk),
            ):
                out[mid] = (text, tier)
        return out

    def count(self) -> int:
        """How many memories the namespace holds."""
        row = self._conn.execute(
            "SELECT COUNT(*) FROM memories WHERE namespace = ?", (self.namespace,)
        ).fetchone()
        return int(row[0])

    def all(self) -> list[IndexedMemory]:
        """Every memory of the namespace, in insertion order."""
        rows = self._conn.execute(
            "SELECT id, text, tier, folder, session, corpus, created_at, metadata"
            " FROM memories WHERE namespace = ? ORDER BY rowid",
            (self.namespace,),
        ).fetchall()
        return [_row(r) for r in rows]
