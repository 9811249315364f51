"""The search depth a task needs: the least `k` its aggregates can compute their measures at.

A retrieval task scored at `Recall@10` needs each search's top 10 hits; with `k: 4` the measure
would be computed on four, and the IR aggregate refuses it. The rule is the aggregates' own
(an aggregate may declare `least_k(task) -> (k, measure) | None`); it is checked where a suite
file is read (`tasks.N.k` with its line), where a task is planned (before its run is created:
a suite built in code, an optimization's candidate), and against an optimization's `k`
dimension before the first candidate is scored.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from memgauge._util.registry import RegistryError
from memgauge.aggregates import AGGREGATES, Aggregate, TaskView
from memgauge.errors import UsageError
from memgauge.runs.kinds import kind_of

if TYPE_CHECKING:
    from memgauge.runs.suite import TaskSpec

__all__ = ["default_aggregates", "depth_error", "least_k"]


def default_aggregates(task: TaskSpec) -> list[str]:
    """The aggregates a task gets when it names none: its kind's."""
    return kind_of(task.kind).default_aggregates(task)


def _built(task: TaskSpec) -> list[Aggregate]:
    """The task's aggregates that can be built (one that cannot says nothing here: its own
    problem is reported where its spec is checked)."""
    out = []
    specs: list[Any] = task.aggregates if task.aggregates is not None else default_aggregates(task)
    for spec in specs:
        try:
            out.append(AGGREGATES.build(spec))
        except (RegistryError, UsageError):
            continue
    return out


def least_k(
    task: TaskSpec,
    evaluators: Sequence[tuple[str, str]],
    aggregates: Sequence[Aggregate] | None = None,
) -> tuple[int, str] | None:
    """The least `k` `task` accepts and the measure that asks it (None: any k >= 1 does);
    `evaluators` are its evaluators' (label, registered name), `aggregates` its aggregates
    when they are built already."""
    view = TaskView(name=task.name, kind=task.kind, subjects=(), evaluators=evaluators, k=task.k)
    found: list[tuple[int, str]] = []
    for aggregate in _built(task) if aggregates is None else aggregates:
        rule = getattr(aggregate, "least_k", None)
        least = rule(view) if callable(rule) else None
        if least is not None:
            found.append(least)
    return max(found, key=lambda f: f[0]) if found else None


def depth_error(k: int, least: tuple[int, str]) -> str:
    """Why `k` is refused, and what to write instead."""
    return (
        f"search depth k={k} is below the largest cutoff @{least[0]} ({least[1]}); "
        f"use k: {least[0]} or more"
    )
