"""Memory systems whose rankings are set by hand, for paired comparisons with known answers.

Memory `m{i}` holds the word `key{i}` (text "the fact called key{i}", returned with each hit);
query text `key{i}` finds it. `Ranker(demote_every=n)`
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
        return [
            {"id": x, "text": f"the fact called key{x[1:]}", "score": 1.0 / (r + 1)}
            for r, x in enumerate(ranked[:k])
        ]


def perfect() -> Ranker:
    return Ranker(0)


def half_demoted() -> Ranker:
    return Ranker(2)


class SessionDedup(Ranker):
    """A `Ranker` with session dedup: a result it returned earlier in the same session is
    filtered out of later searches and reported as `dedup_filtered` (with its text)."""

    def __init__(self) -> None:
        super().__init__(0)
        self.returned: dict[str, set[str]] = {}

    def search(self, query: str, k: int, session: Any = None) -> dict[str, Any]:
        hits = super().search(query, k)
        if session is None:
            return {"hits": hits}
        seen = self.returned.setdefault(session.session_id, set())
        kept = [h for h in hits if h["id"] not in seen]
        dropped = [h for h in hits if h["id"] in seen]
        seen.update(h["id"] for h in kept)
        return {"hits": kept, "dedup_filtered": dropped}


def session_dedup() -> SessionDedup:
    return SessionDedup()
