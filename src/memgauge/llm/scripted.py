"""A scripted in-process LLM client for unit tests: no sockets, deterministic.

Replies come from a list (in order) and then from a rule `request -> str`; an `LLMError` in
the list is raised instead of answered. Every request is kept in `requests`.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Iterable

from memgauge.errors import LLMError
from memgauge.llm.types import ChatRequest, ChatResponse, Usage

__all__ = ["ScriptedClient"]


class ScriptedClient:
    """An `LLMClient` whose answers are written by the test."""

    def __init__(
        self,
        replies: Iterable[str | LLMError] = (),
        *,
        rule: Callable[[ChatRequest], str] | None = None,
        model: str = "scripted",
        structured: str = "json_schema",
    ) -> None:
        self._replies: deque[str | LLMError] = deque(replies)
        self._rule = rule
        self._model = model
        self.structured = structured
        self.requests: list[ChatRequest] = []
        self._lock = threading.Lock()

    @property
    def model(self) -> str:
        """The model id it answers as."""
        return self._model

    def complete(self, request: ChatRequest) -> ChatResponse:
        """The next scripted reply (or the rule's)."""
        with self._lock:
            self.requests.append(request)
            nxt = self._replies.popleft() if self._replies else None
        if isinstance(nxt, LLMError):
            raise nxt
        if nxt is None:
            if self._rule is None:
                raise LLMError("bad_response", "the scripted client ran out of replies")
            nxt = self._rule(request)
        return ChatResponse(
            content=nxt,
            model=request.model or self._model,
            usage=Usage(sum(len(m.content) for m in request.messages) // 4, len(nxt) // 4),
        )

    async def acomplete(self, request: ChatRequest) -> ChatResponse:
        """Same as `complete`."""
        return self.complete(request)
