"""The query log's connection: the standard library's sqlite3 on `sqlite://` (no third-party
import on the logging path), psycopg on `postgresql://` (the only thing `memgauge[postgres]`
adds). SQL is written once, with `?` placeholders, in the subset both dialects read.

Schema: a store at the newest revision (`url.HEAD`) is used as it is; a new or older one is
migrated first through SQLAlchemy and Alembic (`engine.upgrade`), imported only then.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from functools import lru_cache
from itertools import chain
from pathlib import Path
from typing import Any

from memgauge.store.connection import connect
from memgauge.store.url import HEAD, StoreURL, store_url

__all__ = ["LogDB"]

#: the confidence update's clamp to [0, 1], rounded so that 0.5 + 4 x 0.10 - 0.05 + ... lands
#: exactly on 0.9 (`{x}` is the expression)
_CLAMP = {
    "sqlite": "MIN(1.0, MAX(0.0, ROUND({x}, 6)))",
    "postgresql": "LEAST(1.0, GREATEST(0.0, ROUND(CAST({x} AS numeric), 6)))",
}

#: rows per INSERT statement at most (a power of two): on SQLite, fewer where the library takes
#: fewer parameters (999 before 3.32, 32,766 after) than the rows' bound columns need. On
#: PostgreSQL psycopg adapts every parameter in Python and the server plans the whole VALUES
#: list: 64 rows a statement took 0.60 CPU-s for 50,000 rows, 256 took 0.85 and one row a
#: statement (pipelined) 0.92.
_ROWS_PER_STATEMENT = 2048
_PG_ROWS_PER_STATEMENT = 64

#: statements to run, each with its executions' parameters (`LogDB.plan`)
Plan = list[tuple[str, list[Sequence[Any]]]]


@lru_cache(maxsize=512)
def _values(head: str, bound: tuple[bool, ...], count: int, tail: str) -> str:
    row = f"({', '.join('?' if b else 'NULL' for b in bound)})"
    return f"{head} VALUES {', '.join([row] * count)} {tail}".rstrip()


def _bound_columns(columns: Sequence[Sequence[Any]]) -> tuple[bool, ...]:
    """For each column, whether any row gives it a value (not None).

    Why: sqlite3 binds None through its adaptation protocol (a key tuple, a dict lookup, two
    attribute lookups), 0.28 us a parameter with the GIL held, seven times an int's; a logged
    search leaves most of its 25 columns None, so binding them was most of a row's cost. A
    column None in every row of a statement is written as NULL in its text instead: the same
    stored value. `any` stops at a column's first true value and reads a None without a call;
    only a column of false values is counted."""
    return tuple(any(col) or col.count(None) != len(col) for col in columns)


def _migrate(url: StoreURL) -> None:
    from memgauge.store import engine

    eng = engine.open_engine(url)
    try:
        engine.upgrade(eng, url)
    finally:
        eng.dispose()


def _sqlite_version(conn: sqlite3.Connection) -> str | None:
    try:
        row = conn.execute("SELECT version_num FROM alembic_version").fetchone()
    except sqlite3.OperationalError:  # no such table: a new store, or one made before Alembic
        return None
    return None if row is None else str(row[0])


class LogDB:
    """One connection to the query log's store (a path or a URL)."""

    def __init__(self, where: str | Path | StoreURL, *, threads: bool = False) -> None:
        self.url = store_url(where)
        self.dialect = self.url.dialect
        self._threads = threads
        self._conn: Any = None
        self._open()

    def _open(self) -> None:
        if self.url.path is not None:
            path = self.url.path
            path.parent.mkdir(parents=True, exist_ok=True)

            def ensure(conn: sqlite3.Connection) -> None:
                if _sqlite_version(conn) != HEAD:
                    _migrate(self.url)

            self._conn = connect(path, check_same_thread=not self._threads, setup=ensure)
            # transactions are explicit (`transaction`), and a statement outside one is its own:
            # sqlite3 would otherwise open one before an INSERT and wait for a commit
            self._conn.isolation_level = None
            return
        try:
            import psycopg
        except ImportError:
            from memgauge.errors import UnavailableError

            raise UnavailableError(
                f"{self.url}: logging into PostgreSQL needs its driver:"
                " pip install 'memgauge[postgres]'"
            ) from None
        assert self.url.dsn is not None
        conn = psycopg.connect(self.url.dsn, autocommit=True)
        row = None
        with suppress(psycopg.errors.UndefinedTable):  # a new store
            row = conn.execute("SELECT version_num FROM alembic_version").fetchone()
        if row is None or row[0] != HEAD:
            _migrate(self.url)
        self._conn = conn

    def reopen_if_broken(self) -> None:
        """A PostgreSQL connection the server dropped is replaced (the next write retries)."""
        if self.dialect == "postgresql" and (self._conn is None or self._conn.broken):
            self._open()

    def sql(self, text: str) -> str:
        """`text` in this driver's placeholders."""
        return text if self.dialect == "sqlite" else text.replace("?", "%s")

    def clamp(self, expr: str) -> str:
        """SQL clamping `expr` to [0, 1], rounded to 6 places."""
        return _CLAMP[self.dialect].format(x=expr)

    def execute(self, text: str, params: Sequence[Any] = ()) -> Any:
        """Run one statement; returns the cursor."""
        return self._conn.execute(self.sql(text), tuple(params))

    def insert(self, head: str, rows: Sequence[Sequence[Any]], tail: str = "") -> None:
        """`head VALUES (?, ...), (?, ...) tail`: many rows per statement, in order (`plan`)."""
        self.run(self.plan(head, rows, tail))

    def plan(self, head: str, rows: Sequence[Sequence[Any]], tail: str = "") -> Plan:
        """The statements `insert` runs for `rows`, in order.

        Why not `executemany` of a one-row INSERT: sqlite3 lets go of the GIL around every
        statement it runs and must take it back from the application's threads after each
        (up to a switch interval, 5 ms, from a thread busy in Python), and each statement
        costs its own reset and step; a thousand rows per statement pay that once. Full
        statements of `per` rows, the rest in power-of-two statements: a handful of distinct
        statements, each compiled once (the driver's statement cache). A column no row gives
        is NULL in the statement's text, not a parameter (`_bound_columns`), which also lets
        more rows into a statement on SQLite."""
        return self.plan_columns(head, list(zip(*rows, strict=True)), tail)

    def plan_columns(self, head: str, columns: Sequence[Sequence[Any]], tail: str = "") -> Plan:
        """`plan` of rows given column by column (sequences of one length, in the statement's
        order): what the query-log writer makes, without a tuple per row."""
        if not columns or not columns[0]:
            return []
        rows = len(columns[0])
        # psycopg too: the writer's CPU a row 4.3-4.5 us with NULL in the text, 5.4-7.4 without
        bound = _bound_columns(columns)
        kept = [col for col, b in zip(columns, bound, strict=True) if b]
        per = self._rows_per_statement(len(kept))

        def params(at: int, size: int) -> list[Any]:  # row after row, the kept columns only
            return list(
                chain.from_iterable(zip(*[col[at : at + size] for col in kept], strict=True))
            )

        plan: Plan = []
        full = rows - rows % per
        if full:
            text = _values(head, bound, per, tail)
            plan.append((text, [params(at, per) for at in range(0, full, per)]))
        at, size = full, per
        while at < rows:
            size //= 2
            if rows - at >= size:
                plan.append((_values(head, bound, size, tail), [params(at, size)]))
                at += size
        return plan

    def run(self, plan: Plan) -> None:
        """Run `plan`'s statements (inside a transaction: `transaction`)."""
        for text, params in plan:
            self.executemany(text, params)

    def run_alone(self, plan: Plan) -> bool:
        """Run `plan` as a transaction of its own if it is one statement, run once; False (and
        nothing done) otherwise.

        Why: one statement outside a transaction is one (SQLite takes the write lock when the
        statement starts, waiting out the busy timeout, and commits when it ends), so the
        driver lets go of the GIL once for the whole write instead of three times (BEGIN,
        the statement, COMMIT); the writer thread takes the GIL back from a thread busy in
        Python only after a switch interval (5 ms) each time."""
        if len(plan) != 1 or len(plan[0][1]) != 1:
            return False
        text, (params,) = plan[0]
        self.execute(text, params)
        return True

    def _rows_per_statement(self, width: int) -> int:
        if self.dialect != "sqlite":
            return _PG_ROWS_PER_STATEMENT
        limit = self._conn.getlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER)
        per = _ROWS_PER_STATEMENT
        while per > 1 and per * width > limit:
            per //= 2
        return per

    def executemany(self, text: str, rows: Sequence[Sequence[Any]]) -> None:
        """Run one statement per row."""
        if not rows:
            return
        if self.dialect == "sqlite":
            self._conn.executemany(text, rows)
        else:
            with self._conn.cursor() as cur:
                cur.executemany(self.sql(text), rows)

    @contextmanager
    def transaction(self) -> Iterator[LogDB]:
        """A write transaction (SQLite's write lock taken up front), committed at the end."""
        if self.dialect == "sqlite":
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                yield self
            except BaseException:
                self._conn.rollback()
                raise
            self._conn.commit()
            return
        with self._conn.transaction():
            yield self

    def locked(self, exc: BaseException) -> bool:
        """Whether `exc` is SQLite's lock held too long by another process (worth retrying)."""
        return isinstance(exc, sqlite3.OperationalError) and "locked" in str(exc)

    def close(self) -> None:
        """Close the connection."""
        if self._conn is not None:
            self._conn.close()
