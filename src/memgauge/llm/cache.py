"""Response caching: re-running a suite costs nothing; `--cache-only` replays a run exactly.

The key is a SHA-256 of the canonical JSON of (model, messages, temperature, max_tokens,
response_format, seed, repeat index). The repeat index keeps k deliberate re-asks of one
question (judge variance) apart, so each replays its own answer. Modes:

- `use` (default): answer from the cache when it can, else call and store;
- `refresh`: always call, store the new answer over the old one;
- `only`: never call; a miss raises `CacheMissError` (a replay that needs the network is
  not a replay);
- `off`: no cache.

A caller that cannot use an answer (`forget`: a judge's, extractor's or decider's reply that
does not parse, an optimizer's reply with no text) marks it unusable: the failure stays a
recorded failure, but the next ask in `use` mode goes to the model again (and stores the new
answer over it), while a `--cache-only` replay still replays it, so the failed run replays
exactly.

A subject's calls on a repeat after the first (`repeat: N` in a suite, `asked_anew`) are never
answered from the cache: each goes to the model, so that a repeat shows the system's own
variance and not a replay of the first answer. Its answer is stored under a key of its own
(the repeat index is part of it), as `refresh` stores, so `--cache-only` still replays the
run; a judge's calls on the same repeat are cached as usual.

Identical requests in flight at the same time are made once (single flight): two items whose
judge prompts are the same get the same verdict in the run, exactly as a replay will give
them, and the provider is paid once. Across processes (the workers of a sharded run share the
cache file) the first answer stored wins, and a process whose own answer lost uses the stored
one, so the run still equals its replay.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import asdict, replace
from typing import TYPE_CHECKING, Any, Literal, Protocol

from memgauge._util.redact import redact
from memgauge.errors import CacheMissError, LLMError, UsageError
from memgauge.llm._loop import run_sync
from memgauge.llm.types import ChatRequest, ChatResponse, LLMClient, Usage
from memgauge.llm.usage import UsageMeter

if TYPE_CHECKING:
    # imported by the first call through the cache: the engine marks every item's calls
    # (`asked_anew`) whether or not the run makes any
    import asyncio

__all__ = [
    "CacheMode",
    "CachingClient",
    "ResponseCache",
    "asked_anew",
    "forget",
    "request_key",
]

CacheMode = Literal["use", "refresh", "only", "off"]
CACHE_MODES: tuple[str, ...] = ("use", "refresh", "only", "off")
#: the mark `forget` puts on a stored answer its caller could not use
_UNUSABLE = "unusable"


class ResponseCache(Protocol):
    """Where cached responses live (`memgauge.store.llm_cache.SQLiteResponseCache`)."""

    def get(self, key: str) -> dict[str, Any] | None:
        """The stored response, or None."""
        ...

    def put(
        self,
        key: str,
        model: str,
        response: dict[str, Any],
        *,
        replace: bool = False,
        over: dict[str, Any] | None = None,
    ) -> None:
        """Keep `response` under `key`: over an older answer with `replace` (a refresh), over
        `over` only while it is the one stored (another process may have stored its own
        meanwhile), otherwise the first answer stored wins. The one place these are said: the
        implementations (`memgauge.store.llm_cache`, the API's lazily opened cache) follow it."""
        ...


#: the repeat of the item whose subject is asking (0: the first time, or not a subject's call)
_ANEW: ContextVar[int] = ContextVar("memgauge_llm_asked_anew", default=0)


@contextmanager
def asked_anew(repeat: int) -> Iterator[None]:
    """While the block runs, its LLM calls are a subject's on repeat `repeat` of an item: for
    repeat > 0 never answered from the cache (see the module docstring). The background LLM
    loop runs each call in a copy of the caller's context, which carries this."""
    token = _ANEW.set(repeat)
    try:
        yield
    finally:
        _ANEW.reset(token)


def request_key(model: str, request: ChatRequest, *, scope: str = "", anew: int = 0) -> str:
    """The cache key of `request` sent to `model` at the endpoint `scope` (provider and base
    URL: the same model id at two endpoints is two models); `anew`: a subject's repeat (part
    of the key only when > 0, so every other key is as it was)."""
    canonical: dict[str, Any] = {
        "scope": scope,
        "model": model,
        "messages": [[m.role, m.content] for m in request.messages],
        "temperature": request.temperature,
        "max_tokens": request.max_tokens,
        "response_format": request.response_format,
        "seed": request.seed,
        "repeat": request.repeat,
    }
    if anew:
        canonical["subject_repeat"] = anew
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
        adapted=tuple(str(a) for a in d.get("adapted") or ()),
    )


def forget(client: LLMClient, request: ChatRequest) -> None:
    """Tell `client`'s cache, if it has one, that its answer to `request` could not be used
    (see `CachingClient.forget`); a client without a cache has nothing to forget."""
    if isinstance(client, CachingClient):
        client.forget(request)


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
        config = getattr(inner, "config", None)
        identity = config.identity() if config is not None else {}
        #: the endpoint, part of every key (never the API key)
        self.scope = f"{identity.get('provider', '')}:{identity.get('base_url', '')}"

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

    @property
    def adapted(self) -> dict[str, frozenset[str]]:
        """The inner client's per-model parameter adaptations (`llm.openai.ADAPTATIONS`)."""
        found = getattr(self.inner, "adapted", None)
        return found if isinstance(found, dict) else {}

    async def acomplete(self, request: ChatRequest) -> ChatResponse:
        """See `LLMClient.acomplete`."""
        import asyncio

        if self.mode == "off":
            return await self.inner.acomplete(request)
        model = request.model or self.inner.model
        anew = _ANEW.get()
        key = request_key(model, request, scope=self.scope, anew=anew)
        # a subject's repeat goes to the model (a replay still replays it)
        mode = "refresh" if anew and self.mode == "use" else self.mode
        # a stored answer its caller could not use: asked again, stored over it
        stale: dict[str, Any] | None = None
        if mode in ("use", "only"):
            hit = self.cache.get(key)
            if hit is not None and mode == "use" and hit.get(_UNUSABLE):
                stale = hit
            elif hit is not None:
                return self._answer(_from_json(hit) if "error" not in hit else hit)
            if mode == "only":
                raise CacheMissError(model, key)
        loop = asyncio.get_running_loop()
        flight = (id(loop), key)
        while (pending := self._flights.get(flight)) is not None:
            try:
                shared = await asyncio.shield(pending)
            except asyncio.CancelledError:
                if not pending.cancelled():
                    raise  # we were cancelled ourselves
                continue  # the caller we waited on was cancelled: make the call ourselves
            return self._answer(replace(shared, attempts=0, cached=True))
        future: asyncio.Future[ChatResponse] = loop.create_future()
        self._flights[flight] = future
        self.misses += 1
        try:
            response = await self.inner.acomplete(replace(request, model=model))
        except BaseException as exc:
            if isinstance(exc, LLMError) and exc.kind == "bad_request":
                # a 4xx the endpoint will give again (e.g. no JSON-schema support): kept, so a
                # replay takes the same fallback path as the run it reproduces; scrubbed here
                # too, since the inner client may be anyone's
                stored = {"error": exc.kind, "message": redact(str(exc))}
                self.cache.put(key, model, stored, replace=True)
            if isinstance(exc, asyncio.CancelledError) or not isinstance(exc, Exception):
                future.cancel()
            else:
                future.set_exception(exc)
                future.exception()  # retrieved: no "never retrieved" warning when no one waits
            raise
        finally:
            del self._flights[flight]
        if stale is not None:  # over the unusable one only: another's new answer stays
            self.cache.put(key, model, _to_json(response), over=stale)
        else:
            self.cache.put(key, model, _to_json(response), replace=mode == "refresh")
        if mode != "refresh":
            # another process (a shard's worker) or thread may have stored its answer first:
            # the first one stored wins, and this run uses it too, exactly as a replay will
            kept = self.cache.get(key)
            if kept is not None and "error" not in kept and kept != _to_json(response):
                response = replace(_from_json(kept), attempts=response.attempts, cached=False)
        future.set_result(response)
        return response

    def forget(self, request: ChatRequest) -> None:
        """Mark the stored answer to `request` unusable: its caller could not use it, so it is
        not kept as final and the next ask in `use` mode goes to the model again; a replay
        (`only`) still replays it. A replay marks nothing."""
        if self.mode in ("off", "only"):
            return
        model = request.model or self.inner.model
        key = request_key(model, request, scope=self.scope, anew=_ANEW.get())
        stored = self.cache.get(key)
        if stored is not None and "error" not in stored:
            # only the answer read: one another process stored over it meanwhile is not marked
            self.cache.put(key, model, {**stored, _UNUSABLE: True}, over=stored)

    def _answer(self, found: ChatResponse | dict[str, Any]) -> ChatResponse:
        """A response from the cache or a shared flight (counted as cached), or the stored
        client error raised again."""
        self.hits += 1
        if isinstance(found, dict):
            # a file written before scrubbing existed may still hold a key: scrub on the way out
            message = redact(str(found.get("message", ""))).removeprefix("bad_request: ")
            raise LLMError("bad_request", message)
        if self.meter is not None:
            self.meter.record(found)
        return found

    def complete(self, request: ChatRequest) -> ChatResponse:
        """See `LLMClient.complete`."""
        return run_sync(self.acomplete(request))

    async def aclose(self) -> None:
        """Close the inner client's connection pool of the current loop."""
        aclose = getattr(self.inner, "aclose", None)
        if aclose is not None:
            await aclose()

    def close(self) -> None:
        """Close the inner client."""
        close = getattr(self.inner, "close", None)
        if close is not None:
            close()
