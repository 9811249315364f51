"""The driver's side of a sharded run: send shards to a pool, score and record what comes back.

The driver is the one writer of the store and the one caller of LLM judges: a shard's records
come back answered and unscored, the driver scores them (judges in a thread pool, through the
process's one cached, rate-limited client, so the provider's limit is global and a replay
exact) and records each, with the setup times and the LLM spend of the worker's subject.

A pool that costs something to open (its processes or cluster start on this machine) is opened
only when the shards run here so far say it would finish the rest sooner (`pays`), on a thread
of its own; this process keeps running shards meanwhile and after, beside the pool's workers, so
their start-up never leaves it idle. That thread then feeds the pool: a shard the moment one of
its workers is free, never one more, so no shard waits queued behind a busy worker while this
process could have run it (at the end of a run it would wait on that worker instead). A pool
that costs nothing to open (a running cluster, an executor given) takes every shard.

A shard whose worker died (a process pool broken by a killed process, a Dask worker lost for
good, a connection dropped) is submitted again, `SHARD_ATTEMPTS` tries in all; a process pool
broken by it is opened again first. Its items were never recorded (a shard's records come back
all at once), and a record already recorded in this attempt is never recorded again, so nothing
is recorded twice. A `MemgaugeError` from a worker (its dataset differs) stops the run.
"""

from __future__ import annotations

import collections
import queue
import threading
import time
from collections.abc import MutableMapping, Sequence
from concurrent.futures import BrokenExecutor, Future, ThreadPoolExecutor
from dataclasses import replace
from typing import Any, Protocol

from memgauge.data.records import Failure, ItemRecord
from memgauge.errors import MemgaugeError
from memgauge.llm._loop import cancel_pending
from memgauge.llm.scope import CallScope
from memgauge.runs.plan import PlannedItem, PlannedTask
from memgauge.runs.pools import ShardPool
from memgauge.runs.recording import Recorder
from memgauge.runs.shards import Shard, ShardResult, adopted, run_shard
from memgauge.runs.warm import warm_shards
from memgauge.runs.work import failed_item, score_item

__all__ = ["SHARD_ATTEMPTS", "ShardDriver"]

#: how many times one shard is tried before its worker's error stops the run
SHARD_ATTEMPTS = 3


class _Progress(Protocol):
    def phase(self, subject: str, task: str, corpus: str | None) -> None: ...


class _Writer(Protocol):
    @property
    def progress(self) -> _Progress: ...


class RunState(Protocol):
    """What the engine's run state offers the driver (`engine._Run`)."""

    run_id: str

    @property
    def scope(self) -> CallScope: ...

    @property
    def stopping(self) -> bool: ...

    @property
    def writer(self) -> _Writer: ...

    def record(self, row: ItemRecord, *, counts: bool = True) -> None: ...


def _judged(task: PlannedTask) -> bool:
    return any(getattr(ev, "uses_llm", False) for _label, ev, _w in task.evaluators)


class ShardDriver:
    """A run's shards on a pool (`run_shards`), their items recorded as each comes back."""

    def __init__(
        self,
        shards: Sequence[Shard],
        plan: Sequence[PlannedTask],
        state: RunState,
        pool: ShardPool,
        recorder: Recorder,
        unavailable: MutableMapping[str, str],
        width: int,
    ) -> None:
        self.state, self.pool, self.recorder = state, pool, recorder
        self.unavailable = unavailable
        self.plan = plan
        self.tasks = {t.spec.name: t for t in plan}
        self.items: dict[tuple[str, str], PlannedItem] = {
            (t.spec.name, it.id): it for t in plan for it in t.items
        }
        self.shards = list(shards)
        self.events: queue.SimpleQueue[tuple[str, Future[Any], int]] = queue.SimpleQueue()
        self.flying: dict[Future[Any], tuple[Shard, int, bool]] = {}
        #: the shards nobody has started: this process and the pool's feeder take from here
        self.left: collections.deque[Shard] = collections.deque()
        #: guards `left`, `flying` and `handing` between this thread and the feeder
        self.lock = threading.Lock()
        #: shards the feeder took from `left` and is submitting
        self.handing = 0
        #: a permit for each of the pool's workers free for a shard (released as one is back)
        self.free = threading.Semaphore(0)
        self.closing = threading.Event()
        self.scoring_left = 0
        self.seen: set[tuple[str, str, str]] = set()
        self.done_shards = 0
        self.opening: threading.Thread | None = None
        # judges wait on the network: as many in flight as every worker's items together
        self.scoring = ThreadPoolExecutor(
            max_workers=max(1, width * pool.workers), thread_name_prefix="memgauge-score"
        )

    def submit(self, shard: Shard, *, permit: bool = False, handed: bool = False) -> None:
        """Send `shard` to the pool. `permit`: it holds one of the feeder's free workers, given
        back when the shard is (unless it failed: its retry then holds the worker); `handed`:
        the feeder took it from `left` (`handing`)."""
        with self.lock:  # the feeder and this thread (a retry) may submit at once
            generation = self.pool.generation
            try:
                future = self.pool.executor.submit(run_shard, shard)
            except BrokenExecutor:
                if not self.pool.reopen():
                    raise
                future = self.pool.executor.submit(run_shard, shard)
                generation = self.pool.generation
            self.flying[future] = (shard, generation, permit)
            if handed:
                self.handing -= 1

        def back(f: Future[Any]) -> None:
            if permit and (f.cancelled() or f.exception() is None):
                self.free.release()
            self.events.put(("shard", f, generation))

        future.add_done_callback(back)

    def take(self) -> Shard | None:
        """The next shard nobody has started, or None."""
        with self.lock:
            return self.left.popleft() if self.left else None

    def feed(self) -> None:
        """Give the opened pool a shard whenever one of its workers is free, until none is
        left: a worker never waits for this process to hand it one, and no shard waits in the
        pool while this process could run it."""
        for _ in range(self.pool.slots):
            self.free.release()
        while True:
            self.free.acquire()
            if self.closing.is_set():
                return
            with self.lock:
                if not self.left:
                    return
                shard = self.left.popleft()
                self.handing += 1
            self.submit(shard, permit=True, handed=True)

    def pays(self, left: int, ran: int, seconds: float) -> bool:
        """Whether the pool should take the `left` shards: always when it costs nothing to open
        (it is open, or a running cluster's), else when what they would save on its workers,
        going by the `ran` shards run here in `seconds`, is more than opening it costs."""
        if self.pool.opened or self.pool.startup <= 0:
            return True
        if ran == 0:
            return False  # run one here first: its time is the estimate
        saved = left * (seconds / ran) * (1 - 1 / self.pool.workers)
        return saved > self.pool.startup

    def open_pool(self) -> None:
        """Open the pool on a thread of its own (a Dask LocalCluster takes seconds to start),
        which then feeds it (`feed`); an ("opened", ...) event says why it could not be opened
        or fed."""
        done: Future[None] = Future()
        done.add_done_callback(lambda f: self.events.put(("opened", f, 0)))

        def make() -> None:
            try:
                _ = self.pool.executor
                self.feed()
            except BaseException as exc:  # the driver raises it where it reads the event
                done.set_exception(exc)
            else:
                done.set_result(None)

        self.opening = threading.Thread(target=make, name="memgauge-open-pool", daemon=True)
        self.opening.start()

    def handle(self, kind: str, future: Future[Any]) -> None:
        if kind == "opened":
            future.result()  # raises what opening or feeding the pool raised
        elif kind == "score":
            self.scoring_left -= 1
            self.state.record(future.result())
        else:
            self.shard_done(future)

    def run_here(self, shard: Shard) -> float:
        """Run `shard` in this process; its seconds."""
        t0 = time.perf_counter()
        # its subject's LLM calls are counted by this process's meter (not by the shard), so
        # they are made in the run's scope for the run's usage listener to hear them
        result = run_shard(shard, self.state.scope)
        seconds = time.perf_counter() - t0
        self.finished(shard, result)
        return seconds

    def run(self) -> None:
        self.left.extend(self.shards)
        if self.pays(len(self.left), 0, 0.0):
            # a pool that costs nothing to open (a running cluster, a given executor) takes
            # every shard, as it was asked to
            for shard in self.shards:
                self.submit(shard)
            self.left.clear()
        ran, seconds = 0, 0.0
        # Shards run here, one at a time, until a pool would finish the rest sooner. From then
        # on this process keeps running shards beside the pool while it opens and after: its
        # workers' start-up (imports, building the subject) never leaves this process idle, so
        # a sharded run is not slower than a serial one. The pool's feeder gives a worker a
        # shard as it frees; every other shard stays here for whoever is free first.
        while True:
            self.drain(block=False)
            if self.state.stopping:
                return
            if self.opening is None and self.left and self.pays(len(self.left), ran, seconds):
                self.open_pool()
            mine = self.take()
            if mine is not None:
                seconds += self.run_here(mine)
                ran += 1
                if self.state.stopping:
                    return
                continue
            with self.lock:
                if not (self.flying or self.handing or self.scoring_left):
                    return
            # nothing left to start: wait for what the pool and the judges still hold
            self.drain(block=True)
            if self.state.stopping:
                return

    def drain(self, *, block: bool) -> None:
        """Handle the events waiting (the first waited for when `block`), until none is or
        the run must stop."""
        try:
            while not self.state.stopping:
                kind, future, _generation = self.events.get(block=block)
                block = False
                self.handle(kind, future)
        except queue.Empty:
            pass

    def shard_done(self, future: Future[Any]) -> None:
        with self.lock:
            shard, generation, permit = self.flying.pop(future)
        if future.cancelled():
            return
        exc = future.exception()
        if exc is not None:
            if isinstance(exc, MemgaugeError) or shard.attempt >= SHARD_ATTEMPTS:
                raise exc
            # the first shard to report a broken pool reopens it; the others just resubmit
            with self.lock:  # the feeder submits too: one of them reopens the pool
                broken = isinstance(exc, BrokenExecutor) and generation == self.pool.generation
                if broken and not self.pool.reopen():
                    raise exc
            # it keeps its worker's permit (see `submit`)
            self.submit(replace(shard, attempt=shard.attempt + 1), permit=permit)
            return
        self.finished(shard, future.result())

    def finished(self, shard: Shard, result: ShardResult) -> None:
        self.done_shards += 1
        self.state.writer.progress.phase(
            shard.subject, shard.task.name, f"{self.done_shards} of {len(self.shards)} shards"
        )
        self.collect(shard, result)

    def collect(self, shard: Shard, result: ShardResult) -> None:
        run_id, task = self.state.run_id, self.tasks[shard.task.name]
        for model, delta in result.usage.items():
            self.recorder.record_usage(run_id, model, delta)
        for corpus, seconds in result.setups:
            self.recorder.record_setup(run_id, shard.subject, task.spec.name, corpus, seconds)
        if result.unavailable is not None:
            self.unavailable.setdefault(shard.subject, result.unavailable)
            failure = Failure(stage="unavailable", kind="unavailable", message=result.unavailable)
            for item_id in shard.items:
                item = self.items[(task.spec.name, item_id)]
                # unavailable is its own outcome (exit 3), not the subject failing
                self.state.record(failed_item(task, shard.subject, item, failure), counts=False)
            return
        judged = _judged(task)
        for record, elapsed in result.records:
            if record.key in self.seen:
                continue
            self.seen.add(record.key)
            item = self.items[(task.spec.name, record.item_id)]
            # the item's duration runs from its start in the worker to its verdict here
            t0 = time.perf_counter() - elapsed
            if judged and record.status != "failed":
                self.scoring_left += 1
                # in the run's scope, as in a serial run: the run's usage listener hears only
                # the calls made in it, and a judge's thread does not inherit the driver's
                score = self.state.scope.bind(score_item)
                scored = self.scoring.submit(score, task, item, record, t0)
                scored.add_done_callback(lambda f: self.events.put(("score", f, 0)))
            else:
                self.state.record(score_item(task, item, record, t0))

    def close(self, *, failed: bool) -> None:
        self.closing.set()
        self.free.release()  # a feeder waiting for a free worker stops
        if self.opening is not None:
            # a pool still opening would be left running: it is closed with the others
            self.opening.join()
        with self.lock:
            for future in list(self.flying):
                future.cancel()
        if failed:
            cancel_pending()  # judges' calls in flight: stop them instead of waiting out retries
            self.scoring.shutdown(wait=False, cancel_futures=True)
        else:
            self.scoring.shutdown(wait=True)

    def run_shards(self) -> None:
        """Run the shards on the pool, recording every item as its shard comes back; returns
        when all are recorded or the run must stop (`state.stopping`: shards not yet back are
        dropped, their items stay queued for `--resume`)."""
        try:
            with adopted(self.shards, self.plan):
                if self.pool.local:
                    warm_shards(self.shards, self.plan)
                self.run()
        except BaseException:
            self.close(failed=True)
            self.pool.stop()
            raise
        self.close(failed=self.state.stopping)
        if self.state.stopping:
            self.pool.stop()
