"""Expected-output tasks: questions with expected answers, from a file or written inline; or,
with `probes:`, the probes of a conversation dataset (memaudit, LoCoMo, LongMemEval) asked
against its turns, which is what `memgauge audit` builds (seed 003)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

from memgauge._util.numbers import AUDIT_MAX_FAILURE_RATE
from memgauge.data.models import TaskItem
from memgauge.errors import check_path
from memgauge.probes.sources import load_audit_source
from memgauge.runs.builders import command_suite
from memgauge.runs.kinds.base import ItemsKind, PlannedTask, Planning, from_task_items
from memgauge.runs.suite import Suite, TaskSpec

__all__ = ["ExpectedOutputKind", "audit_suite"]


class ExpectedOutputKind(ItemsKind):
    """Questions with expected answers; with `probes:`, a conversation dataset's probes."""

    name: ClassVar[str] = "expected-output"
    description: ClassVar[str] = (
        "questions with expected answers (a file or items:), or with probes: the probes of a "
        "conversation dataset asked against its turns"
    )
    fields = frozenset({"items", "memories", "probes"})

    def reads(self, task: TaskSpec) -> str | None:
        return "probes" if task.probes is not None else None

    def problems(self, task: TaskSpec) -> list[tuple[str, str]]:
        if task.probes is not None and task.dataset is None:
            return [("probes", "probes: needs a dataset: that is a conversation file")]
        return super().problems(task)

    def default_aggregates(self, task: TaskSpec) -> list[Any]:
        return ["audit"] if task.probes is not None else []

    def plan(self, planning: Planning) -> PlannedTask:
        task = planning.task
        if task.probes is None:
            return super().plan(planning)
        path = planning.dataset_path()
        source = load_audit_source(path, seed=task.probes.seed, kind=task.dataset_kind)
        items = from_task_items([TaskItem.model_validate(p.item()) for p in source.probes])
        return planning.planned(
            items,
            memories=source.memories if task.ingest else None,
            dataset_sha256=planning.sha256() or _content_sha([p.item() for p in source.probes]),
            notes={"source": source.name, "format": source.format, **source.notes},
        )


def _content_sha(value: Any) -> str:
    return hashlib.sha256(
        json.dumps(value, sort_keys=True, separators=(",", ":"), default=str).encode("utf-8")
    ).hexdigest()


def audit_suite(
    dataset: str | Path,
    subject: Mapping[str, Any],
    evaluator: str | Mapping[str, Any],
    *,
    name: str,
    locomo: bool = False,
    limit: int | None = None,
    seed: int = 0,
    concurrency: int = 8,
    max_failure_rate: float = AUDIT_MAX_FAILURE_RATE,
    dataset_kind: str | None = None,
    attribution: Mapping[str, Any] | None = None,
) -> Suite:
    """Seed 003's audit of an agent: the dataset's probes, asked against its turns; on a
    LoCoMo file (`locomo`), LoCoMo's own QA scoring beside the verdict (it needs no LLM).
    `dataset_kind`: conversations, locomo or longmemeval (default: detected). `attribution`:
    the arguments of an attribution aggregate beside the audit's (each wrong answer's cause);
    None: none."""
    check_path("dataset", dataset)
    dataset = Path(dataset)
    extra = (
        {"aggregates": ["audit", {"attribution": dict(attribution)}]}
        if attribution is not None
        else {}
    )
    task = {
        "name": "audit",
        "kind": "expected-output",
        "dataset": str(dataset.resolve()),
        **({"dataset_kind": dataset_kind} if dataset_kind else {}),
        "probes": {"seed": seed},
        "limit": limit,
        "evaluators": [evaluator, *(["locomo-qa"] if locomo else [])],
        **extra,
    }
    return command_suite(
        f"audit-{name}",
        f"memory audit of {dataset.name}",
        {"agent": dict(subject)},
        [task],
        concurrency=concurrency,
        seed=seed,
        max_failure_rate=max_failure_rate,
    )
