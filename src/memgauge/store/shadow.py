"""Shadow-run comparisons in the results store, one row per compared query."""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from memgauge.store.connection import SQLiteStore

__all__ = ["ShadowStore"]


class ShadowStore(SQLiteStore):
    """`shadow_runs`: record comparisons (from any thread) and read them back."""

    threads = True

    def __init__(self, path: Any) -> None:
        super().__init__(path)
        self._lock = threading.Lock()

    def record_shadow(self, experiment: str, row: Mapping[str, Any]) -> None:
        """Keep one comparison."""
        with self._lock, self._conn:
            self._conn.execute(
                "INSERT INTO shadow_runs (experiment, query_id, created_at, classification, error,"
                " row_json) VALUES (?, ?, ?, ?, ?, ?)",
                (
                    experiment,
                    str(row.get("query_id")),
                    datetime.now(UTC).isoformat(),
                    row.get("classification"),
                    row.get("error"),
                    json.dumps(dict(row)),
                ),
            )

    def shadow_rows(self, experiment: str) -> list[dict[str, Any]]:
        """Every comparison of `experiment` that did not fail, oldest first."""
        with self._lock:
            rows = self._conn.execute(
                "SELECT row_json FROM shadow_runs WHERE experiment = ? AND error IS NULL ORDER BY id",
                (experiment,),
            ).fetchall()
        return [json.loads(r[0]) for r in rows]

    def shadow_errors(self, experiment: str) -> int:
        """How many treatment calls failed."""
        with self._lock:
            row = self._conn.execute(
                "SELECT COUNT(*) FROM shadow_runs WHERE experiment = ? AND error IS NOT NULL",
                (experiment,),
            ).fetchone()
        return int(row[0])

    def experiments(self) -> list[str]:
        """Experiment names."""
        with self._lock:
            return [
                str(r[0])
                for r in self._conn.execute(
                    "SELECT DISTINCT experiment FROM shadow_runs ORDER BY 1"
                )
            ]
