"""SQLite connection settings, in one place for every SQLite file memgauge opens (the results
store through `engine`, the logging SDK, the LLM cache, the reference memory).

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

from memgauge.errors import UsageError

__all__ = ["BUSY_TIMEOUT_MS", "busy", "check_file_path", "connect"]

BUSY_TIMEOUT_MS = 10_000


def busy(exc: sqlite3.OperationalError) -> bool:
    """Whether `exc` is SQLite's "database is locked" (or busy): worth trying again."""
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None:
        return code & 0xFF in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)
    return "locked" in str(exc) or "busy" in str(exc)


#: what `connect` opens, as its refusal of a file that is no SQLite database names it
STORE = "a memgauge store (for example MEMGAUGE_HOME/results.db)"


def _settings(conn: sqlite3.Connection, path: str | Path, what: str) -> None:
    conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    if str(path) != ":memory:":
        try:
            conn.execute("PRAGMA journal_mode = WAL")
        except sqlite3.DatabaseError as exc:
            if isinstance(exc, sqlite3.OperationalError):  # locked, read-only...: not the file
                raise
            raise UsageError(
                f"{path}: not a SQLite database ({exc}); give the path of {what} or of a new file"
            ) from None
    conn.execute("PRAGMA synchronous = NORMAL")
    conn.execute("PRAGMA foreign_keys = ON")


def check_file_path(path: Path) -> None:
    """A UsageError naming `path` when it exists and cannot be a SQLite file (a directory, a
    FIFO, a device): SQLite's "unable to open database file" or "disk I/O error" says neither
    what nor where."""
    if path.is_dir():
        raise UsageError(f"{path}: is a directory; give the path of a SQLite file")
    if path.exists() and not path.is_file():
        raise UsageError(
            f"{path}: not a regular file (a FIFO or device); give the path of a SQLite file"
        )


def connect(
    path: str | Path,
    *,
    check_same_thread: bool = True,
    setup: Callable[[sqlite3.Connection], object] | None = None,
    what: str = STORE,
) -> sqlite3.Connection:
    """Open `path` (or ":memory:") with memgauge's settings, then run `setup` on it (the
    schema: `migrate`, or a module's own `CREATE ... IF NOT EXISTS`; it must be idempotent).
    Both are retried while the file is locked, up to the busy timeout. A path that cannot be
    a SQLite file (a directory, a directory that does not exist or cannot be written) is a
    UsageError naming it: SQLite's own "unable to open database file" does not; a file that is
    no SQLite database is one naming `what` the path should be."""
    if str(path) != ":memory:":
        check_file_path(Path(path))
    try:
        conn = sqlite3.connect(
            str(path), timeout=BUSY_TIMEOUT_MS / 1000, check_same_thread=check_same_thread
        )
    except sqlite3.OperationalError as exc:
        if "unable to open" not in str(exc):
            raise
        raise UsageError(
            f"{path}: cannot be opened as a SQLite file ({exc}); its directory must exist and"
            " be writable"
        ) from None
    deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
    delay = 0.002
    while True:
        try:
            _settings(conn, path, what)
            if setup is not None:
                setup(conn)
            return conn
        except sqlite3.OperationalError as exc:
            if not busy(exc) or time.monotonic() >= deadline:
                conn.close()
                raise
        except BaseException:
            conn.close()
            raise
        if conn.in_transaction:
            conn.rollback()
        time.sleep(delay * (0.5 + random.random()))
        delay = min(delay * 2, 0.1)
