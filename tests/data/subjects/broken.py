"""A subject whose every call raises: a memory, an agent, an extractor and a decider in one, so
each evaluating command can be pointed at a dead subject. It imports nothing from memgauge."""

from __future__ import annotations

from typing import Any


class Broken:
    def reset(self) -> None:
        pass

    def ingest(self, memories: Any) -> None:
        pass

    def search(self, query: str, k: int) -> Any:
        raise RuntimeError("search is down")

    def answer(self, question: str, history: Any = None) -> str:
        raise RuntimeError("the agent is down")

    def extract(self, conversation: Any, existing_memory: Any) -> Any:
        raise RuntimeError("the extractor is down")

    def decide(self, existing: Any, incoming: Any) -> Any:
        raise RuntimeError("the decider is down")


class Unbuildable:
    """A subject whose constructor raises, as a factory that cannot open its index does."""

    def __init__(self) -> None:
        raise ValueError("no such index: prod")
