"""SQLite connection settings, in one place for every store module.

WAL so readers never block the writer, a busy timeout so concurrent writers wait instead of
failing, foreign keys on, synchronous=NORMAL (durable at checkpoints, safe with WAL).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Self

from memgauge.errors import UsageError
from memgauge.store.migrations import migrate

__all__ = ["SQLiteStore", "connect"]

BUSY_TIMEOUT_MS = 10_000


def connect(path: str | Path, *, check_same_thread: bool = True) -> sqlite3.Connection:
    """Open `path` (or ":memory:") with memgauge's settings."""
    conn = sqlite3.connect(
        str(path), timeout=BUSY_TIMEOUT_MS / 1000, check_same_thread=check_same_thread
    )
    conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    if str(path) != ":memory:":
        try:
            conn.execute("PRAGMA journal_mode = WAL")
        except sqlite3.DatabaseError as exc:
            conn.close()
            if isinstance(exc, sqlite3.OperationalError):  # locked, read-only...: not the file
                raise
            raise UsageError(
                f"{path}: not a SQLite database ({exc}); give the path of a memgauge store"
                " (for example MEMGAUGE_HOME/results.db) or of a new file"
            ) from None
    conn.execute("PRAGMA synchronous = NORMAL")
    conn.execute("PRAGMA foreign_keys = ON")
    return conn


class SQLiteStore:
    """A store on one SQLite file: opened with these settings and migrated to the latest
    schema; closes with the `with` block."""

    #: whether another thread may use the connection (never two at once: the caller's duty)
    threads: bool = False

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._conn = connect(self.path, check_same_thread=not self.threads)
        migrate(self._conn)

    def close(self) -> None:
        """Close the connection."""
        self._conn.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
