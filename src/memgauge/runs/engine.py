"""Run a suite: every subject on every task's items, each item recorded the moment it finishes.

The run is created in the recorder with all its items queued before the first one starts, so
`--resume` knows exactly what is left: items recorded as completed or failed are never done
again, items that were in flight when the process died are still queued and are done once.
A failed item (the subject raised, timed out, or returned something unusable) is recorded with
its stage and reason and the run goes on; the run stops, as failed, once more items have failed
than `max_failure_rate` of all its items allows, since it can no longer pass.

Per subject and task, items are grouped by corpus; before a group the engine resets the memory
subject and ingests the group's memories (retrieval datasets, or a task's `memories:`), so tasks
never see each other's memories. Subjects are built in their lane (see `executor`): a subject
that does not declare `Capabilities(concurrent=True)` sees one thread only.
"""

from __future__ import annotations

import platform
import queue
import subprocess
import threading
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Executor as PoolExecutor
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from memgauge import __version__
from memgauge.errors import UsageError
from memgauge.llm._loop import allow_calls, cancel_pending
from memgauge.llm.context import llm_context
from memgauge.llm.usage import Price, priced
from memgauge.runs import owner
from memgauge.runs.executor import Executor, Job, LocalExecutor, TimedOut
from memgauge.runs.lanes import SubjectLane
from memgauge.runs.owner import HEARTBEAT_SECONDS
from memgauge.runs.plan import PlannedItem, PlannedTask, plan_suite, suite_sha256
from memgauge.runs.suite import Suite
from memgauge.runs.suite_summary import summarize
from memgauge.scorers import EvalContext, Score
from memgauge.subjects.specs import build_subject

__all__ = ["RunReport", "SuiteRecorder", "run_suite"]

MAX_BATCH = 512  # items per transaction at most


class SuiteRecorder(Protocol):
    """Where suite runs are kept (`memgauge.store.suite_runs.SuiteRunStore`)."""

    def create_run(
        self,
        run: Mapping[str, Any],
        subjects: Mapping[str, Any],
        tasks: Sequence[Mapping[str, Any]],
        items: Sequence[Mapping[str, Any]],
    ) -> None: ...

    def get_run(self, run_id: str) -> dict[str, Any] | None: ...

    def claim_run(self, run_id: str, owner: Mapping[str, Any], *, expect: str | None) -> bool: ...

    def heartbeat(self, run_id: str, token: str) -> bool: ...

    def set_status(
        self, run_id: str, status: str, *, reason: str | None = None, owner: str | None = None
    ) -> bool: ...

    def set_summary(self, run_id: str, summary: Mapping[str, Any]) -> None: ...

    def record_usage(self, run_id: str, model: str, delta: Mapping[str, int]) -> None: ...

    def usage(self, run_id: str) -> dict[str, dict[str, int]]: ...

    def unfinished_items(
        self, run_id: str, *, retry_failed: bool = False
    ) -> set[tuple[str, str, str]]: ...

    def record_items(self, run_id: str, rows: Sequence[Mapping[str, Any]]) -> None: ...

    def item_rows(self, run_id: str) -> list[dict[str, Any]]: ...

    def score_rows(self, run_id: str) -> list[dict[str, Any]]: ...


class Progress(Protocol):
    """What the CLI shows while a run goes (the default shows nothing)."""

    def start(self, run_id: str, total: int, done: int) -> None: ...

    def phase(self, subject: str, task: str, corpus: str | None) -> None: ...

    def advance(self, row: Mapping[str, Any]) -> None: ...


class _Silent:
    def start(self, run_id: str, total: int, done: int) -> None:
        pass

    def phase(self, subject: str, task: str, corpus: str | None) -> None:
        pass

    def advance(self, row: Mapping[str, Any]) -> None:
        pass


@dataclass(frozen=True)
class RunReport:
    """How a run ended and its aggregates."""

    run_id: str
    status: str
    reason: str | None
    summary: dict[str, Any]
    resumed: bool = False


def _utc() -> str:
    return datetime.now(UTC).isoformat()


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


def _failure(stage: str, exc: BaseException | str, attempt: int) -> dict[str, Any]:
    if isinstance(exc, BaseException):
        kind, message = type(exc).__name__, str(exc) or type(exc).__name__
    else:
        kind, message = stage, exc
    return {
        "stage": stage,
        "kind": kind,
        "message": message[:4000],
        "attempt": attempt,
        "at": _utc(),
    }


def _hit_record(hit: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"id": hit.id, "rank": hit.rank, "text": hit.text, "score": hit.score}
    if hit.channels:
        out["channels"] = list(hit.channels)
    return out


def _ask(lane: SubjectLane, task: PlannedTask, item: PlannedItem) -> tuple[Any, dict[str, float]]:
    """The subject's output for one item and its latencies."""
    subject, spec = lane.subject, task.spec
    if spec.kind != "retrieval" and lane.answers:
        answer = subject.answer(item.input, history=item.history)
        return answer.text, dict(answer.latency_ms)
    result = subject.search(item.input, spec.k, session=item.session)
    if spec.kind == "retrieval":
        return [_hit_record(h) for h in result.hits], dict(result.latency_ms)
    return "\n".join(h.text for h in result.hits), dict(result.latency_ms)


def _answer(lane: SubjectLane, task: PlannedTask, item: PlannedItem) -> dict[str, Any]:
    """Ask the subject (with retries); the row so far. Never raises (failures are data)."""
    row: dict[str, Any] = {
        "subject": lane.name,
        "task": task.spec.name,
        "item_id": item.id,
        "started_at": _utc(),
        "t0": time.perf_counter(),
        "failures": [],
    }
    for attempt in range(1, task.spec.retries + 2):
        row["attempts"] = attempt
        try:
            output, latency = _ask(lane, task, item)
        except Exception as exc:
            row["failures"].append(_failure("subject", exc, attempt))
            continue
        row["output"], row["latency_ms"] = output, latency
        return row
    t0 = row.pop("t0")
    return {**row, "status": "failed", "finished_at": _utc(), "duration_ms": _ms(t0)}


def _score(task: PlannedTask, item: PlannedItem, row: dict[str, Any]) -> dict[str, Any]:
    """Score an answered row; a row that already failed passes through."""
    if row.get("status") == "failed":
        return row
    t0 = row.pop("t0")
    output = row["output"]
    ctx = EvalContext(
        output=output,
        expected=item.expected,
        input=item.input,
        metadata={
            "item_id": item.id,
            "task": task.spec.name,
            "subject": row["subject"],
            **item.metadata,
        },
    )
    scores: list[dict[str, Any]] = []
    total, weights, all_scored = 0.0, 0.0, True
    for label, evaluator, weight in task.evaluators:
        try:
            score = evaluator.evaluate(ctx)
        except Exception as exc:
            score = Score.failure(f"{type(exc).__name__}: {exc}")
        if score.error is not None or score.value is None:
            all_scored = False
            failure = _failure("evaluate", score.error or "no value", row["attempts"])
            row["failures"].append({**failure, "kind": label})
        elif score.detail.get("fallback"):
            all_scored = False
        else:
            # an opt-in fallback value (a judge that failed) is never part of the combined score
            total += weight * score.value
            weights += weight
        scores.append(
            {
                "evaluator": label,
                "value": score.value,
                "passed": score.passed,
                "reason": score.reason,
                "error": score.error,
                "detail": dict(score.detail),
            }
        )
    return {
        **row,
        "status": "completed",
        "scores": scores,
        # the combined score needs every evaluator: a missing verdict is never averaged in as 0
        "score": total / weights if all_scored and weights else None,
        "finished_at": _utc(),
        "duration_ms": _ms(t0),
    }


def _work(lane: SubjectLane, task: PlannedTask, item: PlannedItem) -> dict[str, Any]:
    """Ask and score in one call (evaluators that do not wait on the network)."""
    return _score(task, item, _answer(lane, task, item))


def _ms(t0: float) -> float:
    return (time.perf_counter() - t0) * 1000


_STOP = object()


class _Writer:
    """Records finished items on a thread of its own, as many per transaction as have finished
    since the last commit (group commit): an item is in the store one commit after it
    finishes, and a fast run is not held back by one commit per item."""

    def __init__(
        self, recorder: SuiteRecorder, run_id: str, token: str, progress: Progress
    ) -> None:
        self.recorder, self.run_id, self.token = recorder, run_id, token
        self.progress = progress
        self.queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self.error: BaseException | None = None
        self.beat_at = time.monotonic()
        self.thread = threading.Thread(target=self._loop, name="memgauge-recorder", daemon=True)
        self.thread.start()

    def put(self, row: Mapping[str, Any]) -> None:
        if self.error is not None:
            raise self.error
        self.queue.put(row)

    def _beat(self) -> bool:
        """Beat the heartbeat every HEARTBEAT_SECONDS, even while no item finishes (a slow
        item), and notice a takeover by another process (`--force`): False then."""
        if time.monotonic() - self.beat_at < HEARTBEAT_SECONDS:
            return True
        self.beat_at = time.monotonic()
        if self.recorder.heartbeat(self.run_id, self.token):
            return True
        self.error = owner.lost(self.run_id, self.recorder.get_run(self.run_id))
        return False

    def _loop(self) -> None:
        stop = False
        while not stop:
            try:
                first = self.queue.get(timeout=HEARTBEAT_SECONDS)
            except queue.Empty:
                first = None
            try:
                if not self._beat():
                    return
            except BaseException as exc:  # surfaced in the run's thread at the next put/close
                self.error = exc
                return
            if first is None:
                continue
            if first is _STOP:
                return
            batch = [first]
            while len(batch) < MAX_BATCH:
                try:
                    nxt = self.queue.get_nowait()
                except queue.Empty:
                    break
                if nxt is _STOP:
                    stop = True
                    break
                batch.append(nxt)
            try:
                self.recorder.record_items(self.run_id, batch)
            except BaseException as exc:  # surfaced in the run's thread at the next put/close
                self.error = exc
                return
            for row in batch:
                self.progress.advance(row)

    def close(self) -> None:
        """Record everything queued, then stop; re-raise a recording error."""
        self.queue.put(_STOP)
        self.thread.join()
        if self.error is not None:
            raise self.error


class _Run:
    """State of one execution attempt of a run."""

    def __init__(self, writer: _Writer, total: int, n_failed: int, max_failure_rate: float) -> None:
        self.writer, self.run_id = writer, writer.run_id
        self.total, self.n_failed = total, n_failed
        self.allowed = max_failure_rate * total
        self.stop_reason: str | None = None

    def done(self, job: Job, result: Any) -> bool:
        if isinstance(result, TimedOut):
            subject, task, item_id = job.key
            row = {
                "subject": subject,
                "task": task,
                "item_id": item_id,
                "status": "failed",
                "attempts": 1,
                "finished_at": _utc(),
                "duration_ms": result.seconds * 1000,
                "failures": [
                    {
                        **_failure("subject", f"no answer within {result.seconds:g} s", 1),
                        "kind": "timeout",
                    }
                ],
            }
        else:
            row = result
        self.record(row)
        return self.stop_reason is None

    def record(self, row: Mapping[str, Any]) -> None:
        self.writer.put(row)
        if row["status"] == "failed":
            self.n_failed += 1
            if self.n_failed > self.allowed and self.stop_reason is None:
                self.stop_reason = (
                    f"{self.n_failed} of {self.total} items failed, more than the "
                    f"max_failure_rate allows ({self.allowed:g}); see `memgauge runs show "
                    f"{self.run_id}` for the failures"
                )


def _evaluator_labels(plan: Sequence[PlannedTask]) -> dict[str, list[str]]:
    return {t.spec.name: [label for label, _, _ in t.evaluators] for t in plan}


def _subjects_of(task: PlannedTask, suite: Suite) -> list[str]:
    return list(task.spec.subjects or suite.subjects)


def _create(
    recorder: SuiteRecorder,
    suite: Suite,
    suite_path: Path | None,
    plan: Sequence[PlannedTask],
    concurrency: int,
) -> str:
    run_id = f"{datetime.now(UTC):%Y%m%d-%H%M%S}-{uuid.uuid4().hex[:8]}"
    items: list[dict[str, Any]] = []
    for task in plan:
        for subject in _subjects_of(task, suite):
            items.extend(
                {
                    "subject": subject,
                    "task": task.spec.name,
                    "item_id": it.id,
                    "seq": seq,
                    "category": it.category,
                    "input": it.input_record(),
                    "expected": it.expected,
                }
                for seq, it in enumerate(task.items)
            )
    recorder.create_run(
        {
            "run_id": run_id,
            "suite_name": suite.name,
            "created_at": _utc(),
            "suite_sha256": suite_sha256(suite),
            "suite": suite.model_dump(mode="json"),
            "suite_path": str(suite_path) if suite_path else None,
            "settings": {
                "concurrency": concurrency,
                "max_failure_rate": suite.max_failure_rate,
                "seed": suite.seed,
            },
            "provenance": {
                "memgauge_version": __version__,
                "python": platform.python_version(),
                "platform": platform.platform(),
                "seed": suite.seed,
                "suite_git_commit": _git_commit(suite_path),
                "datasets": {t.spec.name: t.dataset_sha256 for t in plan},
                "skipped_unjudged": {t.spec.name: t.n_skipped for t in plan if t.n_skipped},
            },
        },
        suite.subjects,
        [
            {
                "task": t.spec.name,
                "kind": t.spec.kind,
                "dataset": t.spec.dataset,
                "dataset_sha256": t.dataset_sha256,
                "spec": t.spec.model_dump(mode="json", exclude={"items"}),
                "n_items": len(t.items),
            }
            for t in plan
        ],
        items,
    )
    return run_id


def _check_resume(
    recorder: SuiteRecorder, run_id: str, suite: Suite, plan: Sequence[PlannedTask]
) -> dict[str, Any]:
    stored = recorder.get_run(run_id)
    if stored is None:
        raise UsageError(f"--resume {run_id}: no such run in this store (see `memgauge runs list`)")
    if stored["suite_sha256"] != suite_sha256(suite):
        raise UsageError(
            f"--resume {run_id}: the suite file changed since the run started; resume with the "
            "suite as it was, or start a new run"
        )
    datasets = stored["provenance"].get("datasets", {})
    for task in plan:
        if datasets.get(task.spec.name) != task.dataset_sha256:
            raise UsageError(
                f"--resume {run_id}: the dataset of task {task.spec.name!r} changed since the run "
                "started (its sha256 differs); start a new run"
            )
    return stored


def run_suite(
    suite: Suite,
    recorder: SuiteRecorder,
    *,
    suite_path: Path | None = None,
    concurrency: int | None = None,
    resume: str | None = None,
    retry_failed: bool = False,
    force: bool = False,
    executor: Executor | None = None,
    progress: Progress | None = None,
    build: Callable[[dict[str, Any]], Any] = build_subject,
) -> RunReport:
    """Execute (or resume) a run of `suite`; returns how it ended.

    One process drives a run at a time (see `owner`): resuming a run whose owner is alive on
    this host is refused, a dead owner is taken over, and an owner on another host only with
    `force`.

    Raises UsageError / DataError for a bad suite, dataset or resume id, or a run another
    process drives, before anything is written, and the subject's own error when a subject
    cannot be built. KeyboardInterrupt marks the run cancelled (resumable) and is re-raised.
    """
    base = suite_path.parent if suite_path else Path.cwd()
    plan = plan_suite(suite, base)
    width = concurrency or suite.concurrency
    progress = progress or _Silent()
    executor = executor or LocalExecutor()
    expect: str | None = None
    if resume:
        stored = _check_resume(recorder, resume, suite, plan)
        owner.check_owner(stored, force=force)
        expect = stored.get("owner")
    me = owner.new_owner()
    token: str = me["token"]
    allow_calls()
    meter = llm_context().meter
    stop_metering: Callable[[], None] | None = None
    lanes: dict[str, SubjectLane] = {}
    try:
        for name, spec in suite.subjects.items():
            if any(name in _subjects_of(t, suite) for t in plan):
                lanes[name] = SubjectLane(name, spec, width, build)
        run_id = resume or _create(recorder, suite, suite_path, plan, width)
        # the takeover is a compare-and-swap on the owner read above: of two processes
        # resuming at once, exactly one gets here; the other has written nothing
        if not recorder.claim_run(run_id, me, expect=expect):
            raise owner.refused(run_id, recorder.get_run(run_id))
        owner.driving.add(token)
        # every request is in the store before it is sent, every response before it is used:
        # the run's spend is exact however the process ends (summing at the end lost a killed
        # attempt's spend)
        stop_metering = meter.listen(
            lambda model, delta: recorder.record_usage(run_id, model, delta)
        )
        pending = recorder.unfinished_items(run_id, retry_failed=retry_failed)
        rows = recorder.item_rows(run_id)
        n_failed = sum(1 for r in rows if r["status"] == "failed")
        progress.start(run_id, len(rows), len(rows) - len(pending))
        writer = _Writer(recorder, run_id, token, progress)
        state = _Run(writer, len(rows), n_failed, suite.max_failure_rate)
        try:
            _execute(plan, suite, lanes, pending, state, executor, width)
        except KeyboardInterrupt:
            writer.close()
            _finish(
                recorder,
                run_id,
                token,
                plan,
                suite,
                "cancelled",
                "interrupted; resume with --resume",
                meter.prices,
            )
            raise
        writer.close()
        reason: str | None
        if state.stop_reason:
            status, reason = "failed", state.stop_reason
        else:
            rate = state.n_failed / state.total if state.total else 0.0
            failed = rate > suite.max_failure_rate
            status = "failed" if failed else "completed"
            reason = (
                f"{state.n_failed} of {state.total} items failed ({rate:.1%}), more than "
                f"max_failure_rate {suite.max_failure_rate:.1%}"
                if failed
                else None
            )
        summary = _finish(recorder, run_id, token, plan, suite, status, reason, meter.prices)
        return RunReport(run_id, status, reason, summary, resumed=resume is not None)
    finally:
        if stop_metering is not None:
            stop_metering()
        owner.driving.discard(token)
        for lane in lanes.values():
            lane.close()


def _finish(
    recorder: SuiteRecorder,
    run_id: str,
    token: str,
    plan: Sequence[PlannedTask],
    suite: Suite,
    status: str,
    reason: str | None,
    prices: Mapping[str, Price],
) -> dict[str, Any]:
    summary = summarize(
        recorder.item_rows(run_id),
        recorder.score_rows(run_id),
        _evaluator_labels(plan),
        seed=suite.seed,
    )
    # LLM spend as recorded request by request, over every attempt of the run
    usage = priced(recorder.usage(run_id), prices)
    if usage:
        summary["llm_usage"] = usage
    # a run taken over meanwhile (--force elsewhere) is the other process's to finish
    if not recorder.heartbeat(run_id, token):
        raise owner.lost(run_id, recorder.get_run(run_id))
    recorder.set_summary(run_id, summary)
    recorder.set_status(run_id, status, reason=reason, owner=token)
    return summary


def _execute(
    plan: Sequence[PlannedTask],
    suite: Suite,
    lanes: Mapping[str, SubjectLane],
    pending: set[tuple[str, str, str]],
    state: _Run,
    executor: Executor,
    width: int,
) -> None:
    scoring = ThreadPoolExecutor(max_workers=width, thread_name_prefix="memgauge-score")
    try:
        _execute_in(plan, suite, lanes, pending, state, executor, width, scoring)
    except BaseException:
        # interrupted: stop judges' calls in flight instead of waiting out their retries
        cancel_pending()
        scoring.shutdown(wait=False, cancel_futures=True)
        raise
    scoring.shutdown(wait=True)


def _execute_in(
    plan: Sequence[PlannedTask],
    suite: Suite,
    lanes: Mapping[str, SubjectLane],
    pending: set[tuple[str, str, str]],
    state: _Run,
    executor: Executor,
    width: int,
    scoring: PoolExecutor,
) -> None:
    for task in plan:
        for name in _subjects_of(task, suite):
            lane = lanes[name]
            todo = [it for it in task.items if (name, task.spec.name, it.id) in pending]
            groups: dict[str | None, list[PlannedItem]] = {}
            for it in todo:
                groups.setdefault(it.corpus, []).append(it)
            for corpus, items in groups.items():
                if state.stop_reason:
                    return
                state.writer.progress.phase(name, task.spec.name, corpus)
                setup_error = _setup(lane, task, corpus)
                if setup_error is not None:
                    for it in items:
                        state.record(
                            {
                                "subject": name,
                                "task": task.spec.name,
                                "item_id": it.id,
                                "status": "failed",
                                "attempts": 1,
                                "finished_at": _utc(),
                                "failures": [_failure("setup", setup_error, 1)],
                            }
                        )
                    continue
                jobs = (_job(lane, task, it, scoring) for it in items)
                executor.execute(jobs, concurrency=width, on_done=state.done)


def _job(lane: SubjectLane, task: PlannedTask, item: PlannedItem, scoring: PoolExecutor) -> Job:
    key = (lane.name, task.spec.name, item.id)
    if not any(getattr(ev, "uses_llm", False) for _label, ev, _w in task.evaluators):
        return Job(key, lambda: _work(lane, task, item), lane.pool, task.spec.timeout)
    # LLM judges wait on the network: score in a pool as wide as the run, not in the lane
    return Job(
        key,
        lambda: _answer(lane, task, item),
        lane.pool,
        task.spec.timeout,
        then=lambda row: _score(task, item, row),
        then_pool=scoring,
    )


def _setup(lane: SubjectLane, task: PlannedTask, corpus: str | None) -> BaseException | None:
    """Reset and fill a memory subject for a group of items; the error, if it failed."""
    memories = task.memories_for(corpus)
    if memories is None or not lane.memory:
        return None
    subject = lane.subject

    def fill() -> None:
        subject.reset()
        subject.ingest(memories)
        flush = getattr(subject, "flush", None)
        if callable(flush):
            flush()

    try:
        lane.call(fill)
    except Exception as exc:
        return exc
    return None
