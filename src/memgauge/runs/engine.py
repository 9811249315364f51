"""The one engine: run a suite, every subject on every task's items, each item recorded the moment
it finishes; then the run's summary from its stored records. Every evaluating command goes
through it (`evaluate`, `demo`, `extraction`, `operations` and `audit` build suites; see
`builders`).

The run is created in the recorder with all its items queued before the first one starts, so
`--resume` knows exactly what is left: items recorded as completed or failed are never done
again, items that were in flight when the process died are still queued and are done once.
A failed item (the subject raised, timed out, or returned something unusable; or an evaluator
could not score it) is recorded with its stage and reason and the run goes on; a subject stops
once more of its items have failed than `max_failure_rate` allows, and the run ends as failed
after the other subjects finished (see `budget`).

Per subject and task, items are grouped by corpus; before a group the engine resets the memory
subject and ingests the group's memories, so tasks never see each other's memories. Subjects are
built in their lane (see `lanes`): one that does not declare `Capabilities(concurrent=True)`
sees one thread only. A subject that cannot be built (an optional capability is missing) is
reported unavailable and its items failed; the other subjects still run.

One process drives a run at a time (see `owner`).
"""

from __future__ import annotations

import contextlib
import platform
import subprocess
import time
import uuid
from collections.abc import Callable, Collection, Mapping, Sequence
from concurrent.futures import Executor as PoolExecutor
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, fields
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from memgauge._util.gcquiet import fewer_collections
from memgauge._util.imports import import_roots, rooted
from memgauge._util.interrupts import deaf_to_ctrl_c
from memgauge._util.model import short_repr
from memgauge._util.preload import preload
from memgauge._version import __version__
from memgauge.aggregates.targets import MeasureRef, unmatched_error
from memgauge.data.models import RetrievalDataset
from memgauge.data.records import Failure, ItemRecord, RunPlan, RunRecord, RunSummary
from memgauge.errors import (
    DataError,
    RunInterrupted,
    UnavailableError,
    UsageError,
    argument,
    on_command_line,
)
from memgauge.llm._loop import allow_calls, cancel_pending
from memgauge.llm.context import llm_context
from memgauge.llm.scope import CallScope
from memgauge.llm.usage import Price, priced
from memgauge.runs import owner
from memgauge.runs.budget import FailureBudget, counts_as_failed
from memgauge.runs.distribute import ShardDriver
from memgauge.runs.executor import Job, LocalExecutor, TimedOut
from memgauge.runs.hollow import void_empty
from memgauge.runs.lanes import SubjectLane
from memgauge.runs.options import RunOptions
from memgauge.runs.plan import (
    PlannedItem,
    PlannedTask,
    plan_suite,
    prepare_evaluators,
    suite_sha256,
)
from memgauge.runs.pools import ShardPool, open_pool
from memgauge.runs.recording import InMemoryRecorder, KeepsComparisons, Recorder, Writer
from memgauge.runs.shards import plan_shards, sharded_subjects, worker_llm
from memgauge.runs.suite import Suite, component_problems, with_repeat
from memgauge.runs.summary import requirements_of, subjects_of, summarize_run
from memgauge.runs.warm import Warming
from memgauge.runs.work import (
    answer_item,
    failed_item,
    fill_memory,
    score_item,
    searched_as_it_stands,
    timed_out_item,
)
from memgauge.subjects.registry import build_subject

__all__ = ["Progress", "RunReport", "run_suite"]


class Progress(Protocol):
    """What the CLI shows while a run goes (the default shows nothing). A progress may also
    have `ingest(subject, corpus, done, total)`, called as a memory subject is filled (`done`
    of `total` memories ingested), for a bar of its own."""

    def start(self, run_id: str, total: int, done: int) -> None: ...

    def phase(self, subject: str, task: str, corpus: str | None) -> None: ...

    def advance(self, row: ItemRecord) -> None: ...


class _Silent:
    def start(self, run_id: str, total: int, done: int) -> None:
        pass

    def phase(self, subject: str, task: str, corpus: str | None) -> None:
        pass

    def advance(self, row: ItemRecord) -> None:
        pass


@dataclass(frozen=True)
class RunReport:
    """How a run ended: its record (with the summary), and what the exit code rests on.

    Attributes:
        run: the run as stored at the end (status, reason, summary).
        items: every item record the summary was computed from.
        resumed: whether this call resumed an earlier attempt.
        unavailable: subject -> why it could not be built (an optional capability is missing).
        judge_unreachable: an LLM judge's endpoint could not be reached (connection refused).
        judge_error: then, the first such call's error: its endpoint, model and what to do.
        warnings: what went wrong after the run was recorded without changing how it ended
            (its comparison with the run before it could not be kept for the viewer).
    """

    run: RunRecord
    items: list[ItemRecord] = field(default_factory=list)
    resumed: bool = False
    unavailable: dict[str, str] = field(default_factory=dict)
    judge_unreachable: bool = False
    judge_error: str | None = None
    warnings: list[str] = field(default_factory=list)

    def __repr__(self) -> str:
        """Each field, a long one by its size (`items`: how many), as the records show theirs."""
        shown = (f"{f.name}={short_repr(getattr(self, f.name))!r}" for f in fields(self))
        return f"RunReport({', '.join(shown)})"

    @property
    def run_id(self) -> str:
        """The run's id."""
        return self.run.run_id

    @property
    def status(self) -> str:
        """completed, failed or cancelled."""
        return self.run.status

    @property
    def reason(self) -> str | None:
        """Why it failed, if it did."""
        return self.run.reason

    @property
    def summary(self) -> RunSummary:
        """The run's summary."""
        return self.run.summary or RunSummary()


def _git_commit(path: Path | None) -> str | None:
    """The last commit that touched the suite file, when it is in a git work tree."""
    if path is None:
        return None
    try:
        out = subprocess.run(
            ["git", "log", "-n", "1", "--format=%H", "--", path.name],
            cwd=path.parent,
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None if out.returncode == 0 else None


class _Run:
    """State of one execution attempt of a run."""

    def __init__(
        self,
        writer: Writer,
        budget: FailureBudget,
        known: Sequence[ItemRecord] | None = None,
        scope: CallScope | None = None,
    ) -> None:
        self.writer, self.run_id = writer, writer.run_id
        self.scope = scope or CallScope(writer.run_id)
        # every item of a new run, queued or finished (None: read them from the store)
        self.rows: dict[tuple[str, str, str], ItemRecord] | None = (
            None if known is None else {r.key: r for r in known}
        )
        self.budget = budget
        self.judge_connection_failures = 0
        #: the first judge call that could not connect: what `judge_unreachable` says
        self.judge_connection_error: str | None = None
        self.judge_verdicts = 0

    @property
    def stopping(self) -> bool:
        """The run must stop: its scope was cancelled."""
        return self.scope.cancelled.is_set()

    def stops(self, subject: str) -> bool:
        """No new item of `subject` starts: it failed past `max_failure_rate`, or the run
        must stop."""
        return self.stopping or subject in self.budget.stopped

    @property
    def judge_unreachable(self) -> bool:
        """Judges could not connect and none ever answered: the endpoint is unreachable (a
        dropped connection among answered calls is a failure of those calls, not this)."""
        return self.judge_connection_failures > 0 and self.judge_verdicts == 0

    def done(self, job: Job, result: Any) -> bool:
        if isinstance(result, TimedOut):
            task, item, subject = job.context
            result = timed_out_item(task, subject, item, result.seconds)
        self.record(result)
        return not self.stops(job.key[0])

    def record(self, row: ItemRecord, *, counts: bool = True) -> None:
        self.writer.put(row)
        if self.rows is not None:
            # what the store keeps from the run's creation: position, input, expected value
            queued = self.rows.get(row.key)
            if queued is not None:
                row = row.model_copy(
                    update={"seq": queued.seq, "input": queued.input, "expected": queued.expected}
                )
            self.rows[row.key] = row
        for s in row.scores:
            if s.fallback:
                # the user opted into the neutral stand-in: a judge that could not be reached
                # is scored and counted, and the exit code follows the targets
                continue
            if s.detail.get("llm_error_kind") == "connection":
                self.judge_connection_failures += 1
                self.judge_connection_error = self.judge_connection_error or s.error
            elif s.error is None and "judge" in s.detail:
                self.judge_verdicts += 1
        if counts:
            self.budget.count(row)


def _item_records(plan: Sequence[PlannedTask], suite: Suite) -> list[ItemRecord]:
    out: list[ItemRecord] = []
    for task in plan:
        for subject in subjects_of(task, suite):
            out.extend(
                ItemRecord(
                    subject=subject,
                    task=task.spec.name,
                    item_id=it.id,
                    repeat=it.repeat,
                    seq=seq,
                    category=it.category,
                    input=it.input_record(),
                    expected=dict(it.expected) if isinstance(it.expected, Mapping) else it.expected,
                )
                for seq, it in enumerate(task.items)
            )
    return out


def _create(
    recorder: Recorder,
    suite: Suite,
    suite_path: Path | None,
    plan: Sequence[PlannedTask],
    concurrency: int,
    kind: str,
) -> tuple[str, list[ItemRecord]]:
    """Record a new run with its queued items: its id and those items."""
    run_id = f"{datetime.now(UTC):%Y%m%d-%H%M%S}-{uuid.uuid4().hex[:8]}"
    items = _item_records(plan, suite)
    run = RunRecord(
        run_id=run_id,
        suite_name=suite.name,
        kind=kind,
        suite_sha256=suite_sha256(suite),
        suite=suite.model_dump(mode="json"),
        suite_path=str(suite_path) if suite_path else None,
        settings={
            "concurrency": concurrency,
            "max_failure_rate": suite.max_failure_rate,
            "seed": suite.seed,
        },
        provenance={
            "memgauge_version": __version__,
            "python": platform.python_version(),
            "platform": platform.platform(),
            "seed": suite.seed,
            "suite_git_commit": _git_commit(suite_path),
            "datasets": {t.spec.name: t.dataset_sha256 for t in plan},
            "dataset_paths": {
                t.spec.name: str(t.dataset_path) for t in plan if t.dataset_path is not None
            },
            "skipped_unjudged": {t.spec.name: t.n_skipped for t in plan if t.n_skipped},
            "prompts": _prompt_hashes(plan),
        },
        n_items=len(items),
    )
    tasks = [
        {
            "task": t.spec.name,
            "kind": t.spec.kind,
            "dataset": t.spec.dataset,
            "dataset_sha256": t.dataset_sha256,
            "spec": t.spec.model_dump(mode="json", exclude={"items"}),
            # the dataset's items: `t.items` holds each repeat as an item of its own
            "n_items": sum(1 for it in t.items if it.repeat == 0),
        }
        for t in plan
    ]
    recorder.create_run(run, RunPlan(suite.subjects, tasks, items))
    return run_id, items


def _prompt_hashes(plan: Sequence[PlannedTask]) -> dict[str, Any]:
    """Model ids and prompt-template hashes of each task's LLM evaluators (provenance)."""
    out: dict[str, Any] = {}
    for task in plan:
        for label, ev, _w in task.evaluators:
            if not getattr(ev, "uses_llm", False):
                continue
            entry = {"evaluator": getattr(ev, "name", label), "model": getattr(ev, "model", None)}
            template = getattr(ev, "template", None)
            record = getattr(template, "record", None)
            if callable(record):
                entry.update(record())
            out[f"{task.spec.name}/{label}"] = entry
    return out


def _started_by(kind: str, run_id: str) -> str:
    """That run `run_id` of `kind` was started otherwise, and how to resume it: by its command,
    or from Python by the call whose `kind` it has."""
    if on_command_line():
        command = "run SUITE" if kind == "suite" else kind
        return (
            f"that run was started by `memgauge {command}`, not this command; resume it with"
            f" `memgauge {command} ... --resume {run_id}`"
        )
    call = (
        "evaluate(DATASET, SYSTEMS"
        if kind == "evaluate"
        else "run_suite(SUITE" + ("" if kind == "suite" else f", kind={kind!r}")
    )
    return (
        f"that run was started as kind={kind!r}, not by this call; resume it with"
        f" `{call}, resume={run_id!r})` as it was started"
    )


def _check_resume(
    recorder: Recorder, run_id: str, suite: Suite, plan: Sequence[PlannedTask], kind: str
) -> RunRecord:
    stored = recorder.get_run(run_id)
    if stored is None:
        raise UsageError(
            f"{argument('resume', run_id)}: no such run in this store (see `memgauge runs list`)"
        )
    if stored.kind != kind:
        # not "the suite changed": the run was started by another command (or call)
        raise UsageError(f"{argument('resume', run_id)}: {_started_by(stored.kind, run_id)}")
    if stored.suite_sha256 != suite_sha256(suite):
        raise UsageError(
            f"{argument('resume', run_id)}: the suite (or the command's options) changed since the run "
            "started; resume with the suite as it was, or start a new run"
        )
    datasets = stored.provenance.get("datasets", {})
    for task in plan:
        if datasets.get(task.spec.name) != task.dataset_sha256:
            raise UsageError(
                f"{argument('resume', run_id)}: the dataset of task {task.spec.name!r} changed since the run "
                "started (its sha256 differs); start a new run"
            )
    return stored


def _lanes(
    suite: Suite,
    plan: Sequence[PlannedTask],
    width: int,
    build: Callable[[dict[str, Any]], Any],
    skip: Collection[str] = (),
) -> tuple[dict[str, SubjectLane], dict[str, str], dict[str, Failure]]:
    """Each subject built in its lane; those that could not be: unavailable (an optional
    capability is missing: exit 3), or broken (its own code raised while it was built, as a
    `python:` factory that cannot open its index: its items fail, the others still run)."""
    lanes: dict[str, SubjectLane] = {}
    unavailable: dict[str, str] = {}
    broken: dict[str, Failure] = {}
    try:
        for name, spec in suite.subjects.items():
            if name in skip or not any(name in subjects_of(t, suite) for t in plan):
                continue
            try:
                lanes[name] = SubjectLane(name, spec, width, build)
            except UnavailableError as exc:
                unavailable[name] = str(exc)
            except (UsageError, DataError):
                raise  # a spec that cannot be right (exit 2)
            except Exception as exc:
                broken[name] = Failure(
                    stage="setup",
                    kind=str(getattr(exc, "failure_kind", "") or type(exc).__name__),
                    message=f"subject {name} could not be built: {exc}",
                )
    except BaseException:
        for lane in lanes.values():
            lane.close()
        raise
    return lanes, unavailable, broken


#: a run with every option at its default
_NO_OPTIONS = RunOptions()

# what may start a run, as `runs list` shows it: `suite` for `memgauge run`, then the commands
# (and `optimize`, which the optimizer gives its candidates' runs, not a kind to ask for)
RUN_KINDS = ("suite", "evaluate", "demo", "extraction", "operations", "audit", "bench-systems")


def _imports(plan: Sequence[PlannedTask], suite: Suite) -> list[str]:
    """The modules the run's aggregates will import at its end (`Aggregate.imports`)."""
    out: list[str] = []
    for task in plan:
        view = task.view(subjects_of(task, suite), suite.seed)
        for agg in task.aggregates:
            imports = getattr(agg, "imports", None)
            if callable(imports):
                out.extend(imports(view))
    return out


#: why a run stopped by Ctrl-C (or SIGTERM) is cancelled
_INTERRUPTED = "interrupted; resume with --resume"


def _resumable(recorder: Recorder) -> bool:
    """Whether a run `recorder` keeps can be resumed: one in a store, not in memory."""
    return not isinstance(recorder, InMemoryRecorder)


def run_suite(
    suite: Suite,
    recorder: Recorder,
    *,
    options: RunOptions = _NO_OPTIONS,
    suite_path: Path | None = None,
    base: Path | None = None,
    kind: str = "suite",
    progress: Progress | None = None,
    build: Callable[[dict[str, Any]], Any] = build_subject,
    datasets: Mapping[str, RetrievalDataset] | None = None,
    scope: CallScope | None = None,
) -> RunReport:
    """Execute (or resume) a run of `suite`; returns how it ended.

    Args:
        suite: the suite (a file's, or one a command built).
        recorder: where the run is kept.
        options: resume, targets, concurrency, shards (`RunOptions`), read as given.
        suite_path: the suite file, when there is one (paths are relative to it).
        base: the directory relative paths start from (default: the suite file's, else cwd).
        kind: what started the run, one of `RUN_KINDS`.
        progress: what to show while it runs.
        build: subject spec -> instance.
        datasets: retrieval datasets given in memory, by task name (the Python API).
        scope: the run's LLM calls (see `memgauge.llm.scope`): its usage is what the run
            records, and `scope.cancel()` stops the run (cancelled, resumable, as Ctrl-C
            does) and its calls only, not those of other runs going at once.

    Raises UsageError / DataError for a bad suite, dataset or resume id, or a run another
    process drives, before anything is written. KeyboardInterrupt marks the run cancelled
    (resumable) and is re-raised.
    """
    suite = with_repeat(suite, options.repeat)  # --repeat wins over the file
    # a suite built in code is checked here, as a suite file is when read: before anything
    # is written (live objects, the API's own subjects, are checked when used)
    root = base or (suite_path.parent if suite_path else Path.cwd())
    # python: targets resolve from the suite's directory (and the current one), when checked
    # here and when built in the lanes' threads below
    with import_roots(root):
        problems = component_problems(suite, skip_kinds=("live",))
    if problems:
        raise UsageError("; ".join(str(p) for p in problems))
    build = rooted(build, root)
    plan = plan_suite(suite, root, datasets)
    prepare_evaluators(plan)  # a missing capability is exit 3 before anything is written
    requirements_of(plan, suite)  # a suite built in code: its targets read before it too
    resume, workers, pool = options.resume, options.workers, options.executor
    sharded = sharded_subjects(suite, workers, pool, datasets)
    if sharded:
        # what the workers are given of the LLM setup is refused now, not once the run is
        # recorded (a cache no worker can take, MEMGAUGE_LLM_CONCURRENCY out of range)
        worker_llm(1)
    # the plan holds the datasets: frozen out of the collector's sight from here; the LLM
    # clients' connection pools that the run's judges and subjects open close with the run
    # (or with the last of the runs going at once), on every way out
    with fewer_collections(), llm_context().hold():
        width = options.concurrency or suite.concurrency
        progress = progress or _Silent()
        executor = LocalExecutor()
        expect: str | None = None
        if resume:
            stored = _check_resume(recorder, resume, suite, plan, kind)
            owner.check_owner(stored.model_dump(), force=options.force)
            expect = stored.owner
        me = owner.new_owner()
        token: str = me["token"]
        allow_calls()
        meter = llm_context().meter
        stop_metering: Callable[[], None] | None = None
        lanes, unavailable, broken = _lanes(suite, plan, width, build, skip=sharded)
        shard_pool: ShardPool | None = None
        claimed: str | None = None
        try:
            # a new run keeps its records in memory as they finish, so that its summary needs no
            # read of the store; a resumed one reads what earlier attempts recorded
            known: list[ItemRecord] | None = None
            if resume:
                run_id = resume
            else:
                run_id, known = _create(recorder, suite, suite_path, plan, width, kind)
            # the takeover is a compare-and-swap on the owner read above: of two processes
            # resuming at once, exactly one gets here; the other has written nothing
            if not recorder.claim_run(run_id, me, expect=expect):
                current = recorder.get_run(run_id)
                raise owner.refused(run_id, None if current is None else current.model_dump())
            claimed = run_id
            owner.driving.add(token)
            # every request is in the store before it is sent, every response before it is used
            scope = scope or CallScope(run_id)
            stop_metering = meter.listen(
                lambda model, delta: recorder.record_usage(run_id, model, delta), scope=scope
            )
            pending = recorder.unfinished_items(run_id, retry_failed=options.retry_failed)
            if resume:
                records = recorder.item_records(run_id)
                budget = FailureBudget(
                    suite.max_failure_rate,
                    (r.key for r in records),
                    (
                        r
                        for r in records
                        if counts_as_failed(r)
                        and not any(f.stage == "unavailable" for f in r.failures)
                    ),
                )
            else:  # a new run: every item is queued
                budget = FailureBudget(suite.max_failure_rate, pending)
            total = budget.total
            preload(_imports(plan, suite))
            progress.start(run_id, total, total - len(pending))
            writer = Writer(recorder, run_id, token, progress)
            state = _Run(writer, budget, known, scope)
            finish = _Finisher(recorder, run_id, token, plan, suite, options, state.rows)
            try:
                if sharded:
                    shard_pool = open_pool(workers, pool)
                    assert shard_pool is not None
                    shards = plan_shards(
                        plan,
                        suite,
                        sharded,
                        pending,
                        base=root.resolve(),
                        concurrency=width,
                        workers=shard_pool.workers,
                        llm=worker_llm(shard_pool.workers),
                    )
                    ShardDriver(
                        shards, plan, state, shard_pool, recorder, unavailable, width
                    ).run_shards()
                if not state.stopping:
                    _execute(
                        plan,
                        suite,
                        lanes,
                        unavailable,
                        broken,
                        pending,
                        state,
                        executor,
                        width,
                        recorder,
                        skip=sharded,
                    )
            except KeyboardInterrupt:
                with deaf_to_ctrl_c():
                    writer.close()
                    finish("cancelled", _INTERRUPTED, meter.prices)
                raise RunInterrupted(run_id, resumable=_resumable(recorder)) from None
            writer.close()
            if scope.cancelled.is_set():
                finish("cancelled", "cancelled; resume with --resume", meter.prices)
                raise RunInterrupted(run_id, resumable=_resumable(recorder))
            # a subject whose every search found nothing holds nothing: its items fail
            items, voided = void_empty(run_id, finish.records(), plan, recorder)
            for row in voided:
                budget.count(row)
            # every subject past its rate was stopped the moment it got there
            reason = budget.reason(run_id, stored=_resumable(recorder))
            status = "completed" if reason is None else "failed"
            if unavailable and reason is None:
                reason = "; ".join(
                    f"subject {n} unavailable: {why}" for n, why in unavailable.items()
                )
            run, items = finish(status, reason, meter.prices, items)
            return RunReport(
                run,
                items,
                resumed=resume is not None,
                unavailable=unavailable,
                judge_unreachable=state.judge_unreachable,
                judge_error=state.judge_connection_error if state.judge_unreachable else None,
                warnings=finish.warnings,
            )
        except RunInterrupted:
            raise
        except KeyboardInterrupt:
            # Ctrl-C after the run was claimed and before its items ran (the subjects' modules
            # importing, the caller's progress starting) left it `running`, said by a bare
            # KeyboardInterrupt with no run id: cancelled now, as one met in its items is
            if claimed is None:
                raise
            with deaf_to_ctrl_c(), contextlib.suppress(Exception):
                recorder.set_status(claimed, "cancelled", reason=_INTERRUPTED, owner=token)
            raise RunInterrupted(claimed, resumable=_resumable(recorder)) from None
        except Exception as exc:
            if claimed is not None:
                # a run this process drives never stays `running` after an error (an
                # aggregate that refuses the task, a store that failed): it ends failed, with
                # why; a run ended meanwhile, or taken over, is not ours to touch (the owner
                # token is compared)
                with contextlib.suppress(Exception):
                    recorder.set_status(
                        claimed, "failed", reason=f"stopped by an error: {exc}", owner=token
                    )
            raise
        finally:
            if stop_metering is not None:
                stop_metering()
            owner.driving.discard(token)
            for lane in lanes.values():
                lane.close()
            if shard_pool is not None:
                shard_pool.close()


@dataclass
class _Finisher:
    recorder: Recorder
    run_id: str
    token: str
    plan: Sequence[PlannedTask]
    suite: Suite
    options: RunOptions
    rows: Mapping[tuple[str, str, str], ItemRecord] | None = None
    warnings: list[str] = field(default_factory=list)

    def records(self) -> list[ItemRecord]:
        """Every item of the run in the store's order (subject, task, position)."""
        if self.rows is not None:
            return sorted(self.rows.values(), key=lambda r: (r.subject, r.task, r.seq))
        # the IR and mean aggregates read outputs and verdicts only: the inputs, expected
        # values and verdict details of a large retrieval run need not be parsed again
        detail = any(getattr(a, "needs_detail", True) for t in self.plan for a in t.aggregates)
        return self.recorder.item_records(self.run_id, detail=detail)

    def __call__(
        self,
        status: str,
        reason: str | None,
        prices: Mapping[str, Price],
        items: list[ItemRecord] | None = None,
    ) -> tuple[RunRecord, list[ItemRecord]]:
        items = self.records() if items is None else items
        summary = summarize_run(
            items,
            self.plan,
            self.suite,
            fail_under=self.options.requirements,
            by=self.options.by,
            seed_targets=self.options.seed_targets,
            setup_seconds=self.recorder.setup_seconds(self.run_id),
            # LLM spend as recorded request by request, over every attempt of the run
            llm_usage=priced(self.recorder.usage(self.run_id), prices),
        )
        # a run taken over meanwhile (--force elsewhere) is the other process's to finish
        if not self.recorder.heartbeat(self.run_id, self.token):
            current = self.recorder.get_run(self.run_id)
            raise owner.lost(self.run_id, None if current is None else current.model_dump())
        self.recorder.set_summary(self.run_id, summary)
        self.recorder.set_status(self.run_id, status, reason=reason, owner=self.token)
        if status == "completed" and isinstance(self.recorder, KeepsComparisons):
            # a big run's compare page with the run before it, ready before it is asked for
            problem = _keep_comparison(self.recorder, self.run_id)
            if problem is not None:
                self.warnings.append(problem)
        # a --fail-under that names no measure is bad input (exit 2), found only now that the
        # measures exist: the run itself is finished and kept, gateable with the right name
        error = unmatched_error(summary.measures(), self.options.requirements)
        if error is None:
            # a task's own `targets:` likewise (a typo's target never decided anything)
            named = [
                MeasureRef(name, None, task.spec.name)
                for task in self.plan
                for name in task.spec.targets or {}
            ]
            error = unmatched_error(summary.measures(), named, flag="the suite's targets:")
        if error is not None and status != "cancelled":
            raise UsageError(f"{error} (run {self.run_id} is recorded, {status})")
        # the summary just stored need not be parsed back (a large run's is megabytes)
        run = self.recorder.get_run(self.run_id, summary=False)
        assert run is not None
        return run.model_copy(update={"summary": summary}), items


def _keep_comparison(recorder: KeepsComparisons, run_id: str) -> str | None:
    """`run_comparison.keep`, imported when a run finishes (SciPy's tests, for a big run); what
    went wrong, if it failed. The kept comparison only spares the viewer's first request its
    computing: the run is recorded and completed, so a failure to keep it (a locked or full
    store) is a warning, not the command's failure (it was exit 70 with the reports unwritten).
    An interruption still interrupts (130; the run stays completed, nothing kept)."""
    from memgauge.runs.run_comparison import keep

    try:
        keep(recorder, run_id)
    except Exception as exc:  # any failure: the run stands without it
        return (
            f"run {run_id}'s comparison with the run before it was not kept"
            f" ({type(exc).__name__}: {exc}); the viewer compares them on request"
        )
    return None


def _execute(
    plan: Sequence[PlannedTask],
    suite: Suite,
    lanes: Mapping[str, SubjectLane],
    unavailable: Mapping[str, str],
    broken: Mapping[str, Failure],
    pending: set[tuple[str, str, str]],
    state: _Run,
    executor: LocalExecutor,
    width: int,
    recorder: Recorder,
    *,
    skip: Collection[str] = (),
) -> None:
    scoring = ThreadPoolExecutor(max_workers=width, thread_name_prefix="memgauge-score")
    # the embedding of later lanes' texts on the cores the first lanes leave free
    warming = Warming.start(plan, suite, lanes, pending, skip)
    try:
        for task in plan:
            for name in subjects_of(task, suite):
                if name in skip:  # run in shards
                    continue
                todo = [it for it in task.items if (name, task.spec.name, it.id) in pending]
                if name in unavailable:
                    failure = Failure(
                        stage="unavailable", kind="unavailable", message=unavailable[name]
                    )
                    for it in todo:
                        # unavailable is its own outcome (exit 3), not the subject failing
                        state.record(failed_item(task, name, it, failure), counts=False)
                    continue
                if name in broken:
                    # the subject's own failure: counted against max_failure_rate (exit 4)
                    for it in todo:
                        state.record(failed_item(task, name, it, broken[name]))
                    continue
                _run_task(lanes[name], task, todo, state, executor, width, scoring, recorder)
                if state.stopping:
                    warming.close()
                    return
    except BaseException:
        # interrupted: stop this run's judges' calls in flight instead of waiting out their
        # retries (other runs going at once keep theirs)
        warming.close(wait=False)
        cancel_pending(state.scope)
        scoring.shutdown(wait=False, cancel_futures=True)
        raise
    warming.close()
    scoring.shutdown(wait=True)


def _run_task(
    lane: SubjectLane,
    task: PlannedTask,
    todo: Sequence[PlannedItem],
    state: _Run,
    executor: LocalExecutor,
    width: int,
    scoring: PoolExecutor,
    recorder: Recorder,
) -> None:
    """One subject on one task's items, corpus by corpus, until it is stopped."""
    groups: dict[str | None, list[PlannedItem]] = {}
    for it in todo:
        groups.setdefault(it.corpus, []).append(it)
    for corpus, items in groups.items():
        if state.stops(lane.name):
            return
        state.writer.progress.phase(lane.name, task.spec.name, corpus)
        setup_error = _setup(
            lane, task, corpus, recorder, state.run_id, state.scope, state.writer.progress
        )
        if setup_error is not None:
            failure = Failure.of("setup", setup_error)
            for it in items:
                state.record(failed_item(task, lane.name, it, failure))
            continue
        jobs = (_job(lane, task, it, scoring, state.scope) for it in items)
        executor.execute(jobs, concurrency=width, on_done=state.done)


def _job(
    lane: SubjectLane,
    task: PlannedTask,
    item: PlannedItem,
    scoring: PoolExecutor,
    scope: CallScope,
) -> Job:
    key = (lane.name, task.spec.name, item.id)

    # in the run's scope, whichever pool's thread runs them: their LLM calls are this run's
    @scope.bind
    def answer() -> tuple[ItemRecord, float]:
        return answer_item(lane.subject, lane.name, lane.answers, task, item)

    @scope.bind
    def score(answered: tuple[ItemRecord, float]) -> ItemRecord:
        return score_item(task, item, *answered)

    context = (task, item, lane.name)  # a timeout is recorded as this item's failure
    if not any(getattr(ev, "uses_llm", False) for _label, ev, _w in task.evaluators):
        return Job(key, lambda: score(answer()), lane.pool, task.spec.timeout, context=context)
    # LLM judges wait on the network: score in a pool as wide as the run, not in the lane
    return Job(
        key, answer, lane.pool, task.spec.timeout, then=score, then_pool=scoring, context=context
    )


def _setup(
    lane: SubjectLane,
    task: PlannedTask,
    corpus: str | None,
    recorder: Recorder,
    run_id: str,
    scope: CallScope,
    progress: object = None,
) -> BaseException | None:
    """Reset and fill a memory subject for a group of items, telling `progress.ingest` (when
    it has one) how far it got; the error, if it failed."""
    memories = task.memories_for(corpus)
    if not lane.memory:
        return None
    subject = lane.subject
    if memories is None:
        if task.spec.ingest:
            return None
        no_ingest = argument("ingest", False, flag="--no-ingest")  # here: the lane has no CLI
        try:
            lane.call(scope.bind(lambda: searched_as_it_stands(subject, no_ingest)))
        except Exception as exc:
            return exc
        return None
    shown = getattr(progress, "ingest", None)
    done = 0

    def ingested(n: int) -> None:
        nonlocal done
        done += n
        if callable(shown):
            shown(lane.name, corpus, done, len(memories))

    if callable(shown):
        shown(lane.name, corpus, 0, len(memories))
    t0 = time.perf_counter()
    try:
        lane.call(scope.bind(lambda: fill_memory(subject, memories, ingested)))
    except Exception as exc:
        return exc
    recorder.record_setup(run_id, lane.name, task.spec.name, corpus, time.perf_counter() - t0)
    return None
