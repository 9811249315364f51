"""mem0 (`pip install 'memgauge[mem0]'`) as a memory subject, telemetry off.

`{mem0: {config: {...}, infer: false}}`: `config` is mem0's own `Memory.from_config` dict
(vector store, LLM, embedder); without one, mem0 runs on a local Qdrant in a temporary directory
with its default OpenAI LLM and embedder (reached through `OPENAI_BASE_URL` / `OPENAI_API_KEY`).

- `infer: false` (default) stores each memory as given, so hits map back to the dataset's ids
  (kept in mem0's metadata as `memgauge_id`): this is how mem0's search is evaluated.
- `infer: true` lets mem0's LLM extract facts from each memory, as mem0 does in production; the
  write events it returns are recorded (`source: returned`). mem0 2.x only ever reports ADD;
  1.x reports ADD / UPDATE / DELETE / NONE (NOOP).

Each subject works under a user id of its own, so `reset` deletes only its memories, and
closing deletes them from a store `config` names (a `user_id` given in the spec is the
application's: its memories stay). Both the
1.x (`limit=`, `user_id=`) and 2.x (`top_k=`, `filters=`) call styles are supported; 2.x's
default score threshold is set to 0 so that k hits come back when k exist.
"""

from __future__ import annotations

import inspect
import os
import shutil
import sys
import tempfile
import time
import uuid
from collections.abc import Mapping, Sequence
from typing import Any

from memgauge.data.models import Memory, SessionContext
from memgauge.errors import SubjectError, UnavailableError
from memgauge.subjects.events import Capabilities, EventKind, WriteEvent
from memgauge.subjects.protocol import Hit, SearchResult

__all__ = ["Mem0Subject"]

_EVENTS: dict[str, EventKind] = {
    "ADD": "ADD",
    "UPDATE": "UPDATE",
    "DELETE": "DELETE",
    "NONE": "NOOP",
}


#: the most memories one `get_all` lists
_LISTED = 100_000


def _results(raw: Any) -> list[Mapping[str, Any]]:
    if isinstance(raw, Mapping):
        raw = raw.get("results", [])
    if not isinstance(raw, list):
        raise SubjectError(f"mem0 returned {type(raw).__name__}, expected results")
    return raw


def _telemetry_off() -> None:
    """mem0 reads MEM0_TELEMETRY once, when first imported: if something imported it before
    memgauge set the variable, switch it off where it was read."""
    for module in ("mem0.memory.telemetry", "mem0.memory.main"):
        mod = sys.modules.get(module)
        if mod is not None and hasattr(mod, "MEM0_TELEMETRY"):
            setattr(mod, "MEM0_TELEMETRY", False)  # noqa: B010 - a module attribute mypy cannot see


class Mem0Subject:
    """A mem0 `Memory` behind the memory-system protocol.

    Args:
        config: mem0's own `Memory.from_config` dict (vector_store, llm, embedder,
            history_db_path), as your application passes it; default: a local Qdrant in a
            temporary directory with mem0's default OpenAI LLM and embedder (through
            OPENAI_BASE_URL / OPENAI_API_KEY).
        infer: false (default) stores each memory as given, so hits map back to the
            dataset's ids; true lets mem0's LLM extract facts from each memory, as mem0 does
            in production, and records the write events it returns.
        user_id: the mem0 user whose memories are written, searched, dumped and deleted by
            reset; default: a new id for each run, whose memories are deleted when the run
            ends. Name your application's user to search a
            live mem0 as it stands (`evaluate --no-ingest`, `logs export --dump-from`).
        threshold: mem0 2.x's minimum score of a hit (0: k hits come back when k exist).
    """

    capabilities = Capabilities(scores=True, write_events=True, dump=True, namespaces=True)

    def __init__(
        self,
        config: Mapping[str, Any] | None = None,
        *,
        infer: bool = False,
        user_id: str | None = None,
        threshold: float = 0.0,
    ) -> None:
        # mem0 reads this when it is imported: no usage data leaves the machine
        os.environ["MEM0_TELEMETRY"] = "False"
        try:
            from mem0 import Memory as Mem0Memory
        except ImportError:
            raise UnavailableError(
                "the mem0 subject needs mem0ai: pip install 'memgauge[mem0]'"
            ) from None
        _telemetry_off()
        self._tmp: str | None = None
        if config is None:
            self._tmp = tempfile.mkdtemp(prefix="memgauge-mem0-")
            config = {
                "vector_store": {
                    "provider": "qdrant",
                    "config": {"path": os.path.join(self._tmp, "qdrant"), "on_disk": True},
                },
                "history_db_path": os.path.join(self._tmp, "history.db"),
            }
        try:
            self.memory = Mem0Memory.from_config(dict(config))
        except Exception as exc:
            # the temporary store made for it goes with the subject that could not start
            if self._tmp is not None:
                shutil.rmtree(self._tmp, ignore_errors=True)
                self._tmp = None
            raise SubjectError(f"mem0 could not start: {type(exc).__name__}: {exc}") from None
        self.infer = infer
        self.threshold = threshold
        # a user made for this subject is its own to delete when it closes; a named one is the
        # application's, whose memories stay
        self._own_user = user_id is None
        self.user_id = user_id or f"memgauge-{uuid.uuid4().hex[:12]}"
        self.events: list[WriteEvent] = []
        self._v2 = "top_k" in inspect.signature(self.memory.search).parameters

    @property
    def name(self) -> str:
        """`mem0`."""
        return "mem0"

    def reset(self) -> None:
        """Delete this subject's memories."""
        self._delete_own()
        self.events.clear()

    def _stored(self) -> list[Mapping[str, Any]]:
        """This subject's user's memories, as mem0 lists them (at most `_LISTED`)."""
        if self._v2:
            raw = self.memory.get_all(filters={"user_id": self.user_id}, top_k=_LISTED)
        else:
            raw = self.memory.get_all(user_id=self.user_id, limit=_LISTED)
        return _results(raw)

    def _delete_own(self) -> None:
        """Delete this subject's user's memories one by one. Not mem0's `delete_all`: in
        mem0ai 1.0.0 to 1.0.5 (which `mem0ai>=1.0` installs) it ends by resetting the whole
        collection, every other user's memories in a store `config` names with it."""
        while True:
            ids = [str(r["id"]) for r in self._stored()]
            for memory_id in ids:
                self.memory.delete(memory_id)
            if len(ids) < _LISTED:
                return

    def ingest(self, memories: Sequence[Memory]) -> None:
        """`add` each memory as a user message; record the events mem0 returns."""
        for m in memories:
            raw = self.memory.add(
                [{"role": "user", "content": m.text}],
                user_id=self.user_id,
                metadata={"memgauge_id": m.id},
                infer=self.infer,
            )
            for r in _results(raw):
                kind = _EVENTS.get(str(r.get("event", "ADD")).upper())
                if kind is None:
                    continue
                self.events.append(
                    WriteEvent(
                        kind,
                        str(r.get("id")) if r.get("id") is not None else None,
                        text=r.get("memory"),
                        previous_text=r.get("previous_memory"),
                        source="returned",
                        detail={"from": m.id},
                    )
                )

    def flush(self) -> None:
        """mem0 writes synchronously: nothing to wait for."""

    def search(self, query: str, k: int, *, session: SessionContext | None = None) -> SearchResult:
        """mem0's search, hits mapped back to dataset ids where mem0 kept them."""
        t0 = time.perf_counter()
        if self._v2:
            raw = self.memory.search(
                query, top_k=k, filters={"user_id": self.user_id}, threshold=self.threshold
            )
        else:
            raw = self.memory.search(query, user_id=self.user_id, limit=k)
        hits = [
            Hit(
                id=str((r.get("metadata") or {}).get("memgauge_id") or r["id"]),
                text=str(r.get("memory", "")),
                score=float(r["score"]) if isinstance(r.get("score"), int | float) else None,
                rank=rank,
                metadata={"mem0_id": r.get("id")},
            )
            for rank, r in enumerate(_results(raw)[:k], 1)
        ]
        return SearchResult(hits, {"total": (time.perf_counter() - t0) * 1000})

    def dump(self) -> list[Memory]:
        """Every memory of this subject."""
        out = []
        for r in self._stored():
            source = (r.get("metadata") or {}).get("memgauge_id")
            # inferred facts are mem0's own memories (several may come from one source)
            mid = r["id"] if self.infer or not source else source
            out.append(
                Memory(id=str(mid), text=str(r.get("memory", "")), metadata={"from": source})
            )
        return out

    def close(self) -> None:
        """Delete the memories of the user made for this subject from a store `config` names
        (each run would otherwise leave its whole dataset there, under a user nobody reads
        again), release the vector store and remove the temporary directory, if one was made.
        A `user_id` given in the spec keeps its memories."""
        left: Exception | None = None
        if self._own_user and self._tmp is None:
            self._own_user = False  # once, however often close is called
            try:
                self._delete_own()
            except Exception as exc:
                left = exc
        client = getattr(getattr(self.memory, "vector_store", None), "client", None)
        close = getattr(client, "close", None)
        if callable(close):
            close()
        if self._tmp is not None:
            shutil.rmtree(self._tmp, ignore_errors=True)
            self._tmp = None
        if left is not None:
            raise SubjectError(
                f"mem0 could not delete the memories of this run's user {self.user_id} from "
                f"its store: {type(left).__name__}: {left}"
            )
