"""What a task kind owns (`TaskKind`), and `ItemsKind`: the kind whose items are questions from a
file or written inline, which expected-output, script and knowledge-graph tasks are and a
plug-in's kind may start from.

How a subject is asked is the kind's `ask`; what every kind shares is here: a subject's method
found by name (or the subject itself, when it is a function), a call timed, a hit as the store
keeps it, a memory's answer as its hits' texts.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, runtime_checkable

from pydantic import BaseModel

from memgauge._util.files import sha256_file
from memgauge._util.listing import counted, some
from memgauge._util.registry import Registry
from memgauge.aggregates import Aggregate, TaskView
from memgauge.data.io import load_items, load_memories_file, load_retrieval_dataset
from memgauge.data.models import Memory, RetrievalDataset, SessionContext, TaskItem, Turn
from memgauge.data.records import ItemRecord, repeat_source
from memgauge.data.traces import sampled
from memgauge.errors import ReplyError, SubjectError, UsageError
from memgauge.runs.kinds.deeper import deeper
from memgauge.scorers import Evaluator
from memgauge.subjects.protocol import Answer, Hit
from memgauge.subjects.python_import import SEARCH_CONTRACT, normalise_answer

if TYPE_CHECKING:
    from memgauge.runs.suite import TaskSpec

__all__ = [
    "COMMON_FIELDS",
    "KINDS",
    "DatasetKind",
    "ItemsKind",
    "PlannedItem",
    "PlannedTask",
    "Planning",
    "TaskKind",
    "call_timed",
    "hit_record",
    "hit_texts",
    "kind_of",
    "limit_items",
    "timed",
]

#: the task fields some kinds take and others refuse (every other field is every kind's)
COMMON_FIELDS = frozenset({"items", "memories", "probes", "trace"})

Asked = tuple[Any, dict[str, float], dict[str, Any]]


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
    #: which time the item goes through its subject (`repeat: N`); its `id` is then the
    #: stored id of that time (`data.records.repeat_id`)
    repeat: int = 0

    @property
    def source_id(self) -> str:
        """The item's id in its dataset (a subject's recorded output and a judge's metadata
        know it by this id, whichever repeat is asked)."""
        return repeat_source(self.id, self.repeat)

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
    aggregates. `dataset_sha256`: the content hash of `dataset` (`aggregates.ir.dataset_sha256`)
    for a task that has one, else of its dataset file. `dataset_path`: where its dataset was
    read from (absolute), None for a task with no dataset file (given in memory)."""

    spec: TaskSpec
    items: list[PlannedItem]
    evaluators: list[tuple[str, Evaluator, float]]
    memories: list[Memory] | None
    dataset_sha256: str | None
    n_skipped: int = 0
    aggregates: list[Aggregate] = field(default_factory=list)
    dataset: RetrievalDataset | None = None
    notes: dict[str, Any] = field(default_factory=dict)
    dataset_path: Path | None = None

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

    @cached_property
    def kind(self) -> TaskKind:
        """The task's kind, looked up once (it asks every item and reads every row)."""
        return kind_of(self.spec.kind)

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
            # a task with a dataset has its content hash (`RetrievalKind.plan`): not hashed again
            dataset_sha256=self.dataset_sha256 if self.dataset is not None else None,
            ingested=self.spec.ingest,
            repeat=self.spec.repeat or 1,
            **extra,
        )


def limit_items(items: list[PlannedItem], task: TaskSpec) -> list[PlannedItem]:
    """The first `limit` items, of those `only` keeps (an optimization's split)."""
    only = task.only
    if only is not None and only.items is not None:
        # a mistyped item id would run nothing (or less) and exit 0, as a corpus would
        have_ids = [it.id for it in items]
        present = set(have_ids)
        missing = [i for i in dict.fromkeys(only.items) if i not in present]
        if missing:
            raise UsageError(
                f"only.items: no item of its dataset has the id {some(missing, 10)} (its "
                f"{counted(len(have_ids), 'item')}: {some(have_ids, 10)})"
            )
    if only is not None and only.corpora is not None:
        corpora = set(only.corpora)
        have = {it.corpus for it in items}
        unknown = sorted(corpora - have)
        if unknown:
            # a mistyped conversation id would run nothing and exit 0
            known = sorted(c for c in have if c is not None)
            raise UsageError(
                f"no item of its dataset is in corpus {', '.join(unknown)}"
                + (f" (its corpora: {some(known, 10)})" if known else " (its items have no corpus)")
            )
        items = [it for it in items if it.corpus in corpora]
    if only is not None and only.items is not None:
        ids = set(only.items)
        items = [it for it in items if it.id in ids]
    if only is not None and only.sample is not None:
        kept = [it for it in items if sampled(it.id, only.sample, only.sample_seed)]
        if items and not kept:
            # a share too small for the dataset ran nothing and exited 0 (as `items: []` did)
            raise UsageError(
                f"only.sample: a share of {only.sample:g} keeps none of the {counted(len(items), 'item')}; "
                "raise it (or change sample_seed)"
            )
        items = kept
    return items[: task.limit] if task.limit is not None else items


@dataclass(frozen=True)
class Planning:
    """What a kind plans a task from: the spec, the suite's directory, the dataset's path (None
    when the task gives none), the built evaluators and aggregates, and a retrieval dataset
    given in memory (a suite built in code)."""

    task: TaskSpec
    base: Path
    path: Path | None
    evaluators: list[tuple[str, Evaluator, float]]
    aggregates: list[Aggregate]
    given: RetrievalDataset | None = None

    def planned(self, items: list[PlannedItem], **fields: Any) -> PlannedTask:
        """The planned task: its items cut to the task's `only:` and `limit:`, its evaluators
        and aggregates, and `fields` (memories, dataset_sha256, notes ...)."""
        fields.setdefault("memories", None)
        if fields.get("dataset") is not None and "dataset_sha256" not in fields:
            from memgauge.aggregates.ir import dataset_sha256

            fields["dataset_sha256"] = dataset_sha256(fields["dataset"])
        fields.setdefault("dataset_sha256", self.sha256())
        return PlannedTask(
            self.task,
            limit_items(items, self.task),
            fields.pop("evaluators", self.evaluators),
            aggregates=self.aggregates,
            **fields,
        )

    def sha256(self) -> str | None:
        """The content hash of the task's dataset file (None: no file)."""
        return sha256_file(self.path) if self.path is not None and self.path.is_file() else None

    def dataset_path(self) -> Path:
        """The dataset's path, which a kind that reads its items from a file is given (the
        suite's checks refuse a task without one)."""
        assert self.path is not None
        return self.path


@runtime_checkable
class TaskKind(Protocol):
    """A kind of evaluation: what its tasks read, how an item is asked, how it is summarized.

    Attributes:
        name: the `kind:` a task writes.
        description: one line for `memgauge schema` and the suite's docs.
        default_k: the search depth asked of memory subjects when the task sets no `k:`.
        fields: which of `COMMON_FIELDS` its tasks may set (items, memories, probes, trace).
        options: the model of the task's `options:` (its own fields), None when it takes none.
    """

    name: ClassVar[str]
    description: ClassVar[str]
    default_k: ClassVar[int]
    fields: ClassVar[frozenset[str]]
    options: ClassVar[type[BaseModel] | None]

    def reads(self, task: TaskSpec) -> str | None:
        """The key of `data.detect.DATASET_KINDS` its dataset may be read as (None: one kind
        of file, so `dataset_kind:` is refused)."""
        ...

    def problems(self, task: TaskSpec) -> list[tuple[str, str]]:
        """(field, message) for each problem of a task that is valid field by field ("" is
        the task itself)."""
        ...

    def default_aggregates(self, task: TaskSpec) -> list[Any]:
        """The aggregates a task of this kind gets when it names none."""
        ...

    def plan(self, planning: Planning) -> PlannedTask:
        """The task's items, memories and dataset, loaded; DataError for a bad file."""
        ...

    def ask(self, subject: Any, answers: bool, task: PlannedTask, item: PlannedItem) -> Asked:
        """The subject's output for one item, its latencies, and anything else the call gave
        (`answers`: the subject is an agent, which answers rather than searches)."""
        ...

    def found_nothing(self, row: ItemRecord) -> bool | None:
        """Whether a completed item's search found nothing; None when it was not a search."""
        ...


KINDS: Registry[TaskKind] = Registry("task kind", "memgauge.kinds", short_forms=False)


def kind_of(name: str) -> TaskKind:
    """The kind called `name`; RegistryError naming the known ones."""
    return KINDS.get(name).factory()


def call_timed(subject: object, name: str, *args: Any) -> tuple[Any, dict[str, float]]:
    """The subject's method `name` (or the subject itself, when it is a function) called with
    `args`: what it returned, and its latency as `{"total": ms}`."""
    method: object = getattr(subject, name, None)
    if not callable(method):
        if not callable(subject) or isinstance(subject, type):
            raise SubjectError(
                f"{type(subject).__name__} has no {name}(); a python: factory must return an "
                f"object with {name}(...) or a function taking the same arguments"
            )
        method = subject
    return timed(lambda: method(*args))


def timed(call: Callable[[], Any]) -> tuple[Any, dict[str, float]]:
    """What `call` returned, and its latency as `{"total": ms}`."""
    t0 = time.perf_counter()
    out = call()
    return out, {"total": (time.perf_counter() - t0) * 1000}


def hit_record(hit: Hit, position: int, known: Mapping[str, str] | None = None) -> dict[str, Any]:
    """A hit as the store keeps it, leaving out what its reader can tell without it (see
    `aggregates.ir.hits_of`): the text when it is the dataset's own text of that memory
    (`known`), the rank when it is the hit's 1-based position, the score when there is none,
    and the channels when they are the names of its channel ranks."""
    hid = hit.id
    text = hit.text
    out: dict[str, Any] = {"id": hid}
    if hit.rank != position:
        out["rank"] = hit.rank
    if hit.score is not None:
        out["score"] = hit.score
    if known is None or known.get(hid) != text:
        out["text"] = text
    ranks = hit.channel_ranks
    if ranks:
        out["channel_ranks"] = dict(ranks)
    channels = hit.channels
    if channels and (
        # one channel (a lexical or dense search): its name is the rank's, most times
        channels != tuple(ranks) if len(channels) == 1 else list(channels) != sorted(ranks)
    ):
        out["channels"] = list(channels)
    return out


def hit_texts(hits: Sequence[Hit], kind: str) -> str:
    """The hits' texts, one per line: a memory's answer; a ReplyError for a hit without one."""
    for h in hits:
        if not h.text:
            raise ReplyError(
                f"search hit {h.rank} ({h.id!r}) has no 'text': a {kind} task answers with "
                "the hits' texts, so each hit must carry the memory's text as stored "
                f"({{'id': id, 'text': text, ...}}); {SEARCH_CONTRACT}"
            )
    return "\n".join(h.text for h in hits)


def from_task_items(items: Sequence[TaskItem]) -> list[PlannedItem]:
    """Items of a file or written inline, as every subject will be asked them."""
    return [PlannedItem(**dict(it)) for it in items]


def load_memories(path: Path) -> list[Memory]:
    """A task's `memories:`: a JSONL file of memories, or a retrieval dataset's."""
    if path.suffix.lower() == ".jsonl" and path.is_file():
        return load_memories_file(path)
    return load_retrieval_dataset(path).memories


class ItemsKind:
    """Questions from a dataset file or written inline (`items:`), with the memories of
    `memories:` ingested into memory subjects first. An agent answers each question (given the
    item's `history`); a memory answers with the text of its top `k` hits, one per line."""

    name: ClassVar[str] = "expected-output"
    description: ClassVar[str] = "questions with expected answers"
    default_k: ClassVar[int] = 10
    fields: ClassVar[frozenset[str]] = frozenset({"items", "memories"})
    options: ClassVar[type[BaseModel] | None] = None

    def reads(self, task: TaskSpec) -> str | None:
        return None

    def problems(self, task: TaskSpec) -> list[tuple[str, str]]:
        if (task.dataset is None) == (task.items is None):
            need = "needs either dataset: (an items file) or items:, not both"
            return [("", f"a {task.kind} task {need}")]
        return []

    def default_aggregates(self, task: TaskSpec) -> list[Any]:
        return []

    def plan(self, planning: Planning) -> PlannedTask:
        task = planning.task
        memories = (
            load_memories(planning.base / task.memories) if task.memories and task.ingest else None
        )
        given = load_items(planning.path) if planning.path is not None else task.items or []
        return planning.planned(from_task_items(given), memories=memories)

    def ask(self, subject: Any, answers: bool, task: PlannedTask, item: PlannedItem) -> Asked:
        if answers:
            reply, latency = timed(lambda: subject.answer(item.input, history=item.history))
            # memgauge's adapters answer an `Answer`; a plug-in's agent, built as it is, need not
            answer = (
                reply if isinstance(reply, Answer) else normalise_answer(reply, latency["total"])
            )
            more = deeper(subject, task.aggregates, item.input, item.metadata, answer.metadata)
            return answer.text, dict(answer.latency_ms), more
        result = subject.search(item.input, task.spec.k, session=item.session)
        # the ids answered from: what tells a memory that found nothing from a short answer
        retrieved = {"retrieved": [h.id for h in result.hits]}
        more = deeper(subject, task.aggregates, item.input, item.metadata)
        return hit_texts(result.hits, task.spec.kind), dict(result.latency_ms), retrieved | more

    def found_nothing(self, row: ItemRecord) -> bool | None:
        retrieved = row.extra.get("retrieved")  # a memory answering with its hits' texts
        return not retrieved if isinstance(retrieved, list) else None


class DatasetKind(ItemsKind):
    """A kind that reads its items from a dataset file only (never `items:`), and whose
    subjects are called with the item's input (extraction, operations, embedding): through
    the method `calls`, with the arguments `arguments` makes of the input."""

    fields: ClassVar[frozenset[str]] = frozenset()
    #: what its dataset is, in the message of a task without one
    dataset_is: ClassVar[str] = "an items file"
    #: the subject's method an item is put to; without one, asked as an `ItemsKind` item is
    calls: ClassVar[str | None] = None

    def arguments(self, item: PlannedItem) -> tuple[Any, ...]:
        """What the subject's method `calls` is called with for `item`."""
        return (item.input,)

    def ask(self, subject: Any, answers: bool, task: PlannedTask, item: PlannedItem) -> Asked:
        if self.calls is None:
            return super().ask(subject, answers, task, item)
        out, latency = call_timed(subject, self.calls, *self.arguments(item))
        return out, latency, {}

    def problems(self, task: TaskSpec) -> list[tuple[str, str]]:
        if task.dataset is None:
            return [("", f"a {task.kind} task needs dataset: {self.dataset_is}")]
        return []

    def default_aggregates(self, task: TaskSpec) -> list[Any]:
        return [task.kind]

    def found_nothing(self, row: ItemRecord) -> bool | None:
        return None
