"""A process-wide setting held while any context is inside: set by the first to enter, undone
by the last to leave (a setting restored per context would be undone under the others)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Generic, TypeVar

__all__ = ["SharedSetting"]

T = TypeVar("T")


class SharedSetting(Generic[T]):
    """`with setting():` holds it; `apply()` sets it and returns what `undo` takes back."""

    def __init__(self, apply: Callable[[], T], undo: Callable[[T], None]) -> None:
        self._apply, self._undo = apply, undo
        self._lock = threading.Lock()
        #: contexts inside now, and what the first of them set
        self._depth = 0
        self._held: list[T] = []

    @contextmanager
    def __call__(self) -> Iterator[None]:
        with self._lock:
            if self._depth == 0:
                self._held.append(self._apply())
            self._depth += 1
        try:
            yield
        finally:
            with self._lock:
                self._depth -= 1
                if self._depth == 0:
                    self._undo(self._held.pop())
