"""The process's LLM setup: one client per endpoint and model, a shared usage meter, and the
response cache, so judges built from suite specs share connections, limits and accounting.

Who closes the clients (their connection pools: aiohttp sessions): whoever does a piece of LLM
work holds the context for its length (`LLMContext.hold`: a run, a study, a calibration), and
the clients are closed when the last holder lets go, however it ends (an error, Ctrl-C).
Holders nest and overlap (a study's runs, best-of-n candidates in threads), so a run that
ends does not close the pools under one still going. Code that asks for a client outside any
hold (a judge scored by hand) closes them itself: `close()`, or a hold of its own.

The CLI configures it (`--cache-only`, `--no-cache`, `MEMGAUGE_HOME`); a library user calls
`configure()`; tests inject a client factory (a scripted client, or one aimed at the fake
server). The cache object comes from the caller (the store layer owns SQL), which keeps this
layer free of storage code.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, TypeAlias

from memgauge.llm.usage import UsageMeter

if TYPE_CHECKING:
    # loaded by the first client asked for: every run holds the context and reads its meter,
    # a run without judges or LLM subjects asks for no client (`asyncio`, the cache, the
    # providers' registry are not imported by it)
    from memgauge.llm.cache import CacheMode, ResponseCache
    from memgauge.llm.config import LLMConfig
    from memgauge.llm.types import LLMClient

__all__ = ["LLMContext", "configure", "llm_context"]

ClientFactory: TypeAlias = "Callable[[LLMConfig, UsageMeter], LLMClient]"


def default_factory(config: LLMConfig, meter: UsageMeter) -> LLMClient:
    """The client of `config.provider` (`openai` by default; see `memgauge.llm.providers`)."""
    from memgauge.llm.providers import provider

    client: LLMClient = provider(config.provider)(config, meter=meter)
    return client


class LLMContext:
    """Clients, cache and meter shared by everything in the process that calls an LLM."""

    def __init__(self) -> None:
        self.meter = UsageMeter()
        self.cache: ResponseCache | None = None
        self.cache_mode: CacheMode = "use"
        self.factory: ClientFactory = default_factory
        self._clients: dict[tuple[Any, ...], LLMClient] = {}
        self._lock = threading.Lock()
        self._holders = 0
        #: bumped whenever clients are dropped, so callers that memoize a client know to ask again
        self.generation = 0

    def client(self, **overrides: Any) -> LLMClient:
        """The shared client for this configuration (`LLMConfig.from_env(**overrides)`),
        behind the cache when one is configured."""
        from memgauge.llm.cache import CachingClient
        from memgauge.llm.config import LLMConfig

        config = LLMConfig.from_env(**overrides)
        key = (
            config.provider,
            config.base_url,
            config.model,
            config.concurrency,
            config.timeout,
            config.max_retries,
            config.rpm,
        )
        with self._lock:
            found = self._clients.get(key)
            if found is None:
                found = self.factory(config, self.meter)
                if self.cache is not None and self.cache_mode != "off":
                    found = CachingClient(found, self.cache, self.cache_mode, meter=self.meter)
                self._clients[key] = found
            return found

    @contextmanager
    def hold(self) -> Iterator[LLMContext]:
        """Hold the clients for a piece of work; when the last holder lets go, they are
        closed (see the module's docstring)."""
        with self._lock:
            self._holders += 1
        try:
            yield self
        finally:
            with self._lock:
                self._holders -= 1
                # taken under the lock: a holder arriving now gets new clients, never these
                clients = self._drop() if self._holders == 0 else []
            _close(clients)

    def close(self) -> None:
        """Close every client (their connection pools); the next `client()` makes new ones."""
        with self._lock:
            clients = self._drop()
        _close(clients)

    def _drop(self) -> list[LLMClient]:
        clients, self._clients = list(self._clients.values()), {}
        self.generation += 1
        return clients


def _close(clients: list[LLMClient]) -> None:
    for c in clients:
        close = getattr(c, "close", None)
        if callable(close):
            close()


_CONTEXT = LLMContext()


def llm_context() -> LLMContext:
    """The process's LLM context."""
    return _CONTEXT


def configure(
    *,
    cache: ResponseCache | None = None,
    cache_mode: CacheMode | None = None,
    factory: ClientFactory | None = None,
) -> LLMContext:
    """Set the cache, cache mode or client factory; closes clients made before."""
    ctx = _CONTEXT
    ctx.close()
    if cache is not None:
        ctx.cache = cache
    if cache_mode is not None:
        ctx.cache_mode = cache_mode
    if factory is not None:
        ctx.factory = factory
    ctx.generation += 1
    return ctx


def reset() -> None:
    """Back to defaults: no cache, the default factory, a fresh meter (tests use this)."""
    ctx = _CONTEXT
    ctx.close()
    ctx.cache, ctx.cache_mode, ctx.factory, ctx.meter = None, "use", default_factory, UsageMeter()
    ctx.generation += 1
