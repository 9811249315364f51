"""What one piece of work spent on LLMs: the calls and tokens of the LLM calls made while it
ran, per model, as the usage meter counts them (`llm.usage`): the engine tallies each item's
subject call, so that an LLM-backed subject's own tokens and cost are per query, beside its
context tokens and latency (`aggregates.cost`).

The tally travels in a context variable, as the run's `CallScope` does: the background LLM
loop runs each call in a copy of the caller's context, which holds the same tally. Only the
calls made through memgauge's clients are seen; a subject with an LLM client of its own (mem0's
OpenAI client, say) spends what no tally sees.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar

__all__ = ["add_to_tally", "tallied"]

Tally = dict[str, dict[str, int]]

_TALLY: ContextVar[Tally | None] = ContextVar("memgauge_llm_tally", default=None)


@contextmanager
def tallied(into: Tally | None = None) -> Iterator[Tally]:
    """While the block runs, count its LLM calls into `into` (a new mapping when None),
    yielded: model -> counter -> total, empty when it made none."""
    tally: Tally = {} if into is None else into
    token = _TALLY.set(tally)
    try:
        yield tally
    finally:
        _TALLY.reset(token)


def add_to_tally(model: str, delta: Mapping[str, int]) -> None:
    """Count `delta` into the tally of the work running, if one is kept."""
    tally = _TALLY.get()
    if tally is not None:
        row = tally.setdefault(model, {})
        for key, value in delta.items():
            row[key] = row.get(key, 0) + value
