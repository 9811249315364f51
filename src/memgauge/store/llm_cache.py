"""The LLM response cache: one SQLite file (`$MEMGAUGE_HOME/llm-cache.db` by default).

A cache, not a record: deleting the file only costs calls. Entries are keyed by a hash of
model, messages, parameters and repeat index (`memgauge.llm.cache.request_key`); the value is
the response as JSON. No key or header is ever part of it. Safe for several threads (one lock)
and several processes (WAL, busy timeout; a duplicate insert keeps the first answer).
"""

from __future__ import annotations

import json
import sqlite3
import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from memgauge.store.connection import connect

__all__ = ["SQLiteResponseCache"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS llm_responses (
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    response_json TEXT NOT NULL,
    created_at TEXT NOT NULL
)
"""


def _create(conn: sqlite3.Connection) -> None:
    conn.execute(_SCHEMA)
    conn.commit()


class SQLiteResponseCache:
    """`get(key)` / `put(key, model, response)` / `delete(key)` over one SQLite file."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # a file that is no SQLite database is refused with the cache's advice, not the store's
        self._conn = connect(
            self.path,
            check_same_thread=False,
            setup=_create,
            what="an LLM response cache (MEMGAUGE_LLM_CACHE, else MEMGAUGE_HOME/llm-cache.db)",
        )
        self._lock = threading.Lock()

    def get(self, key: str) -> dict[str, Any] | None:
        """The cached response for `key`, or None."""
        with self._lock:
            row = self._conn.execute(
                "SELECT response_json FROM llm_responses WHERE key = ?", (key,)
            ).fetchone()
        return None if row is None else dict(json.loads(row[0]))

    def put(
        self,
        key: str,
        model: str,
        response: dict[str, Any],
        *,
        replace: bool = False,
        over: dict[str, Any] | None = None,
    ) -> None:
        # as `memgauge.llm.cache.ResponseCache.put` says; `over` is checked and replaced in
        # one transaction, so another process's answer stored meanwhile is kept
        now = datetime.now(UTC).isoformat()
        with self._lock:
            if over is not None:
                self._conn.execute("BEGIN IMMEDIATE")  # no other process writes till commit
                try:
                    row = self._conn.execute(
                        "SELECT response_json FROM llm_responses WHERE key = ?", (key,)
                    ).fetchone()
                    if row is not None and json.loads(row[0]) == over:
                        self._conn.execute(
                            "UPDATE llm_responses SET model = ?, response_json = ?, "
                            "created_at = ? WHERE key = ?",
                            (model, json.dumps(response), now, key),
                        )
                except BaseException:
                    self._conn.rollback()
                    raise
            else:
                verb = "INSERT OR REPLACE" if replace else "INSERT OR IGNORE"
                self._conn.execute(
                    f"{verb} INTO llm_responses (key, model, response_json, created_at) "
                    "VALUES (?, ?, ?, ?)",
                    (key, model, json.dumps(response), now),
                )
            self._conn.commit()

    def __len__(self) -> int:
        with self._lock:
            return int(self._conn.execute("SELECT COUNT(*) FROM llm_responses").fetchone()[0])

    def close(self) -> None:
        """Close the file."""
        with self._lock:
            self._conn.close()
