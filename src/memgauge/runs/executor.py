"""How a run's items are executed: the `Executor` protocol and the local asyncio executor.

A job is one blocking call (ask the subject, score the output) bound to a lane: the thread
pool it must run in. Subjects that accept calls from several threads share a pool as wide as
the concurrency; others get a lane of one thread, so that, for example, a SQLite connection is
only ever used by the thread that opened it. The executor bounds how many jobs are in flight,
enforces each job's timeout from the moment its lane starts it (an item waiting for a
one-thread subject is not being timed), and hands every finished job to `on_done` on one thread (the
caller's), in the order they finish. A distributed engine implements the same protocol.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Executor as PoolExecutor
from dataclasses import dataclass
from typing import Any, Protocol

__all__ = ["Executor", "Job", "LocalExecutor", "TimedOut"]


@dataclass(frozen=True)
class Job:
    """One unit of work: `call()` runs in `lane` within `timeout` seconds of starting there
    (time spent queued for the lane does not count); then, if given,
    `then(result)` runs in `then_pool` (scoring that waits on the network, such as LLM
    judges, must not hold a subject's one-thread lane). Neither may raise (failures are data).
    """

    key: tuple[str, ...]
    call: Callable[[], Any]
    lane: PoolExecutor
    timeout: float
    then: Callable[[Any], Any] | None = None
    then_pool: PoolExecutor | None = None
    context: Any = None
    """Whatever the caller needs to make sense of the job's result (the engine: its item)."""


@dataclass(frozen=True)
class TimedOut:
    """What `on_done` gets for a job that did not finish within its timeout."""

    seconds: float


class Executor(Protocol):
    """Runs jobs with bounded concurrency and reports each as it finishes."""

    def execute(
        self,
        jobs: Iterable[Job],
        *,
        concurrency: int,
        on_done: Callable[[Job, Any], bool],
    ) -> None:
        """Run `jobs`; `on_done(job, result_or_TimedOut)` returns False to stop taking new ones.

        Jobs in flight when it stops are awaited and reported; jobs never started are not.
        """
        ...


class LocalExecutor:
    """`concurrency` asyncio workers pulling jobs from one iterator into their lanes' threads."""

    def execute(
        self,
        jobs: Iterable[Job],
        *,
        concurrency: int,
        on_done: Callable[[Job, Any], bool],
    ) -> None:
        """See `Executor.execute`."""
        asyncio.run(self._main(iter(jobs), max(1, concurrency), on_done))

    async def _main(
        self, jobs: Iterator[Job], concurrency: int, on_done: Callable[[Job, Any], bool]
    ) -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()

        async def worker() -> None:
            while not stop.is_set():
                job = next(jobs, None)
                if job is None:
                    return
                result: Any = await _timed(loop, job)
                if job.then is not None and not isinstance(result, TimedOut):
                    result = await loop.run_in_executor(job.then_pool, job.then, result)
                if not on_done(job, result):
                    stop.set()

        await asyncio.gather(*(worker() for _ in range(concurrency)))


async def _timed(loop: asyncio.AbstractEventLoop, job: Job) -> Any:
    """`job.call()`'s result, or TimedOut once it has run `job.timeout` seconds in its lane.

    The clock starts when the lane's thread picks the call up, not when it is queued: six items
    queued at once for a one-thread subject that takes 1 s each all answer within a 3 s timeout.
    The fast path costs nothing extra (no wake-up when the call starts): the worker waits one
    timeout, and only if the call has not finished does it look at when the call started and
    wait out the rest (or a whole timeout more, if the call is still queued).
    """
    started: list[float] = []

    def call() -> Any:
        started.append(time.monotonic())  # the loop's clock (asyncio uses time.monotonic)
        return job.call()

    future = loop.run_in_executor(job.lane, call)
    wait = job.timeout
    while True:
        done, _ = await asyncio.wait((future,), timeout=wait)
        if done:
            return future.result()
        if started:
            wait = started[0] + job.timeout - loop.time()
            if wait <= 0:
                # the thread cannot be interrupted; its eventual result is discarded
                future.cancel()
                return TimedOut(job.timeout)
