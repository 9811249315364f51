"""Response caching: re-running a suite costs nothing; `--cache-only` replays a run exactly.

The key is a SHA-256 of the canonical JSON of (model, messages, temperature, max_tokens,
response_format, seed, repeat index). The repeat index keeps k deliberate re-asks of one
question (judge variance) apart, so each replays its own answer. Modes:

- `use` (default): answer from the cache when it can, else call and store;
- `refresh`: always call, store the new answer;
- `only`: never call; a miss raises `CacheMissError` (a replay that needs the network is
  not a replay);
- `off`: no cache.

Identical requests in flight at the same time are made once (single flight): two items whose
judge prompts are the same get the same verdict in the run, exactly as a replay will give
them, and the provider is paid once.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from dataclasses import asdict, replace
from typing import Any, Literal, Protocol

from memgauge.errors import CacheMissError, UsageError
from memgauge.llm._loop import run_sync
from memgauge.llm.types import ChatRequest, ChatResponse, LLMClient, Usage
from memgauge.llm.usage import UsageMeter

__all__ = ["CacheMode", "CachingClient", "ResponseCache", "request_key"]

CacheMode = Literal["use", "refresh", "only", "off"]
CACHE_MODES: tuple[str, ...] = ("use", "refresh", "only", "off")


class ResponseCache(Protocol):
    """Where cached responses live (`memgauge.store.llm_cache.SQLiteResponseCache`)."""

    def get(self, key: str) -> dict[str, Any] | None:
        """The stored response, or None."""
        ...

    def put(self, key: str, model: str, response: dict[str, Any]) -> None:
        """Store a response."""
        ...


def request_key(model: str, request: ChatRequest) -> str:
    """The cache key of `request` sent to `model`."""
    canonical = {
        "model": model,
        "messages": [[m.role, m.content] for m in request.messages],
        "temperature": request.temperature,
        "max_tokens": request.max_tokens,
        "response_format": request.response_format,
        "seed": request.seed,
        "repeat": request.repeat,
    }
    data = json.dumps(canonical, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(data.encode("utf-8")).hexdigest()


def _to_json(response: ChatResponse) -> dict[str, Any]:
    d = asdict(response)
    d.pop("cached", None)
    return d


def _from_json(d: dict[str, Any]) -> ChatResponse:
    usage = Usage(**d.get("usage", {}))
    return ChatResponse(
        content=str(d["content"]),
        model=str(d["model"]),
        usage=usage,
        attempts=0,
        latency_ms=0.0,
        cached=True,
        finish_reason=d.get("finish_reason"),
    )


class CachingClient:
    """An `LLMClient` in front of another, answering from a `ResponseCache`."""

    def __init__(
        self,
        inner: LLMClient,
        cache: ResponseCache,
        mode: CacheMode = "use",
        *,
        meter: UsageMeter | None = None,
    ) -> None:
        if mode not in CACHE_MODES:
            raise UsageError(f"cache mode must be one of {', '.join(CACHE_MODES)}, got {mode!r}")
        self.inner, self.cache, self.mode, self.meter = inner, cache, mode, meter
        self.hits = 0
        self.misses = 0
        self._flights: dict[tuple[int, str], asyncio.Future[ChatResponse]] = {}

    @property
    def model(self) -> str:
        """The inner client's model."""
        return self.inner.model

    @property
    def structured(self) -> str:
        """The inner client's structured-output mode."""
        return str(getattr(self.inner, "structured", "json_schema"))

    @structured.setter
    def structured(self, value: str) -> None:
        if hasattr(self.inner, "structured"):
            self.inner.structured = value

    async def acomplete(self, request: ChatRequest) -> ChatResponse:
        """See `LLMClient.acomplete`."""
        if self.mode == "off":
            return await self.inner.acomplete(request)
        model = request.model or self.inner.model
        key = request_key(model, request)
        if self.mode in ("use", "only"):
            hit = self.cache.get(key)
            if hit is not None:
                self.hits += 1
                response = _from_json(hit)
                if self.meter is not None:
                    self.meter.record(response)
                return response
            if self.mode == "only":
                raise CacheMissError(model, key)
        flight = (id(asyncio.get_running_loop()), key)
        pending = self._flights.get(flight)
        if pending is not None:
            shared = await asyncio.shield(pending)
            self.hits += 1
            return replace(shared, attempts=0, cached=True)
        future: asyncio.Future[ChatResponse] = asyncio.get_running_loop().create_future()
        self._flights[flight] = future
        self.misses += 1
        try:
            response = await self.inner.acomplete(replace(request, model=model))
        except BaseException as exc:
            if isinstance(exc, asyncio.CancelledError):
                future.cancel()
            else:
                future.set_exception(exc)
                future.exception()  # retrieved: no "never retrieved" warning when no one waits
            raise
        finally:
            del self._flights[flight]
        future.set_result(response)
        self.cache.put(key, model, _to_json(response))
        return response

    def complete(self, request: ChatRequest) -> ChatResponse:
        """See `LLMClient.complete`."""
        return run_sync(self.acomplete(request))
