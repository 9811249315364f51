"""A keyword memory that expands queries with synonyms and reports its ranking before
expansion (`pre_expansion`), as seed 002's query-expansion impact needs. Like
`keyword_memory`, it imports nothing from memgauge."""

from __future__ import annotations

from typing import Any

from keyword_memory import KeywordMemory

SYNONYMS = {
    "coffee": "cafe opens",
    "release": "releases review",
    "frozen": "december",
    "holiday": "december",
}


class ExpandingMemory(KeywordMemory):
    def search(self, query: str, k: int) -> dict[str, Any]:  # type: ignore[override]
        before = super().search(query, k)
        words = query.lower().split()
        expanded = " ".join([*words, *(SYNONYMS[w] for w in words if w in SYNONYMS)])
        return {"hits": super().search(expanded, k), "pre_expansion": [h["id"] for h in before]}


class BadExpansion(KeywordMemory):
    def search(self, query: str, k: int) -> dict[str, Any]:  # type: ignore[override]
        return {"hits": super().search(query, k), "pre_expansion": "m1"}
