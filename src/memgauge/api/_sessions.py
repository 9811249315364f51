"""Sessions and task outcomes from the query log (seed 002 sections 5.3 and 5.4): summaries,
the outcome report, batch validation, the implicit signals derived from the logs, and channel
contribution."""

from __future__ import annotations

import math
from collections.abc import Sequence
from contextlib import closing
from pathlib import Path
from typing import Any

from memgauge.api._store import Location
from memgauge.errors import UsageError, argument
from memgauge.online import sessions as ses
from memgauge.online.querylog import QueryLog
from memgauge.store.sessions import add_signals, read_sessions

__all__ = [
    "batch_validate",
    "derive_log_signals",
    "log_channel_contribution",
    "outcome_correlation",
    "record_outcome",
    "session_report",
]


def session_report(db: Location, sessions: Sequence[str] = ()) -> dict[str, Any]:
    """Query log `db`'s session summaries (all sessions, or those named: a UsageError for one
    the log does not have) and the session-length signal over them."""
    logs = read_sessions(db, list(sessions) or None)
    missing = [s for s in sessions if s not in logs]
    if missing:
        raise UsageError(f"{db}: no session {missing[0]!r} in the query log")
    summaries = [ses.session_summary(logs[s]) for s in sorted(logs)]
    return {
        "sessions": summaries,
        "session_length": ses.session_length_signal(summaries),
    }


def outcome_correlation(db: Location) -> dict[str, Any]:
    """How retrieval quality goes with task outcomes in query log `db` (`online.sessions.
    outcome_report`), with how many sessions had outcomes at all."""
    logs = read_sessions(db)
    summaries = [ses.session_summary(s) for s in logs.values()]
    return {
        "n_sessions": len(summaries),
        "n_with_outcome": sum(1 for s in summaries if s["outcomes"]),
        "n_judged_with_outcome": sum(
            1 for s in summaries if s["outcomes"] and s["avg_mrr"] is not None
        ),
        **ses.outcome_report(summaries),
    }


def _named(**given: str | None) -> None:
    """A UsageError for the first of `given` (keyword -> value, None: not given) that is '':
    it was recorded as a session, task or memory called ''. Named as its caller wrote it
    (`--task ''` in a command, `task_id=''` from Python)."""
    for name, value in given.items():
        if value == "":
            said = argument(name, "''", flag="--task" if name == "task_id" else None)
            raise UsageError(f"{said}: an empty one names nothing; give its id")


def record_outcome(
    db: Location,
    session: str,
    *,
    task_id: str | None = None,
    success: bool | None = None,
    score: float | None = None,
) -> None:
    """Log one task outcome for `session` (what `QueryLog.outcome` does in a server)."""
    _named(session=session, task_id=task_id)
    if success is None and score is None:
        either = argument("success", flag="--success / --failure")
        raise UsageError(f"an outcome needs {either} or {argument('score')}")
    if score is not None and not math.isfinite(score):
        raise UsageError(f"{argument('score')} must be a finite number, not {score}")
    with closing(QueryLog(db)) as log:
        log.outcome(session, task_id=task_id, success=success, score=score)


def batch_validate(
    db: Location,
    session: str,
    *,
    useful: Sequence[str] = (),
    not_useful: Sequence[str] = (),
    task_id: str | None = None,
) -> dict[str, Any]:
    """Validate memories of `session` after its task (seed 002 section 5.2); returns what was
    validated and what the session accessed and still has not validated. A memory named both
    ways, or none at all, is a UsageError."""
    _named(
        task_id=task_id,
        useful=next((m for m in useful if not m), None),
        not_useful=next((m for m in not_useful if not m), None),
    )
    both = sorted(set(useful) & set(not_useful))
    if both:
        raise UsageError(f"memory {both[0]!r} is given as both useful and not useful")
    if not (useful or not_useful):
        raise UsageError("name the memories: --useful ID and / or --not-useful ID")
    if session not in read_sessions(db, [session]):
        raise UsageError(f"{db}: no session {session!r} in the query log")
    verdicts = {**dict.fromkeys(useful, True), **dict.fromkeys(not_useful, False)}
    with closing(QueryLog(db)) as log:
        log.validate_batch(session, verdicts, task_id=task_id)
    left = ses.session_summary(read_sessions(db, [session])[session])["to_validate"]
    return {"validated": len(verdicts), "to_validate": left}


def derive_log_signals(
    db: Location, *, memories_file: Path | None = None, dump_from: str | None = None
) -> dict[str, int]:
    """Derive scroll-past and copy/reference feedback from query log `db` and record the new
    ones; reference needs the memories' texts (`memories_file`, JSONL of Memory, or the dump
    of `dump_from`). Returns how many of each were derived and how many were new."""
    from memgauge.api._online import memories_from

    texts = {m.id: m.text for m in memories_from(memories_file, dump_from) or ()}
    found = ses.derive_signals(read_sessions(db, outputs=True), texts)
    added = add_signals(db, found)
    return {
        "scroll_past": sum(1 for f in found if f[0] == "scroll_past"),
        "reference": sum(1 for f in found if f[0] == "reference"),
        "new": added,
    }


def log_channel_contribution(db: Location, *, k: int = 10) -> dict[str, Any]:
    """Per channel, its share of the top-`k` results logged in `db` (`online.sessions.
    channel_contribution`)."""
    return ses.channel_contribution(read_sessions(db), k)
