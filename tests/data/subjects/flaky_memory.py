"""A keyword memory whose search fails on the queries that ask it to (their text holds
`[fail]`): one failed search beside working ones, for tests that count failures. It imports
nothing from memgauge."""

from __future__ import annotations

from typing import Any

from keyword_memory import KeywordMemory


class FlakyMemory(KeywordMemory):
    def search(self, query: str, k: int) -> list[dict[str, Any]]:
        if "[fail]" in query:
            raise RuntimeError("search failed on purpose")
        return super().search(query, k)
