"""What every aggregate shares: the task it summarizes, the targets beside it, the protocol.

An aggregate turns the stored item records of one task (every subject that ran it) into
run-level numbers: `compute()` returns an `AggregateResult` whose `measures` gates, history and
targets read, whose `shapes` (tables, breakdowns, examples ...) reports draw by type, and whose
typed `facts` (`data.facts`) the programs that need more read. Aggregates read stored records
only, so a resumed run is summarized exactly like an uninterrupted one.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal, Protocol, runtime_checkable

from memgauge.data.facts import Facts
from memgauge.data.models import RetrievalDataset
from memgauge.data.records import AggregateResult, ItemRecord, MeasureValue
from memgauge.data.shapes import Example, Examples, Shape

__all__ = ["Aggregate", "Target", "TaskView", "examples", "failure_examples", "shaped"]


@dataclass(frozen=True)
class Target:
    """A target beside its measure (seed 000: 95 / 80 / 70 %; seed 001: P > 0.95 ...).

    `enforced`: whether missing it fails the run by default (seeds 000, 001 and 003 define
    pass/fail targets; seed 002's agent-memory targets are shown, not enforced).
    """

    measure: str
    op: Literal[">", ">=", "<", "<=", "=="]
    value: float
    source: str
    enforced: bool = True

    def text(self) -> str:
        """`> 0.95`, as shown beside the value."""
        return f"{self.op} {self.value:g}"


@dataclass(frozen=True)
class TaskView:
    """What an aggregate knows of a task, as plain data.

    Attributes:
        name: the task's name.
        kind: retrieval, expected-output, script, extraction or operations.
        subjects: the subjects that ran it, in suite order (the first is the baseline of
            paired comparisons).
        evaluators: (label, registered name) of its evaluators, in suite order.
        seed: the suite's seed (bootstrap resamples).
        k: the search depth asked of memory subjects.
        dataset: the retrieval dataset of a retrieval task (agent-memory metrics need its
            memories' tiers, folders, chains).
        ingested: whether subjects were reset and given the task's memories.
        setup_seconds: subject -> seconds spent resetting and ingesting (None: not measured).
        specs: subject -> its spec, as the run was started.
        repeat: times each item went through each subject (`repeat: N`).
        dataset_sha256: the content hash of `dataset` (`aggregates.ir.dataset_sha256`) that
            planning computed and the run recorded; None: not known, computed when needed.
    """

    name: str
    kind: str
    subjects: Sequence[str]
    evaluators: Sequence[tuple[str, str]] = ()
    seed: int = 0
    k: int = 10
    dataset: RetrievalDataset | None = None
    ingested: bool = True
    setup_seconds: Mapping[str, float | None] = field(default_factory=dict)
    specs: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    repeat: int = 1
    dataset_sha256: str | None = None


@runtime_checkable
class Aggregate(Protocol):
    """Run-level numbers of one task, from its stored item records.

    Optional attributes the engine reads: `needs_detail` (False: `compute` reads outputs and
    verdicts only, not inputs, expected values or verdict details), `repeat_aware` (True:
    `compute` is given every repeat of every item, `ItemRecord.repeat`; else the first
    repeat's records only, which are the records of a run without repeats), `imports(task)` (the
    modules `compute` will import for `task`, loaded in the background while the items run)
    and `align(task,
    evaluators, given)` (returns the aggregate made to agree with the task's `(label,
    evaluator)` pairs where both give a measure; `given`: the keys its spec set; UsageError
    when they cannot agree); `title` (its reports' heading) and `shapes_from(detail)` (the
    shapes of a stored `detail`: what `compute` draws, and how a result stored before shapes
    existed is drawn); `after(task, items, earlier)` (computes the result from `earlier`, the
    results of the task's aggregates listed before it, as well: an aggregate that summarizes the
    others, such as the ranking of systems, shows their numbers rather than its own copy).
    What programs read of a result beyond its measures and shapes, `compute` gives as the
    result's `facts`, a `data.facts.Facts` model of the aggregate's own.
    """

    name: ClassVar[str]

    def measure_names(self, task: TaskView) -> list[str]:
        """The names of the measures `compute` gives (for `--fail-under` and targets)."""
        ...

    def targets(self, task: TaskView) -> list[Target]:
        """The targets written beside this aggregate."""
        ...

    def compute(self, task: TaskView, items: Mapping[str, Sequence[ItemRecord]]) -> AggregateResult:
        """The aggregate over `items` (subject -> its records, in the task's item order)."""
        ...


#: an item a run never asked its subject (stopped past max_failure_rate): not a failure
NOT_RUN = (
    "not run: the run stopped this subject once more of its items failed than max_failure_rate"
    " allows"
)


def verdict_rows(items: Sequence[ItemRecord], evaluator: str) -> list[dict[str, Any]]:
    """Per item: its id, category, status, the evaluator's verdict (or None) and the failure
    message when the item or the verdict failed (`NOT_RUN` for an item never asked)."""
    rows = []
    for it in items:
        verdict = it.verdict(evaluator)
        error = None
        if it.status == "queued":
            error = NOT_RUN
        elif it.status == "failed":
            last = it.failures[-1] if it.failures else None
            error = last.describe() if last else "failed"
        elif verdict is None:
            error = "not scored"
        elif verdict.error is not None:
            error = verdict.error
        rows.append(
            {
                "id": it.item_id,
                "category": it.category,
                "status": it.status,
                "verdict": verdict,
                "error": error,
                "item": it,
            }
        )
    return rows


def subject_rows(
    task: TaskView, items: Mapping[str, Sequence[ItemRecord]], kind: str
) -> Iterator[tuple[str, list[dict[str, Any]], list[dict[str, Any]]]]:
    """Per subject: its rows of the `kind` evaluator's verdicts, and its failures (the items
    it was never asked are not among them: their rows say `NOT_RUN`)."""
    label = next((label for label, k in task.evaluators if k == kind), "")
    for subject in task.subjects:
        rows = verdict_rows(items.get(subject, ()), label)
        failed = [
            {"id": r["id"], "error": r["error"]}
            for r in rows
            if r["error"] is not None and r["status"] != "queued"
        ]
        yield subject, rows, failed


def shaped(
    agg: Any,
    task: TaskView,
    measures: list[MeasureValue],
    detail: Mapping[str, Any],
    *more: Shape,
    facts: Facts | None = None,
) -> AggregateResult:
    """`agg`'s result over `task`: its measures, the `facts` programs read, and the shapes its
    `shapes_from(detail)` draws (as a result stored before shapes is drawn from the `detail` it
    kept), then `more`. `detail` itself is not kept."""
    shapes = [*agg.shapes_from(detail), *more]
    return AggregateResult(
        aggregate=agg.name, task=task.name, measures=measures, facts=facts, shapes=shapes
    )


def examples(title: str, items: Sequence[Example | None]) -> list[Examples]:
    """The items (None left out) as one list titled `title`; none when there is none."""
    kept = [e for e in items if e is not None]
    return [Examples(title=title, items=kept)] if kept else []


def listed_examples(
    title: str,
    subjects: Mapping[str, Mapping[str, Any]],
    key: str,
    text: Callable[[Mapping[str, Any]], str],
    ok: str | None = None,
) -> list[Examples]:
    """The entries each subject's summary lists under `key`, titled `title`: each its `id`,
    `text(entry)` and whether it passed (`entry[ok]`; without `ok`, it failed)."""
    return examples(
        title,
        [
            Example(id=str(e["id"]), subject=s, text=text(e), ok=e[ok] if ok else False)
            for s, summary in subjects.items()
            for e in summary.get(key) or ()
        ],
    )


def failure_examples(subjects: Mapping[str, Mapping[str, Any]]) -> list[Examples]:
    """The items each subject's summary lists under `failures` (`{id, error}`), as one list."""
    return listed_examples(
        "Failed items", subjects, "failures", lambda f: str(f.get("error") or "failed")
    )
