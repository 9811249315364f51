"""Counts over the query log for health reporting (seed 002 section 6.3 item 7, the
`memory_health` tool): logging volume over time windows, and the golden set per category."""

from __future__ import annotations

from contextlib import closing
from datetime import datetime, timedelta
from typing import Any

from memgauge.store.logdb import LogDB
from memgauge.store.sessions import Where

__all__ = ["golden_counts", "log_volume"]

_WINDOWS = {"last_24h": timedelta(days=1), "last_7d": timedelta(days=7)}
_TABLES = ("eval_queries", "eval_feedback", "eval_shadow_runs", "eval_outcomes")


def log_volume(path: Where, now: datetime) -> dict[str, Any]:
    """Rows per logging table in total and in the last 24 hours and 7 days, the sessions
    seen, and the newest query's time (None when nothing was logged)."""
    with closing(LogDB(path)) as conn:
        out: dict[str, Any] = {}
        for table in _TABLES:
            counts = {"total": int(conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0])}
            for name, span in _WINDOWS.items():
                counts[name] = int(
                    conn.execute(
                        f"SELECT COUNT(*) FROM {table} WHERE created_at >= ?",
                        ((now - span).isoformat(),),
                    ).fetchone()[0]
                )
            out[table] = counts
        row = conn.execute(
            "SELECT COUNT(DISTINCT session_id), MAX(created_at) FROM eval_queries"
        ).fetchone()
        out["sessions"] = int(row[0] or 0)
        out["newest_query_at"] = row[1]
    return out


def golden_counts(path: Where) -> dict[str | None, int]:
    """Golden-set queries (harvested, `is_eval_corpus = 1`) per category (None: none given)."""
    with closing(LogDB(path)) as conn:
        return {
            cat: int(n)
            for cat, n in conn.execute(
                "SELECT eval_category, COUNT(*) FROM eval_queries WHERE is_eval_corpus = 1"
                " GROUP BY eval_category"
            )
        }
