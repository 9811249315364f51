"""SQLite connection settings, in one place for every store module.

WAL so readers never block the writer, a busy timeout so concurrent writers wait instead of
failing, foreign keys on, synchronous=NORMAL (durable at checkpoints, safe with WAL).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

__all__ = ["connect"]

BUSY_TIMEOUT_MS = 10_000


def connect(path: str | Path, *, check_same_thread: bool = True) -> sqlite3.Connection:
    """Open `path` (or ":memory:") with memgauge's settings."""
    conn = sqlite3.connect(
        str(path), timeout=BUSY_TIMEOUT_MS / 1000, check_same_thread=check_same_thread
    )
    conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    if str(path) != ":memory:":
        conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = NORMAL")
    conn.execute("PRAGMA foreign_keys = ON")
    return conn
