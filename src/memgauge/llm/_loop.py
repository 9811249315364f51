"""One background event loop per process, so synchronous code (evaluators in worker threads)
can make async LLM calls that share one connection pool and one concurrency limit."""

from __future__ import annotations

import concurrent.futures
import threading
import weakref
from collections.abc import Coroutine
from typing import TYPE_CHECKING, Any, TypeVar

from memgauge.llm.scope import CallScope, current_scope

if TYPE_CHECKING:
    # imported by the first call: every run cancels and allows calls, a run without LLM calls
    # makes none (asyncio with its SSL and socket modules is about 10 ms of CPU to import)
    import asyncio

__all__ = ["allow_calls", "cancel_pending", "run_sync"]

T = TypeVar("T")

_lock = threading.Lock()
_loop: asyncio.AbstractEventLoop | None = None
_pending: weakref.WeakSet[concurrent.futures.Future[Any]] = weakref.WeakSet()
_cancelled = threading.Event()


def background_loop() -> asyncio.AbstractEventLoop:
    """The process's LLM loop, started on first use (a daemon thread)."""
    import asyncio

    global _loop
    with _lock:
        if _loop is None or _loop.is_closed():
            loop = asyncio.new_event_loop()
            threading.Thread(target=loop.run_forever, name="memgauge-llm", daemon=True).start()
            _loop = loop
        return _loop


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """Run `coro` on the background loop and wait for its result from this thread."""
    import asyncio

    loop = background_loop()
    try:
        running = asyncio.get_running_loop()
    except RuntimeError:
        running = None
    if running is loop:
        coro.close()
        raise RuntimeError("a synchronous LLM call from the LLM loop itself would deadlock")
    scope = current_scope()
    if _cancelled.is_set() or (scope is not None and scope.cancelled.is_set()):
        coro.close()
        raise asyncio.CancelledError("LLM calls were cancelled (the run was interrupted)")
    # scheduled in a copy of this thread's context: the call still knows its run's scope
    future = asyncio.run_coroutine_threadsafe(coro, loop)
    with _lock:
        _pending.add(future)
    if scope is not None:
        scope.add(future)
    try:
        return future.result()
    except concurrent.futures.CancelledError:
        # as a BaseException, so no `except Exception` on the way turns it into a result
        raise asyncio.CancelledError("LLM call cancelled (the run was interrupted)") from None
    finally:
        with _lock:
            _pending.discard(future)
        if scope is not None:
            scope.discard(future)


def cancel_pending(scope: CallScope | None = None) -> int:
    """Cancel every call waiting in `run_sync`, and refuse new ones until `allow_calls()` (a
    run interrupted with Ctrl-C must not wait minutes for judges' retries); with `scope`, only
    that scope's calls (one run of several going at once). Callers get
    `asyncio.CancelledError`. Returns how many calls were cancelled."""
    if scope is not None:
        return scope.cancel()
    _cancelled.set()
    with _lock:
        futures = list(_pending)
    return sum(f.cancel() for f in futures)


def allow_calls() -> None:
    """Accept calls again after `cancel_pending()` (a new run in the same process)."""
    _cancelled.clear()
