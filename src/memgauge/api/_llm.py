"""The LLM response cache, set up in one place for every command and API call that judges."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from memgauge.data.environment import env_path, memgauge_home
from memgauge.errors import UsageError, argument, check_path
from memgauge.llm.cache import CacheMode
from memgauge.llm.context import configure, llm_context
from memgauge.store.llm_cache import SQLiteResponseCache

__all__ = ["close_llm", "configure_llm"]


class _LazyCache:
    """Opens the SQLite response cache on first use, so runs without an LLM never create it."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._cache: SQLiteResponseCache | None = None
        self._lock = threading.Lock()

    def _open(self) -> SQLiteResponseCache:
        with self._lock:
            if self._cache is None:
                self._cache = SQLiteResponseCache(self.path)
            return self._cache

    def __getstate__(self) -> dict[str, Any]:
        # a shard's worker gets the path and opens the file itself (SQLite locks it across
        # processes), never this process's connection
        return {"path": self.path}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(_LazyCache(state["path"]).__dict__)

    def get(self, key: str) -> dict[str, Any] | None:
        return self._open().get(key)

    def put(
        self,
        key: str,
        model: str,
        response: dict[str, Any],
        *,
        replace: bool = False,
        over: dict[str, Any] | None = None,
    ) -> None:
        self._open().put(key, model, response, replace=replace, over=over)


def configure_llm(
    *,
    cache_only: bool = False,
    no_cache: bool = False,
    refresh_cache: bool = False,
    llm_cache: str | Path | None = None,
) -> None:
    """Point the process's LLM calls at the response cache (`MEMGAUGE_LLM_CACHE`, else
    `MEMGAUGE_HOME/llm-cache.db`) in one mode: use it, replay only (a miss is an error, never
    a call), neither read nor write it, or call again and store."""
    if sum([cache_only, no_cache, refresh_cache]) > 1:
        modes = ", ".join(argument(m) for m in ("cache_only", "no_cache", "refresh_cache"))
        raise UsageError(f"use at most one of {modes}")
    if llm_cache not in (None, ""):  # "": the default, as the environment's empty variable
        check_path("llm_cache", llm_cache)
    path = (
        Path(llm_cache)
        if llm_cache
        else env_path("MEMGAUGE_LLM_CACHE", "file", "MEMGAUGE_HOME/llm-cache.db")
        or memgauge_home() / "llm-cache.db"
    )
    mode: CacheMode = (
        "only" if cache_only else "off" if no_cache else "refresh" if refresh_cache else "use"
    )
    configure(cache=_LazyCache(path), cache_mode=mode)


def close_llm() -> None:
    """Close the LLM clients (their connection pools); the next call makes new ones."""
    llm_context().close()
