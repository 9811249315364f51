"""Named, append-only migrations of the results store.

Never edit a migration that has shipped: add a new one. `tests/store/test_schema.py` asserts
the final schema, so a change to it is always deliberate.
"""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime

__all__ = ["MIGRATIONS", "migrate"]

MIGRATIONS: list[tuple[str, str]] = [
    (
        "0001_runs",
        """
        CREATE TABLE runs (
            run_id TEXT PRIMARY KEY,
            kind TEXT NOT NULL,
            created_at TEXT NOT NULL,
            memgauge_version TEXT NOT NULL,
            dataset_name TEXT NOT NULL,
            dataset_sha256 TEXT,
            settings_json TEXT NOT NULL,
            result_json TEXT NOT NULL,
            duration_seconds REAL
        );
        CREATE INDEX idx_runs_created ON runs(created_at);
        CREATE TABLE run_systems (
            run_id TEXT NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,
            system TEXT NOT NULL,
            status TEXT NOT NULL,
            reason TEXT,
            spec_json TEXT NOT NULL,
            metrics_json TEXT NOT NULL,
            PRIMARY KEY (run_id, system)
        );
        CREATE TABLE query_results (
            run_id TEXT NOT NULL,
            system TEXT NOT NULL,
            query_id TEXT NOT NULL,
            category TEXT,
            intent TEXT,
            metrics_json TEXT NOT NULL,
            hits_json TEXT NOT NULL,
            latency_json TEXT NOT NULL,
            error TEXT,
            PRIMARY KEY (run_id, system, query_id),
            FOREIGN KEY (run_id, system) REFERENCES run_systems(run_id, system) ON DELETE CASCADE
        );
        """,
    ),
]


def migrate(conn: sqlite3.Connection) -> list[str]:
    """Apply the migrations not yet applied, each in its own transaction; return their names."""
    conn.execute(
        "CREATE TABLE IF NOT EXISTS schema_migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)"
    )
    done = {row[0] for row in conn.execute("SELECT name FROM schema_migrations")}
    applied: list[str] = []
    for name, sql in MIGRATIONS:
        if name in done:
            continue
        with conn:
            for statement in (s.strip() for s in sql.split(";")):
                if statement:
                    conn.execute(statement)
            conn.execute(
                "INSERT INTO schema_migrations(name, applied_at) VALUES (?, ?)",
                (name, datetime.now(UTC).isoformat()),
            )
        applied.append(name)
    return applied
