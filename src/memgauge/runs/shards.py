"""Shards: a run's work cut into plain data that any `concurrent.futures.Executor` runs, in this
process, in another one, or on another host.

A shard is one subject on one task's items of a group of corpora: the subject's spec, the task's
spec, where its dataset is (the directory its paths start from, and the sha256 the driver
planned it with), the corpora and the ids of the items still to do, the items in flight at
once, how the worker reaches the LLM response cache, and its `part` of the planned task: those
items and the memories of those corpora, nothing else of the dataset.

`run_shard` is what a worker runs. It takes the items and memories from the shard's part and
builds only the task's evaluators and aggregates from its spec: a worker never reads the
dataset file, whose parsing (LongMemEval_S's 265 MB) would cost every worker seconds and a
gigabyte before its first shard, for items it mostly never asks. A task of a kind from a
plug-in (whose `ask` may read more of the planned task) carries no part: its worker plans the
task from the same spec (a dataset whose sha256 differs on the worker is a `DataError`, not a
silently different run). The worker then builds its own subject
instance (its own state: the reference memory lives in the worker's memory, nothing is shared
with the driver or another shard), and per corpus resets and fills it and asks every item with
`concurrency` in flight. It returns the answered records, unscored: the driver scores and records
them, so LLM judges go through one cached, rate-limited client and the store has one writer.
Subjects that call an LLM themselves (the chat and memory agents, the `{llm:}` extractor and
decider, mem0 with `infer`) call it from the worker, with the worker's share of the LLM
concurrency, through the same SQLite response cache (its own locking keeps it exact across
processes; see `memgauge.llm.cache`); their spend comes back with the shard and is recorded by
the driver.

Seeds travel in the task spec (a probe seed) and the suite (the aggregates' seed, used by the
driver), so a sharded run answers, scores and aggregates exactly like a serial one.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import operator
import os
import pickle
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import Executor as PoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from memgauge._util.imports import rooted
from memgauge.data.models import Memory, RetrievalDataset
from memgauge.data.records import Failure, ItemRecord
from memgauge.errors import DataError, Problem, UnavailableError, UsageError, argument
from memgauge.llm._loop import allow_calls
from memgauge.llm.context import configure, llm_context
from memgauge.llm.scope import CallScope
from memgauge.runs.executor import Job, LocalExecutor, TimedOut
from memgauge.runs.lanes import SubjectLane
from memgauge.runs.plan import PlannedItem, PlannedTask, plan_frame, plan_task
from memgauge.runs.suite import Suite, TaskSpec
from memgauge.runs.summary import subjects_of
from memgauge.runs.work import (
    answer_item,
    failed_item,
    fill_memory,
    searched_as_it_stands,
    timed_out_item,
)
from memgauge.subjects.registry import build_subject

if TYPE_CHECKING:
    # types only: the cache module imports asyncio, which a run without LLM calls never uses
    from memgauge.llm.cache import CacheMode, ResponseCache

__all__ = [
    "SHARDS_PER_WORKER",
    "Shard",
    "ShardPart",
    "ShardResult",
    "WorkerLLM",
    "adopted",
    "driver_id",
    "plan_shards",
    "run_shard",
    "sharded_subjects",
    "unshardable",
    "worker_llm",
]

T = TypeVar("T")

#: shards planned per worker at most: enough that a slow corpus does not leave the other
#: workers idle at the end, and that a worker lost mid-run costs little to redo, few enough that
#: building a subject per shard stays cheap next to its items
SHARDS_PER_WORKER = 8

# this process, as a worker tells it from the driver that planned its shard (a forked child has
# another pid; a spawned one or another host another nonce)
_NONCE = uuid.uuid4().hex


def driver_id() -> str:
    """This process's identity, as shards carry it."""
    return f"{os.getpid()}:{_NONCE}"


@dataclass(frozen=True)
class WorkerLLM:
    """How a worker's subjects reach an LLM: the driver's response cache (picklable: the
    results layer gives one that reopens its SQLite file where it lands), its mode, and the
    worker's share of the LLM concurrency (`MEMGAUGE_LLM_CONCURRENCY` in the worker)."""

    cache: ResponseCache | None = None
    mode: CacheMode = "use"
    concurrency: int | None = None


_MEMORY_FIELDS = tuple(Memory.model_fields)


def _packed(memories: Sequence[Memory]) -> list[tuple[Any, ...]]:
    # a Memory pickles as a model (its class, dict and fields set each time): as a row of its
    # values it pickles 5x faster, and the driver pickles every shard a pool runs
    values = operator.itemgetter(*_MEMORY_FIELDS)
    return [(*values(m.__dict__), m.model_fields_set) for m in memories]


def _unpacked(rows: Sequence[tuple[Any, ...]]) -> list[Memory]:
    make = Memory.model_construct  # validated when the driver read them
    return [make(_fields_set=r[-1], **dict(zip(_MEMORY_FIELDS, r, strict=False))) for r in rows]


@dataclass(frozen=True)
class ShardPart:
    """What a worker needs of its shard's planned task: the shard's items, in the task's
    order, and the memories its corpora hold (None: the task ingests none), in the task's
    order; `texts`: the texts the task knows a memory by where they differ from the memory's
    own (`PlannedTask.memory_texts`; empty but for a dataset with a memory id twice)."""

    items: tuple[PlannedItem, ...]
    memories: list[Memory] | None
    texts: dict[str, str] = field(default_factory=dict)

    def __reduce__(self) -> tuple[Any, ...]:
        rows = None if self.memories is None else _packed(self.memories)
        return (_part, (self.items, rows, self.texts))

    @classmethod
    def of(
        cls,
        task: PlannedTask,
        corpora: Sequence[str | None],
        items: Iterable[str],
        where: Mapping[str | None, list[int]],
    ) -> ShardPart:
        """The part of `task` for `items` of `corpora`; `where`: the positions of the task's
        memories by corpus (`positions`)."""
        wanted = set(items)
        mine = tuple(it for it in task.items if it.id in wanted)
        if task.memories is None:
            return cls(mine, None)
        # what memories_for gives: every memory for None, else those of the corpus and of no
        # corpus, in the task's order (the order a subject ingests them in)
        if None in corpora:
            memories = list(task.memories)
        else:
            at = sorted(i for c in (*corpora, None) for i in where.get(c, ()))
            memories = [task.memories[i] for i in at]
        known = task.memory_texts()
        texts = {m.id: known[m.id] for m in memories if known.get(m.id, m.text) != m.text}
        return cls(mine, memories, texts)

    def planned(self, frame: PlannedTask, sha256: str | None) -> PlannedTask:
        """`frame` (the task's evaluators and aggregates) with this part's items and memories."""
        task = dataclasses.replace(
            frame, items=list(self.items), memories=self.memories, dataset_sha256=sha256
        )
        texts = {m.id: m.text for m in self.memories or ()} | self.texts
        object.__setattr__(task, "_texts", texts)  # what `memory_texts` caches
        return task


def positions(task: PlannedTask) -> dict[str | None, list[int]]:
    """The positions of `task`'s memories, by corpus."""
    out: dict[str | None, list[int]] = {}
    for i, m in enumerate(task.memories or ()):
        out.setdefault(m.corpus, []).append(i)
    return out


def _part(
    items: tuple[PlannedItem, ...], rows: list[tuple[Any, ...]] | None, texts: dict[str, str]
) -> ShardPart:
    return ShardPart(items, None if rows is None else _unpacked(rows), texts)


@dataclass(frozen=True)
class Shard:
    """One subject on one task's items of a group of corpora, as plain, picklable data."""

    index: int
    subject: str
    spec: dict[str, Any]
    task: TaskSpec
    base: str
    dataset_sha256: str | None
    corpora: tuple[str | None, ...]
    items: tuple[str, ...]
    concurrency: int
    llm: WorkerLLM = field(default_factory=WorkerLLM)
    driver: str = ""
    attempt: int = 1
    """1, then 2, ... when a worker died with it (also keeps resubmissions distinct for
    executors that key tasks by their arguments)."""
    part: ShardPart | None = None
    """Its items and memories (None: the worker plans the task from its dataset)."""


@dataclass(frozen=True)
class ShardResult:
    """What a worker gives back.

    Attributes:
        index: the shard's index.
        records: each item's record (answered and unscored, or failed) with the seconds from
            its start to its answer.
        setups: (corpus, seconds) spent resetting and filling the subject, per corpus.
        unavailable: why the subject could not be built (an optional capability is missing).
        usage: LLM spend of the worker's subject per model (counters, summed).
    """

    index: int
    records: list[tuple[ItemRecord, float]] = field(default_factory=list)
    setups: list[tuple[str | None, float]] = field(default_factory=list)
    unavailable: str | None = None
    usage: dict[str, dict[str, int]] = field(default_factory=dict)


def worker_llm(workers: int) -> WorkerLLM:
    """How the workers reach an LLM: this process's response cache and mode, and each worker's
    share of `MEMGAUGE_LLM_CONCURRENCY` (16 by default), so the workers together keep to it.

    Raises `UsageError` when the cache cannot be sent to a worker (it cannot be pickled)."""
    ctx = llm_context()
    try:
        pickle.dumps(ctx.cache)
    except Exception as exc:
        raise UsageError(
            f"the LLM response cache ({type(ctx.cache).__name__}) cannot be sent to workers "
            f"({exc}); configure a file cache (memgauge.configure_llm) or run without workers"
        ) from None
    # read as every LLM client reads it: "1e2" was 16 here and 100 in the driver's client
    from memgauge.llm.config import env_concurrency  # deferred: an evaluate never needs it

    budget = env_concurrency()
    return WorkerLLM(ctx.cache, ctx.cache_mode, max(1, budget // max(1, workers)))


def unshardable(spec: Mapping[str, Any]) -> str | None:
    """Why a subject spec cannot go to a worker (None: it can): a live object exists in this
    process only; a reference memory kept in a file would be shared by every shard."""
    ((kind, args),) = spec.items()
    if kind == "live":
        return "a live object exists in this process only"
    path = (args or {}).get("path") if isinstance(args, Mapping) else None
    if kind == "reference" and path not in (None, ":memory:"):
        return f"its memory is the file {path}, which every worker would share"
    return None


def sharded_subjects(
    suite: Suite,
    workers: int,
    pool: str | PoolExecutor | None,
    datasets: Mapping[str, RetrievalDataset] | None,
) -> set[str]:
    """The subjects that run in shards: with workers or a pool, every one that can (a live
    object stays in this process); UsageError for what cannot work at all."""
    if workers < 1:
        raise UsageError(f"{argument('workers', workers)}: give 1 or more")
    if pool is None and workers <= 1:
        return set()
    if datasets:
        raise UsageError(
            "a dataset given in memory cannot be sent to workers: save it"
            " (memgauge.api.save_dataset(dataset, DIRECTORY)) and pass its path, or run"
            f" without {argument('workers')}"
        )
    out = set()
    for name, spec in suite.subjects.items():
        why = unshardable(spec)
        if why is None:
            out.add(name)
        elif not why.startswith("a live object"):
            raise UsageError(f"subject {name!r} cannot run in shards: {why}")
    return out


def _chunks(values: Sequence[Any], size: int) -> Iterable[tuple[Any, ...]]:
    for start in range(0, len(values), size):
        yield tuple(values[start : start + size])


def _tapered(values: Sequence[Any], size: int, workers: int) -> Iterable[tuple[Any, ...]]:
    """`values` in chunks of `size`, but for the last `workers` chunks' worth, one value each:
    the run ends when its last shard does, and the others' workers (the driver among them)
    wait from their own last shard until then, up to a whole shard; a shard of one corpus
    at the end keeps that wait to one corpus (a shard costs its worker milliseconds more)."""
    if workers <= 1 or size <= 1:
        yield from _chunks(values, size)
        return
    cut = max(0, len(values) - size * workers)
    yield from _chunks(values[:cut], size)
    yield from _chunks(values[cut:], 1)


def _own_kind(task: PlannedTask) -> bool:
    return type(task.kind).__module__.startswith("memgauge.runs.kinds.")


def plan_shards(
    plan: Sequence[PlannedTask],
    suite: Suite,
    subjects: Iterable[str],
    pending: set[tuple[str, str, str]],
    *,
    base: Path,
    concurrency: int,
    workers: int,
    llm: WorkerLLM,
) -> list[Shard]:
    """The shards of `subjects` over the pending items, task by task, in corpus order.

    A task's corpora are cut into about `SHARDS_PER_WORKER * workers` groups of neighbours,
    the last ones of one corpus each (`_tapered`).
    Items without a corpus and without memories to ingest (extraction, operations) are cut
    into groups of items the same way; items sharing one memory without corpora stay in one
    shard (its memory is filled once).
    """
    names = set(subjects)
    target = max(1, SHARDS_PER_WORKER * max(1, workers))
    out: list[Shard] = []
    for task in plan:
        # memgauge's own kinds ask an item from its task's items, memories, aggregates and
        # spec alone; a plug-in's kind may read more of the task, so its worker plans it
        where = positions(task) if _own_kind(task) else None
        for name in subjects_of(task, suite):
            if name not in names:
                continue
            todo = [it for it in task.items if (name, task.spec.name, it.id) in pending]
            groups: dict[str | None, list[str]] = {}
            for it in todo:
                groups.setdefault(it.corpus, []).append(it.id)
            parts: list[tuple[tuple[str | None, ...], tuple[str, ...]]] = []
            if list(groups) == [None] and task.memories_for(None) is None:
                ids = groups[None]
                size = math.ceil(len(ids) / target)
                parts = [((None,), chunk) for chunk in _chunks(ids, size)]
            else:
                corpora = list(groups)
                size = max(1, math.ceil(len(corpora) / target))
                for chunk in _tapered(corpora, size, workers):
                    parts.append((chunk, tuple(i for c in chunk for i in groups[c])))
            out.extend(
                Shard(
                    index=len(out) + n,
                    subject=name,
                    spec=dict(suite.subjects[name]),
                    task=task.spec,
                    base=str(base),
                    dataset_sha256=task.dataset_sha256,
                    corpora=corpora_,
                    items=ids_,
                    concurrency=concurrency,
                    llm=llm,
                    driver=driver_id(),
                    part=None if where is None else ShardPart.of(task, corpora_, ids_, where),
                )
                for n, (corpora_, ids_) in enumerate(parts)
            )
    return out


# --- in the worker ------------------------------------------------------------------------------

_LOCK = threading.Lock()
# a worker keeps the last tasks it planned (LoCoMo is parsed once, not per shard), and the
# frames of those whose shards carry their part (True in the key)
_PLANNED: dict[tuple[str, str, str | None, bool], PlannedTask] = {}
_PLANNED_MAX = 4
# the tasks the driver planned, while its own process runs shards (`adopted`)
_ADOPTED: dict[tuple[str, str, str | None], PlannedTask] = {}
_LLM_SET: tuple[Any, ...] | None = None


def _key(shard: Shard) -> tuple[str, str, str | None]:
    return (shard.task.model_dump_json(), shard.base, shard.dataset_sha256)


@contextlib.contextmanager
def adopted(shards: Sequence[Shard], plan: Sequence[PlannedTask]) -> Iterator[None]:
    """While it lasts, shards run in the driver's own process use the tasks the driver planned
    (its datasets are not read a second time); after, they are let go."""
    tasks = {t.spec.name: t for t in plan}
    keys = []
    with _LOCK:
        for shard in shards:
            task = tasks.get(shard.task.name)
            if task is not None and task.dataset_sha256 == shard.dataset_sha256:
                _ADOPTED[_key(shard)] = task
                keys.append(_key(shard))
    try:
        yield
    finally:
        with _LOCK:
            for key in keys:
                _ADOPTED.pop(key, None)


def _planned(shard: Shard) -> PlannedTask:
    key = _key(shard)
    kept = (*key, shard.part is not None)
    with _LOCK:
        adopted, found = _ADOPTED.get(key), _PLANNED.get(kept)
    if adopted is not None:
        return adopted
    if found is not None:
        return found if shard.part is None else shard.part.planned(found, shard.dataset_sha256)
    if shard.part is not None:
        # its evaluators and aggregates, built once a task; the items are the shard's
        frame = plan_frame(shard.task, Path(shard.base))
        _keep(kept, frame)
        return shard.part.planned(frame, shard.dataset_sha256)
    task = plan_task(shard.task, Path(shard.base))
    if task.dataset_sha256 != shard.dataset_sha256:
        where = shard.task.dataset or shard.task.name
        raise DataError(
            Problem(
                where,
                None,
                None,
                f"this worker's copy has sha256 {task.dataset_sha256}, the run's "
                f"{shard.dataset_sha256}: every worker must see the dataset the run started with",
            )
        )
    _keep(kept, task)
    return task


def _keep(key: tuple[str, str, str | None, bool], task: PlannedTask) -> None:
    with _LOCK:
        if len(_PLANNED) >= _PLANNED_MAX:
            _PLANNED.pop(next(iter(_PLANNED)))
        _PLANNED[key] = task


def _set_up_llm(shard: Shard) -> None:
    """Point this worker's LLM calls at the run's response cache, once per setting (never in
    the driver's own process, whose context is the run's)."""
    global _LLM_SET
    if shard.driver == driver_id():
        return
    llm = shard.llm
    key = (id(type(llm.cache)), getattr(llm.cache, "path", None), llm.mode, llm.concurrency)
    with _LOCK:
        if key == _LLM_SET:
            return
        if llm.concurrency is not None:
            os.environ["MEMGAUGE_LLM_CONCURRENCY"] = str(llm.concurrency)
        configure(cache=llm.cache, cache_mode=llm.mode)
        _LLM_SET = key


class _Usage:
    """LLM spend counted in this worker while a shard runs."""

    def __init__(self) -> None:
        self.rows: dict[str, dict[str, int]] = {}
        self.lock = threading.Lock()

    def __call__(self, model: str, delta: Mapping[str, int]) -> None:
        with self.lock:
            row = self.rows.setdefault(model, {})
            for k, v in delta.items():
                row[k] = row.get(k, 0) + int(v)


def _nothing() -> None:
    pass


def _unbound(fn: Callable[[], T]) -> Callable[[], T]:
    return fn


def run_shard(shard: Shard, scope: CallScope | None = None) -> ShardResult:
    """Run a shard where it lands (see the module's docstring); failures of items are data in
    the result. Raises `DataError` when the worker's dataset differs from the run's.

    `scope`: the run's, when the driver runs the shard itself: its meter counts the subject's
    calls for the run only when they are made in the run's scope, and the threads that make
    them do not inherit the driver's."""
    _set_up_llm(shard)
    allow_calls()
    task = _planned(shard)
    usage = _Usage()
    in_driver = shard.driver == driver_id()  # the driver's meter already records its spend
    stop = _nothing if in_driver else llm_context().meter.listen(usage)
    result = ShardResult(shard.index)
    try:
        try:
            # its python: target resolves from the run's base, as in the driver
            build = rooted(build_subject, shard.base)
            lane = SubjectLane(shard.subject, shard.spec, shard.concurrency, build)
        except UnavailableError as exc:
            result = ShardResult(shard.index, unavailable=str(exc))
        else:
            try:
                wanted = set(shard.items)
                for corpus in shard.corpora:
                    items = [it for it in task.items if it.id in wanted and it.corpus == corpus]
                    _run_corpus(lane, task, corpus, items, shard.concurrency, result, scope)
            finally:
                lane.close()
    finally:
        stop()
        if not in_driver:
            # the worker's connection pools end with the shard (a process pool's worker exits
            # without a word, and would leave them unclosed)
            llm_context().close()
    result.usage.update(usage.rows)
    return result


def _run_corpus(
    lane: SubjectLane,
    task: PlannedTask,
    corpus: str | None,
    items: Sequence[PlannedItem],
    concurrency: int,
    result: ShardResult,
    scope: CallScope | None,
) -> None:
    bind = scope.bind if scope is not None else _unbound
    memories = task.memories_for(corpus)
    if lane.memory and (memories is not None or not task.spec.ingest):
        subject = lane.subject
        t0 = time.perf_counter()
        no_ingest = argument("ingest", False, flag="--no-ingest")  # here: the lane has no CLI
        try:
            if memories is None:  # searched as it stands: only checked
                lane.call(bind(lambda: searched_as_it_stands(subject, no_ingest)))
            else:
                lane.call(bind(lambda: fill_memory(subject, memories)))
        except Exception as exc:
            failure = Failure.of("setup", exc)
            result.records.extend((failed_item(task, lane.name, it, failure), 0.0) for it in items)
            return
        if memories is not None:
            result.setups.append((corpus, time.perf_counter() - t0))

    def job(item: PlannedItem) -> Job:
        return Job(
            (lane.name, task.spec.name, item.id),
            bind(lambda: answer_item(lane.subject, lane.name, lane.answers, task, item)),
            lane.pool,
            task.spec.timeout,
            context=item,
        )

    def done(job: Job, answered: Any) -> bool:
        if isinstance(answered, TimedOut):
            record = timed_out_item(task, lane.name, job.context, answered.seconds)
            result.records.append((record, answered.seconds))
        else:
            record, t0 = answered
            result.records.append((record, time.perf_counter() - t0))
        return True

    LocalExecutor().execute((job(it) for it in items), concurrency=concurrency, on_done=done)
