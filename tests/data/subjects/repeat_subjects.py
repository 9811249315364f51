"""Subjects for repeat tests (`repeat: N`): one that answers at random, one whose rankings
change from one ask to the next. They import nothing from memgauge, as a user's would not."""

from __future__ import annotations

import random
import threading
from typing import Any


class CoinAgent:
    """Answers the port half of the time, at random: a nondeterministic subject. With `seed`
    it always answers it, as a subject at a fixed seed should."""

    def __init__(self, seed: int | None = None, calls_file: str | None = None) -> None:
        self.rng = random.Random()
        self.seeded = seed is not None
        self.calls_file = calls_file

    def answer(self, question: str) -> str:
        if self.calls_file:
            with open(self.calls_file, "a", encoding="utf-8") as f:
                f.write(question + "\n")
        if self.seeded:
            return "port 8080"
        return "port 8080" if self.rng.random() < 0.5 else "no idea"


class FlipMemory:
    """A memory whose ranking of a query's two best matches swaps on every second search of
    it: searched twice, a query's rankings are [a, b, ...] and [b, a, ...]."""

    def __init__(self) -> None:
        self.memories: list[dict[str, Any]] = []
        self.asked: dict[str, int] = {}
        self.lock = threading.Lock()

    def reset(self) -> None:
        self.memories = []
        self.asked = {}

    def ingest(self, memories: list[Any]) -> None:
        self.memories += [{"id": m.id, "text": m.text} for m in memories]

    def search(self, query: str, k: int) -> list[dict[str, Any]]:
        words = set(query.lower().split())
        ranked = sorted(
            self.memories,
            key=lambda m: (-len(words & set(m["text"].lower().split())), m["id"]),
        )
        with self.lock:
            n = self.asked.get(query, 0)
            self.asked[query] = n + 1
        ids = [m["id"] for m in ranked[:k]]
        if n % 2 == 1 and len(ids) >= 2:
            ids[0], ids[1] = ids[1], ids[0]
        return [{"id": i} for i in ids]


class FlakyAgent:
    """Fails some repeats and answers the others differently, the same way on every run: the
    n-th ask of a question fails when n plus the sum of its characters' codes is a multiple of 4,
    and answers the port on even asks. Of three repeats, an item then loses one or none."""

    def __init__(self) -> None:
        self.asked: dict[str, int] = {}
        self.lock = threading.Lock()

    def answer(self, question: str) -> str:
        with self.lock:
            n = self.asked.get(question, 0)
            self.asked[question] = n + 1
        if (n + sum(map(ord, question))) % 4 == 0:
            raise RuntimeError(f"flaky: ask {n} of {question!r}")
        return "port 8080" if n % 2 == 0 else "no idea"


class LosingAgent:
    """Always fails `question 0`, fails every ask of `question 1` after its first, and
    answers the port on every other question: of three repeats, one item keeps none, one item
    keeps one, the rest keep all three."""

    def __init__(self) -> None:
        self.asked: dict[str, int] = {}
        self.lock = threading.Lock()

    def answer(self, question: str) -> str:
        with self.lock:
            n = self.asked.get(question, 0)
            self.asked[question] = n + 1
        if question.startswith("question 0") or (question.startswith("question 1") and n):
            raise RuntimeError(f"losing: ask {n} of {question!r}")
        return "port 8080" if n % 2 == 0 else "no idea"
