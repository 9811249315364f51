"""Subjects that take a little time per call, so a command can be killed mid-run: a keyword
memory, an extractor and a decider. They import nothing from memgauge. SLOW_SUBJECTS_DELAY,
when set, is every call's delay in seconds, whatever the spec says: the test that kills a
slow process resumes its run with 0 (the resume's speed is no part of what it checks)."""

from __future__ import annotations

import os
import time
from typing import Any


class SlowMemory:
    def __init__(self, delay: float = 0.02) -> None:
        self.delay = _delay(delay)
        self.items: list[Any] = []

    def reset(self) -> None:
        self.items = []

    def ingest(self, memories: Any) -> None:
        self.items += list(memories)

    def search(self, query: str, k: int) -> list[dict[str, str]]:
        time.sleep(self.delay)
        words = set(query.lower().split())
        best = sorted(self.items, key=lambda m: (-len(words & set(m.text.lower().split())), m.id))
        return [{"id": m.id, "text": m.text} for m in best[:k]]


class SlowExtractor:
    def __init__(self, delay: float = 0.3) -> None:
        self.delay = _delay(delay)

    def extract(self, conversation: Any, existing_memory: list[str]) -> list[str]:
        time.sleep(self.delay)
        return list(existing_memory) + [t.content for t in conversation if t.role == "user"]


class SlowDecider:
    def __init__(self, delay: float = 0.3) -> None:
        self.delay = _delay(delay)

    def decide(self, existing: list[dict[str, str]], incoming: dict[str, Any]) -> dict[str, Any]:
        time.sleep(self.delay)
        return {"action": "CREATE", "content": incoming.get("content", "")}


def _delay(given: float) -> float:
    return float(os.environ.get("SLOW_SUBJECTS_DELAY", given))
