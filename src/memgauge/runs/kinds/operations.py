"""Operations tasks (seed 000): the subject decides how an incoming memory merges with the stored
ones (CREATE / UPDATE / NOOP / DELETE); the input is the stored memories and the incoming one.
This is what `memgauge operations` builds.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

from memgauge._util.numbers import MAX_FAILURE_RATE
from memgauge.data.io import load_operation_cases
from memgauge.data.models import OperationCase
from memgauge.errors import UsageError, check_path
from memgauge.runs.builders import command_suite, learnings_arg
from memgauge.runs.kinds.base import DatasetKind, PlannedItem, PlannedTask, Planning
from memgauge.runs.suite import Suite

__all__ = ["OperationsKind", "operations_suite"]


class OperationsKind(DatasetKind):
    """Stored memories and an incoming one, whose merge the subject decides."""

    name: ClassVar[str] = "operations"
    description: ClassVar[str] = "seed 000 cases: the subject decides a memory merge"
    dataset_is = "memory-operation cases (seed 000)"
    calls = "decide"

    def plan(self, planning: Planning) -> PlannedTask:
        # ids unique, with every other problem of the file
        return planning.planned(_operation_items(load_operation_cases(planning.dataset_path())))

    def arguments(self, item: PlannedItem) -> tuple[Any, ...]:
        return list(item.input["existing"]), dict(item.input["incoming"])


def _operation_items(cases: list[OperationCase]) -> list[PlannedItem]:
    items = []
    for c in cases:
        inc = c.incoming
        incoming = inc.model_dump(mode="json") if hasattr(inc, "model_dump") else dict(inc)
        items.append(
            PlannedItem(
                id=c.id,
                input={
                    "existing": [m.model_dump(mode="json") for m in c.existing],
                    "incoming": incoming,
                },
                expected={
                    "expected": c.expected.model_dump(mode="json"),
                    "scenario": c.scenario,
                    "quality": c.quality,
                    "expect_similar": c.expect_similar,
                },
                category=c.scenario,
            )
        )
    return items


def operations_suite(
    cases: str | Path,
    subject: Mapping[str, Any],
    *,
    subject_name: str = "decider",
    judge: bool = False,
    judge_model: str | None = None,
    judge_learnings: str | Mapping[str, Any] | None = None,
    concurrency: int = 4,
    max_failure_rate: float = MAX_FAILURE_RATE,
    seed: int = 0,
) -> Suite:
    """Seed 000's merge decisions over `cases` for one decider (live or recorded);
    `judge_learnings` (a query, or `{query, k, budget, memory, path}`) adds past failures to
    the merge judge's prompt."""
    check_path("cases", cases)
    cases = Path(cases)
    args: dict[str, Any] = {"judge": judge}
    if judge_model:
        args["judge_model"] = judge_model
    if judge_learnings is not None:
        if not judge:
            raise UsageError("--judge-learnings needs --judge (it goes into the judge's prompt)")
        args["learnings"] = learnings_arg(judge_learnings, "--judge-learnings")
    task = {
        "name": "operations",
        "kind": "operations",
        "dataset": str(cases.resolve()),
        "evaluators": [{"spec": {"operation-checks": args}, "label": "operation-checks"}],
    }
    return command_suite(
        f"operations:{cases.resolve().stem}",
        f"memgauge operations {cases}",
        {subject_name: dict(subject)},
        [task],
        concurrency=concurrency,
        seed=seed,
        max_failure_rate=max_failure_rate,
    )
