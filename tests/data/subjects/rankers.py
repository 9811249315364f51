"""Memory systems whose rankings are set by hand, for paired comparisons with known answers.

Memory `m{i}` holds the word `key{i}`; query text `key{i}` finds it. `Ranker(demote_every=n)`
ranks the memory the query names first, except on every n-th query (by i), where another memory
comes first and the named one second (its RR 0.5 instead of 1). It imports nothing from
memgauge, as a user's own system would not.
"""

from __future__ import annotations

import re
from typing import Any

KEY = re.compile(r"key(\d+)")


class Ranker:
    def __init__(self, demote_every: int = 0) -> None:
        self.demote_every = demote_every
        self.ids: list[str] = []

    def reset(self) -> None:
        self.ids = []

    def ingest(self, memories: list[Any]) -> None:
        self.ids += [m["id"] if isinstance(m, dict) else m.id for m in memories]

    def search(self, query: str, k: int) -> list[dict[str, Any]]:
        found = KEY.search(query)
        if found is None:
            return []
        i = int(found.group(1))
        named = f"m{i}"
        others = [x for x in self.ids if x != named]
        ranked = [named, *others]
        if self.demote_every and i % self.demote_every == 0 and others:
            ranked = [others[0], named, *others[1:]]
        return [{"id": x, "score": 1.0 / (r + 1)} for r, x in enumerate(ranked[:k])]


def perfect() -> Ranker:
    return Ranker(0)


def half_demoted() -> Ranker:
    return Ranker(2)
