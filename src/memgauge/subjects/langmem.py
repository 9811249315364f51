"""LangMem (`pip install 'memgauge[langmem]'`) over a LangGraph store, as a memory subject.

`{langmem: {embedder: minilm, namespace: [...]}}`: memories are written with LangMem's own
`create_manage_memory_tool` (action `create`, as an agent would call it) into a LangGraph
`InMemoryStore` whose semantic index embeds with memgauge's embedder (offline by default), and
searched with LangMem's `create_search_memory_tool`, the store's cosine ranking. LangMem keys
each memory by a UUID of its own; the subject keeps the map from those keys back to the
dataset's ids, so hits can be judged.

Each subject works in a namespace of its own, so `reset` deletes only its memories.
"""

from __future__ import annotations

import json
import re
import time
import uuid
from collections.abc import Sequence
from typing import Any

from memgauge.data.models import Memory, SessionContext
from memgauge.errors import SubjectError, UnavailableError
from memgauge.subjects.events import Capabilities, WriteEvent
from memgauge.subjects.protocol import Hit, SearchResult

__all__ = ["LangMemSubject"]

_CREATED = re.compile(r"created memory ([0-9a-f-]{36})")


class LangMemSubject:
    """LangMem's memory tools over a LangGraph `InMemoryStore` with a semantic index.

    Args:
        embedder: the embedder of the store's semantic index, as `--embedder` names one
            (`minilm`, offline, by default; `openai:MODEL`, `st:MODEL`) or its spec.
        namespace: the LangGraph namespace the memories are written to and searched in (a
            list of strings); default: one of its own for each run.
    """

    capabilities = Capabilities(scores=True, write_events=True, dump=True, namespaces=True)

    def __init__(
        self,
        *,
        embedder: str | dict[str, Any] = "minilm",
        namespace: Sequence[str] | None = None,
    ) -> None:
        try:
            from langgraph.store.memory import InMemoryStore
            from langmem import (
                create_manage_memory_tool,
                create_search_memory_tool,
            )
        except ImportError:
            raise UnavailableError(
                "the langmem subject needs LangMem and LangGraph: pip install 'memgauge[langmem]'"
            ) from None
        from memgauge.embed import load_embedder

        self._embedder = load_embedder(embedder)
        embed = self._embedder.embed

        def embed_texts(texts: Sequence[str]) -> list[list[float]]:
            return [list(map(float, row)) for row in embed(list(texts))]

        self.store = InMemoryStore(index={"dims": self._embedder.dim, "embed": embed_texts})
        self.namespace = tuple(namespace or ("memgauge", uuid.uuid4().hex[:12]))
        self._manage = create_manage_memory_tool(namespace=self.namespace, store=self.store)
        self._search = create_search_memory_tool(namespace=self.namespace, store=self.store)
        self._ids: dict[str, str] = {}  # LangMem's key -> the dataset's id
        self.events: list[WriteEvent] = []

    @property
    def name(self) -> str:
        """`langmem`."""
        return "langmem"

    def reset(self) -> None:
        """Delete this subject's memories (LangMem's `delete` action, one per memory)."""
        for key in list(self._ids):
            self._manage.invoke({"action": "delete", "id": key})
            self.events.append(WriteEvent("DELETE", self._ids.pop(key), source="returned"))
        for item in self.store.search(self.namespace, limit=100_000):  # written by others
            self.store.delete(self.namespace, item.key)

    def ingest(self, memories: Sequence[Memory]) -> None:
        """LangMem's manage tool, action `create`, once per memory."""
        for m in memories:
            said = str(self._manage.invoke({"content": m.text, "action": "create"}))
            found = _CREATED.search(said)
            if found is None:
                raise SubjectError(f"langmem: the manage tool answered {said[:200]!r}")
            self._ids[found.group(1)] = m.id
            self.events.append(WriteEvent("ADD", m.id, text=m.text, source="returned"))

    def flush(self) -> None:
        """The store indexes on write: nothing to wait for."""

    def search(self, query: str, k: int, *, session: SessionContext | None = None) -> SearchResult:
        """LangMem's search tool: the store's semantic ranking, best first."""
        t0 = time.perf_counter()
        raw = self._search.invoke({"query": query, "limit": k})
        try:
            items = json.loads(raw) if isinstance(raw, str) else raw
        except json.JSONDecodeError:
            raise SubjectError(f"langmem: the search tool answered {str(raw)[:200]!r}") from None
        hits = []
        for rank, item in enumerate(items[:k], 1):
            key = str(item["key"])
            content = (item.get("value") or {}).get("content")
            score = item.get("score")
            hits.append(
                Hit(
                    id=self._ids.get(key, key),
                    text=content if isinstance(content, str) else json.dumps(content),
                    score=float(score) if isinstance(score, int | float) else None,
                    rank=rank,
                    metadata={"langmem_key": key},
                )
            )
        return SearchResult(hits, {"total": (time.perf_counter() - t0) * 1000})

    def dump(self) -> list[Memory]:
        """Every memory in this subject's namespace."""
        return [
            Memory(id=self._ids.get(item.key, item.key), text=str(item.value.get("content", "")))
            for item in self.store.search(self.namespace, limit=100_000)
        ]
