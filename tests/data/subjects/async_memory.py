"""KeywordMemory written with `async def`, as an asyncio memory system is (Graphiti, mem0's
AsyncMemory): it opens a "connection" bound to the event loop of its first call (as an
`httpx.AsyncClient` or an asyncpg pool is), and a call on another loop fails as theirs do. It
records how many of its searches ran at once. It imports nothing from memgauge."""

from __future__ import annotations

import asyncio
from typing import Any, ClassVar

from keyword_memory import KeywordMemory


class _Connection:
    def __init__(self) -> None:
        self.loop = asyncio.get_running_loop()
        self.lock = asyncio.Lock()

    def check(self) -> None:
        if asyncio.get_running_loop() is not self.loop:
            raise RuntimeError("this connection is attached to a different event loop")


class AsyncMemory:
    #: every instance made, for tests that look at what a run did with its object
    made: ClassVar[list[AsyncMemory]] = []

    def __init__(self) -> None:
        AsyncMemory.made.append(self)
        self._sync = KeywordMemory()
        self._conn: _Connection | None = None
        self.in_flight = 0
        self.most_in_flight = 0
        self.closed = False

    def _connection(self) -> _Connection:
        if self._conn is None:
            self._conn = _Connection()
        self._conn.check()
        return self._conn

    async def reset(self) -> None:
        async with self._connection().lock:
            self._sync.reset()

    async def ingest(self, memories: list[Any]) -> None:
        async with self._connection().lock:
            await asyncio.sleep(0)
            self._sync.ingest(memories)

    async def search(self, query: str, k: int) -> list[dict[str, Any]]:
        self._connection()
        self.in_flight += 1
        self.most_in_flight = max(self.most_in_flight, self.in_flight)
        try:
            await asyncio.sleep(0.005)
            if "[fail]" in query:
                raise RuntimeError("search failed on purpose")
            return self._sync.search(query, k)
        finally:
            self.in_flight -= 1

    async def dump(self) -> list[dict[str, str]]:
        self._connection()
        return self._sync.dump()

    async def aclose(self) -> None:
        self._connection()
        self.closed = True


class AsyncAgent:
    """An agent whose `answer` is a coroutine, on the loop of its first call."""

    def __init__(self) -> None:
        self._loop: asyncio.AbstractEventLoop | None = None

    async def answer(self, question: str, history: list[Any] | None = None) -> str:
        loop = asyncio.get_running_loop()
        if self._loop is None:
            self._loop = loop
        if loop is not self._loop:
            raise RuntimeError("this agent is attached to a different event loop")
        await asyncio.sleep(0)
        return "That was never mentioned in our conversations."
