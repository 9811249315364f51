"""SQLite connection settings, in one place for every store module.

WAL so readers never block the writer, a busy timeout so concurrent writers wait instead of
failing, foreign keys on, synchronous=NORMAL (durable at checkpoints, safe with WAL).

Opening is retried under the same busy timeout. SQLite does not call its busy handler for every
lock it takes: switching a new file to WAL while another process does the same, or creating
the schema there, can fail with "database is locked" at once (measured: 12 of 90 processes
opening one new file together). Those steps are idempotent, so they are simply tried again,
with jittered backoff, until the busy timeout has passed.
"""

from __future__ import annotations

import random
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import Self
from urllib.parse import quote

from memgauge.errors import UsageError
from memgauge.store.migrations import migrate, schema_problem

__all__ = ["SQLiteStore", "connect", "connect_read_only", "upgrade"]

BUSY_TIMEOUT_MS = 10_000


def _busy(exc: sqlite3.OperationalError) -> bool:
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None:
        return code & 0xFF in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)
    return "locked" in str(exc) or "busy" in str(exc)


def _settings(conn: sqlite3.Connection, path: str | Path) -> None:
    conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    if str(path) != ":memory:":
        try:
            conn.execute("PRAGMA journal_mode = WAL")
        except sqlite3.DatabaseError as exc:
            if isinstance(exc, sqlite3.OperationalError):  # locked, read-only...: not the file
                raise
            raise UsageError(
                f"{path}: not a SQLite database ({exc}); give the path of a memgauge store"
                " (for example MEMGAUGE_HOME/results.db) or of a new file"
            ) from None
    conn.execute("PRAGMA synchronous = NORMAL")
    conn.execute("PRAGMA foreign_keys = ON")


def connect(
    path: str | Path,
    *,
    check_same_thread: bool = True,
    setup: Callable[[sqlite3.Connection], object] | None = None,
) -> sqlite3.Connection:
    """Open `path` (or ":memory:") with memgauge's settings, then run `setup` on it (the
    schema: `migrate`, or a module's own `CREATE ... IF NOT EXISTS`; it must be idempotent).
    Both are retried while the file is locked, up to the busy timeout."""
    conn = sqlite3.connect(
        str(path), timeout=BUSY_TIMEOUT_MS / 1000, check_same_thread=check_same_thread
    )
    deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
    delay = 0.002
    while True:
        try:
            _settings(conn, path)
            if setup is not None:
                setup(conn)
            return conn
        except sqlite3.OperationalError as exc:
            if not _busy(exc) or time.monotonic() >= deadline:
                conn.close()
                raise
        except BaseException:
            conn.close()
            raise
        if conn.in_transaction:
            conn.rollback()
        time.sleep(delay * (0.5 + random.random()))
        delay = min(delay * 2, 0.1)


def connect_read_only(path: str | Path, *, check_same_thread: bool = True) -> sqlite3.Connection:
    """Open an existing store for reading only: SQLite's `mode=ro` (the file cannot be written
    through this connection, whatever runs on it) and `query_only`, no migration. A store at
    another schema than this memgauge's is refused with the command that upgrades it (an older
    one) or the advice to upgrade memgauge (a newer one)."""
    where = Path(path)
    if not where.is_file():
        raise UsageError(
            f"no results store at {where}: nothing has been recorded there yet (run `memgauge"
            " run SUITE` or `memgauge evaluate`), or give the right one with --store"
        )
    uri = f"file:{quote(str(where.resolve()))}?mode=ro"
    conn = sqlite3.connect(
        uri, uri=True, timeout=BUSY_TIMEOUT_MS / 1000, check_same_thread=check_same_thread
    )
    try:
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        conn.execute("PRAGMA query_only = ON")
        problem = schema_problem(conn)
    except sqlite3.DatabaseError as exc:
        conn.close()
        raise UsageError(
            f"{where}: cannot be read as a memgauge store ({exc}); give the path of a memgauge"
            " store (for example MEMGAUGE_HOME/results.db)"
        ) from None
    if problem is not None:
        conn.close()
        raise UsageError(f"{where}: {problem}")
    return conn


def upgrade(path: str | Path) -> list[str]:
    """Apply the migrations the store at `path` lacks; return their names (none: up to date)."""
    conn = connect(path)
    try:
        return migrate(conn)
    finally:
        conn.close()


class SQLiteStore:
    """A store on one SQLite file: opened with these settings and migrated to the latest
    schema, or, `read_only`, opened as it is (see `connect_read_only`); closes with the
    `with` block."""

    #: whether another thread may use the connection (never two at once: the caller's duty)
    threads: bool = False

    def __init__(self, path: str | Path, *, read_only: bool = False) -> None:
        self.path = Path(path)
        self.read_only = read_only
        if read_only:
            self._conn = connect_read_only(self.path, check_same_thread=not self.threads)
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._conn = connect(self.path, check_same_thread=not self.threads, setup=migrate)

    def close(self) -> None:
        """Close the connection."""
        self._conn.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
