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
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from memgauge._util.redact import redact
from memgauge.store.connection import SQLiteStore, connect

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


def _redacted(text: str | None) -> str | None:
    return None if text is None else redact(text)


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
)


class SuiteRunStore(SQLiteStore):
    """Suite runs under one SQLite file (default `MEMGAUGE_HOME/results.db`)."""

    # a run records items from its recorder thread while the main thread waits
    threads = True

    def __init__(self, path: str | Path) -> None:
        super().__init__(path)
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
        run: Mapping[str, Any],
        subjects: Mapping[str, Any],
        tasks: Sequence[Mapping[str, Any]],
        items: Sequence[Mapping[str, Any]],
    ) -> None:
        """Record a new run as queued with every item it will execute, all or nothing."""
        with self._write() as c:
            c.execute(
                "INSERT INTO suite_runs(run_id, suite_name, status, created_at, suite_sha256,"
                " suite_json, suite_path, settings_json, provenance_json, n_items)"
                " VALUES (?, ?, 'queued', ?, ?, ?, ?, ?, ?, ?)",
                (
                    run["run_id"],
                    run["suite_name"],
                    run["created_at"],
                    run["suite_sha256"],
                    _dumps(run["suite"]),
                    run.get("suite_path"),
                    _dumps(run["settings"]),
                    _dumps(run["provenance"]),
                    len(items),
                ),
            )
            c.executemany(
                "INSERT INTO suite_run_subjects(run_id, subject, spec_json) VALUES (?, ?, ?)",
                [(run["run_id"], name, _dumps(spec)) for name, spec in subjects.items()],
            )
            c.executemany(
                "INSERT INTO suite_run_tasks(run_id, task, kind, dataset, dataset_sha256,"
                " spec_json, n_items) VALUES (?, ?, ?, ?, ?, ?, ?)",
                [
                    (
                        run["run_id"],
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
                        run["run_id"],
                        it["subject"],
                        it["task"],
                        it["item_id"],
                        it["seq"],
                        it.get("category"),
                        _dumps(it["input"]),
                        _dumps(it.get("expected")),
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

    def set_summary(self, run_id: str, summary: Mapping[str, Any]) -> None:
        """Keep the run's aggregates (recomputed from the item rows at the end of each attempt)."""
        with self._write() as c:
            c.execute(
                "UPDATE suite_runs SET summary_json = ? WHERE run_id = ?", (_dumps(summary), run_id)
            )

    def get_run(self, run_id: str) -> dict[str, Any] | None:
        """The run row with its JSON columns parsed, or None."""
        row = self._conn.execute(
            f"SELECT {', '.join(_RUN_COLUMNS)} FROM suite_runs WHERE run_id = ?", (run_id,)
        ).fetchone()
        if row is None:
            return None
        out = dict(zip(_RUN_COLUMNS, row, strict=True))
        for key in ("suite_json", "settings_json", "provenance_json", "summary_json"):
            value = out.pop(key)
            out[key.removesuffix("_json")] = None if value is None else json.loads(value)
        return out

    def find_run_ids(self, prefix: str) -> list[str]:
        """Run ids starting with `prefix` (so a user may type the first few characters)."""
        escaped = prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        rows = self._conn.execute(
            "SELECT run_id FROM suite_runs WHERE run_id LIKE ? ESCAPE '\\' ORDER BY run_id",
            (escaped + "%",),
        ).fetchall()
        return [str(r[0]) for r in rows]

    def list_runs(self, limit: int = 50, suite: str | None = None) -> list[dict[str, Any]]:
        """The newest runs first, with item counts by status."""
        where, args = ("WHERE r.suite_name = ?", [suite]) if suite else ("", [])
        rows = self._conn.execute(
            "SELECT r.run_id, r.suite_name, r.status, r.created_at, r.finished_at, r.n_items,"
            " SUM(i.status = 'completed'), SUM(i.status = 'failed')"
            " FROM suite_runs r LEFT JOIN suite_run_items i ON i.run_id = r.run_id"
            f" {where} GROUP BY r.run_id ORDER BY r.created_at DESC LIMIT ?",
            (*args, limit),
        ).fetchall()
        keys = ("run_id", "suite", "status", "created_at", "finished_at", "n_items")
        return [
            {**dict(zip(keys, r[:6], strict=True)), "n_completed": r[6] or 0, "n_failed": r[7] or 0}
            for r in rows
        ]

    def suite_history(self, suite: str) -> list[dict[str, Any]]:
        """Every completed run of `suite` with its summary, oldest first (a run's history)."""
        ids = self._conn.execute(
            "SELECT run_id FROM suite_runs WHERE suite_name = ? AND status = 'completed'"
            " AND summary_json IS NOT NULL ORDER BY created_at, run_id",
            (suite,),
        ).fetchall()
        runs = [self.get_run(str(r[0])) for r in ids]
        return [r for r in runs if r is not None]

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

    def record_items(self, run_id: str, rows: Sequence[Mapping[str, Any]]) -> None:
        """Keep finished items (status, output, scores, failures) in one transaction, and beat
        the run's heartbeat.

        Idempotent: recording an item again replaces its output and scores (failures are
        history and accumulate).
        """
        keys = [(run_id, r["subject"], r["task"], r["item_id"]) for r in rows]
        with self._write() as c:
            c.executemany(
                "UPDATE suite_run_items SET status = ?, attempts = ?, score = ?, started_at = ?,"
                " finished_at = ?, duration_ms = ?"
                " WHERE run_id = ? AND subject = ? AND task = ? AND item_id = ?",
                [
                    (
                        r["status"],
                        r["attempts"],
                        r.get("score"),
                        r.get("started_at"),
                        r.get("finished_at"),
                        r.get("duration_ms"),
                        *key,
                    )
                    for r, key in zip(rows, keys, strict=True)
                ],
            )
            c.executemany(
                "INSERT OR REPLACE INTO suite_run_outputs(run_id, subject, task, item_id,"
                " output_json, latency_json) VALUES (?, ?, ?, ?, ?, ?)",
                [
                    (*key, _dumps(r["output"]), _dumps(r.get("latency_ms") or {}))
                    for r, key in zip(rows, keys, strict=True)
                    if "output" in r
                ],
            )
            c.executemany(
                "INSERT OR REPLACE INTO suite_run_scores(run_id, subject, task, item_id,"
                " evaluator, value, passed, reason, error, detail_json)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (
                        *key,
                        s["evaluator"],
                        s.get("value"),
                        None if s.get("passed") is None else int(bool(s["passed"])),
                        redact(s.get("reason") or ""),
                        _redacted(s.get("error")),
                        _dumps(s.get("detail") or {}),
                    )
                    for r, key in zip(rows, keys, strict=True)
                    for s in r.get("scores", ())
                ],
            )
            c.executemany(
                "INSERT INTO suite_run_failures(run_id, subject, task, item_id, stage, kind,"
                " message, attempt, at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (
                        *key,
                        f["stage"],
                        f["kind"],
                        redact(f["message"]),
                        f["attempt"],
                        f.get("at") or utc_now(),
                    )
                    for r, key in zip(rows, keys, strict=True)
                    for f in r.get("failures", ())
                ],
            )
            c.execute(
                "UPDATE suite_runs SET heartbeat_at = ? WHERE run_id = ?", (utc_now(), run_id)
            )

    def item_rows(self, run_id: str) -> list[dict[str, Any]]:
        """Every item of the run (status, score, timings), in subject, task, seq order."""
        rows = self._conn.execute(
            "SELECT subject, task, item_id, seq, status, attempts, category, score, duration_ms"
            " FROM suite_run_items WHERE run_id = ? ORDER BY subject, task, seq",
            (run_id,),
        ).fetchall()
        keys = (
            "subject",
            "task",
            "item_id",
            "seq",
            "status",
            "attempts",
            "category",
            "score",
            "duration_ms",
        )
        return [dict(zip(keys, r, strict=True)) for r in rows]

    def score_rows(self, run_id: str) -> list[dict[str, Any]]:
        """Every evaluator verdict of the run: subject, task, item, evaluator, value, passed,
        error, fallback (an opt-in stand-in value of a judge that failed), and the panel votes
        where a panel judged (what aggregates need; no reasons)."""
        rows = self._conn.execute(
            "SELECT subject, task, item_id, evaluator, value, passed, error,"
            " COALESCE(json_extract(detail_json, '$.fallback'), 0),"
            " json_extract(detail_json, '$.panel_passed')"
            " FROM suite_run_scores WHERE run_id = ? ORDER BY subject, task, item_id, evaluator",
            (run_id,),
        ).fetchall()
        keys = (
            "subject",
            "task",
            "item_id",
            "evaluator",
            "value",
            "passed",
            "error",
            "fallback",
            "panel_passed",
        )
        return [dict(zip(keys, r, strict=True)) for r in rows]

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
            "SELECT subject, task, item_id, evaluator, value, passed, reason, error, detail_json"
            " FROM suite_run_scores WHERE run_id = ?",
            (run_id,),
        ):
            scores.setdefault((r[0], r[1], r[2]), []).append(
                {
                    "evaluator": r[3],
                    "value": r[4],
                    "passed": None if r[5] is None else bool(r[5]),
                    "reason": r[6],
                    "error": r[7],
                    "detail": json.loads(r[8]),
                }
            )
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
                "output": None if r[12] is None else json.loads(r[12]),
                "latency_ms": None if r[13] is None else json.loads(r[13]),
                "scores": sorted(scores.get((r[0], r[1], r[2]), []), key=lambda s: s["evaluator"]),
            }
