"""The work of one item, as functions of plain data: ask a subject (its built instance), score the
answer with the task's evaluators, and give back an `ItemRecord`; and fill a memory subject for a
group of items. Nothing here records or schedules: `engine` does.

How a subject is asked is its task's kind's (`runs.kinds`: a retrieval task searches, an
expected-output task asks an agent or a memory, an extraction task extracts ...); a recorded
subject (outputs captured in production) gives the item's recorded output.

Every failure is data: an attempt that raises becomes a `Failure` and the item is retried up to
the task's `retries`; an item with no answer is `failed`, never scored.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

from memgauge._util.listing import counted
from memgauge._util.redact import redactor
from memgauge.data.models import Memory
from memgauge.data.records import Failure, ItemRecord, ScoreRecord, utc_now
from memgauge.errors import EmptyMemoryError, ReplyError
from memgauge.llm.cache import asked_anew
from memgauge.llm.tally import tallied
from memgauge.runs.kinds.base import PlannedItem, PlannedTask
from memgauge.scorers import EvalContext, Score
from memgauge.subjects.events import capabilities_of
from memgauge.subjects.protocol import INGEST_BATCH

__all__ = [
    "answer_item",
    "ask",
    "failed_item",
    "fill_memory",
    "score_item",
    "searched_as_it_stands",
    "timed_out_item",
]


def ask(
    subject: Any, answers: bool, task: PlannedTask, item: PlannedItem
) -> tuple[Any, dict[str, float], dict[str, Any]]:
    """The subject's output for one item, its latencies, and anything else the call gave: a
    recorded subject's recorded output, else what the task's kind asks (`runs.kinds`)."""
    recorded = getattr(subject, "recorded_output", None)
    if callable(recorded):
        return recorded(item.source_id), {}, {}
    return task.kind.ask(subject, answers, task, item)


def _record(task: PlannedTask, subject: str, item: PlannedItem, **fields: Any) -> ItemRecord:
    # built here from values of known types: validation would re-walk every output (a run's
    # largest cost per item after the subject); records read back from a store are validated.
    # A copy of `_QUEUED` with every field given anew (its containers fresh, never shared):
    # what `model_construct` of every field builds, without its walk of the fields' aliases
    return _QUEUED.model_copy(
        update={
            "subject": subject,
            "task": task.spec.name,
            "item_id": item.id,
            "category": item.category,
            "repeat": item.repeat,
            "input": {},
            "latency_ms": {},
            "extra": {},
            "scores": [],
            "failures": [],
            **fields,
        }
    )


#: every field of an item's record set, as a queued item has it: each record the engine makes
#: is a copy of it (`_record`), every field set as `model_construct` of every field sets them
_QUEUED = ItemRecord.model_construct(
    subject="",
    task="",
    item_id="",
    seq=0,
    status="queued",
    category=None,
    input={},
    expected=None,
    output=None,
    latency_ms={},
    extra={},
    scores=[],
    score=None,
    failures=[],
    attempts=0,
    started_at=None,
    finished_at=None,
    duration_ms=None,
    repeat=0,
)


def failed_item(
    task: PlannedTask,
    subject: str,
    item: PlannedItem,
    failure: Failure,
    *,
    duration_ms: float | None = None,
) -> ItemRecord:
    """An item that could not be answered (set-up failed, subject unavailable, timed out)."""
    return _record(
        task,
        subject,
        item,
        status="failed",
        attempts=failure.attempt,
        failures=[failure],
        finished_at=utc_now(),
        duration_ms=duration_ms,
    )


def timed_out_item(
    task: PlannedTask, subject: str, item: PlannedItem, seconds: float
) -> ItemRecord:
    """An item whose subject gave no answer within the task's timeout."""
    failure = Failure(stage="timeout", kind="timeout", message=f"no answer within {seconds:g} s")
    return failed_item(task, subject, item, failure, duration_ms=seconds * 1000)


def answer_item(
    subject: Any, name: str, answers: bool, task: PlannedTask, item: PlannedItem
) -> tuple[ItemRecord, float]:
    """Ask the subject (with the task's retries): the record so far (status `queued` when
    answered, `failed` when every attempt failed) and the start time (perf_counter).
    Never raises: failures are data."""
    t0 = time.perf_counter()
    started = utc_now()
    failures: list[Failure] = []
    spent: dict[str, dict[str, int]] = {}  # its own LLM calls, every attempt (aggregates.cost)
    for attempt in range(1, task.spec.retries + 2):
        try:
            with tallied(spent), asked_anew(item.repeat):
                output, latency, extra = ask(subject, answers, task, item)
            if spent:
                extra = {**extra, "llm_usage": spent}
        except ReplyError as exc:
            # the subject's fault, said in words: kind `subject`, not the exception's class
            failures.append(Failure.of("subject", str(exc), attempt))
            continue
        except Exception as exc:
            failures.append(Failure.of("subject", exc, attempt))
            continue
        return (
            _record(
                task,
                name,
                item,
                attempts=attempt,
                output=output,
                latency_ms=latency,
                extra=extra,
                failures=failures,
                started_at=started,
            ),
            t0,
        )
    record = _record(
        task,
        name,
        item,
        status="failed",
        attempts=len(failures),
        failures=failures,
        started_at=started,
        finished_at=utc_now(),
        duration_ms=(time.perf_counter() - t0) * 1000,
    )
    return record, t0


def _score_record(label: str, score: Score, clean: Callable[[str], str]) -> ScoreRecord:
    detail = dict(score.detail)
    raw = detail.pop("raw_reply", None) if detail else None
    return _VERDICT.model_copy(  # values of known types (see `_record`), every field anew
        update={
            "evaluator": label,
            "value": None if score.value is None else float(score.value),
            "passed": None if score.passed is None else bool(score.passed),
            # redacted here, not only in the store: the run's own records (what the API
            # returns and the summary reads) equal what a later read of the store gives
            "reason": clean(str(score.reason)) if score.reason else "",
            "error": None if score.error is None else clean(str(score.error)),
            "fallback": bool(detail.get("fallback")) if detail else False,
            "detail": detail,
            "raw_reply": None if raw is None else str(raw),
        }
    )


#: a verdict's record with every field set: each verdict is a copy of it (`_score_record`)
_VERDICT = ScoreRecord.model_construct(
    evaluator="",
    value=None,
    passed=None,
    reason="",
    error=None,
    fallback=False,
    detail={},
    raw_reply=None,
)


def score_item(task: PlannedTask, item: PlannedItem, record: ItemRecord, t0: float) -> ItemRecord:
    """Score an answered record with every evaluator of the task; a failed one passes through.

    The combined score needs every evaluator: a missing verdict is never averaged in as 0. An
    opt-in stand-in value (a judge that failed under `on_failure: neutral`: seed 000's 0.5) is
    a value the user asked for, so it is averaged in, and the verdict's `fallback` flag marks
    the item's combined score as resting on it (`ItemRecord.fallback`).
    """
    if record.status == "failed":
        return record
    ctx = EvalContext(
        output=record.output,
        expected=item.expected,
        input=item.input,
        metadata={
            "item_id": item.source_id,
            "task": task.spec.name,
            "subject": record.subject,
            **item.metadata,
        },
    )
    scores: list[ScoreRecord] = []
    failures = list(record.failures)
    total, weights, all_scored = 0.0, 0.0, True
    clean = redactor()  # the secrets looked up once for the item's verdicts
    for label, evaluator, weight in task.evaluators:
        try:
            score = evaluator.evaluate(ctx)
        except Exception as exc:
            score = Score.failure(f"{type(exc).__name__}: {exc}")
        verdict = _score_record(label, score, clean)
        if verdict.error is None and verdict.value is None and score.detail.get("skipped"):
            # skipped by a convention the user chose (`no_relevant: skip`): no value, and no
            # failure either; the item's combined score is None
            all_scored = False
        elif verdict.error is not None or verdict.value is None:
            all_scored = False
            failure = Failure.of("evaluate", verdict.error or "no value", record.attempts)
            failures.append(failure.model_copy(update={"kind": label}))
        else:
            total += weight * verdict.value
            weights += weight
        scores.append(verdict)
    scored = record.model_copy(
        update={
            "status": "completed",
            "scores": scores,
            "failures": failures,
            "score": total / weights if all_scored and weights else None,
            "finished_at": utc_now(),
            "duration_ms": (time.perf_counter() - t0) * 1000,
        }
    )
    return _annotated(task, item, scored)


def _annotated(task: PlannedTask, item: PlannedItem, record: ItemRecord) -> ItemRecord:
    """The record with what each aggregate that reads one item at a time (`annotate`) keeps of
    it, under the aggregate's name in `extra`: the item's own page shows it (an attribution's
    cause), and the record holds it without another column."""
    notes: dict[str, Any] = {}
    whole: ItemRecord | None = None
    for aggregate in task.aggregates:
        annotate = getattr(aggregate, "annotate", None)
        if callable(annotate):
            if whole is None:
                # the record as it is read back: its input and expected value are filled in
                # where it is written
                whole = record.model_copy(
                    update={"input": item.input_record(), "expected": item.expected}
                )
            note = annotate(whole, task.evaluator_kinds())
            if note is not None:
                notes[aggregate.name] = note
    if not notes:
        return record
    return record.model_copy(update={"extra": {**record.extra, **notes}})


def fill_memory(
    subject: Any,
    memories: Sequence[Memory],
    on_ingested: Callable[[int], None] | None = None,
) -> None:
    """Reset a memory subject and ingest `memories`, `INGEST_BATCH` at a time in their order
    (the protocol's `ingest` adds to what is stored), calling `on_ingested(n)` after each
    batch; then flush, when it can. A subject that can dump and lists nothing after being
    given memories raises EmptyMemoryError."""
    subject.reset()
    for start in range(0, len(memories), INGEST_BATCH):
        batch = memories[start : start + INGEST_BATCH]
        subject.ingest(batch)
        if on_ingested is not None:
            on_ingested(len(batch))
    flush = getattr(subject, "flush", None)
    if callable(flush):
        flush()
    if memories and capabilities_of(subject).dump:
        _holds_something(subject, len(memories))


def searched_as_it_stands(subject: Any, no_ingest: str) -> None:
    """A memory subject searched as it stands (`--no-ingest`, a task's `ingest: false`): never
    reset nor given the task's memories. EmptyMemoryError when it can say cheaply how many it
    holds (`count_stored()`, as the reference memory can) and holds none, whatever the number
    of queries: a memory built for the run (the reference memory without a `path:` holding
    memories) starts empty, so every search would find nothing and score 0. A live system is
    only searched: it is neither dumped nor counted another way. `no_ingest`: how the caller
    asked for it (`argument("ingest", False, flag="--no-ingest")`, named in the caller's thread:
    this runs in the subject's lane, where no command line is known)."""
    count = getattr(subject, "count_stored", None)
    if not callable(count):
        return
    try:
        held = count()
    except Exception:  # a count that fails tells nothing of what is stored; searches will
        return
    if not held:
        raise EmptyMemoryError(
            f"searched as it stands ({no_ingest}, or the task's ingest: false), the subject "
            "holds no memory (count_stored() is 0), so every search would find nothing and "
            "score 0: it was never given the dataset's memories. A memory built for the run "
            "(lexical, dense, hybrid, or a reference: spec whose path: holds nothing yet) "
            f"starts empty: evaluate it in a run without {no_ingest}"
        )


def _holds_something(subject: Any, ingested: int) -> None:
    """EmptyMemoryError when the subject's own dump lists no memory after `ingested` were
    given: searching it would score every item 0. A subject that can say how many it holds
    (`count_stored()`) is asked that instead: a dump builds every memory (a tenth of a
    CPU-second for LoCoMo's 5,882 turns in the reference memory)."""
    count = getattr(subject, "count_stored", None)
    try:
        held = count() if callable(count) else len(subject.dump())
    except Exception:  # a dump that fails tells nothing of what is stored; searches will
        return
    if not held:
        raise EmptyMemoryError(
            f"after ingesting {counted(ingested, 'memory', 'memories')}, the subject's "
            f"{'count_stored() is 0' if callable(count) else 'dump() lists none'}: it holds "
            "nothing, so every search would find nothing and score 0. Check that ingest "
            "stores what it is given (mem0 with infer: true keeps only the facts its LLM "
            "extracts: a model that answers no facts, or no JSON, stores nothing)"
        )
