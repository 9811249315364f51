"""The logging SDK under a burst (issue 31 item 8): every call becomes a row, on SQLite and on
PostgreSQL; a burst is written in bounded transactions, many rows per INSERT statement; the
JSON the writer stores is the text json.dumps gives. Counts, never times."""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest

from memgauge.online import querylog as sdk
from memgauge.online.querylog import QueryLog
from memgauge.store import querylog as store_querylog
from memgauge.store.logdb import LogDB
from memgauge.store.querylog import BURST_CHECKPOINT_PAGES
from memgauge.store.querylog_rows import _dumps, _jsonable


def _count(where: str, sql: str) -> int:
    db = LogDB(where)
    try:
        return int(db.execute(sql).fetchone()[0])
    finally:
        db.close()


@pytest.fixture
def small_batches(monkeypatch: pytest.MonkeyPatch) -> int:
    """Batches of 64 records: a burst of a few batches is a few hundred records, not tens of
    thousands (32 CPU-s on both stores at the real 2048); what is checked is how a burst is cut
    into batches and linked across them, which does not depend on the batch's size."""
    monkeypatch.setattr(sdk, "_BATCH", 64)
    return sdk._BATCH


def test_a_burst_loses_nothing_and_links_feedback_across_batches(
    store_where: str, small_batches: int
) -> None:
    n = 3 * small_batches + 17  # several batches of each kind, and a part batch
    log = QueryLog(store_where)
    for i in range(n):
        session = f"s{i % 50}"
        log.query(
            f"query {i}",
            session_id=session,
            result_ids=[f"m{i}", f"m{i + 1}"],
            channel_contributions={"fts5": [f"m{i}"]},
            latency_ms=1.5,
        )
        # no query id: linked when written to the query of its session that surfaced m{i}
        log.feedback("read_after_search", session_id=session, memory_id=f"m{i}")
        log.validate(f"v{i % 7}", useful=i % 3 > 0, session_id=session)
        log.session(session, turns=i)
        log.agent_output(session, f"reply {i}")
    log.flush()
    assert (log.dropped, log.rejected) == (0, 0)
    log.close()
    assert _count(store_where, "SELECT COUNT(*) FROM eval_queries") == n
    assert _count(store_where, "SELECT COUNT(DISTINCT query_id) FROM eval_queries") == n
    assert _count(store_where, "SELECT COUNT(*) FROM eval_feedback") == 2 * n
    linked = (
        "SELECT COUNT(*) FROM eval_feedback f JOIN eval_queries q ON q.query_id = f.query_id"
        " WHERE f.event_type = 'read_after_search' AND f.rank_in_results = 1"
        " AND q.query = 'query ' || substr(f.memory_id, 2)"
    )
    assert _count(store_where, linked) == n
    assert _count(store_where, "SELECT SUM(validations) FROM memory_confidence") == n
    assert _count(store_where, "SELECT COUNT(*) FROM eval_agent_outputs") == n
    assert _count(store_where, "SELECT COUNT(*) FROM eval_sessions") == 50
    assert _count(store_where, "SELECT MAX(turns) FROM eval_sessions") == n - 1


def test_a_burst_is_written_in_bounded_transactions(tmp_path: Path, small_batches: int) -> None:
    """One transaction for all of a burst kept every record of it alive until the end (and in
    the garbage collector's full passes); batches are bounded, and still in order."""
    n = 2 * small_batches + 5
    log = QueryLog(tmp_path / "log.db", flush_interval=3600)  # nothing written until flush()
    batches: list[tuple[int, int, int]] = []
    write = log._writer.write

    def spy(queries: Any, feedback: Any, events: Any = ()) -> list[str]:
        batches.append((len(queries), len(feedback), len(events)))
        return write(queries, feedback, events)

    log._writer.write = spy  # type: ignore[method-assign]
    for i in range(n):
        log.query(f"query {i}", session_id="s", result_ids=[f"m{i}"])
        log.feedback("reference", session_id="s", memory_id=f"m{i}")
    log.flush()
    log.close()
    assert batches == [
        (small_batches, 0, 0),
        (small_batches, 0, 0),
        (5, 0, 0),
        (0, small_batches, 0),
        (0, small_batches, 0),
        (0, 5, 0),
    ]
    db = LogDB(tmp_path / "log.db")
    texts = [r[0] for r in db.execute("SELECT query FROM eval_queries ORDER BY id")]
    db.close()
    assert texts == [f"query {i}" for i in range(n)]


def test_rows_are_inserted_many_per_statement_in_order(tmp_path: Path) -> None:
    db = LogDB(tmp_path / "log.db")
    statements: list[str] = []
    db._conn.set_trace_callback(statements.append)
    rows = [
        (f"q{i}", f"text {i}", "t", "[]", f"2026-01-01T00:00:{i % 60:02d}") for i in range(3000)
    ]
    with db.transaction():
        db.insert(
            "INSERT INTO eval_queries (query_id, query, tool_name, result_ids, created_at)",
            rows,
            "ON CONFLICT (query_id) DO NOTHING",
        )
    inserts = [s for s in statements if s.startswith("INSERT")]
    # 2048 rows a statement where SQLite takes 10,240 parameters (3.32 and later):
    # 3000 = 2048 + 512 + 256 + 128 + 32 + 16 + 8, one statement each
    per = db._rows_per_statement(5)
    assert len(inserts) == len(rows) // per + bin(len(rows) % per).count("1")
    assert len(inserts) == 7 or per < 2048
    got = db.execute("SELECT query_id, query, created_at FROM eval_queries ORDER BY id").fetchall()
    db.close()
    assert got == [(r[0], r[1], r[4]) for r in rows]


def test_a_column_no_row_gives_is_null_in_the_statement_not_a_parameter(tmp_path: Path) -> None:
    """Binding None costs sqlite3 seven times an int's binding, with the GIL held."""
    db = LogDB(tmp_path / "log.db")
    head = "INSERT INTO eval_queries (query_id, query, intent, mode, tool_name, created_at)"
    # intent: no row gives it; mode: the second row only; created_at: every row
    rows = [("q1", "a", None, None, "t", "c1"), ("q2", "b", None, "hybrid", "t", "c2")]
    plan = db.plan(head, rows)
    assert plan == [
        (
            f"{head} VALUES (?, ?, NULL, ?, ?, ?), (?, ?, NULL, ?, ?, ?)",
            [["q1", "a", None, "t", "c1", "q2", "b", "hybrid", "t", "c2"]],
        ),
    ]
    one_column = db.plan("INSERT INTO t (a, b)", [(None, 1), (None, 2), (None, 3)])
    assert one_column == [
        ("INSERT INTO t (a, b) VALUES (NULL, ?), (NULL, ?)", [[1, 2]]),
        ("INSERT INTO t (a, b) VALUES (NULL, ?)", [[3]]),
    ]
    with db.transaction():
        db.run(plan)
    got = db.execute("SELECT query_id, intent, mode, typeof(intent) FROM eval_queries ORDER BY id")
    assert got.fetchall() == [("q1", None, None, "null"), ("q2", None, "hybrid", "null")]
    db.close()


def test_a_batch_of_queries_alone_is_one_statement_and_its_own_transaction(
    tmp_path: Path,
) -> None:
    """The writer thread takes the GIL back after each call into SQLite, up to 5 ms from a
    thread busy in Python: a burst's batch is one call (no BEGIN, no COMMIT); feedback (read
    and written) is still written in a transaction."""
    log = QueryLog(tmp_path / "log.db", flush_interval=3600)
    statements: list[str] = []
    log._writer._db._conn.set_trace_callback(statements.append)
    for i in range(sdk._BATCH):
        log.query(f"query {i}", session_id="s", result_ids=[f"m{i}"], latency_ms=1.0)
    log.flush()
    writes = [s for s in statements if not s.startswith("PRAGMA")]  # the burst's: below
    assert [s.split(" ", 3)[:3] for s in writes] == [["INSERT", "INTO", "eval_queries"]]
    statements.clear()
    log.query("one more", session_id="s", result_ids=["m1"])
    log.feedback("reference", session_id="s", memory_id="m1")
    log.flush()
    # the query alone, then the feedback (linked by a SELECT) in a transaction
    assert [s.split(" ")[0] for s in statements if not s.startswith(("SELECT", "PRAGMA"))] == [
        "INSERT",
        "BEGIN",
        "INSERT",
        "COMMIT",
    ]
    log.close()


def test_a_burst_is_checkpointed_after_it_not_in_its_middle(
    tmp_path: Path, small_batches: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SQLite checkpoints (syncing the WAL and the database to the disk) in the commit that
    takes the WAL past its automatic checkpoint's pages: while a burst is drained that is
    BURST_CHECKPOINT_PAGES, and one checkpoint follows a burst of BURST_CHECKPOINT_RECORDS,
    SQLite's own setting back; a smaller burst gets the setting back alone. Traffic that
    never fills a batch leaves the setting alone."""
    monkeypatch.setattr(store_querylog, "BURST_CHECKPOINT_RECORDS", 3 * small_batches)
    log = QueryLog(tmp_path / "log.db", flush_interval=3600)
    conn = log._writer._db._conn
    statements: list[str] = []
    conn.set_trace_callback(statements.append)
    for i in range(small_batches // 2):  # one statement: no BEGIN, no COMMIT
        log.query(f"query {i}", result_ids=[f"m{i}"])
    log.flush()
    log.flush()
    assert [s.split(" ")[0] for s in statements] == ["INSERT"]
    statements.clear()
    with log._writer._lock:  # the writer, woken by the first batch's worth, waits for the rest
        for i in range(3 * small_batches):
            log.query(f"burst {i}", result_ids=[f"m{i}"])
    log.flush()
    log.flush()  # its round begins after the burst's end was handled
    kinds = ["INSERT" if s.startswith("INSERT") else s for s in statements]
    assert kinds == [
        "PRAGMA wal_autocheckpoint",
        f"PRAGMA wal_autocheckpoint = {BURST_CHECKPOINT_PAGES}",
        "INSERT",
        "INSERT",
        "INSERT",
        "PRAGMA wal_autocheckpoint = 1000",
        "PRAGMA wal_checkpoint(PASSIVE)",
    ]
    statements.clear()
    with log._writer._lock:
        for i in range(2 * small_batches + small_batches // 2):  # short of a checkpoint
            log.query(f"small burst {i}", result_ids=[f"m{i}"])
    log.flush()
    log.flush()
    kinds = ["INSERT" if s.startswith("INSERT") else s for s in statements]
    assert kinds[0] == f"PRAGMA wal_autocheckpoint = {BURST_CHECKPOINT_PAGES}"
    assert kinds[-1] == "PRAGMA wal_autocheckpoint = 1000"
    assert set(kinds[1:-1]) == {"INSERT"}
    conn.set_trace_callback(None)
    assert conn.execute("PRAGMA wal_autocheckpoint").fetchone()[0] == 1000
    assert _count(str(tmp_path / "log.db"), "SELECT COUNT(*) FROM eval_queries") == (
        6 * small_batches
    )
    log.close()


def test_a_batch_s_worth_buffered_wakes_the_writer(tmp_path: Path, small_batches: int) -> None:
    """Without waiting out `flush_interval` (an hour here): the call that finds a batch's
    worth buffered wakes the writer, which writes them with no flush(); and it wakes it again
    after it has gone back to sleep."""
    where = tmp_path / "log.db"
    log = QueryLog(where, flush_interval=3600)
    for burst in (1, 2):
        for i in range(small_batches + 1):
            log.query(f"query {burst} {i}")
        deadline = time.monotonic() + 30
        while (
            _count(str(where), "SELECT COUNT(*) FROM eval_queries") < burst * small_batches
            and time.monotonic() < deadline
        ):
            time.sleep(0.01)
        assert _count(str(where), "SELECT COUNT(*) FROM eval_queries") >= burst * small_batches
        with log._idle:  # written, and the writer back asleep, before the second burst
            while log._limit != small_batches:
                log._idle.wait(0.01)
    log.flush()
    assert _count(str(where), "SELECT COUNT(*) FROM eval_queries") == 2 * (small_batches + 1)
    log.close()


def test_a_failed_checkpoint_after_a_burst_is_raised_by_a_flush_once(
    tmp_path: Path, small_batches: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = QueryLog(tmp_path / "log.db", flush_interval=3600)
    real = log._writer.burst

    def burst(draining: bool) -> None:
        real(draining)
        if not draining:
            raise sqlite3.OperationalError("disk I/O error")

    monkeypatch.setattr(log._writer, "burst", burst)
    with log._writer._lock:  # one burst: the writer waits for all of it
        for i in range(2 * small_batches):
            log.query(f"query {i}")
    log.flush()  # the burst's rows are committed before its end is handled
    raised = []
    for _ in range(2):  # the second flush's round is the one after the burst's end, or the third
        try:
            log.flush()
        except sqlite3.OperationalError as exc:
            raised.append(str(exc))
    assert raised == ["disk I/O error"]
    log.close()
    assert _count(str(tmp_path / "log.db"), "SELECT COUNT(*) FROM eval_queries") == (
        2 * small_batches
    )


@pytest.mark.parametrize(
    "value",
    [
        ("m1", "m2"),
        [1, 2.5, None, True],
        {"fts5": ("m1",), "vector": ["m2"]},
        {1: "int key"},
        "caf\u00e9 \n \u2603",
        {"set": {"b", "a"}, "gen": (i for i in range(2))},
        float("inf"),
        [{"stage": "fusion", "duration_ms": 1.2}],
    ],
)
def test_the_stored_json_is_the_text_json_dumps_gives(value: Any) -> None:
    if isinstance(value, dict) and "gen" in value:
        again = {"set": {"b", "a"}, "gen": (i for i in range(2))}
        assert _dumps(value) == json.dumps(again, default=_jsonable)
        return
    assert _dumps(value) == json.dumps(value, default=_jsonable)


def test_json_the_writer_cannot_store_fails_as_json_dumps_does() -> None:
    loop: list[Any] = []
    loop.append(loop)
    with pytest.raises(ValueError, match="Circular reference"):
        _dumps(loop)
    with pytest.raises(TypeError, match="not JSON serializable"):
        _dumps({"x": object()})
    assert _dumps(["after", "failures"]) == '["after", "failures"]'
