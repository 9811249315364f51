"""From a suite file to the work of a run: every task's items, memories and evaluators, loaded
and checked before anything is written (a bad dataset stops the run before it starts).

Retrieval tasks take one item per judged query of their dataset (queries nobody judged are
counted as skipped, not scored); the expected value is the query's grades `{memory_id: grade}`,
and queries of a corpus (LoCoMo's conversations) search only that corpus's memories.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memgauge._util.files import sha256_file
from memgauge.data.io import load_items, load_retrieval_dataset
from memgauge.data.jsonio import read_records
from memgauge.data.models import Memory, SessionContext, TaskItem, Turn
from memgauge.runs.suite import Suite, TaskSpec, evaluator_label
from memgauge.scorers import Evaluator, ScriptEvaluator, evaluator_from_spec

__all__ = ["PlannedItem", "PlannedTask", "plan_suite", "suite_sha256"]


@dataclass(frozen=True)
class PlannedItem:
    """One item of a task, as every subject will be asked it."""

    id: str
    input: str
    expected: Any
    category: str | None = None
    corpus: str | None = None
    history: list[Turn] | None = None
    session: SessionContext | None = None
    metadata: dict[str, Any] = field(default_factory=dict)

    def input_record(self) -> dict[str, Any]:
        """What the store keeps as the item's input."""
        out: dict[str, Any] = {"text": self.input}
        if self.history is not None:
            out["history"] = [
                t.model_dump(mode="json", exclude_defaults=True) for t in self.history
            ]
        if self.session is not None:
            out["session"] = self.session.model_dump(mode="json")
        if self.corpus is not None:
            out["corpus"] = self.corpus
        return out


@dataclass(frozen=True)
class PlannedTask:
    """A task with everything loaded: items, memories per corpus, built evaluators."""

    spec: TaskSpec
    items: list[PlannedItem]
    evaluators: list[tuple[str, Evaluator, float]]
    memories: list[Memory] | None
    dataset_sha256: str | None
    n_skipped: int = 0

    def memories_for(self, corpus: str | None) -> list[Memory] | None:
        """The memories a subject holds while answering items of `corpus` (None: no ingestion)."""
        if self.memories is None:
            return None
        if corpus is None:
            return self.memories
        return [m for m in self.memories if m.corpus in (corpus, None)]


def suite_sha256(suite: Suite) -> str:
    """A content hash of the suite as parsed (formatting and comments do not count)."""
    canonical = json.dumps(suite.model_dump(mode="json"), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def _load_memories(path: Path) -> list[Memory]:
    if path.suffix.lower() == ".jsonl" and path.is_file():
        return read_records(path, Memory)
    return load_retrieval_dataset(path).memories


def _evaluators(task: TaskSpec, base: Path) -> list[tuple[str, Evaluator, float]]:
    out = []
    for entry in task.evaluators:
        evaluator = evaluator_from_spec(entry.spec)
        if isinstance(evaluator, ScriptEvaluator) and evaluator.cwd is None:
            # a suite's scripts live beside it
            evaluator = dataclasses.replace(evaluator, cwd=str(base))
        out.append((evaluator_label(entry, task.evaluators), evaluator, entry.weight))
    return out


def _from_items(items: list[TaskItem]) -> list[PlannedItem]:
    return [
        PlannedItem(
            id=it.id,
            input=it.input,
            expected=it.expected,
            category=it.category,
            corpus=it.corpus,
            history=it.history,
            metadata=it.metadata,
        )
        for it in items
    ]


def _plan_task(task: TaskSpec, base: Path) -> PlannedTask:
    evaluators = _evaluators(task, base)
    if task.kind == "retrieval":
        assert task.dataset is not None  # load_suite checked it
        path = base / task.dataset
        ds = load_retrieval_dataset(path)
        qrels = ds.qrels()
        judged = [q for q in ds.queries if q.id in qrels]
        items = [
            PlannedItem(
                id=q.id,
                input=q.text,
                expected=qrels[q.id],
                category=q.category,
                corpus=q.corpus,
                session=q.session_context,
                metadata={"intent": q.intent} if q.intent else {},
            )
            for q in judged
        ]
        return PlannedTask(
            task,
            items,
            evaluators,
            ds.memories,
            hashlib.sha256(ds.model_dump_json().encode("utf-8")).hexdigest(),
            n_skipped=len(ds.queries) - len(judged),
        )
    memories = _load_memories(base / task.memories) if task.memories else None
    if task.dataset is not None:
        path = base / task.dataset
        return PlannedTask(
            task, _from_items(load_items(path)), evaluators, memories, sha256_file(path)
        )
    return PlannedTask(task, _from_items(task.items or []), evaluators, memories, None)


def plan_suite(suite: Suite, base: Path) -> list[PlannedTask]:
    """Load every task of `suite` (paths relative to `base`); DataError on a bad dataset."""
    return [_plan_task(task, base) for task in suite.tasks]
