"""The two subject protocols, memory system and agent, and what their calls return."""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from types import CoroutineType
from typing import Any, Protocol, runtime_checkable

from memgauge.data.models import Memory, SessionContext, Turn

__all__ = ["Agent", "Answer", "Hit", "MemorySystem", "SearchResult", "close_subject"]


@dataclass(frozen=True, slots=True)
class Hit:
    """One ranked search hit.

    Attributes:
        id: the memory id.
        text: the memory text as returned.
        score: the system's score, or None when it gives none.
        rank: 1-based rank in the returned list.
        channels: the retrieval channels that produced the hit (`lexical`, `dense`, ...).
        channel_ranks: the hit's 1-based rank inside each channel's candidate list.
        metadata: anything else the system returned.
    """

    id: str
    text: str
    score: float | None
    rank: int
    channels: tuple[str, ...] = ()
    channel_ranks: dict[str, int] = field(default_factory=dict)
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class SearchResult:
    """The ranked hits of one search and how long each stage took, in milliseconds.

    Attributes:
        hits: the ranked hits, best first.
        latency_ms: milliseconds per stage.
        pre_expansion: for a system that expands queries (synonyms, rewrites, HyDE...), the
            memory ids the same search ranked before expansion, best first: memgauge then
            reports the expansion's impact (seed 002 section 3.2). None: no expansion, or not
            reported. Over HTTP and JSON lines it is the response's `pre_expansion` list (ids,
            or hits with an `id`) beside `hits`.
        dedup_filtered: for a system that deduplicates a session's results, the results its
            dedup filtered out of this search (hits: their text counts the tokens saved, seed
            002's dedup token savings); None: no dedup, or not reported. Over HTTP and JSON
            lines, the response's `dedup_filtered` list beside `hits`.
    """

    hits: list[Hit]
    latency_ms: dict[str, float] = field(default_factory=dict)
    pre_expansion: tuple[str, ...] | None = None
    dedup_filtered: tuple[Hit, ...] | None = None


#: memories per `ingest` call while a run fills a memory (`runs.work.fill_memory`): small
#: enough that an ingest bar moves (and gives an ETA) through a long embedding, large enough
#: that batching still pays
INGEST_BATCH = 512


@runtime_checkable
class MemorySystem(Protocol):
    """A memory system under test: reset a namespace, ingest, flush, search, dump."""

    @property
    def name(self) -> str:
        """A short label for reports (e.g. `reference-hybrid`)."""
        ...

    def reset(self) -> None:
        """Forget everything in this system's namespace."""
        ...

    def ingest(self, memories: Sequence[Memory]) -> None:
        """Add `memories` to what is stored (ids are the dataset's, so hits can be judged).

        Called one or more times after `reset`: memgauge ingests a corpus in batches of
        `INGEST_BATCH` (512), so an ingest must add, never replace."""
        ...

    def flush(self) -> None:
        """Block until everything ingested is searchable."""
        ...

    def search(self, query: str, k: int, *, session: SessionContext | None = None) -> SearchResult:
        """Return up to `k` hits, best first."""
        ...

    def dump(self) -> list[Memory]:
        """Every stored memory."""
        ...


@dataclass(frozen=True, slots=True)
class Answer:
    """An agent's answer to one question, how long each stage took, and anything else it said."""

    text: str
    latency_ms: dict[str, float] = field(default_factory=dict)
    metadata: dict[str, Any] = field(default_factory=dict)


@runtime_checkable
class Agent(Protocol):
    """An agent under test: answers a question, from a given history or from its own memory."""

    @property
    def name(self) -> str:
        """A short label for reports."""
        ...

    def answer(self, question: str, *, history: Sequence[Turn] | None = None) -> Answer:
        """Answer `question`; `history` is the conversation so far when the task gives one."""
        ...


def close_subject(subject: object) -> None:
    """Close a subject that holds something open (a connection, a process, a client). `close`
    is no part of either protocol: a subject without one (a user's object behind `python:`) has
    nothing to close and is left as it is."""
    close = getattr(subject, "close", None)
    if callable(close):
        done = close()
        if isinstance(done, CoroutineType):
            # an `async def close` of an object whose other methods are plain (those with
            # `async def` methods are closed on their own loop: `async_bridge`): awaited, not
            # dropped as a coroutine never awaited, with what it should have closed left open
            import asyncio  # here: a run whose subjects close plainly never needs it

            try:
                asyncio.get_running_loop()
            except RuntimeError:
                asyncio.run(done)
            else:
                # called from code running in a loop (a notebook's cell): asyncio.run refuses to
                # start a second loop in this thread, and the coroutine was dropped unawaited
                with ThreadPoolExecutor(1, thread_name_prefix="memgauge-close") as closer:
                    closer.submit(asyncio.run, done).result()
