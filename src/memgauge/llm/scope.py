"""Which run an LLM call is made for: a `CallScope` per run, so that runs going at once in one
process (best-of-n candidates of `memgauge optimize`) each account for and cancel only their
own calls.

The scope travels in a context variable. The engine runs each item's work inside its run's
scope (`CallScope.bind`), and `run_sync` hands the calling thread's context to the background
LLM loop (`asyncio.run_coroutine_threadsafe` schedules the call in a copy of it), so the
client's usage counting, in the loop, still sees the run it works for. A usage listener given
a scope hears only that scope's calls; `CallScope.cancel` cancels only that scope's calls in
flight and refuses its new ones.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Future
from contextvars import ContextVar
from typing import Any, ParamSpec, TypeVar

__all__ = ["CallScope", "current_scope"]

P = ParamSpec("P")
T = TypeVar("T")

_CURRENT: ContextVar[CallScope | None] = ContextVar("memgauge_llm_scope", default=None)


class CallScope:
    """The LLM calls made for one run (or one optimizer's own proposals)."""

    def __init__(self, name: str = "") -> None:
        self.name = name
        self.cancelled = threading.Event()
        self._pending: set[Future[Any]] = set()
        self._lock = threading.Lock()

    def bind(self, fn: Callable[P, T]) -> Callable[P, T]:
        """`fn`, run inside this scope whichever thread calls it."""

        def scoped(*args: P.args, **kwargs: P.kwargs) -> T:
            token = _CURRENT.set(self)
            try:
                return fn(*args, **kwargs)
            finally:
                _CURRENT.reset(token)

        return scoped

    def add(self, future: Future[Any]) -> None:
        """A call of this scope waiting for its answer."""
        with self._lock:
            self._pending.add(future)

    def discard(self, future: Future[Any]) -> None:
        """The call answered (or failed)."""
        with self._lock:
            self._pending.discard(future)

    @property
    def waiting(self) -> int:
        """How many of this scope's calls are waiting for their answers."""
        with self._lock:
            return len(self._pending)

    def cancel(self) -> int:
        """Cancel this scope's calls in flight and refuse new ones; how many were cancelled."""
        self.cancelled.set()
        with self._lock:
            futures = list(self._pending)
        return sum(f.cancel() for f in futures)


def current_scope() -> CallScope | None:
    """The scope of the calling context (None: no run's)."""
    return _CURRENT.get()
