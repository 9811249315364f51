"""What `memgauge watch` reads from the query log: the searches logged after a cursor (the
`eval_queries` row id), and for the ones it evaluates their judgments, the selections their
feedback recorded and the features whose shadow runs replayed them.

Standard library only, like the rest of the query log (`logdb`)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from contextlib import closing
from dataclasses import dataclass, field

from memgauge.store.logdb import LogDB
from memgauge.store.sessions import Where, best_judgments

__all__ = ["LoggedSearch", "read_searches_after", "search_signals", "shadowed_by"]

#: feedback events that say the agent used a result (as `online.sessions` counts selection)
_SELECT = ("read_after_search", "reference")
_CHUNK = 500


@dataclass
class LoggedSearch:
    """One `eval_queries` row as the watch filters and scores it. `grades` (memory -> 0-3, the
    most trusted judgment of each, implicit ones left out) and `selected` (a result was read or
    referenced) are filled by `search_signals` for the rows evaluated."""

    row_id: int
    query_id: str
    intent: str | None
    mode: str | None
    tool_name: str
    category: str | None
    session_id: str | None
    created_at: str
    result_ids: list[str]
    quality_proxy: float | None
    latency_ms: float | None
    grades: dict[str, int] = field(default_factory=dict)
    selected: bool = False


def read_searches_after(where: Where, after: int, limit: int) -> list[LoggedSearch]:
    """Up to `limit` searches logged after row `after`, in row order."""
    with closing(LogDB(where)) as conn:
        rows = conn.execute(
            "SELECT id, query_id, intent, mode, tool_name, eval_category, session_id, created_at,"
            " result_ids, quality_proxy_score, total_latency_ms FROM eval_queries WHERE id > ?"
            " ORDER BY id LIMIT ?",
            (after, limit),
        ).fetchall()
    return [
        LoggedSearch(
            int(r[0]),
            str(r[1]),
            r[2],
            r[3],
            str(r[4]),
            r[5],
            r[6],
            str(r[7]),
            [str(i) for i in json.loads(r[8] or "[]")],
            None if r[9] is None else float(r[9]),
            None if r[10] is None else float(r[10]),
        )
        for r in rows
    ]


def _chunks(ids: Sequence[str]) -> list[list[str]]:
    return [list(ids[i : i + _CHUNK]) for i in range(0, len(ids), _CHUNK)]


def shadowed_by(where: Where, feature: str, query_ids: Sequence[str]) -> set[str]:
    """Of `query_ids`, those a shadow run of flag `feature` replayed."""
    found: set[str] = set()
    with closing(LogDB(where)) as conn:
        for chunk in _chunks(query_ids):
            marks = ", ".join("?" * len(chunk))
            found.update(
                str(r[0])
                for r in conn.execute(
                    "SELECT DISTINCT query_id FROM eval_shadow_runs WHERE feature_id = ? AND"
                    f" query_id IN ({marks})",
                    (feature, *chunk),
                )
            )
    return found


def search_signals(where: Where, searches: Sequence[LoggedSearch]) -> None:
    """Fill each search's `grades` (judgments other than the implicit "shown") and `selected`
    (a read or a reference logged against it) as the store holds them now."""
    by_id = {s.query_id: s for s in searches}
    with closing(LogDB(where)) as conn:
        for (qid, mid), row in best_judgments(conn, set(by_id)).items():
            if row["source"] != "implicit":
                by_id[qid].grades[mid] = int(row["grade"])
        for chunk in _chunks(list(by_id)):
            marks = ", ".join("?" * len(chunk))
            for (qid,) in conn.execute(
                f"SELECT DISTINCT query_id FROM eval_feedback WHERE event_type IN {_SELECT}"
                f" AND query_id IN ({marks})",
                chunk,
            ):
                by_id[str(qid)].selected = True
