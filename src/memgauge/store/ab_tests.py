"""Sequential A/B tests in the results store: each test's configuration and SPRT state, and
the paired per-query results fed to it (so a test continues across processes and days)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from memgauge.store.connection import SQLiteStore

__all__ = ["ABTestStore"]

_PAIR_COLUMNS = (
    "query_id",
    "control",
    "treatment",
    "control_latency_ms",
    "treatment_latency_ms",
    "constitutional_delta",
)


def _now() -> str:
    return datetime.now(UTC).isoformat()


class ABTestStore(SQLiteStore):
    """`ab_tests` and `ab_test_pairs`."""

    def create(
        self, name: str, metric: str, config: Mapping[str, Any], state: Mapping[str, Any]
    ) -> bool:
        """Create a test; False when one of that name exists."""
        with self._conn:
            cur = self._conn.execute(
                "INSERT OR IGNORE INTO ab_tests (name, status, metric, config_json, state_json,"
                " created_at, updated_at) VALUES (?, 'running', ?, ?, ?, ?, ?)",
                (name, metric, json.dumps(dict(config)), json.dumps(dict(state)), _now(), _now()),
            )
        return cur.rowcount == 1

    def get(self, name: str) -> dict[str, Any] | None:
        """One test with its config and state parsed."""
        row = self._conn.execute(
            "SELECT name, status, metric, config_json, state_json, created_at, updated_at"
            " FROM ab_tests WHERE name = ?",
            (name,),
        ).fetchone()
        if row is None:
            return None
        keys = ("name", "status", "metric", "config", "state", "created_at", "updated_at")
        out = dict(zip(keys, row, strict=True))
        out["config"], out["state"] = json.loads(out["config"]), json.loads(out["state"])
        return out

    def names(self) -> list[str]:
        """Every test, oldest first."""
        return [
            str(r[0]) for r in self._conn.execute("SELECT name FROM ab_tests ORDER BY created_at")
        ]

    def add(
        self, name: str, pairs: Sequence[Mapping[str, Any]], status: str, state: Mapping[str, Any]
    ) -> None:
        """Append pairs and save the new state, in one transaction."""
        with self._conn:
            start = self._conn.execute(
                "SELECT COALESCE(MAX(seq), 0) FROM ab_test_pairs WHERE name = ?", (name,)
            ).fetchone()[0]
            self._conn.executemany(
                f"INSERT INTO ab_test_pairs (name, seq, {', '.join(_PAIR_COLUMNS)})"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (name, start + i + 1, *(p.get(c) for c in _PAIR_COLUMNS))
                    for i, p in enumerate(pairs)
                ],
            )
            self._conn.execute(
                "UPDATE ab_tests SET status = ?, state_json = ?, updated_at = ? WHERE name = ?",
                (status, json.dumps(dict(state)), _now(), name),
            )

    def pairs(self, name: str) -> list[dict[str, Any]]:
        """The test's pairs in order."""
        rows = self._conn.execute(
            f"SELECT {', '.join(_PAIR_COLUMNS)} FROM ab_test_pairs WHERE name = ? ORDER BY seq",
            (name,),
        ).fetchall()
        return [dict(zip(_PAIR_COLUMNS, r, strict=True)) for r in rows]
