"""A subject in its lane: built and called in a pool of threads of its own.

A subject that declares `Capabilities(concurrent=True)` (or whose spec says `concurrent: true`)
gets a pool as wide as the run's concurrency; any other gets one thread, which also builds it,
so that a subject holding a SQLite connection is only used by the thread that opened it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from memgauge.subjects.events import capabilities_of
from memgauge.subjects.registry import RunOptions

__all__ = ["RUN_KEYS", "Borrowed", "SubjectLane"]

# keys of a subject spec that configure the run, not the subject's constructor
RUN_KEYS = tuple(RunOptions.model_fields)


class Borrowed:
    """What a build function returns for a subject its caller owns (a live object handed to
    `memgauge.evaluate`): the lane uses it and leaves it open."""

    __slots__ = ("subject",)

    def __init__(self, subject: Any) -> None:
        self.subject = subject


class SubjectLane:
    """One subject, built and called in its own pool of threads."""

    def __init__(
        self, name: str, spec: Mapping[str, Any], width: int, build: Callable[..., Any]
    ) -> None:
        ((kind, raw),) = spec.items()
        args = dict(raw or {})
        run_opts = {k: args.pop(k) for k in RUN_KEYS if k in args}
        self.name = name
        self.pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"subject-{name}")
        # built inside the lane, so a subject holding a SQLite connection is only used where
        # it was opened
        built = self.pool.submit(build, {kind: args}).result()
        self.owned = not isinstance(built, Borrowed)
        self.subject = built.subject if isinstance(built, Borrowed) else built
        caps = capabilities_of(self.subject)
        concurrent = bool(run_opts.get("concurrent", caps.concurrent))
        if concurrent and width > 1:
            self.pool.shutdown()
            self.pool = ThreadPoolExecutor(max_workers=width, thread_name_prefix=f"subject-{name}")
        self.concurrent = concurrent
        self.answers = bool(run_opts.get("agent", caps.answers))
        # a memory-backed agent is filled like any memory; a pure agent has nothing to fill
        self.memory = bool(getattr(self.subject, "is_memory", True))

    def call(self, fn: Callable[[], Any]) -> Any:
        """Run `fn` in the lane and wait for it."""
        return self.pool.submit(fn).result()

    def close(self) -> None:
        """Close the subject (if it can be, and is the lane's own) and stop the lane's threads."""
        close = getattr(self.subject, "close", None) if self.owned else None
        if callable(close):
            # a subject that fails to close must not hide the results
            with contextlib.suppress(Exception):
                self.pool.submit(close).result(timeout=30)
        self.pool.shutdown(wait=False, cancel_futures=True)
