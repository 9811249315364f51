"""Where shards run: `--workers N` and `--executor`, turned into a `concurrent.futures.Executor`.

- `--workers N` (N > 1), or `--executor process`: a `ProcessPoolExecutor` of N processes started
  with `spawn` (N - 1 when the driver runs shards beside them: see `_process_pool`). Not `fork` (the driver holds threads, SQLite connections and an event loop that a
  forked child must not inherit) and not `forkserver` (its server is started once per driver
  and keeps the environment of that moment, so a worker would miss a `MEMGAUGE_*` or
  `OPENAI_*` variable set later in the same process, as the Python API and tests do).
  A pool broken by a dead worker is opened again and its shards resubmitted. A worker ends
  when its driver does, however the driver died (`kill -9` included): see `_end_with_driver`.
  The resource tracker that `spawn` starts beside the workers then ends too (it reads a pipe
  whose writers are the driver and the workers, and exits when the last one is gone).
- `--executor dask:local`: a Dask `LocalCluster` of N worker processes (one thread each; N - 1
  when the driver runs shards beside them, as for a process pool), and
  `--executor dask://HOST:PORT` (or `tcp://...`) the scheduler of a running cluster; both through
  `Client.get_executor()`, which is a `concurrent.futures.Executor`. Dask reschedules the task
  of a worker that died on another worker. Dask is an optional extra: `pip install
  'memgauge[dask]'`; the workers of a remote cluster need memgauge (and the subject's package)
  installed and their own LLM environment variables (the datasets at the same paths only for
  a task of a plug-in's kind: memgauge's own send each shard its items and memories).
- Anything else that is a `concurrent.futures.Executor`, passed to the Python API as
  `executor=`. Ray reaches this seam without memgauge depending on it: `ray.remote(fn)
  .remote(*args)` returns an `ObjectRef`, and `ObjectRef.future()` a `concurrent.futures.Future`,
  so an executor of a few lines is enough::

      class RayExecutor(concurrent.futures.Executor):
          def submit(self, fn, /, *args, **kwargs):
              return ray.remote(fn).remote(*args, **kwargs).future()

      memgauge.evaluate("locomo10.json", ["lexical"], executor=RayExecutor(), workers=4)

  (`workers` then only sizes the shards: the cluster decides where they run.)
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import importlib.util
import logging
import os
import threading
from collections.abc import Callable
from concurrent.futures import Executor as PoolExecutor
from typing import Any

from memgauge.errors import UnavailableError, UsageError

__all__ = [
    "DASK_INSTALL",
    "DASK_LOCAL_STARTUP",
    "PROCESS_STARTUP",
    "ShardPool",
    "open_pool",
    "startup_seconds",
]

DASK_INSTALL = "pip install 'memgauge[dask]'"


#: what opening a pool costs before its first shard runs, in seconds, when
#: MEMGAUGE_SHARD_STARTUP does not say: spawned processes that import memgauge and build their
#: subject, and a Dask LocalCluster's scheduler and nannies besides (BENCHMARKS.md, "A
#: LongMemEval_S-sized sweep"); a pool of a running cluster or a given executor costs nothing
PROCESS_STARTUP = 3.0
DASK_LOCAL_STARTUP = 10.0
_STARTUP_ENV = "MEMGAUGE_SHARD_STARTUP"


def startup_seconds(default: float) -> float:
    """MEMGAUGE_SHARD_STARTUP when set (0: shard whatever the work), else `default`."""
    raw = os.environ.get(_STARTUP_ENV, "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not value >= 0:
        raise UsageError(f"{_STARTUP_ENV}={raw}: give seconds, 0 or more")
    return value


class ShardPool:
    """An executor for shards, how many run at once, and how to open it again when it broke
    (None: it cannot be).

    `executor` may be a function that makes it: the pool is then opened when first used (a run
    whose shards would not pay never starts its processes or cluster); `startup`: the seconds
    opening it is expected to cost, set against what the shards would save; `local`: its
    workers run on this machine (they read the embedding cache the driver fills); `slots`: the
    shards its own processes run at once (default `workers`)."""

    def __init__(
        self,
        executor: PoolExecutor | Callable[[], PoolExecutor],
        workers: int,
        *,
        reopen: Callable[[], PoolExecutor] | None = None,
        close: Callable[[], None] | None = None,
        owned: bool = True,
        startup: float = 0.0,
        local: bool = False,
        slots: int | None = None,
    ) -> None:
        self._executor: PoolExecutor | None = None
        self._make: Callable[[], PoolExecutor] | None = None
        if isinstance(executor, PoolExecutor):
            self._executor = executor
        else:
            self._make = executor
        self.workers = max(1, workers)
        #: shards its own workers run at once (the driver's excluded)
        self.slots = max(1, slots or self.workers)
        self._reopen, self._close, self.owned = reopen, close, owned
        self.startup = startup
        #: its workers run on this machine and share its embedding cache
        self.local = local
        #: bumped by every reopen: a shard lost to an older pool is resubmitted, not reopened for
        self.generation = 0

    @property
    def executor(self) -> PoolExecutor:
        """The executor, opened now if it was not yet."""
        if self._executor is None:
            assert self._make is not None
            self._executor = self._make()
        return self._executor

    @property
    def opened(self) -> bool:
        """Whether the executor exists (was given, or was used)."""
        return self._executor is not None

    def reopen(self) -> bool:
        """Replace a broken executor with a new one; False when this pool cannot."""
        if self._reopen is None:
            return False
        self.stop()
        self._executor = self._reopen()
        self.generation += 1
        return True

    def stop(self) -> None:
        """Stop at once: nothing queued starts, and worker processes running a shard are ended
        (an interrupted run is resumed; what they were doing is done again then)."""
        if not self.owned or self._executor is None:
            return
        try:
            self.executor.shutdown(wait=False, cancel_futures=True)
        except TypeError:  # Dask's executor cancels its futures without being asked
            self.executor.shutdown(wait=False)
        # a pool's own children: Python < 3.14 has no public way to end them
        procs = getattr(self.executor, "_processes", None) or {}
        for proc in list(procs.values()):
            with contextlib.suppress(Exception):
                proc.terminate()

    def close(self) -> None:
        """Shut the executor down (and the cluster this pool started)."""
        if self.owned and self._executor is not None:
            self._executor.shutdown(wait=True)
        if self._close is not None:
            self._close()


#: a worker's exit code when its driver died under it
_ORPHANED = 75


def _end_with_driver() -> None:
    """A process pool worker's initializer: end this worker as soon as its driver has died.

    A pool's worker waits for work on a queue whose pipe it holds both ends of, so a driver
    killed without a word (`kill -9`, the OOM killer) leaves it waiting forever, and with it the
    resource tracker. The driver holds open the other end of the pipe it spawned the worker
    through until it joins the worker; a thread here waits on it (`parent_process().join()`)
    and sees its end the moment the driver dies. Not `PR_SET_PDEATHSIG`, which is Linux's alone
    and fires when the *thread* that started the worker ends (the pool starts workers from
    whichever thread submits), nor polling `os.getppid()`, which is late by its interval.
    `os._exit`: the shard in hand cannot be delivered to anyone, and the driver's `--resume`
    does it again.
    """
    import multiprocessing

    driver = multiprocessing.parent_process()
    if driver is None:  # not started by multiprocessing: nothing to watch
        return

    def watch() -> None:
        driver.join()
        os._exit(_ORPHANED)

    threading.Thread(target=watch, name="memgauge-driver-watch", daemon=True).start()


def _process_pool(workers: int) -> ShardPool:
    """`workers` processes run shards. When the pool costs something to open, the driver runs
    shards beside it (`ShardDriver.run`) and is one of them: one process fewer is spawned, and
    its start-up (imports, building the subject: most of a worker's CPU on a warm cache) is not
    paid. When it is free to open (MEMGAUGE_SHARD_STARTUP=0), the pool
    takes every shard and has all `workers`."""
    startup = startup_seconds(PROCESS_STARTUP)
    spawned = max(1, workers - 1) if startup > 0 else workers

    def make() -> PoolExecutor:
        # imported here, as the pool opens: a run that does not shard starts no process
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        return ProcessPoolExecutor(
            spawned, mp_context=multiprocessing.get_context("spawn"), initializer=_end_with_driver
        )

    return ShardPool(make, workers, reopen=make, startup=startup, local=True, slots=spawned)


def _dask(address: str | None, workers: int) -> ShardPool:
    if address is None:
        # imported on the thread that opens the cluster, while the driver runs shards: the
        # driver only checks here that it is installed
        if importlib.util.find_spec("distributed") is None:
            raise UnavailableError(_DASK_MISSING)
        return _dask_local(workers)
    distributed = _distributed()
    try:
        client = distributed.Client(address, timeout="20s")
    except OSError as exc:
        raise UnavailableError(f"--executor {address}: no Dask scheduler there ({exc})") from None
    n = sum(client.nthreads().values()) or workers
    # pure=False: a shard submitted again after its worker died is a new task, not the old key
    return ShardPool(
        client.get_executor(pure=False), n, close=client.close, startup=startup_seconds(0.0)
    )


_DASK_MISSING = f"--executor dask needs Dask distributed: {DASK_INSTALL}"


def _distributed() -> Any:
    try:
        return importlib.import_module("distributed")
    except ImportError:
        raise UnavailableError(_DASK_MISSING) from None


def _dask_local(workers: int) -> ShardPool:
    """A LocalCluster of `workers` processes (as many as the cores for 1), started when the
    first shard is submitted. When it costs something to open, the driver runs shards beside
    it and is one of its workers, as with a process pool: one worker process fewer is started
    (its start-up, Dask's and memgauge's imports and the subject, is not paid)."""
    opened: list[Any] = []
    n = workers if workers > 1 else (os.cpu_count() or 1)
    startup = startup_seconds(DASK_LOCAL_STARTUP)
    spawned = max(1, n - 1) if startup > 0 else n

    def make() -> PoolExecutor:
        distributed = _distributed()
        cluster = distributed.LocalCluster(
            n_workers=spawned,
            threads_per_worker=1,
            processes=True,
            # no dashboard; the scheduler's HTTP server (health, metrics) on a free port: at
            # Dask's default 8787 it warns when another cluster holds it (and fails a test)
            dashboard_address=":0",
            scheduler_kwargs={"dashboard": False},
            silence_logs=logging.ERROR,
        )
        opened.append(cluster)
        client = distributed.Client(cluster)
        opened.append(client)
        executor: PoolExecutor = client.get_executor(pure=False)
        return executor

    def close() -> None:
        if not opened:
            return
        # the cluster, and its client unless connecting to it failed (a timeout, Ctrl-C):
        # the cluster is closed either way
        cluster, *client = opened
        opened.clear()
        for c in client:
            c.close()
        # every shard is back (or dropped): the workers have nothing to finish, so each is given
        # a fraction of a second before it is killed, where Dask's graceful close of a worker
        # took the driver 1.2-4.5 s of waiting (BENCHMARKS.md, "A LongMemEval_S-sized sweep")
        with contextlib.suppress(Exception):
            cluster.sync(_end_workers, cluster)
        cluster.close()

    return ShardPool(make, n, close=close, startup=startup, local=True, slots=spawned)


#: how long a LocalCluster's worker is given to stop before it is killed, at the end of a run
_WORKER_END = 0.25


async def _end_workers(cluster: Any) -> None:
    """Close `cluster`'s nannies (on its event loop), each killing its worker process after
    `_WORKER_END` seconds; a nanny closed so does not start its worker again."""
    nannies = list(cluster.workers.values())
    await asyncio.gather(*(w.close(timeout=_WORKER_END) for w in nannies), return_exceptions=True)


def open_pool(workers: int, executor: str | PoolExecutor | None) -> ShardPool | None:
    """The pool `--workers` and `--executor` ask for, or None (run in this process).

    `executor`: None or `process` (a process pool of `workers`), `dask:local`, `dask://HOST:PORT`
    or `tcp://HOST:PORT`, or an executor object (used as is, never shut down here).
    """
    if executor is not None and not isinstance(executor, str):
        return ShardPool(executor, workers, owned=False)
    if executor is None:
        return _process_pool(workers) if workers > 1 else None
    if executor == "process":
        return _process_pool(max(1, workers))
    if executor == "dask:local":
        return _dask(None, workers)
    if executor.startswith("dask://"):
        return _dask("tcp://" + executor.removeprefix("dask://"), workers)
    if executor.startswith("tcp://"):
        return _dask(executor, workers)
    raise UsageError(
        f"--executor {executor!r}: use process, dask:local or dask://HOST:PORT "
        "(a Ray or other executor object: through the Python API's executor=)"
    )
