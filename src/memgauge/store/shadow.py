"""Shadow-run comparisons in the results store: seed 002's `eval_shadow_runs`, one row per
shadowed query (`memgauge.store.seed_rows` says which column holds what)."""

from __future__ import annotations

import threading
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from memgauge.store.connection import SQLiteStore
from memgauge.store.seed_rows import (
    SHADOW_KEYS,
    insert_shadow_row,
    replace_eval_results,
    shadow_eval_row,
    shadow_row,
)

__all__ = ["ShadowStore"]


class ShadowStore(SQLiteStore):
    """`eval_shadow_runs`: record comparisons (from any thread) and read them back."""

    threads = True

    def __init__(self, path: Any, *, read_only: bool = False) -> None:
        super().__init__(path, read_only=read_only)
        self._lock = threading.Lock()

    def record_shadow(self, experiment: str, row: Mapping[str, Any]) -> None:
        """Keep one comparison."""
        with self._lock, self._conn:
            insert_shadow_row(self._conn, experiment, row, datetime.now(UTC).isoformat())

    def shadow_rows(self, experiment: str) -> list[dict[str, Any]]:
        """Every comparison of `experiment` whose treatment answered, oldest first, with the
        keys `ShadowRunner` recorded."""
        with self._lock:
            rows = self._conn.execute(
                f"SELECT {', '.join(SHADOW_KEYS)} FROM eval_shadow_runs"
                " WHERE feature_id = ? AND error IS NULL ORDER BY id",
                (experiment,),
            ).fetchall()
        return [shadow_row(r) for r in rows]

    def shadow_errors(self, experiment: str) -> int:
        """How many treatment calls failed."""
        with self._lock:
            row = self._conn.execute(
                "SELECT COUNT(*) FROM eval_shadow_runs WHERE feature_id = ? AND error IS NOT NULL",
                (experiment,),
            ).fetchone()
        return int(row[0])

    def experiments(self) -> list[str]:
        """Experiment names."""
        with self._lock:
            return [
                str(r[0])
                for r in self._conn.execute(
                    "SELECT DISTINCT feature_id FROM eval_shadow_runs ORDER BY 1"
                )
            ]

    def project(self, experiment: str) -> None:
        """Summarize `experiment` into seed 002's `eval_results` (one row, run_type shadow):
        done when its summary is read, off the recording path."""
        rows = self.shadow_rows(experiment)
        with self._lock, self._conn:
            replace_eval_results(
                self._conn,
                f"shadow:{experiment}",
                [shadow_eval_row(experiment, rows, datetime.now(UTC).isoformat())],
            )
