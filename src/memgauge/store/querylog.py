"""Writing production query logs and feedback (seed 002 sections 5 and 6): batched inserts into
`eval_queries` and `eval_feedback`, and the `memory_validate` confidence update, each batch in
one transaction. Standard library only, so the logging SDK stays light."""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from memgauge.store.connection import connect
from memgauge.store.migrations import migrate

__all__ = ["QueryLogWriter"]

USEFUL_STEP, NOT_USEFUL_STEP = 0.10, -0.05


class QueryLogWriter:
    """One connection, used by the SDK's writer thread only."""

    def __init__(self, path: str | Path) -> None:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        self._conn = connect(path, check_same_thread=False)
        migrate(self._conn)
        self._lock = threading.Lock()  # the writer thread and readers share the connection

    def write(
        self, queries: Sequence[tuple[Any, ...]], feedback: Sequence[tuple[Any, ...]]
    ) -> None:
        """Insert one batch; retried while another process holds the write lock."""
        q_rows = [
            (
                qid,
                text,
                intent,
                mode,
                session,
                tool,
                json.dumps(list(ids)),
                len(ids),
                json.dumps(channels or {}),
                latency,
                trace,
                created,
            )
            for qid, text, intent, mode, session, tool, ids, channels, latency, trace, created in queries
        ]
        f_rows = [
            (kind, session, qid, mid, rank, json.dumps(meta or {}), created)
            for kind, session, qid, mid, rank, meta, created in feedback
        ]
        for attempt in range(50):
            try:
                with self._lock, self._conn:
                    self._conn.executemany(
                        "INSERT OR IGNORE INTO eval_queries (query_id, query, intent, mode, session_id,"
                        " tool_name, result_ids, result_count, channel_contributions, total_latency_ms,"
                        " trace_id, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                        q_rows,
                    )
                    self._conn.executemany(
                        "INSERT INTO eval_feedback (event_type, session_id, query_id, memory_id,"
                        " rank_in_results, metadata, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                        f_rows,
                    )
                    for kind, _s, _q, mid, _r, _m, created in feedback:
                        if kind in ("validate_useful", "validate_not_useful") and mid is not None:
                            step = USEFUL_STEP if kind == "validate_useful" else NOT_USEFUL_STEP
                            self._conn.execute(
                                "INSERT INTO memory_confidence (memory_id, confidence, validations,"
                                " updated_at) VALUES (?, MIN(1.0, MAX(0.0, 0.5 + ?)), 1, ?)"
                                " ON CONFLICT(memory_id) DO UPDATE SET"
                                " confidence = MIN(1.0, MAX(0.0, confidence + ?)),"
                                " validations = validations + 1, updated_at = excluded.updated_at",
                                (str(mid), step, created, step),
                            )
                return
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) or attempt == 49:
                    raise
                time.sleep(0.02)

    def confidence(self, memory_id: str) -> tuple[float, int] | None:
        """(confidence, validations) of a memory, or None if never validated."""
        row = self._conn.execute(
            "SELECT confidence, validations FROM memory_confidence WHERE memory_id = ?",
            (memory_id,),
        ).fetchone()
        return None if row is None else (float(row[0]), int(row[1]))

    def close(self) -> None:
        """Close the connection."""
        with self._lock:
            self._conn.close()
