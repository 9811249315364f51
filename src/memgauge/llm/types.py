"""What goes into an LLM call and what comes out, and the `LLMClient` protocol.

Plain frozen dataclasses, not pydantic models: a large evaluation makes tens of thousands of
calls and these sit on the hot path. Requests are pure data, so they hash into the cache key
(`llm.cache.request_key`) and replay exactly.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

__all__ = ["ChatRequest", "ChatResponse", "LLMClient", "Message", "Usage"]


@dataclass(frozen=True, slots=True)
class Message:
    """One chat message."""

    role: str
    content: str

    def as_dict(self) -> dict[str, str]:
        """The wire shape `{"role": ..., "content": ...}`."""
        return {"role": self.role, "content": self.content}


@dataclass(frozen=True, slots=True)
class ChatRequest:
    """One chat completion request.

    Attributes:
        messages: the conversation, system message first if any.
        model: the model id; None means the client's configured model.
        temperature: sampling temperature (judges default to 0).
        max_tokens: completion budget, None for the provider's default.
        response_format: OpenAI's `response_format` (`{"type": "json_object"}` or a json_schema
            object), or None for free text.
        seed: a provider seed where supported.
        repeat: the repeat index: re-asking the same question k times (judge variance) makes k
            distinct cache entries, so each replays exactly.
    """

    messages: tuple[Message, ...]
    model: str | None = None
    temperature: float = 0.0
    max_tokens: int | None = None
    response_format: Mapping[str, Any] | None = None
    seed: int | None = None
    repeat: int = 0

    @classmethod
    def of(cls, messages: Sequence[Message | Mapping[str, str]], **kw: Any) -> ChatRequest:
        """Build from messages given as `Message`s or `{"role", "content"}` mappings."""
        msgs = tuple(
            m if isinstance(m, Message) else Message(str(m["role"]), str(m["content"]))
            for m in messages
        )
        return cls(messages=msgs, **kw)


@dataclass(frozen=True, slots=True)
class Usage:
    """Tokens of one call (zero when the provider did not say)."""

    prompt_tokens: int = 0
    completion_tokens: int = 0


@dataclass(frozen=True, slots=True)
class ChatResponse:
    """One completion.

    Attributes:
        content: the assistant's text.
        model: the model that answered.
        usage: tokens spent.
        attempts: HTTP requests made for it (1 when the first succeeded; 0 from the cache).
        latency_ms: wall time of the successful request.
        cached: served from the response cache.
        finish_reason: the provider's finish reason (`stop`, `length`, ...).
        adapted: how the request was reworded for a model that rejected a parameter
            (`no_temperature`, `max_completion_tokens`; see `llm.openai`); empty when sent as
            asked.
    """

    content: str
    model: str
    usage: Usage = field(default_factory=Usage)
    attempts: int = 1
    latency_ms: float = 0.0
    cached: bool = False
    finish_reason: str | None = None
    adapted: tuple[str, ...] = ()


@runtime_checkable
class LLMClient(Protocol):
    """Something that completes chats. Failures raise `memgauge.errors.LLMError`."""

    @property
    def model(self) -> str:
        """The default model id."""
        ...

    async def acomplete(self, request: ChatRequest) -> ChatResponse:
        """Complete `request` on the running event loop."""
        ...

    def complete(self, request: ChatRequest) -> ChatResponse:
        """Complete `request` from synchronous code (any thread)."""
        ...
