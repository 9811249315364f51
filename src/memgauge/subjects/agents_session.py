"""The OpenAI Agents SDK's `SQLiteSession` (`pip install 'memgauge[agents]'`) as a recency
baseline: what an agent that keeps only its session history would remember.

`{agents-session: {window: 20}}`: each memory is added to the session as a user message, in
order; a search ignores the query and returns the newest `min(k, window)` items, newest first
(`window: null` keeps the whole session). It is the floor a memory system must beat: a system
whose recall is no better than the last N turns adds nothing over the history an agent already
has. The session lives in a SQLite file of its own (in memory unless `db_path` is given), read
back through the SDK's own `get_items`.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Coroutine, Sequence
from typing import Any, TypeVar

from memgauge.data.models import Memory, SessionContext
from memgauge.errors import UnavailableError, UsageError
from memgauge.subjects.async_bridge import LoopThread
from memgauge.subjects.events import Capabilities
from memgauge.subjects.protocol import Hit, SearchResult

__all__ = ["AgentsSessionSubject"]

T = TypeVar("T")


class AgentsSessionSubject:
    """An Agents SDK session's last `window` items as the memory.

    Args:
        window: the most items a search returns (the newest `min(k, window)`); null: the
            whole session.
        db_path: the SQLite file the SDK's session is kept in; default: in memory.
    """

    capabilities = Capabilities(dump=True, namespaces=True)

    def __init__(self, *, window: int | None = 20, db_path: str | None = None) -> None:
        if window is not None and window < 1:
            raise UsageError(f"agents-session subject: window must be 1 or more, got {window}")
        try:
            from agents import SQLiteSession
        except ImportError:
            raise UnavailableError(
                "the agents-session subject needs the OpenAI Agents SDK:"
                " pip install 'memgauge[agents]'"
            ) from None
        self.window = window
        self.session = SQLiteSession(f"memgauge-{uuid.uuid4().hex[:12]}", db_path or ":memory:")
        self._ids: list[str] = []  # the dataset's ids, in the session's order
        # the SDK's session is async: one private loop in a thread of its own, one call at a
        # time (run_until_complete in the calling thread failed in a thread already running a
        # loop, a notebook's: "Cannot run the event loop while another loop is running")
        self._loop = LoopThread("agents-session")
        self._lock = threading.Lock()

    def _run(self, coro: Coroutine[Any, Any, T]) -> T:
        with self._lock:
            result: T = self._loop.run(coro)
            return result

    @property
    def name(self) -> str:
        """`agents-session`."""
        return "agents-session"

    def reset(self) -> None:
        """Clear the session."""
        self._run(self.session.clear_session())
        self._ids.clear()

    def ingest(self, memories: Sequence[Memory]) -> None:
        """Add each memory to the session as a user message, in order."""
        self._run(self.session.add_items([{"role": "user", "content": m.text} for m in memories]))
        self._ids.extend(m.id for m in memories)

    def flush(self) -> None:
        """The session writes synchronously: nothing to wait for."""

    def search(self, query: str, k: int, *, session: SessionContext | None = None) -> SearchResult:
        """The newest `min(k, window)` items, newest first; the query is not read."""
        t0 = time.perf_counter()
        n = k if self.window is None else min(k, self.window)
        items = self._run(self.session.get_items(limit=n)) if n > 0 else []
        first = len(self._ids) - len(items)  # get_items returns the newest n, oldest first
        hits = [
            Hit(id=self._ids[first + i], text=_text(item), score=None, rank=rank)
            for rank, (i, item) in enumerate(reversed(list(enumerate(items))), 1)
        ]
        return SearchResult(hits, {"total": (time.perf_counter() - t0) * 1000})

    def dump(self) -> list[Memory]:
        """Every item of the session, oldest first."""
        items = self._run(self.session.get_items())
        return [Memory(id=i, text=_text(item)) for i, item in zip(self._ids, items, strict=False)]

    def close(self) -> None:
        """Close the session's database and the loop."""
        self.session.close()
        self._loop.stop()


def _text(item: Any) -> str:
    content = item.get("content", "") if isinstance(item, dict) else ""
    return content if isinstance(content, str) else str(content)
