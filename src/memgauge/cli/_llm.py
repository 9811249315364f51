"""The LLM options every judging command shares, applied before the command runs; the cache
itself is wired in one place (`memgauge.api.configure_llm`)."""

from __future__ import annotations

import functools
from typing import Any

import click

from memgauge import api
from memgauge.cli._common import FILE, Command, apply_options
from memgauge.errors import UsageError

__all__ = ["llm_options"]


_LLM_OPTIONS = [
    click.option(
        "--cache-only",
        is_flag=True,
        help="Replay LLM calls from the cache; a call not in it is an error, never made.",
    ),
    click.option("--no-cache", is_flag=True, help="Neither read nor write the LLM cache."),
    click.option("--refresh-cache", is_flag=True, help="Make every LLM call again and store it."),
    click.option(
        "--llm-cache",
        "llm_cache",
        type=FILE,
        default=None,
        help="LLM response cache (default: MEMGAUGE_LLM_CACHE, else MEMGAUGE_HOME/llm-cache.db).",
    ),
]


def llm_options(fn: Command) -> Command:
    """`--cache-only`, `--no-cache`, `--refresh-cache`, `--llm-cache PATH`: the process's LLM
    calls set up by them before `fn` runs (which does not take them)."""

    @functools.wraps(fn)
    def configured(*args: Any, **kwargs: Any) -> None:
        # the four options taken out: their names are configure_llm's keywords
        names = ("cache_only", "no_cache", "refresh_cache", "llm_cache")
        llm = {name: kwargs.pop(name) for name in names}
        try:
            api.configure_llm(**llm)
        except UsageError as exc:
            raise click.UsageError(str(exc)) from None
        fn(*args, **kwargs)

    return apply_options(configured, _LLM_OPTIONS)
