"""The checks of a suite file that `load_suite` runs, every one in one pass: the file against
the `Suite` model, each subject, evaluator and aggregate against its registry, each task's
paths, kinds and references, the optimization blocks. When the file is not a valid suite, each
task is validated on its own, and the checks run on the subjects and the tasks that are."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from memgauge._util.args import problems_of
from memgauge._util.imports import import_roots
from memgauge.aggregates.targets import parse_target
from memgauge.data.detect import DATASET_KINDS
from memgauge.data.jsonio import line_of, problems_from_validation
from memgauge.data.records import COMBINED
from memgauge.errors import Problem, UsageError
from memgauge.runs.depth import depth_error
from memgauge.runs.kinds import KINDS, kind_of
from memgauge.runs.kinds.base import COMMON_FIELDS
from memgauge.runs.suite import (
    EvaluatorEntry,
    Suite,
    TaskComponents,
    TaskSpec,
    components,
    evaluator_label,
    optimization_problems,
    short_forms,
    spec_problems,
    task_least_k,
)

__all__ = ["suite_problems"]


def suite_problems(
    file: str, raw: dict[str, Any], node: yaml.Node | None, base: Path
) -> tuple[Suite | None, list[Problem]]:
    """The suite a parsed suite file holds (None when it is not valid) and every problem of it,
    each with its line (`node`); paths are relative to `base`."""
    problems: list[Problem] = []
    suite: Suite | None = None
    try:
        suite = Suite.model_validate(raw)
    except ValidationError as exc:
        for err, prob in zip(exc.errors(), problems_from_validation(exc, file, None), strict=True):
            loc = tuple(p for p in err["loc"] if p != "spec")
            problems.append(Problem(file, line_of(node, loc), prob.field, prob.message))
    subjects, tasks, parts = _checkable(raw, suite)
    # a python: target's kwargs are checked against its factory: its module is found beside the
    # suite file as it will be when the suite runs
    with import_roots(base):
        problems += [
            Problem(file, line_of(node, _yaml_loc(raw, sp.loc)), sp.field, sp.message)
            for sp in spec_problems(subjects, parts)
        ]
        if suite is not None:
            problems += [
                _problem(file, node, loc, message) for loc, message in optimization_problems(suite)
            ]
        else:
            problems += _optimization_unchecked(file, node, raw)
    seen: set[str] = set()
    for i, task in tasks:
        if task.name in seen:
            at = ("tasks", i, "name")
            problems.append(_problem(file, node, at, f"duplicate task name {task.name!r}"))
        seen.add(task.name)
        problems.extend(_task_problems(file, node, i, task, base, subjects))
        labels: set[str] = set()
        for j, entry in enumerate(task.evaluators):
            label = evaluator_label(entry, task.evaluators)
            if label in labels:
                message = f"two evaluators are called {label!r}; give one a label:"
                problems.append(_problem(file, node, ("tasks", i, "evaluators", j), message))
            elif label == COMBINED and len(task.evaluators) > 1:
                # results show a task's combined score beside its evaluators, under this name
                message = (
                    f"the label {label!r} names the task's combined score (its evaluators' "
                    "weighted mean); give this evaluator another label"
                )
                problems.append(_problem(file, node, ("tasks", i, "evaluators", j), message))
            labels.add(label)
    valid = {i for i, _ in tasks}
    listed = raw.get("tasks")
    for i, given in enumerate(listed if isinstance(listed, list) else []):
        if i not in valid and isinstance(given, dict):  # its own problems are above
            problems += _reference_problems(_maker(file, node, i), given, base, subjects)
    return suite, problems


def _task_problems(
    file: str,
    node: yaml.Node | None,
    i: int,
    task: TaskSpec,
    base: Path,
    subjects: Mapping[str, Any] | None,
) -> list[Problem]:
    make = _maker(file, node, i)
    given = {"dataset": task.dataset, "memories": task.memories, "subjects": task.subjects}
    out = _reference_problems(make, given, base, subjects)

    def add(key: str, message: str) -> None:
        out.append(make(key, message))

    kind = kind_of(task.kind)
    for name in sorted(COMMON_FIELDS - kind.fields):
        if getattr(task, name) is not None:
            takers = [k for k in KINDS.names() if name in kind_of(k).fields]
            add(name, f"a {task.kind} task does not take {name}: ({', '.join(takers)} tasks do)")
    for key, message in kind.problems(task):
        add(key, message)
    if kind.options is not None:
        for sp in problems_of(kind.options, task.options or {}):
            out.append(make("options", f"{sp.field}: {sp.message}" if sp.loc else sp.message))
    elif task.options is not None:
        add("options", f"a {task.kind} task takes no options:")
    if task.dataset_kind is not None:
        reads = DATASET_KINDS.get(kind.reads(task) or "", ())
        if task.dataset_kind not in reads:
            add(
                "dataset_kind",
                f"a {task.kind} task reads {', '.join(reads)}"
                if reads
                else f"a {task.kind} task reads one kind of file; leave dataset_kind: out",
            )
    for name, raw in (task.targets or {}).items():
        # read now, so that a target that is not one is refused with its line before the run
        # (it stopped the run once its items were recorded, with no line)
        try:
            parse_target(raw, where=name, measure=name)
        except UsageError as exc:
            line = line_of(node, ("tasks", i, "targets", name))
            out.append(Problem(file, line, f"tasks.{i}.targets", str(exc)))
    seen: set[str] = set()
    for j, item in enumerate(task.items or []):
        if item.id in seen:
            at = ("tasks", i, "items", j, "id")
            out.append(_problem(file, node, at, f"duplicate item id {item.id!r}"))
        seen.add(item.id)
    least = task_least_k(task)
    if least is not None and task.k < least[0]:
        add("k", depth_error(task.k, least))
    return out


Make = Callable[[str, str], Problem]


def _problem(file: str, node: yaml.Node | None, at: tuple[str | int, ...], message: str) -> Problem:
    """The problem of the key at `at`: its line from `node`, its field the dotted path."""
    return Problem(file, line_of(node, at), ".".join(str(p) for p in at), message)


def _maker(file: str, node: yaml.Node | None, i: int) -> Make:
    """A function that makes the problem of task `i`'s `key` (its line from `node`)."""

    def make(key: str, message: str) -> Problem:
        return _problem(file, node, ("tasks", i, key) if key else ("tasks", i), message)

    return make


def _reference_problems(
    make: Make, task: Mapping[str, Any], base: Path, subjects: Mapping[str, Any] | None
) -> list[Problem]:
    """A task's paths that do not exist and subject names the suite lacks, from its values as
    given (a task that is not valid has them too)."""
    out = []
    for key in ("dataset", "memories"):
        rel = task.get(key)
        if isinstance(rel, str) and rel and not (base / rel).exists():
            out.append(make(key, f"{rel} does not exist (paths are relative to the suite file)"))
    names = task.get("subjects")
    if subjects is not None and isinstance(names, list):
        out += [
            make("subjects", f"no subject called {name!r}; the suite has {', '.join(subjects)}")
            for name in names
            if isinstance(name, str) and name not in subjects
        ]
    return out


def _yaml_loc(raw: Any, loc: tuple[str | int, ...]) -> tuple[str | int, ...]:
    """`loc` as written in the file: an evaluator written `{spec: ..., weight: ...}` has its
    spec one level down."""
    if len(loc) > 4 and loc[0] == "tasks" and loc[2] == "evaluators":
        try:
            item = raw["tasks"][loc[1]]["evaluators"][loc[3]]
        except (KeyError, IndexError, TypeError):
            return loc
        if isinstance(item, dict) and "spec" in item:
            return (*loc[:4], "spec", *loc[4:])
    return loc


def _checkable(
    raw: dict[str, Any], suite: Suite | None
) -> tuple[dict[str, Any] | None, list[tuple[int, TaskSpec]], list[TaskComponents]]:
    """The subjects (None when they are not a mapping), the valid tasks with their index, and
    every task's components for the spec checks: all of them when the suite is valid; else each
    task, and each evaluator of a task that is not, validated on its own (the problems of those
    that are not are the suite's own, reported already)."""
    if suite is not None:
        tasks = list(enumerate(suite.tasks))
        return suite.subjects, tasks, [components(i, t) for i, t in tasks]
    given = raw.get("subjects")
    subjects = given if isinstance(given, dict) else None
    tasks = []
    parts: list[TaskComponents] = []
    listed = raw.get("tasks")
    for i, task in enumerate(listed if isinstance(listed, list) else []):
        try:
            tasks.append((i, TaskSpec.model_validate(task)))
        except ValidationError:
            if isinstance(task, dict):
                parts.append(_salvaged(i, task))
        else:
            parts.append(components(i, tasks[-1][1]))
    return subjects, tasks, parts


def _salvaged(i: int, task: dict[str, Any]) -> TaskComponents:
    """The evaluators and aggregates of a task that is not valid that are valid entries."""
    entries = short_forms(task.get("evaluators"))
    evaluators = []
    for j, entry in enumerate(entries if isinstance(entries, list) else []):
        with contextlib.suppress(ValidationError):
            evaluators.append((j, EvaluatorEntry.model_validate(entry)))
    given = task.get("aggregates")
    aggregates = [
        (k, spec)
        for k, spec in enumerate(given if isinstance(given, list) else [])
        if isinstance(spec, str | dict)
    ]
    return i, evaluators, aggregates


def _optimization_unchecked(
    file: str, node: yaml.Node | None, raw: dict[str, Any]
) -> list[Problem]:
    """An optimization block names the suite's subjects, tasks and measures: it is checked
    against a valid suite only; until then, a problem says so."""
    listed = raw.get("tasks")
    blocks: list[tuple[str | int, ...]] = (
        [("optimization",)] if raw.get("optimization") is not None else []
    )
    blocks += [
        ("tasks", i, "optimization")
        for i, t in enumerate(listed if isinstance(listed, list) else [])
        if isinstance(t, dict) and t.get("optimization") is not None
    ]
    message = (
        "not checked against the suite's subjects and tasks until the problems above are fixed"
    )
    return [_problem(file, node, at, message) for at in blocks]
