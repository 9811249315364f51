"""From a suite file to the work of a run: every task's items, memories, evaluators and
aggregates, loaded and checked before anything is written (a bad dataset stops the run before it
starts). What a task's items are, and how they are read, is its kind's (`runs.kinds`).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from memgauge._util.registry import RegistryError
from memgauge.aggregates import AGGREGATES, Aggregate
from memgauge.aggregates.repeats import RepeatsAggregate
from memgauge.data.models import RetrievalDataset
from memgauge.data.records import repeat_id, repeat_source
from memgauge.errors import DataError, Problem, UnavailableError, UsageError
from memgauge.runs.depth import default_aggregates, depth_error, least_k
from memgauge.runs.kinds import Planning, kind_of
from memgauge.runs.kinds.base import PlannedItem, PlannedTask
from memgauge.runs.suite import Suite, TaskSpec, evaluator_label, resolve_agents
from memgauge.scorers import Evaluator, ScriptEvaluator, evaluator_from_spec
from memgauge.scorers.base import prepare_evaluator

__all__ = [
    "PlannedItem",
    "PlannedTask",
    "default_aggregates",
    "plan_frame",
    "plan_suite",
    "plan_task",
    "prepare_evaluators",
    "repeated",
    "suite_sha256",
]


def suite_sha256(suite: Suite) -> str:
    """A content hash of the suite as parsed (formatting and comments do not count)."""
    canonical = json.dumps(_unrepeated(suite), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def _unrepeated(suite: Suite) -> dict[str, Any]:
    """The suite as JSON, without `repeat` where it is not set: a suite with no repeats hashes
    as it did before `repeat` existed (an older run resumes)."""
    out = suite.model_dump(mode="json")
    if out.get("repeat") == 1:
        del out["repeat"]
        for task in out["tasks"]:
            if task.get("repeat") in (None, 1):
                del task["repeat"]
    return out


def _evaluators(
    task: TaskSpec, base: Path, subjects: Mapping[str, Any]
) -> list[tuple[str, Evaluator, float]]:
    out = []
    for entry in task.evaluators:
        # a judge's `agent: NAME` is a subject of the suite (load_suite checked the names)
        evaluator = evaluator_from_spec(resolve_agents(entry.spec, subjects)[0])
        if isinstance(evaluator, ScriptEvaluator) and evaluator.cwd is None:
            # a suite's scripts live beside it
            evaluator = dataclasses.replace(evaluator, cwd=str(base))
        out.append((evaluator_label(entry, task.evaluators), evaluator, entry.weight))
    return out


def _aggregates(
    task: TaskSpec, evaluators: Sequence[tuple[str, Evaluator, float]]
) -> list[Aggregate]:
    """The task's aggregates; one that can `align` itself with the task's evaluators (the ir
    aggregate takes the conventions of the retrieval evaluators that give its measures) is
    given them and the keys its spec sets."""
    specs = task.aggregates if task.aggregates is not None else default_aggregates(task)
    out = []
    for spec in specs:
        try:
            _, given = AGGREGATES.parse(spec)
            agg = AGGREGATES.build(spec)  # every form a suite may write it in
        except RegistryError as exc:
            raise UsageError(f"aggregate {exc}") from None
        align = getattr(agg, "align", None)
        if callable(align):
            agg = align(task.name, [(label, e) for label, e, _w in evaluators], set(given))
        out.append(agg)
    if (task.repeat or 1) > 1 and not any(a.name == RepeatsAggregate.name for a in out):
        # what repeats are run for: every task asked more than once gets it, before an
        # aggregate that reads the others (the ranking), so that it ranks on the number the
        # task's rows show (the mean over repeats), not on the first repeat's
        after = next((i for i, a in enumerate(out) if callable(getattr(a, "after", None))), None)
        out.insert(len(out) if after is None else after, RepeatsAggregate())
    return out


def plan_task(
    task: TaskSpec,
    base: Path,
    given: RetrievalDataset | None = None,
    subjects: Mapping[str, Any] | None = None,
) -> PlannedTask:
    """Load one task (paths relative to `base`; `given`: its retrieval dataset, in memory;
    `subjects`: the suite's subjects, which an agent judge may name).

    A shard of a plug-in's kind is planned with this in its worker, from the same spec (see
    `runs.shards`; memgauge's own kinds send their items and memories, `plan_frame`)."""
    evaluators = _evaluators(task, base, subjects or {})
    # before anything is loaded or written: a task whose measures need deeper searches than it
    # asks for (a suite built in code, an optimization's candidate) has no run to start
    aggregates = _aggregates(task, evaluators)
    least = least_k(task, [(label, ev.name) for label, ev, _w in evaluators], aggregates)
    if least is not None and task.k < least[0]:
        raise UsageError(depth_error(task.k, least))
    path = base / task.dataset if task.dataset is not None else None
    planning = Planning(task, base, path, evaluators, aggregates, given)
    planned = kind_of(task.kind).plan(planning)
    if path is not None and path.exists():
        # where a run's pages read its hits' texts back (`runs.hit_texts`): a suite built in
        # code has no file its relative paths could be read against later
        planned = dataclasses.replace(planned, dataset_path=path.resolve())
    return repeated(planned, task.repeat or 1)


def plan_frame(task: TaskSpec, base: Path) -> PlannedTask:
    """`task` with its evaluators and aggregates built and nothing read (no items, no
    memories): a shard's worker adds the items and memories its shard carries (`runs.shards`)
    instead of reading the whole dataset for them."""
    evaluators = _evaluators(task, base, {})
    return PlannedTask(task, [], evaluators, None, None, aggregates=_aggregates(task, evaluators))


def repeated(task: PlannedTask, times: int) -> PlannedTask:
    """`task` with each item asked `times` times: after each item its repeats, each an item of
    its own (`repeat_id`), so that every repeat is recorded, resumed and retried as one item
    is. Once: the task as it is."""
    if times <= 1:
        return task
    items = [
        it if r == 0 else dataclasses.replace(it, id=repeat_id(it.id, r), repeat=r)
        for it in task.items
        for r in range(times)
    ]
    taken = {it.id for it in task.items}
    clash = next((it.id for it in items if it.repeat and it.id in taken), None)
    if clash is not None:
        raise UsageError(
            f"task {task.spec.name!r}: item id {clash!r} is also the id a repeat of "
            f"{repeat_source(clash, int(clash.rsplit('#r', 1)[1]))!r} is stored under; rename "
            "the item or run without repeat"
        )
    return dataclasses.replace(task, items=items)


def prepare_evaluators(plan: Sequence[PlannedTask]) -> None:
    """Load what every evaluator needs (its `prepare()`): a missing optional capability (an
    embedding model) is one UnavailableError naming the task, the evaluator and the install
    line, and a judge's LLM settings that cannot work one UsageError, both before the run is
    written, never a failure on every item."""
    for task in plan:
        for label, evaluator, _weight in task.evaluators:
            try:
                prepare_evaluator(evaluator)
            except UnavailableError as exc:
                raise UnavailableError(f"task {task.spec.name}, evaluator {label}: {exc}") from None
            except UsageError as exc:
                raise UsageError(f"task {task.spec.name}, evaluator {label}: {exc}") from None


def plan_suite(
    suite: Suite, base: Path, datasets: Mapping[str, RetrievalDataset] | None = None
) -> list[PlannedTask]:
    """Load every task of `suite` (paths relative to `base`; `datasets`: retrieval datasets
    given in memory, by task name); DataError on a bad dataset, UsageError on a bad
    aggregate. A DataError lists the problems of every task's files, not the first task's."""
    out = []
    problems: list[Problem] = []
    unlisted = 0
    for task in suite.tasks:
        try:
            out.append(plan_task(task, base, (datasets or {}).get(task.name), suite.subjects))
        except DataError as exc:
            problems += exc.problems
            unlisted += exc.unlisted
        except UsageError as exc:
            raise UsageError(f"task {task.name!r}: {exc}") from None
    if problems:
        raise DataError(problems, unlisted=unlisted)
    return out
