"""From a suite file to the work of a run: every task's items, memories, evaluators and
aggregates, loaded and checked before anything is written (a bad dataset stops the run before it
starts).

- retrieval: one item per judged query of the dataset (queries nobody judged are counted as
  skipped, not scored); the expected value is the query's grades `{memory_id: grade}`, and
  queries of a corpus (LoCoMo's conversations) search only that corpus's memories;
- expected-output and script: items from a file or inline; with `probes:`, the probes of a
  conversation dataset (memaudit, LoCoMo, LongMemEval) asked against its turns;
- extraction: seed 001's cases (or LoCoMo's sessions with their observations as silver facts):
  the input is the conversation and the existing memory, the expected value the facts;
- operations: seed 000's cases: the input is the stored memories and the incoming one;
- embedding: known pairs: the input is the two texts, the expected value similar / different.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memgauge._util.files import sha256_file
from memgauge._util.registry import RegistryError
from memgauge.aggregates import AGGREGATES, Aggregate, TaskView
from memgauge.aggregates.ir import dataset_sha256
from memgauge.data.detect import read_as
from memgauge.data.importers.locomo import locomo_extraction_cases
from memgauge.data.io import (
    load_extraction_cases,
    load_items,
    load_operation_cases,
    load_retrieval_dataset,
)
from memgauge.data.jsonio import read_records
from memgauge.data.models import (
    ExtractionCase,
    Memory,
    OperationCase,
    RetrievalDataset,
    SessionContext,
    TaskItem,
    Turn,
)
from memgauge.data.readers import load_retrieval_source
from memgauge.data.traces import unlabelled_cases
from memgauge.data.vectors import load_pairs
from memgauge.errors import DataError, Problem, UnavailableError, UsageError
from memgauge.probes.sources import load_audit_source
from memgauge.runs.depth import default_aggregates, depth_error, least_k
from memgauge.runs.suite import Suite, TaskSpec, evaluator_label, resolve_agents
from memgauge.scorers import Evaluator, ScriptEvaluator, evaluator_from_spec
from memgauge.scorers.base import prepare_evaluator

__all__ = [
    "PlannedItem",
    "PlannedTask",
    "default_aggregates",
    "plan_suite",
    "plan_task",
    "prepare_evaluators",
    "suite_sha256",
]


@dataclass(frozen=True)
class PlannedItem:
    """One item of a task, as every subject will be asked it.

    `input` is the question (text) of retrieval, expected-output and script tasks, and the case
    (a mapping) of extraction and operations tasks.
    """

    id: str
    input: Any
    expected: Any
    category: str | None = None
    corpus: str | None = None
    history: list[Turn] | None = None
    session: SessionContext | None = None
    metadata: dict[str, Any] = field(default_factory=dict)

    def input_record(self) -> dict[str, Any]:
        """What the store keeps as the item's input."""
        out: dict[str, Any] = (
            dict(self.input) if isinstance(self.input, dict) else {"text": self.input}
        )
        if self.history is not None:
            out["history"] = [
                t.model_dump(mode="json", exclude_defaults=True) for t in self.history
            ]
        if self.session is not None:
            out["session"] = self.session.model_dump(mode="json")
        if self.corpus is not None:
            out["corpus"] = self.corpus
        if self.metadata and not isinstance(self.input, dict):
            out["metadata"] = dict(self.metadata)
        return out


@dataclass(frozen=True)
class PlannedTask:
    """A task with everything loaded: items, memories per corpus, built evaluators and
    aggregates."""

    spec: TaskSpec
    items: list[PlannedItem]
    evaluators: list[tuple[str, Evaluator, float]]
    memories: list[Memory] | None
    dataset_sha256: str | None
    n_skipped: int = 0
    aggregates: list[Aggregate] = field(default_factory=list)
    dataset: RetrievalDataset | None = None
    notes: dict[str, Any] = field(default_factory=dict)

    def memories_for(self, corpus: str | None) -> list[Memory] | None:
        """The memories a subject holds while answering items of `corpus` (None: no ingestion)."""
        if self.memories is None:
            return None
        if corpus is None:
            return self.memories
        return [m for m in self.memories if m.corpus in (corpus, None)]

    def memory_texts(self) -> dict[str, str]:
        """Memory id -> text of the task's memories (computed once)."""
        found: dict[str, str] | None = self.__dict__.get("_texts")
        if found is None:
            found = {m.id: m.text for m in self.memories or ()}
            if self.dataset is not None:
                found = {m.id: m.text for m in self.dataset.memories}
            object.__setattr__(self, "_texts", found)
        return found

    def evaluator_kinds(self) -> list[tuple[str, str]]:
        """(label, registered name) of each evaluator."""
        return [(label, ev.name) for label, ev, _w in self.evaluators]

    def view(self, subjects: list[str], seed: int, **extra: Any) -> TaskView:
        """What the task's aggregates are given."""
        return TaskView(
            name=self.spec.name,
            kind=self.spec.kind,
            subjects=subjects,
            evaluators=self.evaluator_kinds(),
            seed=seed,
            k=self.spec.k,
            dataset=self.dataset,
            ingested=self.spec.ingest,
            **extra,
        )


def suite_sha256(suite: Suite) -> str:
    """A content hash of the suite as parsed (formatting and comments do not count)."""
    canonical = json.dumps(suite.model_dump(mode="json"), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def _load_memories(path: Path) -> list[Memory]:
    if path.suffix.lower() == ".jsonl" and path.is_file():
        return read_records(path, Memory)
    return load_retrieval_dataset(path).memories


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
    return out


def _for_dataset(evaluator: Evaluator, ds: RetrievalDataset) -> Evaluator:
    """The evaluator as it scores `ds`'s items: one that follows a dataset's conventions (a
    retrieval measure on a LongMemEval `paper` dataset) says so with `for_dataset`, so that
    its rows equal the ir aggregate's values of the same measure."""
    bind = getattr(evaluator, "for_dataset", None)
    return bind(ds) if callable(bind) else evaluator


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


def _content_sha(value: Any) -> str:
    return hashlib.sha256(
        json.dumps(value, sort_keys=True, separators=(",", ":"), default=str).encode("utf-8")
    ).hexdigest()


def _extraction_items(
    cases: list[ExtractionCase], *, unlabelled: bool = False
) -> list[PlannedItem]:
    """`unlabelled`: production trace lines, whose expected value says only that nobody
    labelled them (an empty `expected_facts` would mean "nothing to extract")."""
    return [
        PlannedItem(
            id=c.id,
            input={
                "conversation": [
                    t.model_dump(mode="json", exclude_none=True) for t in c.conversation
                ],
                "existing_memory": list(c.existing_memory),
            },
            expected={"unlabelled": True}
            if unlabelled
            else {
                "expected_facts": [
                    f.model_dump(mode="json", exclude_none=True) for f in c.expected_facts
                ],
                "expected_output": c.expected_output,
                "scenario": c.scenario,
            },
            category="unlabelled" if unlabelled else c.scenario,
            metadata=dict(c.metadata),
        )
        for c in cases
    ]


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


def plan_task(
    task: TaskSpec,
    base: Path,
    given: RetrievalDataset | None = None,
    subjects: Mapping[str, Any] | None = None,
) -> PlannedTask:
    """Load one task (paths relative to `base`; `given`: its retrieval dataset, in memory;
    `subjects`: the suite's subjects, which an agent judge may name).

    A shard's worker plans its task with this, from the same spec, as the driver did."""
    evaluators = _evaluators(task, base, subjects or {})
    # before anything is loaded or written: a task whose measures need deeper searches than it
    # asks for (a suite built in code, an optimization's candidate) has no run to start
    aggregates = _aggregates(task, evaluators)
    least = least_k(task, [(label, ev.name) for label, ev, _w in evaluators], aggregates)
    if least is not None and task.k < least[0]:
        raise UsageError(depth_error(task.k, least))
    path = base / task.dataset if task.dataset is not None else None
    if task.kind == "retrieval":
        if given is not None:
            ds = given
        else:
            assert path is not None  # load_suite checked it
            ds = load_retrieval_source(path, task.dataset_kind)
        for agg in aggregates:
            check = getattr(agg, "check", None)
            if callable(check):
                check(ds)
        evaluators = [(label, _for_dataset(ev, ds), w) for label, ev, w in evaluators]
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
            _limit(items, task),
            evaluators,
            ds.memories if task.ingest else None,
            dataset_sha256(ds),
            n_skipped=len(ds.queries) - len(judged),
            aggregates=aggregates,
            dataset=ds,
        )
    if task.kind == "extraction" and task.trace is not None:
        assert path is not None
        opts = task.trace
        cases, n_lines = unlabelled_cases(path, tags=opts.tags, sample=opts.sample, seed=opts.seed)
        return PlannedTask(
            task,
            _limit(_extraction_items(cases, unlabelled=True), task),
            evaluators,
            None,
            sha256_file(path),
            aggregates=aggregates,
            notes={"trace_lines": n_lines, "selected": len(cases)},
        )
    if task.kind == "extraction":
        assert path is not None
        cases = (
            locomo_extraction_cases(path)
            if read_as(path, task.dataset_kind, "extraction") == "locomo"
            else load_extraction_cases(path)
        )
        return PlannedTask(
            task,
            _limit(_extraction_items(cases), task),
            evaluators,
            None,
            sha256_file(path),
            aggregates=aggregates,
        )
    if task.kind == "embedding":
        assert path is not None
        items = [
            PlannedItem(
                id=str(p.id), input={"a": p.a, "b": p.b}, expected=p.label, category=p.label
            )
            for p in load_pairs(path)
        ]
        return PlannedTask(
            task, _limit(items, task), evaluators, None, sha256_file(path), aggregates=aggregates
        )
    if task.kind == "operations":
        assert path is not None
        operation_cases = load_operation_cases(path)  # ids unique, with every other problem
        return PlannedTask(
            task,
            _limit(_operation_items(operation_cases), task),
            evaluators,
            None,
            sha256_file(path),
            aggregates=aggregates,
        )
    if task.probes is not None:
        assert path is not None
        source = load_audit_source(path, seed=task.probes.seed, kind=task.dataset_kind)
        items = _from_items([TaskItem.model_validate(p.item()) for p in source.probes])
        return PlannedTask(
            task,
            _limit(items, task),
            evaluators,
            source.memories if task.ingest else None,
            sha256_file(path)
            if path.is_file()
            else _content_sha([p.item() for p in source.probes]),
            aggregates=aggregates,
            notes={"source": source.name, "format": source.format, **source.notes},
        )
    memories = _load_memories(base / task.memories) if task.memories and task.ingest else None
    if path is not None:
        return PlannedTask(
            task,
            _limit(_from_items(load_items(path)), task),
            evaluators,
            memories,
            sha256_file(path),
            aggregates=aggregates,
        )
    return PlannedTask(
        task,
        _limit(_from_items(task.items or []), task),
        evaluators,
        memories,
        None,
        aggregates=aggregates,
    )


def _limit(items: list[PlannedItem], task: TaskSpec) -> list[PlannedItem]:
    """The first `limit` items, of those `only` keeps (an optimization's split)."""
    only = task.only
    if only is not None and only.corpora is not None:
        corpora = set(only.corpora)
        items = [it for it in items if it.corpus in corpora]
    if only is not None and only.items is not None:
        ids = set(only.items)
        items = [it for it in items if it.id in ids]
    if only is not None and only.sample is not None:
        items = [it for it in items if sampled(it.id, only.sample, only.sample_seed)]
    return items[: task.limit] if task.limit is not None else items


def sampled(item_id: str, share: float, seed: int = 0) -> bool:
    """Whether an item is in a `share` sample: its id's SHA-256 bucket in [0, 1), salted with
    `seed`, below `share` (stable across processes and runs, as shadow runs bucket queries)."""
    digest = hashlib.sha256(f"{seed}:{item_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64 < share


def prepare_evaluators(plan: Sequence[PlannedTask]) -> None:
    """Load what every evaluator needs (its `prepare()`): a missing optional capability (an
    embedding model) is one UnavailableError naming the task, the evaluator and the install
    line, before the run is written, never a failure on every item."""
    for task in plan:
        for label, evaluator, _weight in task.evaluators:
            try:
                prepare_evaluator(evaluator)
            except UnavailableError as exc:
                raise UnavailableError(f"task {task.spec.name}, evaluator {label}: {exc}") from None


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
