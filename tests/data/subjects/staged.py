"""A memory system that reports fixed stage latencies (as a production memory times its own
session boost, causal traversal and extraction hook), for benchmark reports with known
numbers: `boosted()` reports `boost` 3 ms and `causal` 25 ms per search, `baseline()` neither.
"""

from __future__ import annotations

from typing import Any

from memgauge.subjects.protocol import Hit, SearchResult


class Staged:
    def __init__(self, stages: dict[str, float]) -> None:
        self.stages = stages
        self.ids: list[str] = []

    def reset(self) -> None:
        self.ids = []

    def ingest(self, memories: list[Any]) -> None:
        self.ids += [m["id"] if isinstance(m, dict) else m.id for m in memories]

    def search(self, query: str, k: int) -> SearchResult:
        hits = [Hit(id=i, text="", score=1.0 / r, rank=r) for r, i in enumerate(self.ids[:k], 1)]
        return SearchResult(hits, dict(self.stages))


def boosted() -> Staged:
    return Staged({"boost": 3.0, "causal": 25.0})


def baseline() -> Staged:
    return Staged({})
