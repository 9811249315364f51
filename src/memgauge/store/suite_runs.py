"""Suite runs in SQLite: the run, its subjects, tasks and items, and per item its output, scores
and failures, each item written in its own transaction the moment it finishes.

It satisfies `memgauge.runs.engine.SuiteRecorder` structurally. Several processes may write to
one store at once: every write transaction starts with `BEGIN IMMEDIATE`, so a writer waits for
the lock (busy timeout) instead of failing on a read-to-write upgrade. Failure messages, score
errors and reasons are scrubbed of keys and bearer tokens on the way in (`_util.redact`): they
quote what a provider or a service answered, which may echo the request's credentials.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import zlib
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic_core import from_json, to_json

from memgauge._util.redact import redact, redactor
from memgauge.data.records import Failure, ItemRecord, RunRecord, RunSummary, ScoreRecord
from memgauge.store.connection import SQLiteStore, connect
from memgauge.store.optimization import OptimizationHistory
from memgauge.store.seed_rows import insert_eval_results

__all__ = ["USAGE_COUNTERS", "SuiteRunStore", "utc_now"]

FINISHED = ("completed", "failed")

#: a run's LLM spend per model (`memgauge.llm.usage.COUNTERS`)
USAGE_COUNTERS = ("calls", "cached", "requests", "failures", "prompt_tokens", "completion_tokens")

_UPSERT_USAGE = (
    f"INSERT INTO suite_run_usage (run_id, model, {', '.join(USAGE_COUNTERS)})"
    f" VALUES (?, ?, {', '.join('?' * len(USAGE_COUNTERS))})"
    " ON CONFLICT (run_id, model) DO UPDATE SET "
    + ", ".join(f"{k} = {k} + excluded.{k}" for k in USAGE_COUNTERS)
)


def utc_now() -> str:
    """The current UTC time, ISO 8601."""
    return datetime.now(UTC).isoformat()


def _dumps(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)


def _dumps_item(value: Any) -> str:
    # an item's output, latency and verdict detail: written once per item, read back as data,
    # never compared as text, so no key sorting, and pydantic-core's encoder (six times the
    # standard library's: this was most of a fast run's recording time); what it refuses (a
    # lone surrogate) the standard library escapes
    try:
        return to_json(value, fallback=str).decode()
    except (ValueError, TypeError):
        return json.dumps(value, separators=(",", ":"), default=str)


def _packed(text: str) -> str | bytes:
    # an item's hits or a run's summary, past a few hundred bytes: deflated (a sixth of the
    # size; these are read whole, never searched with SQL's JSON functions), stored as a BLOB
    # so that a reader tells the two apart by type
    if len(text) < _PACK_FROM:
        return text
    return zlib.compress(text.encode(), 1)


def _unpacked(value: str | bytes) -> str:
    return zlib.decompress(value).decode() if isinstance(value, bytes) else value


def _loads_item(text: str | bytes) -> Any:
    # pydantic-core's parser (twice the standard library's); an escaped lone surrogate, which
    # it refuses, is the standard library's to read
    text = _unpacked(text)
    try:
        return from_json(text)
    except ValueError:
        return json.loads(text)


def _redacted(text: str | None) -> str | None:
    return None if text is None else redact(text)


_PACK_FROM = 512  # bytes of JSON from which an output or summary is stored deflated

_RUN_COLUMNS = (
    "run_id",
    "suite_name",
    "status",
    "reason",
    "created_at",
    "started_at",
    "finished_at",
    "heartbeat_at",
    "pid",
    "host",
    "suite_sha256",
    "suite_json",
    "suite_path",
    "settings_json",
    "provenance_json",
    "n_items",
    "summary_json",
    "pid_start",
    "owner",
    "kind",
)


class SuiteRunStore(OptimizationHistory, SQLiteStore):
    """Suite runs under one SQLite file (default `MEMGAUGE_HOME/results.db`), and the history
    of optimizations (`OptimizationHistory`)."""

    # a run records items from its recorder thread while the main thread waits
    threads = True

    def __init__(self, path: str | Path, *, read_only: bool = False) -> None:
        super().__init__(path, read_only=read_only)
        # this process's writers take turns here before SQLite's lock: one waiting for another
        # thread's transaction wakes as it ends, not after the busy handler's next sleep
        self._write_lock = threading.Lock()
        self._usage_conn: sqlite3.Connection | None = None

    def close(self) -> None:
        """Close the connections."""
        if self._usage_conn is not None:
            self._usage_conn.close()
        super().close()

    @contextmanager
    def _write(self, conn: sqlite3.Connection | None = None) -> Iterator[sqlite3.Connection]:
        conn = conn or self._conn
        with self._write_lock:
            # take the write lock up front: a deferred transaction that reads first can fail
            # with "database is locked" at once when another process writes, busy timeout or not
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
            except BaseException:
                conn.rollback()
                raise
            conn.commit()

    # --- runs ------------------------------------------------------------------------------

    def create_run(
        self,
        run: RunRecord,
        subjects: Mapping[str, Any],
        tasks: Sequence[Mapping[str, Any]],
        items: Sequence[ItemRecord],
    ) -> None:
        """Record a new run as queued with every item it will execute, all or nothing."""
        with self._write() as c:
            c.execute(
                "INSERT INTO suite_runs(run_id, suite_name, kind, status, created_at, suite_sha256,"
                " suite_json, suite_path, settings_json, provenance_json, n_items)"
                " VALUES (?, ?, ?, 'queued', ?, ?, ?, ?, ?, ?, ?)",
                (
                    run.run_id,
                    run.suite_name,
                    run.kind,
                    run.created_at,
                    run.suite_sha256,
                    _dumps(run.suite),
                    run.suite_path,
                    _dumps(run.settings),
                    _dumps(run.provenance),
                    len(items),
                ),
            )
            c.executemany(
                "INSERT INTO suite_run_subjects(run_id, subject, spec_json) VALUES (?, ?, ?)",
                [(run.run_id, name, _dumps(spec)) for name, spec in subjects.items()],
            )
            c.executemany(
                "INSERT INTO suite_run_tasks(run_id, task, kind, dataset, dataset_sha256,"
                " spec_json, n_items) VALUES (?, ?, ?, ?, ?, ?, ?)",
                [
                    (
                        run.run_id,
                        t["task"],
                        t["kind"],
                        t.get("dataset"),
                        t.get("dataset_sha256"),
                        _dumps(t["spec"]),
                        t["n_items"],
                    )
                    for t in tasks
                ],
            )
            c.executemany(
                "INSERT INTO suite_run_items(run_id, subject, task, item_id, seq, status,"
                " category, input_json, expected_json) VALUES (?, ?, ?, ?, ?, 'queued', ?, ?, ?)",
                [
                    (
                        run.run_id,
                        it.subject,
                        it.task,
                        it.item_id,
                        it.seq,
                        it.category,
                        _dumps(it.input),
                        _dumps(it.expected),
                    )
                    for it in items
                ],
            )

    def claim_run(self, run_id: str, owner: Mapping[str, Any], *, expect: str | None) -> bool:
        """Make `owner` (`token`, `pid`, `host`, `pid_start`) the one process driving the run,
        if the run's owner token is still `expect` (the one read when deciding the run could be
        taken over); the run becomes `running` with a fresh heartbeat.

        A compare-and-swap under the write lock: of two processes taking a run over at once,
        exactly one wins; the other gets False and must not touch the run.
        """
        now = utc_now()
        with self._write() as c:
            cur = c.execute(
                "UPDATE suite_runs SET status = 'running', reason = NULL, finished_at = NULL,"
                " started_at = COALESCE(started_at, ?), heartbeat_at = ?, pid = ?, host = ?,"
                " pid_start = ?, owner = ? WHERE run_id = ? AND owner IS ?",
                (
                    now,
                    now,
                    owner["pid"],
                    owner["host"],
                    owner.get("pid_start"),
                    owner["token"],
                    run_id,
                    expect,
                ),
            )
            return cur.rowcount == 1

    def heartbeat(self, run_id: str, token: str) -> bool:
        """Beat the run's heartbeat if `token` still owns it; False when another process has
        taken it over (`--force`), so this one stops."""
        with self._write() as c:
            cur = c.execute(
                "UPDATE suite_runs SET heartbeat_at = ? WHERE run_id = ? AND owner = ?",
                (utc_now(), run_id, token),
            )
            return cur.rowcount == 1

    def set_status(
        self, run_id: str, status: str, *, reason: str | None = None, owner: str | None = None
    ) -> bool:
        """End the run's current attempt as `status` (completed, failed or cancelled): stamps
        the end and releases ownership (pid and host stay, as who drove it last). With `owner`,
        only if that token still owns the run; returns whether the run was changed."""
        where, args = (
            ("run_id = ?", [run_id])
            if owner is None
            else ("run_id = ? AND owner = ?", [run_id, owner])
        )
        with self._write() as c:
            cur = c.execute(
                "UPDATE suite_runs SET status = ?, reason = ?, finished_at = ?, owner = NULL"
                f" WHERE {where}",
                (status, _redacted(reason), utc_now(), *args),
            )
            return cur.rowcount == 1

    def set_summary(self, run_id: str, summary: RunSummary) -> None:
        """Keep the run's summary (recomputed from the item records at the end of each
        attempt), and project its retrieval aggregates into seed 002's `eval_results`."""
        with self._write() as c:
            c.execute(
                "UPDATE suite_runs SET summary_json = ? WHERE run_id = ?",
                (_packed(summary.model_dump_json()), run_id),
            )
            row = c.execute(
                "SELECT created_at FROM suite_runs WHERE run_id = ?", (run_id,)
            ).fetchone()
            previous = c.execute(
                "SELECT run_type FROM eval_results WHERE run_id = ? LIMIT 1", (run_id,)
            ).fetchone()
            c.execute("DELETE FROM eval_results WHERE run_id = ?", (run_id,))
            for agg in summary.aggregates:
                if agg.aggregate != "ir":
                    continue
                insert_eval_results(
                    c,
                    {**agg.detail, "run_id": run_id, "created_at": row[0] if row else utc_now()},
                    previous[0] if previous else "full",
                )

    def mark_gated(self, run_id: str, verdict: str) -> None:
        """A run the regression gate judged (`pass` or `fail`): its verdict is kept (an accepted
        run stays accepted) and its `eval_results` rows become `regression`."""
        with self._write() as c:
            c.execute(
                "UPDATE suite_runs SET gate = ? WHERE run_id = ? AND gate IS NOT 'accepted'",
                (verdict, run_id),
            )
            c.execute(
                "UPDATE eval_results SET run_type = 'regression' WHERE run_id = ?"
                " AND run_type = 'full'",
                (run_id,),
            )

    def accept_gate(self, run_id: str) -> str | None:
        """`gate --accept`: the run counts in later baselines even if it failed the gate; its
        verdict before (None: never gated)."""
        with self._write() as c:
            row = c.execute("SELECT gate FROM suite_runs WHERE run_id = ?", (run_id,)).fetchone()
            c.execute("UPDATE suite_runs SET gate = 'accepted' WHERE run_id = ?", (run_id,))
        return None if row is None else row[0]

    def failed_gates(self, suite: str) -> set[str]:
        """The runs of `suite` that failed the gate and were not accepted."""
        rows = self._conn.execute(
            "SELECT run_id FROM suite_runs WHERE suite_name = ? AND gate = 'fail'", (suite,)
        ).fetchall()
        return {r[0] for r in rows}

    def get_run(self, run_id: str, *, summary: bool = True) -> RunRecord | None:
        """The run, or None; without `summary`, its summary is left unread (None)."""
        columns = ", ".join(c if summary or c != "summary_json" else "NULL" for c in _RUN_COLUMNS)
        row = self._conn.execute(
            f"SELECT {columns} FROM suite_runs WHERE run_id = ?", (run_id,)
        ).fetchone()
        return None if row is None else _run_record(row)

    def find_run_ids(self, prefix: str) -> list[str]:
        """Run ids starting with `prefix` (so a user may type the first few characters)."""
        escaped = prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        rows = self._conn.execute(
            "SELECT run_id FROM suite_runs WHERE run_id LIKE ? ESCAPE '\\' ORDER BY run_id",
            (escaped + "%",),
        ).fetchall()
        return [str(r[0]) for r in rows]

    def list_runs(self, limit: int = 50, suite: str | None = None) -> list[dict[str, Any]]:
        """The newest runs first, with what started each (its `kind`: suite, evaluate, demo,
        extraction, operations, audit) and item counts by status."""
        where, args = ("WHERE r.suite_name = ?", [suite]) if suite else ("", [])
        rows = self._conn.execute(
            "SELECT r.run_id, r.suite_name, r.kind, r.status, r.created_at, r.finished_at,"
            " r.n_items, SUM(i.status = 'completed'), SUM(i.status = 'failed')"
            " FROM suite_runs r LEFT JOIN suite_run_items i ON i.run_id = r.run_id"
            f" {where} GROUP BY r.run_id ORDER BY r.created_at DESC LIMIT ?",
            (*args, limit),
        ).fetchall()
        keys = ("run_id", "suite", "kind", "status", "created_at", "finished_at", "n_items")
        return [
            {**dict(zip(keys, r[:7], strict=True)), "n_completed": r[7] or 0, "n_failed": r[8] or 0}
            for r in rows
        ]

    def suite_history(self, suite: str) -> list[RunRecord]:
        """Every completed run of `suite` with its summary, oldest first (a run's history)."""
        rows = self._conn.execute(
            f"SELECT {', '.join(_RUN_COLUMNS)} FROM suite_runs WHERE suite_name = ?"
            " AND status = 'completed' AND summary_json IS NOT NULL ORDER BY created_at, run_id",
            (suite,),
        ).fetchall()
        return [_run_record(r) for r in rows]

    def subjects(self, run_id: str) -> dict[str, Any]:
        """Subject name -> spec, as the run was started."""
        rows = self._conn.execute(
            "SELECT subject, spec_json FROM suite_run_subjects WHERE run_id = ? ORDER BY subject",
            (run_id,),
        ).fetchall()
        return {r[0]: json.loads(r[1]) for r in rows}

    def tasks(self, run_id: str) -> list[dict[str, Any]]:
        """The run's tasks with dataset provenance."""
        rows = self._conn.execute(
            "SELECT task, kind, dataset, dataset_sha256, spec_json, n_items"
            " FROM suite_run_tasks WHERE run_id = ? ORDER BY rowid",
            (run_id,),
        ).fetchall()
        keys = ("task", "kind", "dataset", "dataset_sha256", "spec", "n_items")
        return [{**dict(zip(keys, r, strict=True)), "spec": json.loads(r[4])} for r in rows]

    # --- LLM spend -------------------------------------------------------------------------

    def record_usage(self, run_id: str, model: str, delta: Mapping[str, int]) -> None:
        """Add `delta` (counter -> increment: calls, cached, requests, failures, prompt_tokens,
        completion_tokens) to the run's spend on `model`, committed before it returns.

        Called as the spending happens (a request is counted before it is sent), from whichever
        thread makes LLM calls, on a connection of its own: a run killed at any moment has
        recorded every request the provider may have received.
        """
        values = [int(delta.get(k, 0)) for k in USAGE_COUNTERS]
        with self._write_lock:
            if self._usage_conn is None:
                self._usage_conn = connect(self.path, check_same_thread=False)
        with self._write(self._usage_conn) as c:
            c.execute(_UPSERT_USAGE, (run_id, model, *values))

    def usage(self, run_id: str) -> dict[str, dict[str, int]]:
        """The run's LLM spend per model, over every attempt (killed ones included)."""
        rows = self._conn.execute(
            f"SELECT model, {', '.join(USAGE_COUNTERS)} FROM suite_run_usage WHERE run_id = ?"
            " ORDER BY model",
            (run_id,),
        ).fetchall()
        return {r[0]: dict(zip(USAGE_COUNTERS, r[1:], strict=True)) for r in rows}

    # --- items -----------------------------------------------------------------------------

    def status_counts(self, run_id: str) -> dict[tuple[str, str, str], int]:
        """(subject, task, status) -> number of items."""
        rows = self._conn.execute(
            "SELECT subject, task, status, COUNT(*) FROM suite_run_items WHERE run_id = ?"
            " GROUP BY subject, task, status",
            (run_id,),
        ).fetchall()
        return {(r[0], r[1], r[2]): int(r[3]) for r in rows}

    def unfinished_items(
        self, run_id: str, *, retry_failed: bool = False
    ) -> set[tuple[str, str, str]]:
        """(subject, task, item_id) of items still to do.

        With `retry_failed`, failed items are put back in the queue, and so are completed items
        with a verdict marked `retryable` (an LLM judge whose call failed on a 429, 5xx,
        timeout or dropped connection; see `memgauge.llm.structured.RETRYABLE_KINDS`): their
        verdicts are dropped, to be given again. Failure records stay, as history.
        """
        with self._write() as c:
            if retry_failed:
                c.execute(
                    "UPDATE suite_run_items SET status = 'queued', score = NULL"
                    " WHERE run_id = ? AND (status = 'failed' OR (status = 'completed' AND"
                    " EXISTS (SELECT 1 FROM suite_run_scores s WHERE s.run_id = ?"
                    " AND s.subject = suite_run_items.subject AND s.task = suite_run_items.task"
                    " AND s.item_id = suite_run_items.item_id"
                    " AND json_extract(s.detail_json, '$.retryable'))))",
                    (run_id, run_id),
                )
                c.execute(
                    "DELETE FROM suite_run_scores WHERE run_id = ? AND (subject, task, item_id)"
                    " IN (SELECT subject, task, item_id FROM suite_run_items"
                    " WHERE run_id = ? AND status = 'queued')",
                    (run_id, run_id),
                )
            rows = c.execute(
                "SELECT subject, task, item_id FROM suite_run_items"
                " WHERE run_id = ? AND status NOT IN ('completed', 'failed')",
                (run_id,),
            ).fetchall()
        return {(r[0], r[1], r[2]) for r in rows}

    def record_items(self, run_id: str, rows: Sequence[ItemRecord]) -> None:
        """Keep finished items (status, output, verdicts, failures) in one transaction, and
        beat the run's heartbeat.

        Idempotent: recording an item again replaces its output and verdicts (failures are
        history and accumulate).
        """
        keys = [(run_id, r.subject, r.task, r.item_id) for r in rows]
        clean = redactor()  # the secrets looked up once for the batch
        with self._write() as c:
            c.executemany(
                "UPDATE suite_run_items SET status = ?, attempts = ?, score = ?, started_at = ?,"
                " finished_at = ?, duration_ms = ?"
                " WHERE run_id = ? AND subject = ? AND task = ? AND item_id = ?",
                [
                    (
                        r.status,
                        r.attempts,
                        r.score,
                        r.started_at,
                        r.finished_at,
                        r.duration_ms,
                        *key,
                    )
                    for r, key in zip(rows, keys, strict=True)
                ],
            )
            c.executemany(
                "INSERT OR REPLACE INTO suite_run_outputs(run_id, subject, task, item_id,"
                " output_json, latency_json, extra_json) VALUES (?, ?, ?, ?, ?, ?, ?)",
                [
                    (
                        *key,
                        _packed(_dumps_item(r.output)),
                        _dumps_item(r.latency_ms),
                        _dumps_item(r.extra) if r.extra else None,
                    )
                    for r, key in zip(rows, keys, strict=True)
                    if r.status == "completed" or r.output is not None
                ],
            )
            c.executemany(
                "INSERT OR REPLACE INTO suite_run_scores(run_id, subject, task, item_id,"
                " evaluator, value, passed, reason, error, detail_json, raw_reply)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (
                        *key,
                        v.evaluator,
                        v.value,
                        None if v.passed is None else int(v.passed),
                        clean(v.reason) if v.reason else "",
                        None if v.error is None else clean(v.error),
                        _dumps_item({**v.detail, **({"fallback": True} if v.fallback else {})}),
                        v.raw_reply,
                    )
                    for r, key in zip(rows, keys, strict=True)
                    for v in r.scores
                ],
            )
            c.executemany(
                "INSERT INTO suite_run_failures(run_id, subject, task, item_id, stage, kind,"
                " message, attempt, at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (*key, f.stage, f.kind, clean(f.message), f.attempt, f.at)
                    for r, key in zip(rows, keys, strict=True)
                    for f in r.failures
                ],
            )
            c.execute(
                "UPDATE suite_runs SET heartbeat_at = ? WHERE run_id = ?", (utc_now(), run_id)
            )

    def item_records(self, run_id: str, *, detail: bool = True) -> list[ItemRecord]:
        """Every item of the run with its output, verdicts and failures, in subject, task, seq
        order (what aggregates read). Without `detail`, inputs, expected values and verdict
        details are left out (but a verdict's fallback flag and panel votes): what the IR and
        mean aggregates need, at a fraction of the parsing."""
        scores: dict[tuple[str, str, str], list[ScoreRecord]] = {}
        detail_sql = (
            "detail_json"
            if detail
            else "json_object('fallback', json_extract(detail_json, '$.fallback'),"
            " 'panel_passed', json(json_extract(detail_json, '$.panel_passed')))"
        )
        for r in self._conn.execute(
            f"SELECT subject, task, item_id, evaluator, value, passed, reason, error, {detail_sql},"
            " raw_reply FROM suite_run_scores WHERE run_id = ? ORDER BY rowid",
            (run_id,),
        ):
            parsed = _loads_item(r[8])
            detail_of = parsed if detail else {k: v for k, v in parsed.items() if v is not None}
            fallback = bool(detail_of.pop("fallback", False))
            scores.setdefault((r[0], r[1], r[2]), []).append(
                ScoreRecord(
                    evaluator=r[3],
                    value=r[4],
                    passed=None if r[5] is None else bool(r[5]),
                    reason=r[6] or "",
                    error=r[7],
                    fallback=fallback,
                    detail=detail_of,
                    raw_reply=r[9],
                )
            )
        failures: dict[tuple[str, str, str], list[Failure]] = {}
        for r in self._conn.execute(
            "SELECT subject, task, item_id, stage, kind, message, attempt, at"
            " FROM suite_run_failures WHERE run_id = ? AND item_id IS NOT NULL ORDER BY failure_id",
            (run_id,),
        ):
            failures.setdefault((r[0], r[1], r[2]), []).append(
                Failure(stage=r[3], kind=r[4], message=r[5], attempt=r[6] or 1, at=r[7])
            )
        columns = (
            _ITEM_COLUMNS
            if detail
            else _ITEM_COLUMNS.replace("i.input_json, i.expected_json", "'{}', 'null'")
        )
        return [
            _item_record(
                r, scores.get((r[0], r[1], r[2]), []), failures.get((r[0], r[1], r[2]), [])
            )
            for r in self._conn.execute(
                f"SELECT {columns} FROM suite_run_items i LEFT JOIN suite_run_outputs o"
                " USING (run_id, subject, task, item_id) WHERE i.run_id = ?"
                " ORDER BY i.subject, i.task, i.seq",
                (run_id,),
            )
        ]

    def record_setup(
        self, run_id: str, subject: str, task: str, corpus: str | None, seconds: float
    ) -> None:
        """Keep how long resetting and ingesting one group of items took."""
        with self._write() as c:
            c.execute(
                "INSERT INTO suite_run_setups(run_id, subject, task, corpus, seconds, at)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                (run_id, subject, task, corpus, seconds, utc_now()),
            )

    def setup_seconds(self, run_id: str) -> dict[tuple[str, str], float]:
        """(subject, task) -> seconds spent resetting and ingesting, over every attempt."""
        rows = self._conn.execute(
            "SELECT subject, task, SUM(seconds) FROM suite_run_setups WHERE run_id = ?"
            " GROUP BY subject, task",
            (run_id,),
        ).fetchall()
        return {(r[0], r[1]): float(r[2]) for r in rows}

    def failures(self, run_id: str, limit: int | None = None) -> list[dict[str, Any]]:
        """Failure records, oldest first."""
        rows = self._conn.execute(
            "SELECT subject, task, item_id, stage, kind, message, attempt, at"
            " FROM suite_run_failures WHERE run_id = ? ORDER BY failure_id LIMIT ?",
            (run_id, -1 if limit is None else limit),
        ).fetchall()
        keys = ("subject", "task", "item_id", "stage", "kind", "message", "attempt", "at")
        return [dict(zip(keys, r, strict=True)) for r in rows]

    def record_failure(self, run_id: str, failure: Mapping[str, Any]) -> None:
        """Keep a failure that belongs to no single item (a subject that could not start)."""
        with self._write() as c:
            c.execute(
                "INSERT INTO suite_run_failures(run_id, subject, task, item_id, stage, kind,"
                " message, attempt, at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    run_id,
                    failure["subject"],
                    failure["task"],
                    failure.get("item_id"),
                    failure["stage"],
                    failure["kind"],
                    redact(failure["message"]),
                    failure.get("attempt", 1),
                    utc_now(),
                ),
            )

    def iter_export(self, run_id: str) -> Iterator[dict[str, Any]]:
        """One record per item: input, expected, output, latency, scores with reasons."""
        scores: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
        for r in self._conn.execute(
            "SELECT subject, task, item_id, evaluator, value, passed, reason, error, detail_json,"
            " raw_reply FROM suite_run_scores WHERE run_id = ?",
            (run_id,),
        ):
            entry = {
                "evaluator": r[3],
                "value": r[4],
                "passed": None if r[5] is None else bool(r[5]),
                "reason": r[6],
                "error": r[7],
                "detail": json.loads(r[8]),
            }
            if r[9] is not None:
                entry["raw_reply"] = r[9]
            scores.setdefault((r[0], r[1], r[2]), []).append(entry)
        cursor = self._conn.execute(
            "SELECT i.subject, i.task, i.item_id, i.status, i.attempts, i.category, i.input_json,"
            " i.expected_json, i.score, i.started_at, i.finished_at, i.duration_ms,"
            " o.output_json, o.latency_json"
            " FROM suite_run_items i LEFT JOIN suite_run_outputs o USING (run_id, subject, task,"
            " item_id) WHERE i.run_id = ? ORDER BY i.subject, i.task, i.seq",
            (run_id,),
        )
        for r in cursor:
            yield {
                "run_id": run_id,
                "subject": r[0],
                "task": r[1],
                "item_id": r[2],
                "status": r[3],
                "attempts": r[4],
                "category": r[5],
                "input": json.loads(r[6]),
                "expected": json.loads(r[7]),
                "score": r[8],
                "started_at": r[9],
                "finished_at": r[10],
                "duration_ms": r[11],
                "output": None if r[12] is None else _loads_item(r[12]),
                "latency_ms": None if r[13] is None else json.loads(r[13]),
                "scores": sorted(scores.get((r[0], r[1], r[2]), []), key=lambda s: s["evaluator"]),
            }


#: an item's columns, in the order `_item_record` reads them
_ITEM_COLUMNS = (
    "i.subject, i.task, i.item_id, i.seq, i.status, i.attempts, i.category, i.input_json,"
    " i.expected_json, i.score, i.started_at, i.finished_at, i.duration_ms, o.output_json,"
    " o.latency_json, o.extra_json"
)


def _item_record(
    r: Sequence[Any], scores: list[ScoreRecord], failures: list[Failure]
) -> ItemRecord:
    """An item from a row of `_ITEM_COLUMNS`, with its verdicts and failures."""
    inp = _loads_item(r[7])
    return ItemRecord(
        subject=r[0],
        task=r[1],
        item_id=r[2],
        seq=r[3],
        status=r[4],
        attempts=r[5] or 0,
        category=r[6],
        input=inp if isinstance(inp, dict) else {"text": inp},
        expected=_loads_item(r[8]),
        score=r[9],
        started_at=r[10],
        finished_at=r[11],
        duration_ms=r[12],
        output=None if r[13] is None else _loads_item(r[13]),
        latency_ms=_loads_item(r[14]) if r[14] else {},
        extra=_loads_item(r[15]) if r[15] else {},
        scores=scores,
        failures=failures,
    )


def _run_record(row: Sequence[Any]) -> RunRecord:
    raw = dict(zip(_RUN_COLUMNS, row, strict=True))
    for key in ("suite_json", "settings_json", "provenance_json"):
        raw[key.removesuffix("_json")] = json.loads(raw.pop(key) or "{}")
    summary = raw.pop("summary_json")
    raw["summary"] = None if summary is None else RunSummary.model_validate_json(_unpacked(summary))
    raw["kind"] = raw.get("kind") or "suite"
    return RunRecord.model_validate(raw)
