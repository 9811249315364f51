"""Writing production query logs and feedback (seed 002 sections 5 and 6): batched inserts into
`eval_queries` and `eval_feedback`, and the `memory_validate` confidence update, each batch in
one transaction; and the `memgauge logs` commands' reads and updates of those tables.

Standard library only on `sqlite://`, so the logging SDK stays light; `postgresql://` needs
only the driver (`logdb`)."""

from __future__ import annotations

import json
import os
import random
import threading
import time
from collections import Counter
from collections.abc import Sequence
from contextlib import ExitStack, closing
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from memgauge._util.files import atomic_writer
from memgauge.store.logdb import LogDB
from memgauge.store.querylog_rows import (
    QUERY_FIELDS,
    JSONText,
    QueryRow,
    _dumps_mapping,
    _text,
    encode_mapping,
    encode_stages,
    query_columns,
    storable_columns,
)
from memgauge.store.sessions import best_judgments, session_contexts
from memgauge.store.url import StoreURL

Where = str | Path | StoreURL

__all__ = [
    "QUERY_FIELDS",
    "RETENTION_DAYS",
    "JSONText",
    "QueryLogWriter",
    "QueryRow",
    "annotation_pool",
    "apply_retention",
    "bootstrap_judgments",
    "encode_mapping",
    "encode_stages",
    "harvest",
    "import_annotations",
    "unknown_query_ids",
]

# seed 002: queries and feedback 90 days (queries archived to JSON first), shadow runs 30; the
# agent outputs kept for copy/reference detection (ours) are the agent's own words: as queries
RETENTION_DAYS = {
    "eval_queries": 90,
    "eval_feedback": 90,
    "eval_shadow_runs": 30,
    "eval_agent_outputs": 90,
}
# the golden set (harvested queries) and the feedback its judgments come from are kept
_NOT_GOLDEN = {
    "eval_queries": "is_eval_corpus = 0",
    "eval_shadow_runs": "1 = 1",
    "eval_agent_outputs": "1 = 1",
    "eval_feedback": "(query_id IS NULL OR query_id NOT IN"
    " (SELECT query_id FROM eval_queries WHERE is_eval_corpus = 1))",
}

USEFUL_STEP, NOT_USEFUL_STEP = 0.10, -0.05
_STEPS = {"validate_useful": USEFUL_STEP, "validate_not_useful": NOT_USEFUL_STEP}


_QUERY_INSERT = (
    "INSERT INTO eval_queries (query_id, query, intent, mode, session_id, tool_name, result_ids,"
    " result_count, channel_contributions, total_latency_ms, trace_id, created_at, eval_category,"
    " fusion_weights, quality_proxy_score, fallback_triggered, fallback_reason, degraded_mode,"
    " stage_trace, token_usage_ratio, pressure_level, avg_relevance_score, top_result_score,"
    " boost_impact_delta, dedup_tokens_saved)"
)
_QUERY_TAIL = "ON CONFLICT (query_id) DO NOTHING"
_FEEDBACK_INSERT = (
    "INSERT INTO eval_feedback (event_type, session_id, query_id, memory_id, rank_in_results,"
    " metadata, created_at)"
)
_SESSION_UPSERT = (
    "INSERT INTO eval_sessions (session_id, turns, started_at, ended_at, updated_at, metadata)"
    " VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (session_id) DO UPDATE SET"
    " turns = COALESCE(excluded.turns, eval_sessions.turns),"
    " ended_at = COALESCE(excluded.ended_at, eval_sessions.ended_at),"
    " updated_at = excluded.updated_at,"
    " metadata = COALESCE(excluded.metadata, eval_sessions.metadata)"
)
_OUTCOME_INSERT = (
    "INSERT INTO eval_outcomes (session_id, task_id, success, score, knowledge_delta,"
    " uncertainty_reduction, learning_index, spec_folder, metadata, created_at)"
    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
_OUTPUT_INSERT = (
    "INSERT INTO eval_agent_outputs (session_id, query_id, text, created_at) VALUES (?, ?, ?, ?)"
)


def _num(value: Any) -> float | None:
    return None if value is None else float(value)


def _stored(query: QueryRow) -> list[Any]:
    """The values a query record is stored as (its ids as ASCII JSON text, which takes any
    string); the record itself when it cannot be converted (`storable_columns` says why)."""
    try:
        return [value for column in query_columns([query]) for value in column]
    except (TypeError, ValueError):
        return list(query)


def _encodable(
    record: Sequence[Any], values: Sequence[Any], what: str, rejected: list[str]
) -> bool:
    """Whether every string of `values` (what the flat SDK `record` is stored as) encodes as
    UTF-8; when one does not, `record` described in `rejected`, as one JSON cannot hold is."""
    for value in values:
        if isinstance(value, str):
            try:
                value.encode()
            except UnicodeEncodeError as exc:
                rejected.append(f"{what} {record[0]}: UnicodeEncodeError: {exc}")
                return False
    return True


def _event_rows(
    events: Sequence[tuple[Any, ...]], rejected: list[str]
) -> dict[str, list[tuple[Any, ...]]]:
    """The SDK's session, outcome and agent-output records (each its kind, then its fields) as
    rows, by statement (in order: a session's later call updates its earlier one)."""
    out: dict[str, list[tuple[Any, ...]]] = {
        _SESSION_UPSERT: [],
        _OUTCOME_INSERT: [],
        _OUTPUT_INSERT: [],
    }
    for event in events:
        kind, rec = event[0], event[1:]
        try:
            if kind == "session":
                sid, turns, ended, meta, at = rec
                meta_json = None if meta is None else _text(meta, _dumps_mapping)
                turns_v = None if turns is None else int(turns)
                out[_SESSION_UPSERT].append(
                    (str(sid), turns_v, at, at if ended else None, at, meta_json)
                )
            elif kind == "outcome":
                sid, task, success, score, kd, ur, li, folder, meta, at = rec
                out[_OUTCOME_INSERT].append(
                    (
                        str(sid),
                        None if task is None else str(task),
                        None if success is None else int(bool(success)),
                        _num(score),
                        _num(kd),
                        _num(ur),
                        _num(li),
                        folder,
                        "{}" if meta is None else _text(meta, _dumps_mapping),
                        at,
                    )
                )
            else:
                sid, qid, text, at = rec
                out[_OUTPUT_INSERT].append((str(sid), qid, str(text), at))
        except (TypeError, ValueError) as exc:
            rejected.append(f"{kind} of session {rec[0]}: {type(exc).__name__}: {exc}")
    return out


#: WAL pages SQLite lets build up while the writer drains a burst before it checkpoints in its
#: middle (64 MiB at 4 KiB pages, about 150,000 logged searches of the benchmark's shape); at
#: the burst's end it checkpoints at once (`QueryLogWriter.burst`)
BURST_CHECKPOINT_PAGES = 16_384
#: records written since the writer's last checkpoint that make a burst's end checkpoint: about
#: what takes the WAL past SQLite's 1,000 pages (0.1 page a logged search of the benchmark's
#: shape)
BURST_CHECKPOINT_RECORDS = 10_000


class QueryLogWriter:
    """One connection, used by the SDK's writer thread only."""

    def __init__(self, where: Where) -> None:
        self._db = LogDB(where, threads=True)
        self._lock = threading.Lock()  # the writer thread and readers share the connection
        self._checkpoint_pages: int | None = None  # SQLite's own (outside a burst)
        self._unsynced = 0  # records written since this writer's last checkpoint

    def burst(self, draining: bool) -> None:
        """Before a burst is drained, raise SQLite's automatic checkpoint to
        BURST_CHECKPOINT_PAGES of WAL; after it, put it back, and checkpoint (PASSIVE: what no
        other process's reader still needs) if BURST_CHECKPOINT_RECORDS or more were written
        since this writer's last one; fewer are left to SQLite's own checkpoint, or to a later
        burst's end (a checkpoint after every small burst would sync the disk more often than
        SQLite does). Nothing on PostgreSQL.

        Why: SQLite checkpoints in the transaction that takes the WAL past 1,000 pages (4 MiB,
        about 12,000 rows of eval_queries), and a checkpoint syncs the WAL and the database to
        the disk (`synchronous = NORMAL`): about a dozen in a burst of 100,000 rows (40
        fdatasync calls in a run of benchmarks/bench_querylog.py against 15), each 2-10 ms on
        this machine's disk, in the writer thread, between a burst's first row and its last
        one committed. After the burst one checkpoint copies each page once (an index page a
        burst changes a hundred times was copied at every checkpoint). What a checkpoint makes
        durable against a power cut (a process that dies loses no committed row either way)
        waits for the burst's end, or BURST_CHECKPOINT_PAGES."""
        db = self._db
        if db.dialect != "sqlite":
            return
        with self._lock:
            if self._checkpoint_pages is None:  # read once: each call lets go of the GIL
                self._checkpoint_pages = int(db.execute("PRAGMA wal_autocheckpoint").fetchone()[0])
            pages = BURST_CHECKPOINT_PAGES if draining else self._checkpoint_pages
            db.execute(f"PRAGMA wal_autocheckpoint = {pages}")
            if draining or self._unsynced < BURST_CHECKPOINT_RECORDS:
                return
            self._unsynced = 0
            try:
                db.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
            except Exception as exc:
                # another process holds the checkpoint: it does the work (or, later, SQLite's
                # automatic checkpoint, set back above, on one of this writer's commits)
                if not db.locked(exc):
                    raise

    def write(
        self,
        queries: Sequence[QueryRow],
        feedback: Sequence[tuple[Any, ...]],
        events: Sequence[tuple[Any, ...]] = (),
    ) -> list[str]:
        """Insert one batch; retried while another process holds the write lock. A record
        that cannot be stored (say a value JSON cannot hold, or a string UTF-8 cannot encode)
        is left out and described in the returned list; the rest of the batch is written.
        """
        try:
            return self._write(queries, feedback, events)
        except UnicodeEncodeError:
            # a lone surrogate in a string (text decoded with errors="surrogateescape"): the
            # database takes UTF-8 only, and the whole batch failed, again at every retry.
            # Rare: looked for here, not in every record's conversion
            rejected: list[str] = []
            self._unsynced -= len(queries) + len(feedback) + len(events)
            return rejected + self._write(
                [q for q in queries if _encodable(q, _stored(q), "query", rejected)],
                [f for f in feedback if _encodable(f, f, "feedback", rejected)],
                [e for e in events if _encodable(e, e, "record", rejected)],
            )

    def _write(
        self,
        queries: Sequence[QueryRow],
        feedback: Sequence[tuple[Any, ...]],
        events: Sequence[tuple[Any, ...]],
    ) -> list[str]:
        """`write`, with every string encodable.

        Feedback logged without a query id is linked to the session's most recent query whose
        results held the memory (seed 002 sections 5.2 and 5.3), with the memory's 1-based
        rank there when none was given; -1 when no query of the session surfaced it."""
        rejected: list[str] = []
        self._unsynced += len(queries) + len(feedback) + len(events)  # for `burst`
        # column by column (querylog_rows.query_columns says why)
        q_cols = storable_columns(queries, rejected) if queries else []
        f_rows = []
        for kind, session, qid, mid, rank, meta, created in feedback:
            try:
                meta_json = "{}" if meta is None else _text(meta, _dumps_mapping)
                f_rows.append([kind, session, qid, mid, rank, meta_json, created])
            except (TypeError, ValueError) as exc:
                rejected.append(f"feedback {kind} on {mid}: {type(exc).__name__}: {exc}")
        e_rows = _event_rows(events, rejected)
        db = self._db
        clamp = db.clamp("{} + ?")
        for attempt in range(50):
            try:
                with self._lock:
                    db.reopen_if_broken()
                    q_plan = db.plan_columns(_QUERY_INSERT, q_cols, _QUERY_TAIL)
                    # a burst's batch of queries alone: one statement, its own transaction
                    if not f_rows and not any(e_rows.values()) and db.run_alone(q_plan):
                        return rejected
                    with db.transaction():
                        db.run(q_plan)
                        db.insert(_FEEDBACK_INSERT, [self._linked(row) for row in f_rows])
                        db.executemany(
                            "INSERT INTO memory_confidence (memory_id, confidence,"
                            f" validations, updated_at) VALUES (?, {clamp.format('0.5')},"
                            " 1, ?) ON CONFLICT (memory_id) DO UPDATE SET"
                            f" confidence = {clamp.format('memory_confidence.confidence')},"
                            " validations = memory_confidence.validations + 1,"
                            " updated_at = excluded.updated_at",
                            [
                                (str(mid), _STEPS[kind], created, _STEPS[kind])
                                for kind, _s, _q, mid, _r, _m, created in f_rows
                                if kind in _STEPS and mid is not None
                            ],
                        )
                        for sql, rows in e_rows.items():
                            db.executemany(sql, rows)
                return rejected
            except Exception as exc:
                if not db.locked(exc) or attempt == 49:
                    raise
                time.sleep(0.02)
        return rejected

    def _linked(self, row: list[Any]) -> tuple[Any, ...]:
        _kind, session, qid, mid, rank, _meta, created = row
        if qid is None and mid is not None and session is not None:
            recent = self._db.execute(
                "SELECT query_id, result_ids FROM eval_queries WHERE session_id = ?"
                " AND created_at <= ? ORDER BY created_at DESC, id DESC LIMIT 50",
                (session, created),
            ).fetchall()
            for candidate, ids in recent:
                found = [str(i) for i in json.loads(ids or "[]")]
                if mid in found:
                    row[2] = candidate
                    if rank is None:
                        row[4] = found.index(mid) + 1
                    break
            else:
                if rank is None:
                    row[4] = -1
        return tuple(row)

    def confidence(self, memory_id: str) -> tuple[float, int] | None:
        """(confidence, validations) of a memory, or None if never validated."""
        with self._lock:  # the connection is the writer thread's: never both at once
            self._db.reopen_if_broken()
            row = self._db.execute(
                "SELECT confidence, validations FROM memory_confidence WHERE memory_id = ?",
                (memory_id,),
            ).fetchone()
        return None if row is None else (float(row[0]), int(row[1]))

    def close(self) -> None:
        """Close the connection."""
        with self._lock:
            self._db.close()


def apply_retention(
    path: Where,
    archive_dir: str | Path,
    *,
    now: datetime | None = None,
    days: dict[str, int] | None = None,
) -> dict[str, int]:
    """Delete rows older than their table's retention (never the golden set's queries, nor the
    feedback on them), archiving expired queries first to
    `archive_dir/eval_queries-<timestamp>.jsonl` (written whole or not at all, through a
    temporary file and a rename, fsynced and in place before the deletes are committed: a crash
    or a SIGTERM never loses a row nor leaves a file cut inside a line). The select, the archive
    and the deletes are one transaction, reading one snapshot (a row logged meanwhile waits for
    the next pass): a failure before its commit leaves no archive and every row. Returns rows
    deleted per table."""
    keep = {**RETENTION_DAYS, **(days or {})}
    when = now or datetime.now(UTC)
    deleted: dict[str, int] = {}
    with closing(LogDB(path)) as conn, conn.transaction(), ExitStack() as archived:
        # one transaction (its write lock taken first): the rows archived are the rows deleted;
        # PostgreSQL reads each statement afresh (read committed) unless told to read all of
        # them from one snapshot: a row committed between the select and the deletes was
        # deleted unarchived
        if conn.dialect != "sqlite":
            conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
        cut = {t: (when - timedelta(days=d)).isoformat() for t, d in keep.items()}
        cur = conn.execute(
            f"SELECT * FROM eval_queries WHERE created_at < ? AND {_NOT_GOLDEN['eval_queries']}",
            (cut["eval_queries"],),
        )
        names = [c[0] for c in cur.description]
        rows = [dict(zip(names, r, strict=True)) for r in cur.fetchall()]
        if rows:
            target = Path(archive_dir) / f"eval_queries-{when:%Y%m%dT%H%M%S}.jsonl"
            # a pass in the same second adds to that second's file, as it did when appending
            earlier = target.read_bytes() if target.exists() else b""
            # renamed into place once the deletes are done (a failure in them leaves none),
            # and before they are committed (a crash between archives rows twice, loses none)
            fh = archived.enter_context(atomic_writer(target))
            fh.write(earlier)
            fh.writelines((json.dumps(r) + "\n").encode() for r in rows)
            fh.flush()
            os.fsync(fh.fileno())
        for table in RETENTION_DAYS:
            deleted[table] = conn.execute(
                f"DELETE FROM {table} WHERE created_at < ? AND {_NOT_GOLDEN[table]}",
                (cut[table],),
            ).rowcount
    return deleted


def bootstrap_judgments(path: Where) -> dict[str, int]:
    """Judgments from logged feedback (seed 002 section 2.1), into `eval_judgments`:
    validated useful -> 3 (`validated`), selected (read after search, referenced) -> 2
    (`bootstrapped`), validated not useful -> 0 (`validated`), shown but never selected -> 1
    (`implicit`). The strongest signal wins for a (query, memory); re-running replaces the
    bootstrapped judgments. Returns judgments per grade."""
    with closing(LogDB(path)) as conn:
        queries = conn.execute("SELECT query_id, result_ids FROM eval_queries").fetchall()
        signals: dict[tuple[str, str], tuple[int, str]] = {}
        for qid, ids in queries:
            for mid in json.loads(ids or "[]"):
                signals[(qid, str(mid))] = (1, "implicit")
        order = {
            "validate_not_useful": (0, "validated"),
            "read_after_search": (2, "bootstrapped"),
            "reference": (2, "bootstrapped"),
            "validate_useful": (3, "validated"),
        }
        rank = {
            "validate_useful": 3,
            "validate_not_useful": 2,
            "read_after_search": 1,
            "reference": 1,
        }
        best: dict[tuple[str, str], str] = {}
        for kind, qid, mid in conn.execute(
            "SELECT event_type, query_id, memory_id FROM eval_feedback"
            " WHERE query_id IS NOT NULL AND memory_id IS NOT NULL"
        ):
            if kind in order and rank[kind] >= rank.get(best.get((qid, mid), ""), -1):
                best[(qid, mid)] = kind
        for key, kind in best.items():
            signals[key] = order[kind]
        now = datetime.now(UTC).isoformat()
        with conn.transaction():
            conn.execute(
                "DELETE FROM eval_judgments WHERE source IN ('implicit', 'bootstrapped', 'validated')"
            )
            conn.executemany(
                "INSERT INTO eval_judgments (query_id, memory_id, relevance, source, annotator,"
                " confidence, created_at) VALUES (?, ?, ?, ?, 'feedback', 1.0, ?)",
                [(q, m, g, src, now) for (q, m), (g, src) in signals.items()],
            )
    return dict(Counter(str(g) for g, _src in signals.values()))


def _norm(text: str) -> str:
    return " ".join(text.lower().split())


def harvest(path: Where, n: int, *, seed: int = 0) -> list[str]:
    """Pick up to `n` logged queries for the golden set (seed 002 section 2): duplicates (same
    text, case and spacing aside) collapse to the newest; the sample is stratified by intent
    and category (each stratum gets its share by size, largest remainders first); picked queries are marked
    `is_eval_corpus = 1`. Deterministic for a seed. Returns the query ids."""
    with closing(LogDB(path)) as conn:
        newest: dict[str, tuple[str, str | None, str | None]] = {}
        for qid, text, intent, cat in conn.execute(
            "SELECT query_id, query, intent, eval_category FROM eval_queries ORDER BY created_at, id"
        ):
            newest[_norm(text)] = (qid, intent, cat)
        strata: dict[tuple[Any, Any], list[str]] = {}
        for qid, intent, cat in newest.values():
            strata.setdefault((intent, cat), []).append(qid)
        rng = random.Random(seed)
        keys = sorted(strata, key=str)
        total = sum(len(v) for v in strata.values())
        want = min(max(n, 0), total)
        # largest-remainder allocation of `want` over the strata, by their sizes
        exact = {k: want * len(strata[k]) / total for k in keys} if total else {}
        quota = {k: int(exact[k]) for k in keys}
        short = want - sum(quota.values())
        for k in sorted(keys, key=lambda k: exact[k] - quota[k], reverse=True)[:short]:
            quota[k] += 1
        picked: list[str] = []
        for k in keys:
            picked += rng.sample(sorted(strata[k]), min(quota[k], len(strata[k])))
        picked.sort()
        now = datetime.now(UTC).isoformat(timespec="milliseconds")
        with conn.transaction():
            # the harvest time stays the first one: harvesting again keeps a query's
            conn.executemany(
                "UPDATE eval_queries SET is_eval_corpus = 1,"
                " harvested_at = COALESCE(harvested_at, ?) WHERE query_id = ?",
                [(now, q) for q in picked],
            )
    return picked


def annotation_pool(path: Where, *, k: int = 20) -> list[dict[str, Any]]:
    """For each harvested query: the union of the top `k` results every logged run of the
    same text returned (pooling), for people to grade 0-3."""
    with closing(LogDB(path)) as conn:
        rows = conn.execute(
            "SELECT query_id, query, result_ids, is_eval_corpus FROM eval_queries ORDER BY id"
        ).fetchall()
    pools: dict[str, list[str]] = {}
    for _qid, text, ids, _c in rows:
        pool = pools.setdefault(_norm(text), [])
        for mid in json.loads(ids or "[]")[:k]:
            if str(mid) not in pool:
                pool.append(str(mid))
    return [
        {
            "query_id": qid,
            "query": text,
            "candidates": [{"memory_id": m, "grade": None} for m in pools[_norm(text)]],
        }
        for qid, text, _ids, corpus in rows
        if corpus
    ]


def unknown_query_ids(path: Where, query_ids: Sequence[str]) -> set[str]:
    """Those of `query_ids` no logged query has (looked up by the unique index, so a log of
    millions of queries is not read)."""
    wanted = sorted(set(query_ids))
    known: set[str] = set()
    with closing(LogDB(path)) as conn:
        for i in range(0, len(wanted), 500):
            chunk = wanted[i : i + 500]
            known.update(
                r[0]
                for r in conn.execute(
                    f"SELECT query_id FROM eval_queries WHERE query_id IN ({', '.join('?' * len(chunk))})",
                    chunk,
                )
            )
    return set(wanted) - known


def import_annotations(
    path: Where, graded: Sequence[dict[str, Any]], annotator: str = "manual"
) -> int:
    """Store people's grades (`{query_id, candidates: [{memory_id, grade}]}` with grades 0-3;
    ungraded candidates are skipped) as manual judgments; returns how many."""
    now = datetime.now(UTC).isoformat()
    rows = [
        (g["query_id"], str(c["memory_id"]), int(c["grade"]), annotator, now)
        for g in graded
        for c in g.get("candidates", [])
        if c.get("grade") is not None
    ]
    bad = [r for r in rows if not 0 <= r[2] <= 3]
    if bad:
        raise ValueError(f"grades are 0-3; got {bad[0][2]} for {bad[0][0]} / {bad[0][1]}")
    with closing(LogDB(path)) as conn, conn.transaction():
        conn.executemany(
            "INSERT INTO eval_judgments (query_id, memory_id, relevance, source, annotator,"
            " confidence, created_at) VALUES (?, ?, ?, 'manual', ?, 1.0, ?)"
            " ON CONFLICT (query_id, memory_id, source) DO UPDATE SET relevance = excluded.relevance,"
            " annotator = excluded.annotator, created_at = excluded.created_at",
            rows,
        )
    return len(rows)


def golden_set(path: Where) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The harvested queries and, per (query, memory), the judgment of the most trusted source
    (manual > validated > bootstrapped > implicit): the rows of a retrieval dataset's
    `queries.jsonl` and `judgments.jsonl`.

    A query keeps what the evaluation's agent metrics read (seed 002 `EvalQuery`): its
    category, `harvested_at` (when `harvest` picked it; its logging time for a query harvested
    before that was recorded) and, for a query logged in a session, its `session_context`
    (`sessions.session_contexts`): cold-start, personalization lift and dedup savings need them."""
    with closing(LogDB(path)) as conn:
        rows = conn.execute(
            "SELECT query_id, query, intent, eval_category, session_id, created_at, harvested_at"
            " FROM eval_queries WHERE is_eval_corpus = 1 ORDER BY query_id"
        ).fetchall()
        contexts = session_contexts(conn, {r[0]: (r[4], r[5]) for r in rows if r[4] is not None})
        queries = [
            {
                "id": qid,
                "text": text,
                **({"intent": intent} if intent else {}),
                **({"category": cat} if cat else {}),
                **({"session_context": contexts[qid]} if qid in contexts else {}),
                "harvested_at": harvested or created,
            }
            for qid, text, intent, cat, _sid, created, harvested in rows
        ]
        best = best_judgments(conn, {q["id"] for q in queries})
    return queries, [best[key] for key in sorted(best)]


def session_queries(path: Where) -> list[tuple[str, str, str, str]]:
    """(session, query id, text, created_at) of every logged query with a session, in order."""
    with closing(LogDB(path)) as conn:
        return [
            (str(s), str(q), str(t), str(c))
            for s, q, t, c in conn.execute(
                "SELECT session_id, query_id, query, created_at FROM eval_queries"
                " WHERE session_id IS NOT NULL ORDER BY session_id, created_at, id"
            )
        ]


def add_re_searches(path: Where, rows: Sequence[tuple[str, str, str, float]]) -> int:
    """Record `re_search` feedback (session, earlier query id, later query id, similarity) for
    queries that do not have one yet; returns how many were added."""
    with closing(LogDB(path)) as conn, conn.transaction():
        added = 0
        for session, earlier, later, sim in rows:
            seen = conn.execute(
                "SELECT 1 FROM eval_feedback WHERE event_type = 're_search' AND query_id = ?",
                (earlier,),
            ).fetchone()
            if seen is None:
                conn.execute(
                    "INSERT INTO eval_feedback (event_type, session_id, query_id, metadata,"
                    " created_at) VALUES ('re_search', ?, ?, ?, ?)",
                    (
                        session,
                        earlier,
                        json.dumps({"followed_by": later, "similarity": sim}),
                        datetime.now(UTC).isoformat(),
                    ),
                )
                added += 1
    return added
