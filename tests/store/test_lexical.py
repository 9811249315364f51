"""The lexical channel scored in NumPy (`memgauge.store.lexical`) against FTS5's own `bm25()`
on the same table: the same ids in the same order, scores equal to 1e-9, on random corpora
(stems, diacritics, case, numbers, empty texts, two namespaces) and random queries, before and
after writes from this connection and from another one."""

from __future__ import annotations

import os
import random
import secrets
import sqlite3
from pathlib import Path

import pytest

from memgauge.store.connection import connect
from memgauge.store.memory_index import IndexedMemory, MemoryIndex, query_words

WORDS = [
    "run",
    "running",
    "runs",
    "runner",
    "ran",
    "invoice",
    "invoices",
    "invoicing",
    "tax",
    "taxes",
    "stripe",
    "webhook",
    "webhooks",
    "café",
    "cafe",
    "naïve",
    "naive",
    "résumé",
    "resume",
    "Zürich",
    "zurich",
    "2024",
    "42",
    "v2",
    "a",
    "the",
    "is",
    "of",
    "and",
    "paid",
    "pay",
    "payment",
    "payments",
    "connected",
    "connection",
    "connecting",
    "ünïcödé",
    "straße",
    "strasse",
]
ODD = ["foo_bar", "x_1", "__", "œuvre", "ǅemal", "ﬁne", "١٢٣"]  # phrases or odd tokens to FTS5


def _row(i: int, text: str) -> IndexedMemory:
    return IndexedMemory(
        id=f"m{i:04d}",
        text=text,
        tier="normal",
        folder=None,
        session=None,
        corpus=None,
        created_at=None,
        metadata={},
    )


def _text(rng: random.Random) -> str:
    n = rng.choice([0, 1, 2, 5, 9, 20, 40])
    pool = WORDS + ODD[:2] if rng.random() < 0.1 else WORDS
    words = [rng.choice(pool) for _ in range(n)]
    words = [w.upper() if rng.random() < 0.1 else w for w in words]
    return " ".join(words) + rng.choice(["", ".", "!!!", " ..."])


def _query(rng: random.Random) -> str:
    n = rng.randint(1, 6)
    pool = WORDS + ["unseen", "zzz", "the", "of"] + (ODD if rng.random() < 0.15 else [])
    return " ".join(rng.choice(pool) for _ in range(n))


def _same(index: MemoryIndex, query: str, k: int) -> bool:
    """Compare both paths for `query`; whether NumPy scored it (not a phrase fallback)."""
    new = index.search_lexical(query, k)
    old = index.search_lexical_fts(query, k)
    assert [i for i, _ in new] == [i for i, _ in old], query
    for (_, a), (_, b) in zip(new, old, strict=True):
        assert a == pytest.approx(b, abs=1e-9, rel=0), query
    return index._lexical.search(query_words(query), index.namespace, k) is not None


# four fresh seeds a run, drawn in the test: ids drawn at collection would differ between
# pytest-xdist's workers, which must collect the same tests
@pytest.mark.parametrize("draw", range(4))
def test_scores_and_order_equal_fts5_bm25(tmp_path: Path, draw: int) -> None:
    seed = int(os.environ.get("MEMGAUGE_TEST_SEED") or secrets.randbits(32))
    print(f"MEMGAUGE_TEST_SEED={seed}")  # pytest shows captured output of a failing test
    rng = random.Random(seed)
    db = tmp_path / "m.db"
    conn = connect(db, check_same_thread=False)
    a, b = MemoryIndex(conn, "a"), MemoryIndex(conn, "b")
    a.upsert([_row(i, _text(rng)) for i in range(rng.randint(1, 300))], None)
    b.upsert([_row(i, _text(rng)) for i in range(rng.randint(0, 100))], None)
    numpy_scored = 0
    for _ in range(150):
        index = a if rng.random() < 0.7 else b
        numpy_scored += _same(index, _query(rng), rng.choice([1, 3, 10, 25, 1000]))
    assert numpy_scored > 100, seed  # most queries were scored by the new path

    # writes by this connection: replaced, added and cleared rows
    a.upsert([_row(i, _text(rng)) for i in range(0, 400, 3)], None)
    b.clear()
    for _ in range(50):
        _same(a if rng.random() < 0.8 else b, _query(rng), rng.choice([5, 25]))

    # a write by another connection to the same file (PRAGMA data_version)
    other = connect(db)
    MemoryIndex(other, "a").upsert([_row(9000 + i, _text(rng)) for i in range(50)], None)
    other.close()
    for _ in range(50):
        _same(a, _query(rng), 25)
    conn.close()


def test_ties_break_by_id_and_limits_hold(tmp_path: Path) -> None:
    conn = connect(tmp_path / "m.db")
    index = MemoryIndex(conn, "n")
    index.upsert([_row(i, "stripe webhook") for i in (5, 1, 3, 2, 4)], None)
    found = index.search_lexical("stripe", 3)
    assert [i for i, _ in found] == ["m0001", "m0002", "m0003"]
    assert len({s for _, s in found}) == 1
    assert index.search_lexical("stripe", 0) == []
    assert index.search_lexical("the of", 5) == []  # stopwords only: looked for, found nowhere
    assert index.search_lexical("!!!", 5) == []
    conn.close()


def test_a_word_fts5_reads_as_a_phrase_is_scored_by_fts5(tmp_path: Path) -> None:
    conn = connect(tmp_path / "m.db")
    index = MemoryIndex(conn, "n")
    index.upsert([_row(1, "foo bar baz"), _row(2, "bar foo"), _row(3, "foo")], None)
    assert index._lexical.search(["foo_bar"], "n", 5) is None
    assert _same(index, "foo_bar", 5) is False
    assert [i for i, _ in index.search_lexical("foo_bar", 5)] == ["m0001"]  # the phrase
    conn.close()


def test_the_shared_tokenizer_is_fts5s(tmp_path: Path) -> None:
    """The words of a query become the FTS table's own terms (porter stems, diacritics)."""
    from memgauge.store.lexical import _tokenizer

    tok = _tokenizer()
    assert tok.terms("running") == ("run",)
    assert tok.terms("Café") == ("cafe",)
    assert tok.terms("foo_bar") == ("foo", "bar")
    assert tok.terms("__") == ()
    conn = sqlite3.connect(":memory:")
    conn.execute(
        "CREATE VIRTUAL TABLE f USING fts5(t, tokenize='porter unicode61 remove_diacritics 2')"
    )
    conn.execute("CREATE VIRTUAL TABLE v USING fts5vocab(f, instance)")
    conn.execute("INSERT INTO f VALUES ('connections Zürich résumés')")
    want = tuple(r[0] for r in conn.execute("SELECT term FROM v ORDER BY offset"))
    got = tuple(t for w in ("connections", "Zürich", "résumés") for t in tok.terms(w))
    assert got == want
