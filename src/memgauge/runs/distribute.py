"""The driver's side of a sharded run: send shards to a pool, score and record what comes back.

The driver is the one writer of the store and the one caller of LLM judges: a shard's records
come back answered and unscored, the driver scores them (judges in a thread pool, through the
process's one cached, rate-limited client, so the provider's limit is global and a replay
exact) and records each, with the setup times and the LLM spend of the worker's subject.

A pool that costs something to open (its processes or cluster start on this machine) is opened
only when the shards run here so far say it would finish the rest sooner (`pays`), on a thread
of its own; this process keeps running shards meanwhile and after, beside the pool's workers, so
their start-up never leaves it idle. A pool that costs nothing to open (a running cluster, an
executor given) takes every shard.

A shard whose worker died (a process pool broken by a killed process, a Dask worker lost for
good, a connection dropped) is submitted again, up to `SHARD_ATTEMPTS` times; a process pool
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
        self.flying: dict[Future[Any], tuple[Shard, int]] = {}
        self.scoring_left = 0
        self.seen: set[tuple[str, str, str]] = set()
        self.done_shards = 0
        #: the pool takes shards (it was opened, or costs nothing to open)
        self.ready = False
        self.opening: threading.Thread | None = None
        # judges wait on the network: as many in flight as every worker's items together
        self.scoring = ThreadPoolExecutor(
            max_workers=max(1, width * pool.workers), thread_name_prefix="memgauge-score"
        )

    def submit(self, shard: Shard) -> None:
        generation = self.pool.generation
        try:
            future = self.pool.executor.submit(run_shard, shard)
        except BrokenExecutor:
            if not self.pool.reopen():
                raise
            future = self.pool.executor.submit(run_shard, shard)
            generation = self.pool.generation
        self.flying[future] = (shard, generation)
        future.add_done_callback(lambda f: self.events.put(("shard", f, generation)))

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
        """Open the pool on a thread of its own (a Dask LocalCluster takes seconds to start);
        an ("opened", ...) event says when it is ready, or why it could not be opened."""
        done: Future[None] = Future()
        done.add_done_callback(lambda f: self.events.put(("opened", f, 0)))

        def make() -> None:
            try:
                _ = self.pool.executor
            except BaseException as exc:  # the driver raises it where it reads the event
                done.set_exception(exc)
            else:
                done.set_result(None)

        self.opening = threading.Thread(target=make, name="memgauge-open-pool", daemon=True)
        self.opening.start()

    def handle(self, kind: str, future: Future[Any]) -> None:
        if kind == "opened":
            future.result()  # raises what opening the pool raised
            self.ready = True
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
        left = collections.deque(self.shards)
        if self.pays(len(left), 0, 0.0):
            # a pool that costs nothing to open (a running cluster, a given executor) takes
            # every shard, as it was asked to
            self.ready = True
            for shard in left:
                self.submit(shard)
            left.clear()
        ran, seconds = 0, 0.0
        # Shards run here, one at a time, until a pool would finish the rest sooner. From then
        # on this process keeps running shards beside the pool while it opens and after: its
        # workers' start-up (imports, building the subject) never leaves this process idle, so
        # a sharded run is not slower than a serial one. The pool is given one shard more than
        # it runs at once (a worker that finishes finds the next without waiting for this
        # process); the rest stay here for whoever is free first.
        while left or self.flying or self.scoring_left:
            try:
                while True:
                    kind, future, _generation = self.events.get(block=not left)
                    self.handle(kind, future)
                    if self.state.stopping:
                        return
                    if left:
                        continue
                    break
            except queue.Empty:
                pass
            if self.ready:
                while left and len(self.flying) < self.pool.slots + 1:
                    self.submit(left.popleft())
            elif self.opening is None and self.pays(len(left), ran, seconds):
                self.open_pool()
            if not left:
                continue
            seconds += self.run_here(left.popleft())
            ran += 1
            if self.state.stopping:
                return

    def shard_done(self, future: Future[Any]) -> None:
        shard, generation = self.flying.pop(future)
        if future.cancelled():
            return
        exc = future.exception()
        if exc is not None:
            if isinstance(exc, MemgaugeError) or shard.attempt >= SHARD_ATTEMPTS:
                raise exc
            # the first shard to report a broken pool reopens it; the others just resubmit
            broken = isinstance(exc, BrokenExecutor) and generation == self.pool.generation
            if broken and not self.pool.reopen():
                raise exc
            self.submit(replace(shard, attempt=shard.attempt + 1))
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
        if self.opening is not None:
            # a pool still opening would be left running: it is closed with the others
            self.opening.join()
        for future in self.flying:
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
