"""How a run's items are executed: the local executor (threads).

A job is one blocking call (ask the subject, score the output) bound to a lane: the thread
pool it must run in. Subjects that accept calls from several threads share a pool as wide as
the concurrency; others get a lane of one thread, so that, for example, a SQLite connection is
only ever used by the thread that opened it. The executor bounds how many jobs are in flight,
enforces each job's timeout from the moment its lane starts it (an item waiting for a
one-thread subject is not being timed), and hands every finished job to `on_done`, one at a
time (never two at once), in the order they finish. Runs are distributed a level above, in
shards on a `concurrent.futures.Executor` (`runs/pools.py`): no other executor of jobs exists,
so there is no protocol for one.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Executor as PoolExecutor
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any

__all__ = ["Job", "LocalExecutor", "TimedOut"]


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


class _Flight:
    """A job in flight: its stage (`call`, then `then`), the future of that stage, when its
    lane started the call (set by the lane's thread), and whether it was given up (timed
    out: whatever it returns later is dropped)."""

    __slots__ = ("future", "given_up", "job", "started", "then")

    def __init__(self, job: Job) -> None:
        self.job = job
        self.started: float | None = None
        self.then = False
        self.given_up = False
        self.future: Future[Any] | None = None


class LocalExecutor:
    """Keeps `concurrency` jobs in their lanes' threads; each finished job is reported and the
    next one started by the thread that finished it.

    Bookkeeping happens where the work is: a one-thread lane that finishes an item takes the
    next from its queue without ever sleeping, and the caller's thread only wakes to give up
    on a call that ran past its timeout, or once everything is done. (Waking the caller for
    every finished item cost ~0.1 ms an item in thread switches, as much as a fast
    subject's call.)
    """

    def execute(
        self,
        jobs: Iterable[Job],
        *,
        concurrency: int,
        on_done: Callable[[Job, Any], bool],
    ) -> None:
        """Run `jobs`; `on_done(job, result_or_TimedOut)` returns False to stop taking new ones.

        `on_done` is called for one job at a time, from any thread. Jobs in flight when it
        stops are awaited and reported; jobs never started are not. A job that raises (or an
        `on_done` that does) stops the run: the exception is raised here.
        """
        _Execution(iter(jobs), max(1, concurrency), on_done).run()


class _Execution:
    def __init__(
        self, source: Iterator[Job], width: int, on_done: Callable[[Job, Any], bool]
    ) -> None:
        self.source, self.width, self.on_done = source, width, on_done
        # guards everything below, and makes `on_done` one call at a time; re-entrant, for a
        # lane that runs what it is given at once, in the submitting thread
        self.lock = threading.RLock()
        self.changed = threading.Condition(self.lock)
        self.flying: set[_Flight] = set()
        self.taking = True
        self.closed = False
        self.error: BaseException | None = None
        self.wake_at = float("inf")  # when the caller's thread looks for overdue calls next
        self.filling = False

    def run(self) -> None:
        with self.changed:
            try:
                self._fill()
                while self.flying and self.error is None:
                    wait = _wait(self.flying)
                    self.wake_at = time.monotonic() + wait
                    self.changed.wait(timeout=wait)
                    if self.error is None:
                        self._give_up_overdue()
                if self.error is not None:
                    raise self.error
            except BaseException:
                # interrupted, or a job failed: what has not started never will, and what
                # finishes later is dropped
                self.closed = True
                for flight in self.flying:
                    if flight.future is not None:
                        flight.future.cancel()
                raise

    # --- under the lock ----------------------------------------------------------------------

    def _fill(self) -> None:
        if self.filling:  # a job finished inside a submit below: that loop takes the next
            return
        self.filling = True
        try:
            while self.taking and not self.closed and len(self.flying) < self.width:
                job = next(self.source, None)
                if job is None:
                    self.taking = False
                    return
                flight = _Flight(job)
                self.flying.add(flight)
                future = job.lane.submit(self._call, flight)
                if flight.future is None:  # not already moved on to its `then` stage
                    flight.future = future
        finally:
            self.filling = False

    def _report(self, flight: _Flight, result: Any) -> None:
        self.flying.discard(flight)
        if not self.on_done(flight.job, result):
            self.taking = False
        self._fill()
        if not self.flying:
            self.changed.notify()

    def _fail(self, exc: BaseException) -> None:
        if self.error is None:
            self.error = exc
        self.taking = False
        self.changed.notify()

    def _give_up_overdue(self) -> None:
        now = time.monotonic()
        for flight in list(self.flying):
            if (
                not flight.then
                and flight.started is not None
                and now >= flight.started + flight.job.timeout
            ):
                # the thread cannot be interrupted: its eventual result is dropped
                flight.given_up = True
                if flight.future is not None:
                    flight.future.cancel()
                try:
                    self._report(flight, TimedOut(flight.job.timeout))
                except BaseException as exc:
                    self._fail(exc)

    # --- in a lane's (or the scoring pool's) thread ---------------------------------------

    def _call(self, flight: _Flight) -> None:
        flight.started = started = time.monotonic()
        if started + flight.job.timeout < self.wake_at:  # due before the caller looks again
            with self.lock:
                self.changed.notify()
        try:
            result = flight.job.call()
        except BaseException as exc:
            with self.lock:
                if not (self.closed or flight.given_up):
                    self._fail(exc)
            return
        self._finished(flight, result)

    def _then(self, flight: _Flight, result: Any) -> None:
        job = flight.job
        assert job.then is not None
        try:
            out = job.then(result)
        except BaseException as exc:
            with self.lock:
                if not self.closed:
                    self._fail(exc)
            return
        self._finished(flight, out)

    def _finished(self, flight: _Flight, result: Any) -> None:
        with self.lock:
            if self.closed or flight.given_up:
                return
            job = flight.job
            try:
                if job.then is not None and not flight.then:
                    flight.then = True
                    flight.future = (job.then_pool or job.lane).submit(self._then, flight, result)
                    return
                self._report(flight, result)
            except BaseException as exc:
                self._fail(exc)


def _wait(flying: set[_Flight]) -> float:
    """Seconds until the first call in flight may time out (a call still queued in its lane
    is not being timed: looked at again after a whole timeout)."""
    now = time.monotonic()
    waits = [
        (f.started + f.job.timeout - now) if f.started is not None else f.job.timeout
        for f in flying
        if not f.then
    ]
    return max(0.0, min(waits)) if waits else _IDLE


_IDLE = 60.0  # only `then` stages in flight (untimed): look again now and then regardless
