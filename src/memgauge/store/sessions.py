"""Reading sessions back from the query log (seed 002 sections 5.3 and 5.4): each session's
queries, feedback, turn count, task outcomes and agent outputs, with the best judgment of each
of its (query, memory) pairs; and recording the implicit signals derived from them.

Standard library only, like the rest of the query log (`logdb`)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from contextlib import closing
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from memgauge.store.logdb import LogDB
from memgauge.store.url import StoreURL

__all__ = [
    "LoggedQuery",
    "SessionLog",
    "add_signals",
    "best_judgments",
    "read_sessions",
    "session_contexts",
]

Where = str | Path | StoreURL
_SOURCE_RANK = {"manual": 3, "validated": 2, "bootstrapped": 1, "implicit": 0}


def best_judgments(conn: LogDB, wanted: set[str]) -> dict[tuple[str, str], dict[str, Any]]:
    """Per (query, memory) of the `wanted` queries, the judgment of the most trusted source
    (manual > validated > bootstrapped > implicit) as a `judgments.jsonl` row."""
    best: dict[tuple[str, str], tuple[int, dict[str, Any]]] = {}
    for qid, mid, grade, source, annotator in conn.execute(
        "SELECT query_id, memory_id, relevance, source, annotator FROM eval_judgments"
    ):
        if qid not in wanted:
            continue
        rank = _SOURCE_RANK.get(source, -1)
        if rank > best.get((qid, mid), (-2, {}))[0]:
            row = {"query_id": qid, "memory_id": mid, "grade": grade, "source": source}
            if annotator:
                row["annotator"] = annotator
            best[(qid, mid)] = (rank, row)
    return {key: row for key, (_rank, row) in best.items()}


_ACCESS_EVENTS = ("read_after_search", "reference", "validate_useful")


def session_contexts(conn: LogDB, wanted: dict[str, tuple[str, str]]) -> dict[str, dict[str, Any]]:
    """Seed 002 `sessionContext` of each wanted query (id -> (session, created_at)): its turn
    (how many queries its session logged before it; 0 is a cold start) and its working memory
    (the memories the session had read, referenced or validated useful before it)."""
    sessions = sorted({s for s, _c in wanted.values()})
    turns: dict[str, int] = {}
    access: dict[str, list[tuple[str, str | None, str]]] = {}
    for i in range(0, len(sessions), 500):
        chunk = sessions[i : i + 500]
        marks = ", ".join("?" * len(chunk))
        seen: dict[str, int] = {}
        for sid, qid in conn.execute(
            f"SELECT session_id, query_id FROM eval_queries WHERE session_id IN ({marks})"
            " ORDER BY session_id, created_at, id",
            chunk,
        ):
            turns[qid] = seen.get(sid, 0)
            seen[sid] = turns[qid] + 1
        for sid, mid, qid, at in conn.execute(
            "SELECT session_id, memory_id, query_id, created_at FROM eval_feedback WHERE memory_id"
            f" IS NOT NULL AND event_type IN {_ACCESS_EVENTS} AND session_id IN ({marks})"
            " ORDER BY created_at, id",
            chunk,
        ):
            access.setdefault(sid, []).append((str(mid), qid, str(at)))
    out = {}
    for qid, (sid, created) in wanted.items():
        turn = turns.get(qid, 0)
        working: list[str] = []
        for mid, about, at in access.get(sid, []):
            # an access linked to a query came after that query's turn; an unlinked one is
            # placed by its time (millisecond timestamps cannot order a read and the next query)
            before = turns[about] < turn if about in turns else at < created
            if before and mid not in working:
                working.append(mid)
        out[qid] = {"session_id": sid, "working_memory_ids": working, "turn_number": turn}
    return out


@dataclass
class LoggedQuery:
    """One logged search."""

    query_id: str
    text: str
    result_ids: list[str]
    channels: dict[str, list[str]]
    created_at: str


@dataclass
class SessionLog:
    """Everything the query log holds about one session, in time order."""

    session_id: str
    queries: list[LoggedQuery] = field(default_factory=list)
    #: (event_type, query_id, memory_id, rank, created_at, metadata)
    feedback: list[tuple[str, str | None, str | None, int | None, str, dict[str, Any]]] = field(
        default_factory=list
    )
    turns: int | None = None
    started_at: str | None = None
    ended_at: str | None = None
    outcomes: list[dict[str, Any]] = field(default_factory=list)
    #: (output id, query_id, text, created_at)
    outputs: list[tuple[int, str | None, str, str]] = field(default_factory=list)
    #: query id -> memory id -> grade (the most trusted source's), for the searches judged by
    #: more than the implicit "shown" grade
    grades: dict[str, dict[str, int]] = field(default_factory=dict)


def _where(column: str, sessions: Sequence[str] | None) -> tuple[str, list[str]]:
    if sessions is None:
        return f"{column} IS NOT NULL", []
    return f"{column} IN ({', '.join('?' * len(sessions))})", list(sessions)


def read_sessions(
    path: Where, sessions: Sequence[str] | None = None, *, outputs: bool = False
) -> dict[str, SessionLog]:
    """The sessions of query log `path` (all, or those named), by id; agent outputs only when
    asked (they are the largest rows)."""
    out: dict[str, SessionLog] = {}

    def get(sid: str) -> SessionLog:
        if sid not in out:
            out[sid] = SessionLog(sid)
        return out[sid]

    with closing(LogDB(path)) as conn:
        cond, args = _where("session_id", sessions)
        for sid, qid, text, ids, channels, at in conn.execute(
            "SELECT session_id, query_id, query, result_ids, channel_contributions, created_at"
            f" FROM eval_queries WHERE {cond} ORDER BY created_at, id",
            args,
        ):
            chans = {str(c): [str(i) for i in v] for c, v in json.loads(channels or "{}").items()}
            get(sid).queries.append(
                LoggedQuery(qid, text, [str(i) for i in json.loads(ids or "[]")], chans, at)
            )
        for sid, kind, qid, mid, rank, meta, at in conn.execute(
            "SELECT session_id, event_type, query_id, memory_id, rank_in_results, metadata,"
            f" created_at FROM eval_feedback WHERE {cond} ORDER BY created_at, id",
            args,
        ):
            get(sid).feedback.append((kind, qid, mid, rank, at, json.loads(meta or "{}")))
        for sid, turns, started, ended in conn.execute(
            f"SELECT session_id, turns, started_at, ended_at FROM eval_sessions WHERE {cond}", args
        ):
            s = get(sid)
            s.turns, s.started_at, s.ended_at = turns, started, ended
        for row in conn.execute(
            "SELECT session_id, task_id, success, score, knowledge_delta, uncertainty_reduction,"
            f" learning_index, spec_folder, created_at FROM eval_outcomes WHERE {cond}"
            " ORDER BY created_at, id",
            args,
        ):
            keys = ("task_id", "success", "score", "knowledge_delta", "uncertainty_reduction")
            rec = dict(
                zip((*keys, "learning_index", "spec_folder", "created_at"), row[1:], strict=True)
            )
            if rec["success"] is not None:
                rec["success"] = bool(rec["success"])
            get(row[0]).outcomes.append(rec)
        if outputs:
            for oid, sid, qid, text, at in conn.execute(
                "SELECT id, session_id, query_id, text, created_at FROM eval_agent_outputs"
                f" WHERE {cond} ORDER BY created_at, id",
                args,
            ):
                get(sid).outputs.append((int(oid), qid, text, at))
        wanted = {q.query_id: s for s in out.values() for q in s.queries}
        grades: dict[str, dict[str, int]] = {}
        judged: set[str] = set()
        for (qid, mid), row in best_judgments(conn, set(wanted)).items():
            grades.setdefault(qid, {})[mid] = int(row["grade"])
            if row["source"] != "implicit":
                judged.add(qid)
        # "shown, never selected" alone (grade 1, implicit) is no judgment of a search
        for qid in judged:
            wanted[qid].grades[qid] = grades[qid]
    return out


def add_signals(
    path: Where, rows: Sequence[tuple[str, str, str | None, str, int | None, dict[str, Any]]]
) -> int:
    """Record derived implicit feedback (event type, session, query id, memory id, rank,
    metadata), each at most once per (type, session, query, memory); how many were new."""
    now = datetime.now(UTC).isoformat(timespec="milliseconds")
    added = 0
    with closing(LogDB(path)) as conn, conn.transaction():
        for kind, sid, qid, mid, rank, meta in rows:
            same_query = "query_id IS NULL" if qid is None else "query_id = ?"
            seen = conn.execute(
                "SELECT 1 FROM eval_feedback WHERE event_type = ? AND session_id = ? AND"
                f" memory_id = ? AND {same_query}",
                (kind, sid, mid) if qid is None else (kind, sid, mid, qid),
            ).fetchone()
            if seen is None:
                conn.execute(
                    "INSERT INTO eval_feedback (event_type, session_id, query_id, memory_id,"
                    " rank_in_results, metadata, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (kind, sid, qid, mid, rank, json.dumps(meta), now),
                )
                added += 1
    return added
