"""Suite runs in the results store (SQLite or PostgreSQL): the run, its subjects, tasks and
items, and per item its output, scores and failures (`item_rows`), written as items finish.

It satisfies `memgauge.runs.engine.SuiteRecorder` structurally. Several processes (and, on
PostgreSQL, several hosts) may write to one store at once: on SQLite every write transaction
starts with `BEGIN IMMEDIATE`, so a writer waits for the lock (busy timeout) instead of failing
on a read-to-write upgrade; the owner compare-and-swap is one `UPDATE`, atomic on both.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from memgauge._util.clock import utc_now
from memgauge._util.redact import redact
from memgauge.data.facts import IrPipeline, IrView
from memgauge.data.records import (
    ENDED,
    USAGE_COUNTERS,
    ItemRecord,
    RunPlan,
    RunRecord,
    RunSummary,
)
from memgauge.store import bundle, compared_rows, item_rows
from memgauge.store.base import Store
from memgauge.store.dialect import upsert
from memgauge.store.headline import headline
from memgauge.store.optimization import OptimizationHistory
from memgauge.store.seed_rows import UNREAD, eval_results_rows, replace_eval_results
from memgauge.store.tables import Packed, eval_results, packed, stored_json, unpacked
from memgauge.store.tables import suite_run_failures as failures_t
from memgauge.store.tables import suite_run_items as items_t
from memgauge.store.tables import suite_run_setups as setups_t
from memgauge.store.tables import suite_run_subjects as subjects_t
from memgauge.store.tables import suite_run_tasks as tasks_t
from memgauge.store.tables import suite_run_usage as usage_t
from memgauge.store.tables import suite_runs as runs_t
from memgauge.store.url import StoreURL

__all__ = ["SuiteRunStore"]

FINISHED = ("completed", "failed")


def _redacted(text: str | None) -> str | None:
    return None if text is None else redact(text)


#: a run's own columns: all but the gate's verdict and the headline, which are written apart
_RUN_COLUMNS = tuple(c.name for c in runs_t.columns if c.name not in ("gate", "headline_json"))


class SuiteRunStore(OptimizationHistory, Store):
    """Suite runs in one store (default `MEMGAUGE_STORE`, else `MEMGAUGE_HOME/results.db`), and
    the history of optimizations (`OptimizationHistory`)."""

    # a run records items from its recorder thread while the main thread waits
    threads = True

    def __init__(
        self, where: str | Path | StoreURL | None = None, *, read_only: bool = False
    ) -> None:
        # this process's threads take turns here before the database's lock: one waiting for
        # another thread's transaction wakes as it ends, not after the busy handler's next sleep;
        # reads take it too, since they share the one connection (two transactions at once on
        # it: "cannot start a transaction within a transaction", e.g. candidates of an
        # optimization run side by side on one store)
        self._write_lock = threading.RLock()
        super().__init__(where, read_only=read_only)
        self._usage_conn: sa.Connection | None = None

    def connections(self) -> Iterator[sa.Connection]:
        """The main connection and the LLM spend's, if opened."""
        yield from super().connections()
        if self._usage_conn is not None:
            yield self._usage_conn

    @contextmanager
    def _write(self, conn: sa.Connection | None = None) -> Iterator[sa.Connection]:
        with self._write_lock, self._write_tx(conn) as c:
            yield c

    @contextmanager
    def _read(self) -> Iterator[sa.Connection]:
        with self._write_lock, super()._read() as c:
            yield c

    # --- runs ------------------------------------------------------------------------------

    def create_run(self, run: RunRecord, plan: RunPlan) -> None:
        """Record a new run as queued with every item it will execute, all or nothing."""
        with self._write() as c:
            c.execute(
                sa.insert(runs_t),
                {
                    "run_id": run.run_id,
                    "suite_name": run.suite_name,
                    "kind": run.kind,
                    "status": "queued",
                    "created_at": run.created_at,
                    "suite_sha256": run.suite_sha256,
                    "suite_json": stored_json(run.suite),
                    "suite_path": run.suite_path,
                    "settings_json": stored_json(run.settings),
                    "provenance_json": stored_json(run.provenance),
                    "n_items": len(plan.items),
                },
            )
            item_rows.insert_plan(c, run.run_id, *plan)

    def claim_run(self, run_id: str, owner: Mapping[str, Any], *, expect: str | None) -> bool:
        """Make `owner` (`token`, `pid`, `host`, `pid_start`) the one process driving the run,
        if the run's owner token is still `expect` (the one read when deciding the run could be
        taken over); the run becomes `running` with a fresh heartbeat.

        A compare-and-swap in one statement: of two processes taking a run over at once,
        exactly one wins; the other gets False and must not touch the run.
        """
        now = utc_now()
        r = runs_t.c
        with self._write() as c:
            cur = c.execute(
                sa.update(runs_t)
                .where(r.run_id == run_id, r.owner.is_not_distinct_from(expect))
                .values(
                    status="running",
                    reason=None,
                    finished_at=None,
                    started_at=sa.func.coalesce(r.started_at, now),
                    heartbeat_at=now,
                    pid=owner["pid"],
                    host=owner["host"],
                    pid_start=owner.get("pid_start"),
                    owner=owner["token"],
                )
            )
            return cur.rowcount == 1

    def heartbeat(self, run_id: str, token: str) -> bool:
        """Beat the run's heartbeat if `token` still owns it; False when another process has
        taken it over (`--force`), so this one stops; UnavailableError (exit 3) when the
        store's file is gone from its path (`check_in_place`)."""
        self.check_in_place()
        with self._write() as c:
            cur = c.execute(
                sa.update(runs_t)
                .where(runs_t.c.run_id == run_id, runs_t.c.owner == token)
                .values(heartbeat_at=utc_now())
            )
            return cur.rowcount == 1

    def set_status(
        self, run_id: str, status: str, *, reason: str | None = None, owner: str | None = None
    ) -> bool:
        """End the run's current attempt as `status` (completed, failed or cancelled): stamps
        the end and releases ownership (pid and host stay, as who drove it last). With `owner`,
        only if that token still owns the run; returns whether the run was changed."""
        where = [runs_t.c.run_id == run_id]
        if owner is not None:
            where.append(runs_t.c.owner == owner)
        with self._write() as c:
            cur = c.execute(
                sa.update(runs_t)
                .where(*where)
                .values(status=status, reason=_redacted(reason), finished_at=utc_now(), owner=None)
            )
            return cur.rowcount == 1

    def set_summary(self, run_id: str, summary: RunSummary) -> None:
        """Keep the run's summary (recomputed from the item records at the end of each
        attempt), and project its retrieval aggregates into seed 002's `eval_results`."""
        with self._write() as c:
            _set_summary(c, run_id, summary)

    def keep_compared(
        self, run_a: str, run_b: str, seed: int, key: str, payload: dict[str, Any]
    ) -> bool:
        """Keep run B's comparison with run A (`compared_rows`), made from the runs in the
        state `key` names, if they are still in it; whether it was kept (one row, written
        whole or not at all)."""
        with self._write() as c:
            if compared_rows.state_key(c, run_a, run_b, seed) != key:
                return False
            compared_rows.keep(c, run_a, run_b, key, payload)
        return True

    def mark_gated(self, run_id: str, verdict: str) -> None:
        """A run the regression gate judged (`pass` or `fail`): its verdict is kept (an accepted
        run stays accepted) and its `eval_results` rows become `regression`."""
        e, r = eval_results.c, runs_t.c
        with self._write() as c:
            c.execute(
                sa.update(runs_t)
                .where(r.run_id == run_id, sa.or_(r.gate.is_(None), r.gate != "accepted"))
                .values(gate=verdict)
            )
            c.execute(
                sa.update(eval_results)
                .where(e.run_id == run_id, e.run_type == "full")
                .values(run_type="regression")
            )

    def accept_gate(self, run_id: str) -> str | None:
        """`gate --accept`: the run counts in later baselines even if it failed the gate; its
        verdict before (None: never gated)."""
        r = runs_t.c
        with self._write() as c:
            before = c.execute(sa.select(r.gate).where(r.run_id == run_id)).scalar()
            c.execute(sa.update(runs_t).where(r.run_id == run_id).values(gate="accepted"))
        return None if before is None else str(before)

    def gate_verdict(self, run_id: str) -> str | None:
        """The gate's last verdict on the run (pass, fail, accepted), None if never gated."""
        with self._read() as c:
            found = c.execute(sa.select(runs_t.c.gate).where(runs_t.c.run_id == run_id)).scalar()
        return None if found is None else str(found)

    def failed_gates(self, suite: str) -> set[str]:
        """The runs of `suite` that failed the gate and were not accepted."""
        r = runs_t.c
        with self._read() as c:
            rows = c.execute(
                sa.select(r.run_id).where(r.suite_name == suite, r.gate == "fail")
            ).all()
        return {str(x[0]) for x in rows}

    def get_run(
        self, run_id: str, *, summary: bool = True, headline: bool = False
    ) -> RunRecord | None:
        """The run, or None; without `summary`, its summary is left unread (None); with
        `headline`, its summary is the headline (`memgauge.store.headline`: no per-query
        detail), which is what a page of the run or a gate reads."""
        columns = [
            _run_column(k, headline) if summary or k != "summary_json" else sa.null().label(k)
            for k in _RUN_COLUMNS
        ]
        with self._read() as c:
            row = c.execute(sa.select(*columns).where(runs_t.c.run_id == run_id)).first()
        return None if row is None else _run_record(row)

    def find_run_ids(self, prefix: str) -> list[str]:
        """Run ids starting with `prefix` (so a user may type the first few characters); an
        empty prefix names none (not every run: `gate ''` would gate a store's only run)."""
        if not prefix:
            return []
        with self._read() as c:
            rows = c.execute(
                sa.select(runs_t.c.run_id)
                .where(runs_t.c.run_id.startswith(prefix, autoescape=True))
                .order_by(runs_t.c.run_id)
            ).all()
        return [str(r[0]) for r in rows]

    def list_runs(self, limit: int = 50, suite: str | None = None) -> list[dict[str, Any]]:
        """The newest runs first, with what started each (its `kind`: suite, evaluate, demo,
        extraction, operations, audit) and item counts by status."""
        r, i = runs_t.c, items_t.c

        def count(status: str) -> Any:
            return sa.func.sum(sa.case((i.status == status, 1), else_=0))

        stmt = (
            sa.select(
                r.run_id,
                r.suite_name,
                r.kind,
                r.status,
                r.created_at,
                r.finished_at,
                r.n_items,
                count("completed"),
                count("failed"),
            )
            .select_from(runs_t.outerjoin(items_t, i.run_id == r.run_id))
            .group_by(r.run_id)
            .order_by(r.created_at.desc())
            .limit(limit)
        )
        if suite is not None:  # '' names a suite too (none has that name), not every one
            stmt = stmt.where(r.suite_name == suite)
        with self._read() as c:
            rows = c.execute(stmt).all()
        keys = ("run_id", "suite", "kind", "status", "created_at", "finished_at", "n_items")
        return [
            {**dict(zip(keys, x[:7], strict=True)), "n_completed": x[7] or 0, "n_failed": x[8] or 0}
            for x in rows
        ]

    def latest_completed_by_kind(self, suite: str | None = None) -> dict[str, str]:
        """Per kind of run (evaluate, demo, audit, ...), the newest completed run with a summary
        (of `suite` when given): kind -> run id, the newest kind first."""
        r = runs_t.c
        done = (r.status == "completed", r.summary_json.is_not(None))
        return {kind: row[0] for kind, row in self._latest_by_kind(suite, done).items()}

    def latest_ended_by_kind(self, suite: str | None = None) -> dict[str, tuple[str, str, str]]:
        """Per kind of run, the newest run that ended, completed or not (failed, cancelled; of
        `suite` when given): kind -> (run id, status, reason or '')."""
        r = runs_t.c
        ended = (r.status.in_(ENDED),)
        return {
            kind: (row[0], row[1], row[2] or "")
            for kind, row in self._latest_by_kind(suite, ended, r.status, r.reason).items()
        }

    def _latest_by_kind(
        self, suite: str | None, where: Sequence[Any], *columns: Any
    ) -> dict[str, tuple[Any, ...]]:
        """Per kind of run, the newest run (of `suite` when given) that `where` holds for:
        kind -> (run id, *columns), the newest kind first."""
        r = runs_t.c
        stmt = (
            sa.select(r.kind, r.run_id, *columns)
            .where(*where)
            .order_by(r.created_at.desc(), r.run_id.desc())
        )
        if suite is not None:  # '' names a suite too (none has that name), not every one
            stmt = stmt.where(r.suite_name == suite)
        latest: dict[str, tuple[Any, ...]] = {}
        with self._read() as c:
            for kind, *row in c.execute(stmt):
                latest.setdefault(str(kind), (str(row[0]), *row[1:]))
        return latest

    def suite_history(
        self, suite: str, *, headline: bool = False, before: RunRecord | None = None
    ) -> list[RunRecord]:
        """Every completed run of `suite` with its summary, oldest first (a run's history);
        only those created before `before` (and not it), if given. With `headline`, each
        summary is its headline (see `get_run`): all a gate's baseline or a trend reads."""
        r = runs_t.c
        where = [r.suite_name == suite, r.status == "completed", r.summary_json.is_not(None)]
        if before is not None:
            where += [r.created_at < before.created_at, r.run_id != before.run_id]
        with self._read() as c:
            rows = c.execute(
                sa.select(*(_run_column(k, headline) for k in _RUN_COLUMNS))
                .where(*where)
                .order_by(r.created_at, r.run_id)
            ).all()
        return [_run_record(x) for x in rows]

    def subjects(self, run_id: str) -> dict[str, Any]:
        """Subject name -> spec, as the run was started."""
        s = subjects_t.c
        with self._read() as c:
            rows = c.execute(
                sa.select(s.subject, s.spec_json).where(s.run_id == run_id).order_by(s.subject)
            ).all()
        return {x[0]: json.loads(x[1]) for x in rows}

    def tasks(self, run_id: str) -> list[dict[str, Any]]:
        """The run's tasks with dataset provenance, in the suite's order; `n_items` is the
        dataset's items, each counted once however many times it was asked (`repeat: N`)."""
        t, i = tasks_t.c, items_t.c
        keys = ("task", "kind", "dataset", "dataset_sha256", "spec", "n_items")
        with self._read() as c:
            rows = c.execute(
                sa.select(t.task, t.kind, t.dataset, t.dataset_sha256, t.spec_json, t.n_items)
                .where(t.run_id == run_id)
                .order_by(t.seq)
            ).all()
            tasks = [{**dict(zip(keys, x, strict=True)), "spec": json.loads(x[4])} for x in rows]
            repeated = [x["task"] for x in tasks if ((x["spec"] or {}).get("repeat") or 1) > 1]
            if repeated:
                # counted from the items, not read from the task's row: earlier versions stored
                # the item-repeats there (a run at `--repeat 2` had twice its items)
                first = sa.func.count(sa.distinct(i.item_id)).filter(i.repeat_index == 0)
                counted = c.execute(
                    sa.select(i.task, first)
                    .where(i.run_id == run_id, i.task.in_(repeated))
                    .group_by(i.task)
                ).all()
                n_items = {str(task): int(n) for task, n in counted}
                tasks = [{**x, "n_items": n_items.get(x["task"], x["n_items"])} for x in tasks]
        return tasks

    # --- LLM spend -------------------------------------------------------------------------

    def record_usage(self, run_id: str, model: str, delta: Mapping[str, int]) -> None:
        """Add `delta` (counter -> increment: calls, cached, requests, failures, prompt_tokens,
        completion_tokens) to the run's spend on `model`, committed before it returns.

        Called as the spending happens (a request is counted before it is sent), from whichever
        thread makes LLM calls, on a connection of its own: a run killed at any moment has
        recorded every request the provider may have received.
        """
        values = {k: int(delta.get(k, 0)) for k in USAGE_COUNTERS}
        with self._write_lock:
            if self._usage_conn is None:
                self._usage_conn = self._engine.connect()
        with self._write(self._usage_conn) as c:
            c.execute(
                upsert(c, usage_t, ("run_id", "model"), add=USAGE_COUNTERS),
                {"run_id": run_id, "model": model, **values},
            )

    def usage(self, run_id: str) -> dict[str, dict[str, int]]:
        """The run's LLM spend per model, over every attempt (killed ones included)."""
        u = usage_t.c
        with self._read() as c:
            rows = c.execute(
                sa.select(u.model, *(u[k] for k in USAGE_COUNTERS))
                .where(u.run_id == run_id)
                .order_by(u.model)
            ).all()
        return {x[0]: dict(zip(USAGE_COUNTERS, x[1:], strict=True)) for x in rows}

    # --- items -----------------------------------------------------------------------------

    def unfinished_items(
        self, run_id: str, *, retry_failed: bool = False
    ) -> set[tuple[str, str, str]]:
        """(subject, task, item_id) of items still to do.

        With `retry_failed`, failed items are put back in the queue, and so are completed items
        with a verdict marked `retryable` (an LLM judge whose call failed on a 429, 5xx,
        timeout or dropped connection; see `memgauge.llm.structured.RETRYABLE_KINDS`): their
        verdicts are dropped, to be given again. Failure records stay, as history.
        """
        i = items_t.c
        with self._write() as c:
            if retry_failed:
                item_rows.requeue(c, run_id)
            rows = c.execute(
                sa.select(i.subject, i.task, i.item_id).where(
                    i.run_id == run_id, i.status.not_in(FINISHED)
                )
            ).all()
        return {(x[0], x[1], x[2]) for x in rows}

    def record_items(self, run_id: str, rows: Sequence[ItemRecord]) -> None:
        """Keep finished items (status, output, verdicts, failures) in one transaction, and
        beat the run's heartbeat.

        Idempotent: recording an item again replaces its output and verdicts (failures are
        history and accumulate).
        """
        with self._write() as c:
            item_rows.record_items(c, run_id, rows)
            c.execute(
                sa.update(runs_t).where(runs_t.c.run_id == run_id).values(heartbeat_at=utc_now())
            )

    def item_records(
        self, run_id: str, *, detail: bool = True, outputs: bool = True
    ) -> list[ItemRecord]:
        """Every item of the run with its output, verdicts and failures, in subject, task, seq
        order (what aggregates read). Without `detail`, inputs, expected values and verdict
        details are left out (but a verdict's fallback flag and panel votes): what the IR and
        mean aggregates need, at a fraction of the parsing; without `outputs`, outputs,
        latencies and extras too (what comparing two runs' verdicts reads)."""
        with self._read() as c:
            return item_rows.item_records(c, run_id, detail=detail, outputs=outputs)

    def record_setup(
        self, run_id: str, subject: str, task: str, corpus: str | None, seconds: float
    ) -> None:
        """Keep how long resetting and ingesting one group of items took."""
        with self._write() as c:
            c.execute(
                sa.insert(setups_t),
                {
                    "run_id": run_id,
                    "subject": subject,
                    "task": task,
                    "corpus": corpus,
                    "seconds": seconds,
                    "at": utc_now(),
                },
            )

    def setup_seconds(self, run_id: str) -> dict[tuple[str, str], float]:
        """(subject, task) -> seconds spent resetting and ingesting, over every attempt."""
        s = setups_t.c
        with self._read() as c:
            rows = c.execute(
                sa.select(s.subject, s.task, sa.func.sum(s.seconds))
                .where(s.run_id == run_id)
                .group_by(s.subject, s.task)
            ).all()
        return {(x[0], x[1]): float(x[2]) for x in rows}

    def failures(self, run_id: str, limit: int | None = None) -> list[dict[str, Any]]:
        """Failure records, oldest first."""
        f = failures_t.c
        keys = ("subject", "task", "item_id", "stage", "kind", "message", "attempt", "at")
        stmt = sa.select(*(f[k] for k in keys)).where(f.run_id == run_id).order_by(f.failure_id)
        if limit is not None:
            stmt = stmt.limit(limit)
        with self._read() as c:
            rows = c.execute(stmt).all()
        return [dict(zip(keys, x, strict=True)) for x in rows]

    def record_failure(self, run_id: str, failure: Mapping[str, Any]) -> None:
        """Keep a failure that belongs to no single item (a subject that could not start)."""
        with self._write() as c:
            c.execute(
                sa.insert(failures_t),
                {
                    "run_id": run_id,
                    "subject": failure["subject"],
                    "task": failure["task"],
                    "item_id": failure.get("item_id"),
                    "stage": failure["stage"],
                    "kind": failure["kind"],
                    "message": redact(failure["message"]),
                    "attempt": failure.get("attempt", 1),
                    "at": utc_now(),
                },
            )

    def import_runs(self, entries: Sequence[dict[str, Any]]) -> list[str]:
        """Record a bundle's runs (`bundle.read_bundle`) as they were, all or nothing; their
        retrieval aggregates are projected into `eval_results` as for a run made here."""
        with self._write() as c:
            ids = bundle.import_bundle(c, entries)
            # in the same transaction: a run imported without its projection (interrupted
            # between two) would be refused as already there by the next import
            for entry in entries:
                if entry["run"].summary is not None:
                    _set_summary(c, entry["run"].run_id, entry["run"].summary)
        return ids

    def iter_export(self, run_id: str) -> Iterator[dict[str, Any]]:
        """One record per item: input, expected, output, latency, scores with reasons."""
        with self._read() as c:
            rows = list(item_rows.export_rows(c, run_id))
        yield from rows


def _set_summary(c: sa.Connection, run_id: str, summary: RunSummary) -> None:
    """`SuiteRunStore.set_summary` in the caller's write transaction."""
    c.execute(
        sa.update(runs_t)
        .where(runs_t.c.run_id == run_id)
        .values(
            summary_json=packed(summary.model_dump_json()),
            headline_json=packed(headline(summary).model_dump_json()),
        )
    )
    item_rows.replace_queries(c, run_id, summary)
    item_rows.replace_values(c, run_id)
    created = c.execute(sa.select(runs_t.c.created_at).where(runs_t.c.run_id == run_id)).scalar()
    previous = c.execute(
        sa.select(eval_results.c.run_type).where(eval_results.c.run_id == run_id).limit(1)
    ).scalar()
    # seed 002's run type and feature as `evaluate --run-type --feature-id` gave them
    # (a run the gate has since judged keeps its `regression`)
    retrieval = [agg for agg in summary.aggregates if agg.aggregate == "ir"]
    rows = [
        # the seed's row is one per run and system: with several retrieval tasks (one
        # per benchmark dataset) the system is named with its task
        _with_task(row, agg.task) if len(retrieval) > 1 else row
        for agg in retrieval
        for view in [agg.facts_as(IrView) or IrView()]
        for pipe in [view.pipeline or IrPipeline()]
        for row in eval_results_rows(
            {
                **agg.facts_json(exclude=UNREAD),
                "run_id": run_id,
                "created_at": created or utc_now(),
            },
            previous or pipe.run_type,
            pipe.feature_id,
        )
    ]
    replace_eval_results(c, run_id, rows)


def _run_column(name: str, headline: bool) -> Any:
    """A column of `_RUN_COLUMNS`; with `headline`, the summary's is the headline where the
    run has one (a run stored before revision 0016 filled it may not: its summary then)."""
    if headline and name == "summary_json":
        return sa.func.coalesce(
            runs_t.c.headline_json, runs_t.c.summary_json, type_=Packed()
        ).label(name)
    return runs_t.c[name]


def _run_record(row: Sequence[Any]) -> RunRecord:
    raw = dict(zip(_RUN_COLUMNS, row, strict=True))
    for key in ("suite_json", "settings_json", "provenance_json"):
        raw[key.removesuffix("_json")] = json.loads(raw.pop(key) or "{}")
    summary = raw.pop("summary_json")
    raw["summary"] = None if summary is None else RunSummary.model_validate_json(unpacked(summary))
    raw["kind"] = raw.get("kind") or "suite"
    return RunRecord.model_validate(raw)


def _with_task(row: dict[str, Any], task: str) -> dict[str, Any]:
    """`row` of a run with several retrieval tasks: its systems named `SYSTEM/TASK`."""
    named = {"system": f"{row['system']}/{task}"}
    if row.get("control_system"):
        named["control_system"] = f"{row['control_system']}/{task}"
    return {**row, **named}
