"""The reference memory's rows are queued for FTS5, not indexed as they are written, and FTS5's
readers index the queue first (`memgauge.store.memory_index._TRIGGERS`, `Lexical.fts`): FTS5
stays the table's exact index for every reader (the phrase fallback, the postings read from
`fts5vocab`, another connection, a read-only one, a database of an earlier release) and its
own integrity check passes after any mix of inserts, replacements, deletes and updates."""

from __future__ import annotations

import random
import sqlite3
import threading
from pathlib import Path

from memgauge.store.connection import connect
from memgauge.store.lexical import Lexical
from memgauge.store.memory_index import IndexedMemory, MemoryIndex, query_words

WORDS = ["run", "running", "invoice", "invoices", "tax", "stripe", "webhook", "café", "foo_bar"]
PHRASE = "foo_bar"  # two terms to FTS5: scored by FTS5 itself (`search_lexical_fts`)

# the schema of the release before the queue: every row indexed by FTS5 as it is written
_EARLIER = [
    """CREATE TABLE memories (rowid INTEGER PRIMARY KEY, namespace TEXT NOT NULL,
        id TEXT NOT NULL, text TEXT NOT NULL, tier TEXT NOT NULL, folder TEXT, session TEXT,
        corpus TEXT, created_at TEXT, metadata TEXT NOT NULL DEFAULT '{}', vector BLOB,
        UNIQUE(namespace, id))""",
    """CREATE VIRTUAL TABLE memories_fts USING fts5(text, content='memories',
        content_rowid='rowid', tokenize='porter unicode61 remove_diacritics 2')""",
    """CREATE TRIGGER memories_ai AFTER INSERT ON memories BEGIN
        INSERT INTO memories_fts(rowid, text) VALUES (new.rowid, new.text);
    END""",
    """CREATE TRIGGER memories_ad AFTER DELETE ON memories BEGIN
        INSERT INTO memories_fts(memories_fts, rowid, text) VALUES ('delete', old.rowid, old.text);
    END""",
    """CREATE TRIGGER memories_au AFTER UPDATE OF text ON memories BEGIN
        INSERT INTO memories_fts(memories_fts, rowid, text) VALUES ('delete', old.rowid, old.text);
        INSERT INTO memories_fts(rowid, text) VALUES (new.rowid, new.text);
    END""",
]


def _row(i: int, text: str) -> IndexedMemory:
    return IndexedMemory(f"m{i:03d}", text, "normal", None, None, None, None, {})


def _text(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 8)))


def _queued(conn: sqlite3.Connection) -> int:
    return int(conn.execute("SELECT count(*) FROM memories_fts_queue").fetchone()[0])


def _indexed(conn: sqlite3.Connection) -> int:
    """Rows FTS5's index holds (its own count, not the content table's)."""
    conn.execute(
        "CREATE VIRTUAL TABLE IF NOT EXISTS temp.i USING fts5vocab(main, memories_fts, instance)"
    )
    return int(conn.execute("SELECT count(DISTINCT doc) FROM temp.i").fetchone()[0])


def _intact(conn: sqlite3.Connection) -> None:
    """FTS5's index is exactly the content table's rows (raises SQLITE_CORRUPT_VTAB if not)."""
    with conn:
        conn.execute("INSERT INTO memories_fts(memories_fts, rank) VALUES ('integrity-check', 1)")


def _agree(index: MemoryIndex, fresh: sqlite3.Connection, rng: random.Random) -> None:
    """NumPy's scores, FTS5's and those of postings read from scratch by `fresh` (another
    connection) agree on random queries."""
    for _ in range(20):
        query = " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 3)))
        got = index.search_lexical(query, 10)
        assert [i for i, _ in got] == [i for i, _ in index.search_lexical_fts(query, 10)], query
        again = Lexical(fresh).search(query_words(query), index.namespace, 10)
        assert again is None or again == got, query


def test_a_write_is_queued_and_indexed_by_fts5s_first_reader(tmp_path: Path) -> None:
    conn = connect(tmp_path / "m.db", check_same_thread=False)
    index = MemoryIndex(conn, "n")
    index.upsert([_row(i, f"stripe webhook {i}") for i in range(5)] + [_row(9, PHRASE)], None)
    assert (_queued(conn), _indexed(conn)) == (6, 0)  # the write left FTS5 alone
    assert [i for i, _ in index.search_lexical("webhook", 2)] == ["m000", "m001"]
    assert (_queued(conn), _indexed(conn)) == (6, 0)  # scored from the postings: FTS5 unread
    assert [i for i, _ in index.search_lexical(PHRASE, 5)] == ["m009"]  # FTS5 reads: indexed
    assert (_queued(conn), _indexed(conn)) == (0, 6)
    _intact(conn)
    index.upsert([_row(0, "invoice"), _row(10, "invoice tax")], None)  # one replaced, one new
    assert (_queued(conn), _indexed(conn)) == (2, 5)  # the replaced row left FTS5 at once
    index.clear()
    assert (_queued(conn), _indexed(conn)) == (0, 0)
    _intact(conn)
    conn.close()


def test_fts5_stays_the_tables_index_through_any_writes(tmp_path: Path) -> None:
    """Inserts, replacements, clears and raw updates of queued and of indexed rows, from two
    connections, FTS5 read at random points: its integrity check passes throughout, and every
    reader scores alike."""
    rng = random.Random(7)
    a_conn = connect(tmp_path / "m.db", check_same_thread=False)
    b_conn = connect(tmp_path / "m.db", check_same_thread=False)
    a, b = MemoryIndex(a_conn, "a"), MemoryIndex(b_conn, "a")
    for step in range(60):
        writer = a if rng.random() < 0.6 else b
        roll = rng.random()
        if roll < 0.05:
            writer.clear()
        elif roll < 0.2:
            with writer._conn:  # a text changed in place (the update trigger)
                writer._conn.execute(
                    "UPDATE memories SET text = ? WHERE rowid IN"
                    " (SELECT rowid FROM memories ORDER BY random() LIMIT 3)",
                    (_text(rng),),
                )
        else:
            ids = dict.fromkeys(rng.randrange(80) for _ in range(rng.choice([1, 4, 20])))
            writer.upsert([_row(i, _text(rng)) for i in ids], None)
        if rng.random() < 0.3:
            (a if rng.random() < 0.5 else b).search_lexical(PHRASE, 5)  # indexes the queue
            _intact(a_conn)
        if step % 10 == 9:
            _agree(a, b_conn, rng)
            _agree(b, a_conn, rng)
            _intact(a_conn)
    a_conn.close()
    b_conn.close()


def test_concurrent_writers_and_readers_leave_fts5_intact(tmp_path: Path) -> None:
    """Two threads, each with its connection, write and index the queue at once."""
    db = tmp_path / "m.db"
    connect(db).close()
    errors: list[BaseException] = []

    def work(seed: int, namespace: str) -> None:
        rng = random.Random(seed)
        conn = connect(db, check_same_thread=False)
        try:
            index = MemoryIndex(conn, namespace)
            for _ in range(40):
                ids = dict.fromkeys(rng.randrange(60) for _ in range(rng.choice([1, 10])))
                index.upsert([_row(i, _text(rng)) for i in ids], None)
                if rng.random() < 0.4:
                    index.search_lexical(PHRASE, 5)
                index.search_lexical("stripe run", 5)
        except BaseException as exc:
            errors.append(exc)
        finally:
            conn.close()

    threads = [threading.Thread(target=work, args=(s, ns)) for s, ns in ((1, "a"), (2, "b"))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    conn = connect(db, check_same_thread=False)
    other = connect(db, check_same_thread=False)
    rng = random.Random(3)
    for namespace in ("a", "b"):
        _agree(MemoryIndex(conn, namespace), other, rng)
    assert _queued(conn) == 0
    _intact(conn)
    conn.close()
    other.close()


def test_a_read_only_connection_reads_the_queued_rows(tmp_path: Path) -> None:
    """It cannot index the queue: it reads a copy of the table, built again after a write."""
    db = tmp_path / "m.db"
    conn = connect(db, check_same_thread=False)
    index = MemoryIndex(conn, "n")
    index.upsert([_row(i, f"stripe webhook {i}") for i in range(5)] + [_row(9, PHRASE)], None)
    ro = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    reader = MemoryIndex(ro, "n")
    queries = ["webhook", "stripe 3", PHRASE, f"{PHRASE} stripe"]
    read = {q: reader.search_lexical(q, 3) for q in queries}
    assert _queued(conn) == 6  # the reader wrote nothing
    assert read == {q: index.search_lexical(q, 3) for q in queries}
    assert read[PHRASE] == [("m009", read[PHRASE][0][1])]
    assert _queued(conn) == 0  # the writer's phrase search indexed the queue
    index.upsert([_row(10, f"{PHRASE} {PHRASE} webhook"), _row(3, "tax")], None)
    read = {q: reader.search_lexical(q, 3) for q in queries}
    assert _queued(conn) == 2
    assert read == {q: index.search_lexical(q, 3) for q in queries}
    assert sorted(i for i, _ in read[PHRASE]) == ["m009", "m010"]
    ro.close()
    conn.close()


def test_an_earlier_releases_database_gets_the_queue(tmp_path: Path) -> None:
    """Its triggers are replaced (its FTS5 table is complete), once, and a read-only
    connection reads it as it is."""
    db = tmp_path / "m.db"
    old = sqlite3.connect(db)
    with old:
        for statement in _EARLIER:
            old.execute(statement)
        old.executemany(
            "INSERT INTO memories(namespace, id, text, tier) VALUES ('n', ?, ?, 'normal')",
            [(f"m{i:03d}", f"stripe webhook {i} {PHRASE if i == 2 else ''}") for i in range(5)],
        )
    old.close()
    ro = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    reader = MemoryIndex(ro, "n")  # cannot migrate: reads FTS5 as the release left it
    assert [i for i, _ in reader.search_lexical(PHRASE, 3)] == ["m002"]
    assert [i for i, _ in reader.search_lexical("webhook 4", 1)] == ["m004"]
    ro.close()
    conn = connect(db, check_same_thread=False)
    index = MemoryIndex(conn, "n")
    assert (_queued(conn), _indexed(conn)) == (0, 5)
    index.upsert([_row(2, "invoice"), _row(7, f"{PHRASE} tax")], None)
    assert (_queued(conn), _indexed(conn)) == (2, 4)  # the old m002 left FTS5 at once
    assert [i for i, _ in index.search_lexical(PHRASE, 3)] == ["m007"]
    assert [i for i, _ in index.search_lexical("invoice", 3)] == ["m002"]
    _intact(conn)
    triggers = conn.execute("SELECT count(*) FROM sqlite_master WHERE type = 'trigger'")
    assert triggers.fetchone()[0] == 3
    MemoryIndex(conn, "other")  # opened again: nothing left to migrate
    conn.close()


def test_indexing_the_queue_keeps_what_this_connection_knows(tmp_path: Path) -> None:
    """Indexing the queue writes FTS5 only: the postings and the rows a search shows stay in
    hand."""
    conn = connect(tmp_path / "m.db", check_same_thread=False)
    index = MemoryIndex(conn, "n")
    index.upsert([_row(i, f"stripe webhook {i}") for i in range(5)], None)
    statements: list[str] = []
    conn.set_trace_callback(statements.append)
    index.upsert([_row(9, PHRASE)], None)
    assert [i for i, _ in index.search_lexical(PHRASE, 3)] == ["m009"]
    assert [i for i, _ in index.search_lexical("webhook 3", 1)] == ["m003"]
    assert index.shown(["m003"]) == {"m003": ("stripe webhook 3", "normal")}
    assert any("INSERT INTO memories_fts(rowid" in s for s in statements)  # it was indexed
    assert not [s for s in statements if "memories_fts_instance" in s or "SELECT id, text" in s]
    conn.set_trace_callback(None)
    conn.close()


def test_fts5_is_read_inside_the_callers_transaction(tmp_path: Path) -> None:
    """The queue is indexed as a part of it: committed or rolled back with it."""
    conn = connect(tmp_path / "m.db", check_same_thread=False)
    index = MemoryIndex(conn, "n")
    index.upsert([_row(1, PHRASE), _row(2, "tax")], None)
    conn.execute("UPDATE memories SET tier = 'core' WHERE id = 'm002'")  # opens a transaction
    assert [i for i, _ in index.search_lexical(PHRASE, 3)] == ["m001"]
    assert conn.in_transaction
    assert _queued(conn) == 0
    conn.rollback()
    assert (_queued(conn), _indexed(conn)) == (2, 0)  # rolled back with the caller's work
    assert [i for i, _ in index.search_lexical(PHRASE, 3)] == ["m001"]
    assert [i for i, _ in index.search_lexical("tax", 3)] == ["m002"]
    assert not conn.in_transaction
    assert _queued(conn) == 0
    _intact(conn)
    conn.close()
