"""The results store: every evaluation run and its per-query results, in SQLite.

It satisfies `memgauge.runs.recorder.Recorder` structurally; the runs layer never imports it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from memgauge.store.connection import SQLiteStore
from memgauge.store.seed_rows import insert_eval_results

__all__ = ["ResultStore"]


def _dumps(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


class ResultStore(SQLiteStore):
    """Runs and per-query results under one SQLite file (default `MEMGAUGE_HOME/results.db`)."""

    def save_run(
        self,
        run: Mapping[str, Any],
        systems: Sequence[Mapping[str, Any]],
        queries: Sequence[Mapping[str, Any]],
    ) -> None:
        """Store one run with its systems and per-query rows in a single transaction.

        A run id that exists already is replaced whole, so re-recording is idempotent. A
        retrieval run also gets its seed-002 `eval_results` rows (`memgauge.store.seed_rows`).
        """
        with self._conn:
            self._conn.execute("DELETE FROM runs WHERE run_id = ?", (run["run_id"],))
            self._conn.execute(
                "INSERT INTO runs(run_id, kind, created_at, memgauge_version, dataset_name,"
                " dataset_sha256, settings_json, result_json, duration_seconds)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    run["run_id"],
                    run["kind"],
                    run["created_at"],
                    run["memgauge_version"],
                    run["dataset_name"],
                    run.get("dataset_sha256"),
                    _dumps(run["settings"]),
                    run["result_json"],
                    run.get("duration_seconds"),
                ),
            )
            self._conn.executemany(
                "INSERT INTO run_systems(run_id, system, status, reason, spec_json, metrics_json)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                [
                    (
                        run["run_id"],
                        s["system"],
                        s["status"],
                        s.get("reason"),
                        _dumps(s["spec"]),
                        _dumps(s["metrics"]),
                    )
                    for s in systems
                ],
            )
            if run["kind"] == "retrieval":
                insert_eval_results(self._conn, json.loads(run["result_json"]))
            self._conn.executemany(
                "INSERT INTO query_results(run_id, system, query_id, category, intent,"
                " metrics_json, hits_json, latency_json, error)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (
                        run["run_id"],
                        q["system"],
                        q["query_id"],
                        q.get("category"),
                        q.get("intent"),
                        _dumps(q["metrics"]),
                        _dumps(q["hits"]),
                        _dumps(q.get("latency_ms", {})),
                        q.get("error"),
                    )
                    for q in queries
                ],
            )

    def list_runs(self, limit: int = 50) -> list[dict[str, Any]]:
        """The newest runs first: id, kind, time, dataset and version."""
        rows = self._conn.execute(
            "SELECT run_id, kind, created_at, dataset_name, memgauge_version, duration_seconds"
            " FROM runs ORDER BY created_at DESC LIMIT ?",
            (limit,),
        ).fetchall()
        keys = ("run_id", "kind", "created_at", "dataset_name", "memgauge_version", "duration")
        return [dict(zip(keys, row, strict=True)) for row in rows]

    def run_json(self, run_id: str) -> str | None:
        """The full result JSON of a run, or None if there is no such run."""
        row = self._conn.execute(
            "SELECT result_json FROM runs WHERE run_id = ?", (run_id,)
        ).fetchone()
        return None if row is None else str(row[0])

    def query_results(self, run_id: str, system: str) -> list[dict[str, Any]]:
        """Per-query rows of one system in one run, by query id."""
        rows = self._conn.execute(
            "SELECT query_id, category, intent, metrics_json, hits_json, latency_json, error"
            " FROM query_results WHERE run_id = ? AND system = ? ORDER BY query_id",
            (run_id, system),
        ).fetchall()
        return [
            {
                "query_id": r[0],
                "category": r[1],
                "intent": r[2],
                "metrics": json.loads(r[3]),
                "hits": json.loads(r[4]),
                "latency_ms": json.loads(r[5]),
                "error": r[6],
            }
            for r in rows
        ]
