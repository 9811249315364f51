"""A user's memory or agent written with `async def` (Graphiti's `search`, mem0's `AsyncMemory`,
an `httpx.AsyncClient` behind a `search`), called by the engine's threads as any subject is.

Each such object gets one event loop of its own, running in a thread of its own for as long as
the object is in use: every call of one of its coroutine methods runs there (`asyncio.
run_coroutine_threadsafe`), so the clients and connections the object opened on its first call
keep working on the next ones (`asyncio.run` per call would give each call a new loop, and an
`AsyncClient` made on the first fails on the second), and the calls the engine's threads make at
once (`concurrency`) run concurrently on it. The calling thread waits for its result as it
would for a synchronous method; an exception is raised in it as the method raised it.

When the run is done with the object, its loop stops (`stop`); memgauge closes a `python:`
subject's object no more than a synchronous one's. A plug-in's object, which memgauge closes,
has its `close` (or `aclose`) awaited on the same loop first (`close`). A live object given to
`api.evaluate` (the caller's) keeps its loop until it is collected: given to a second run, or
under two names in one, it is called on the loop its clients were made on.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import inspect
import threading
import weakref
from collections.abc import Callable, Coroutine, Iterable
from typing import Any

__all__ = ["AsyncBridge", "LoopThread", "bridged", "stop_loop"]


class LoopThread:
    """An event loop running in a daemon thread of its own until `stop`."""

    def __init__(self, name: str) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self.loop.run_forever, name=f"memgauge-async-{name}", daemon=True
        )
        self._thread.start()

    def run(self, coro: Coroutine[Any, Any, Any]) -> Any:
        """`coro`'s result, run on the loop; the calling thread waits for it."""
        future = asyncio.run_coroutine_threadsafe(coro, self.loop)
        try:
            return future.result()
        except BaseException:
            future.cancel()  # a Ctrl-C in the waiting thread: the call is not left running
            raise

    def running(self) -> bool:
        return self._thread.is_alive() and not self.loop.is_closed()

    def stop(self) -> None:
        """Stop the loop and its thread (what is still running there is cancelled)."""
        _stop(self.loop, self._thread)


def _stop(loop: asyncio.AbstractEventLoop, thread: threading.Thread) -> None:
    if loop.is_closed():
        return
    if threading.current_thread() is thread:  # collected by a call on the loop: stop after it
        loop.stop()
        return

    async def _cancel_rest() -> None:
        rest = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        for t in rest:
            t.cancel()
        await asyncio.gather(*rest, return_exceptions=True)

    if thread.is_alive():
        # stopping: what is left cannot be helped
        with contextlib.suppress(Exception):
            asyncio.run_coroutine_threadsafe(_cancel_rest(), loop).result(timeout=5)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=5)
    if not loop.is_running():
        loop.close()


#: the loop of each object an `AsyncBridge` was made for, by id, while the object lives
_LOOPS: dict[int, LoopThread] = {}
_LOOPS_LOCK = threading.Lock()


def _loop_of(obj: Any) -> LoopThread | None:
    """The loop `obj`'s coroutines run on, the same for every bridge made for it while it lives
    and the loop runs (a live object given to a second run, or under two names: its clients
    were made on that loop); None when `obj` takes no weak reference (its bridge's own loop)."""
    key = id(obj)
    with _LOOPS_LOCK:
        found = _LOOPS.get(key)
        if found is not None and found.running():
            return found
        loop = LoopThread(type(obj).__name__)
        try:  # the entry goes with the object, before its id can be another's
            weakref.finalize(obj, _forget, key, loop)
        except TypeError:
            loop.stop()
            return None
        _LOOPS[key] = loop
        return loop


#: the loop of each coroutine function `bridged` made synchronous, while that lives
_FUNCTION_LOOPS: weakref.WeakKeyDictionary[Callable[..., Any], LoopThread] = (
    weakref.WeakKeyDictionary()
)


def _forget(key: int, loop: LoopThread) -> None:
    with _LOOPS_LOCK:
        if _LOOPS.get(key) is loop:
            del _LOOPS[key]
    loop.stop()


def _sync(fn: Callable[..., Any], loop: LoopThread) -> Callable[..., Any]:
    """`fn` (a coroutine function) as a function that runs it on `loop` and returns its
    result; its signature is `fn`'s (`inspect.signature` follows `__wrapped__`)."""

    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        return loop.run(fn(*args, **kwargs))

    return call


class AsyncBridge:
    """`obj` with its coroutine methods (`methods`) made synchronous, run on one event loop of
    its own; its other attributes are `obj`'s."""

    def __init__(self, obj: Any, methods: Iterable[str]) -> None:
        self._obj = obj
        shared = _loop_of(obj)
        self._loop = shared or LoopThread(type(obj).__name__)
        # a loop of its own stops with the bridge; an object's, when the object is collected
        self._finalizer = (
            weakref.finalize(self, _stop, self._loop.loop, self._loop._thread)
            if shared is None
            else None
        )
        for name in methods:
            setattr(self, name, _sync(getattr(obj, name), self._loop))

    def __getattr__(self, name: str) -> Any:
        if name == "_obj":  # not set yet (or a copy being made): never look for it in itself
            raise AttributeError(name)
        return getattr(self._obj, name)

    def stop(self) -> None:
        """Stop the object's loop (what still runs there is cancelled); the object itself is
        left as it is, as memgauge leaves a `python:` subject's."""
        if self._finalizer is not None:
            self._finalizer()
        else:
            self._loop.stop()

    def close(self) -> None:
        """The object's `close` (or `aclose`), awaited on its loop when it is a coroutine
        function; then the loop stops."""
        try:
            for name in ("close", "aclose"):
                fn = getattr(self._obj, name, None)
                if not callable(fn):
                    continue
                if inspect.iscoroutinefunction(fn):
                    self._loop.run(fn())
                else:
                    fn()
                break
        finally:
            self.stop()


def bridged(obj: Any, methods: Iterable[str]) -> Any:
    """`obj` itself when none of its `methods` is a coroutine function; else `obj` behind an
    `AsyncBridge` (or, when `obj` is a coroutine function itself, a function running it on the
    function's event loop, which `stop_loop` stops)."""
    if inspect.iscoroutinefunction(obj):
        shared = _loop_of(obj)  # a live function given again: the loop of its first run
        loop = shared or LoopThread(getattr(obj, "__name__", "function"))
        call = _sync(obj, loop)
        if shared is None:
            weakref.finalize(call, loop.stop)
        _FUNCTION_LOOPS[call] = loop
        return call
    found = [n for n in methods if inspect.iscoroutinefunction(getattr(obj, n, None))]
    return AsyncBridge(obj, found) if found else obj


def stop_loop(obj: Any) -> None:
    """Stop the event loop `bridged` gave `obj`, if it gave it one."""
    if isinstance(obj, AsyncBridge):
        obj.stop()
    elif (loop := _FUNCTION_LOOPS.get(obj)) is not None:
        loop.stop()
