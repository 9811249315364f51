"""The LLM options every judging command shares, and wiring the response cache."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from memgauge._util.home import memgauge_home
from memgauge.llm.cache import CacheMode
from memgauge.llm.context import configure
from memgauge.store.llm_cache import SQLiteResponseCache

__all__ = ["configure_llm", "llm_options"]

F = TypeVar("F", bound=Callable[..., Any])


def llm_options(fn: F) -> F:
    """`--cache-only`, `--no-cache`, `--refresh-cache`, `--llm-cache PATH`."""
    for option in reversed(
        [
            click.option(
                "--cache-only",
                is_flag=True,
                help="Replay LLM calls from the cache; a call not in it is an error, never made.",
            ),
            click.option("--no-cache", is_flag=True, help="Neither read nor write the LLM cache."),
            click.option(
                "--refresh-cache", is_flag=True, help="Make every LLM call again and store it."
            ),
            click.option(
                "--llm-cache",
                "llm_cache",
                type=click.Path(dir_okay=False, path_type=Path),
                default=None,
                help="LLM response cache (default: MEMGAUGE_LLM_CACHE, else MEMGAUGE_HOME/llm-cache.db).",
            ),
        ]
    ):
        fn = option(fn)
    return fn


class _LazyCache:
    """Opens the SQLite cache on first use, so runs without an LLM never create the file."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._cache: SQLiteResponseCache | None = None
        self._lock = threading.Lock()

    def _open(self) -> SQLiteResponseCache:
        with self._lock:
            if self._cache is None:
                self._cache = SQLiteResponseCache(self.path)
            return self._cache

    def get(self, key: str) -> dict[str, Any] | None:
        return self._open().get(key)

    def put(self, key: str, model: str, response: dict[str, Any], *, replace: bool = False) -> None:
        self._open().put(key, model, response, replace=replace)


def configure_llm(
    *, cache_only: bool, no_cache: bool, refresh_cache: bool, llm_cache: Path | None
) -> None:
    """Point the process's LLM context at the cache in the mode the flags ask for."""
    if sum([cache_only, no_cache, refresh_cache]) > 1:
        raise click.UsageError("use at most one of --cache-only, --no-cache, --refresh-cache")
    path = llm_cache or Path(
        os.environ.get("MEMGAUGE_LLM_CACHE") or memgauge_home() / "llm-cache.db"
    )
    mode: CacheMode = (
        "only" if cache_only else "off" if no_cache else "refresh" if refresh_cache else "use"
    )
    configure(cache=_LazyCache(path), cache_mode=mode)
