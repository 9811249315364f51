"""Memory systems with the mistakes users make, to check each is a recorded failure naming the
contract (docs/contracts.md), never a crash or a silent 0. Keyword-overlap search over what was
ingested; they import nothing from memgauge, as a user's own system would not.

- `PairsMemory`: `search` returns `(id, score)` tuples, as many retrieval libraries do.
- `TextlessMemory`: the quick start's class: hits are `{"id", "score"}`, no `text`.
- `ForgetfulMemory`: `ingest` keeps nothing (mem0 with `infer: true` and a model that returns
  no facts): every search returns no hits, and `dump` says so.
- `BlindMemory`: keeps what it is given but every search finds nothing (a search reading
  another store), and it has no `dump`: only its searches tell.
- `OwnIdsMemory`: keeps what it is given under ids of its own (`own-0`, ...) and its hits
  name those, never an ingested memory's id.
- `ChannelWordMemory`: a hit's `channels` is one name, `"lexical"`, not a list of names.
- `AsyncYieldingMemory`: `async def search` that yields its hits (an asynchronous generator).
- `YieldingMemory`: `search` yields its hits instead of returning a list.
- `NoneIdMemory`, `TextScoreMemory`, `ListMetadataMemory`: a hit's `id` is None (a row that
  lost its key), its `score` a string (`"2.0"`), its `metadata` a list.
- `NoKMemory`: `search(query)` without `k`, as a library's own search may be written.
- `PathMemory`: its class needs an argument (`path`), as a store over a file does.
- `TypeErrorInInit`: its `__init__` takes nothing and fails with a TypeError of its own code.
- `DictsInAResultMemory`: memgauge's `SearchResult` holding dicts, not `Hit`s (the one
  class here that imports memgauge, as a user reaching for its types does).
- `make_class`: a factory that returns the class (`return TextlessMemory`), not an object.
- `NumpyScoreMemory`: scores are NumPy float32 values, as a vector library returns them.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any


class _Keywords:
    def __init__(self) -> None:
        self.texts: dict[str, str] = {}

    def reset(self) -> None:
        self.texts.clear()

    def ingest(self, memories: Any) -> None:
        for m in memories:
            self.texts[m.id] = m.text

    def ranked(self, query: str, k: int) -> list[tuple[str, float]]:
        words = set(query.lower().split())
        scored = [(len(words & set(t.lower().split())), i) for i, t in self.texts.items()]
        scored.sort(reverse=True)
        return [(i, float(s)) for s, i in scored[:k] if s > 0]


class PairsMemory(_Keywords):
    def search(self, query: str, k: int) -> list[tuple[str, float]]:
        return self.ranked(query, k)


class TextlessMemory(_Keywords):
    def search(self, query: str, k: int) -> list[dict[str, Any]]:
        return [{"id": i, "score": s} for i, s in self.ranked(query, k)]


class ForgetfulMemory(_Keywords):
    def ingest(self, memories: Any) -> None:
        pass

    def search(self, query: str, k: int) -> list[dict[str, Any]]:
        return [{"id": i, "text": self.texts[i]} for i, _ in self.ranked(query, k)]

    def dump(self) -> list[dict[str, Any]]:
        return [{"id": i, "text": t} for i, t in self.texts.items()]


class BlindMemory(_Keywords):
    def search(self, query: str, k: int) -> list[dict[str, Any]]:
        return []


class OwnIdsMemory(_Keywords):
    def search(self, query: str, k: int) -> list[dict[str, Any]]:
        own = {i: f"own-{n}" for n, i in enumerate(self.texts)}
        return [{"id": own[i], "text": self.texts[i]} for i, _ in self.ranked(query, k)]


class ChannelWordMemory(_Keywords):
    def search(self, query: str, k: int) -> list[dict[str, Any]]:
        return [
            {"id": i, "text": self.texts[i], "channels": "lexical"}
            for i, _ in self.ranked(query, k)
        ]


class AsyncYieldingMemory(_Keywords):
    async def search(self, query: str, k: int) -> AsyncIterator[dict[str, Any]]:
        for i, _ in self.ranked(query, k):
            yield {"id": i, "text": self.texts[i]}


class YieldingMemory(_Keywords):
    def search(self, query: str, k: int) -> Iterator[dict[str, Any]]:
        for i, _ in self.ranked(query, k):
            yield {"id": i, "text": self.texts[i]}


class NoneIdMemory(_Keywords):
    def search(self, query: str, k: int) -> list[dict[str, Any]]:
        return [{"id": None, "text": self.texts[i]} for i, _ in self.ranked(query, k)]


class TextScoreMemory(_Keywords):
    def search(self, query: str, k: int) -> list[dict[str, Any]]:
        return [{"id": i, "text": self.texts[i], "score": str(s)} for i, s in self.ranked(query, k)]


class ListMetadataMemory(_Keywords):
    def search(self, query: str, k: int) -> list[dict[str, Any]]:
        return [
            {"id": i, "text": self.texts[i], "metadata": ["pinned"]}
            for i, _ in self.ranked(query, k)
        ]


class NumpyScoreMemory(_Keywords):
    def search(self, query: str, k: int) -> list[dict[str, Any]]:
        import numpy as np

        return [
            {"id": i, "text": self.texts[i], "score": np.float32(s)}
            for i, s in self.ranked(query, k)
        ]


class NoKMemory(_Keywords):
    def search(self, query: str) -> list[dict[str, Any]]:
        return [{"id": i, "text": self.texts[i]} for i, _ in self.ranked(query, 10)]


class PathMemory(_Keywords):
    def __init__(self, path: str) -> None:
        super().__init__()
        self.path = path

    def search(self, query: str, k: int) -> list[dict[str, Any]]:
        return [{"id": i, "text": self.texts[i]} for i, _ in self.ranked(query, k)]


class TypeErrorInInit(_Keywords):
    def __init__(self) -> None:
        super().__init__()
        self.size = len(42)  # type: ignore[arg-type]  # the user's own bug

    def search(self, query: str, k: int) -> list[dict[str, Any]]:
        return []


def make_class() -> type:
    return TextlessMemory


class DictsInAResultMemory(_Keywords):
    def search(self, query: str, k: int) -> Any:
        from memgauge.subjects.protocol import SearchResult

        hits = [{"id": i, "text": self.texts[i], "score": s} for i, s in self.ranked(query, k)]
        return SearchResult(hits=hits, latency_ms={"rank": 0.1})  # type: ignore[arg-type]
