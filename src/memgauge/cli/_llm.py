"""The LLM options every judging command shares; the cache itself is wired in one place
(`memgauge.api.configure_llm`)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from memgauge import api
from memgauge.errors import UsageError

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


def configure_llm(
    *, cache_only: bool, no_cache: bool, refresh_cache: bool, llm_cache: Path | None
) -> None:
    """The flags of `llm_options`, applied."""
    try:
        api.configure_llm(
            cache_only=cache_only,
            no_cache=no_cache,
            refresh_cache=refresh_cache,
            llm_cache=llm_cache,
        )
    except UsageError as exc:
        raise click.UsageError(str(exc)) from None
