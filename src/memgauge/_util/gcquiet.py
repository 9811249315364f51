"""Fewer garbage collections while a run holds many objects.

A run keeps thousands of records alive (a LoCoMo evaluation: 4,608 items of 25 hits each), and
CPython's cyclic collector, triggered every 700 allocations, walks them again and again: 1.3 s
of a 9 s run. While a run goes, the first generation's threshold is raised and what existed
before the run (the datasets, the plan) is frozen out of the collector's sight; both are
restored when the last run in the process ends. Nothing is leaked: garbage cycles are still
collected, just in larger batches.

The second generation's threshold is raised too: every tenth collection of the first also
walks the second, which holds everything the run made that is still alive (its records and
their hits), and each such walk costs more as the run goes on (a LoCoMo evaluate: one in its
summary, 0.11 s). The first generation's collections, which only walk what is new, go on. When
the run ends, what it keeps joins the last generation without a walk (as the frozen objects
do): garbage cycles among it are found by the next full collection.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

from memgauge._util.shared import SharedSetting

__all__ = [
    "GC_THRESHOLD",
    "GC_THRESHOLD_1",
    "collector_paused",
    "fewer_collections",
    "kept_unwalked",
]

GC_THRESHOLD = 20_000
#: collections of the first generation per collection of the second, while a run goes
GC_THRESHOLD_1 = 100


def _raise_and_freeze() -> tuple[int, int, int]:
    saved = gc.get_threshold()
    gc.set_threshold(max(saved[0], GC_THRESHOLD), max(saved[1], GC_THRESHOLD_1), saved[2])
    gc.freeze()
    return saved


def _restore(saved: tuple[int, int, int]) -> None:
    # what the run made and keeps goes to the last generation unwalked, with what existed
    # before it: left in the second, the first collection after the run (its thresholds back)
    # would walk it all
    gc.freeze()
    gc.unfreeze()
    gc.set_threshold(*saved)


#: raise the collector's first two thresholds and freeze the objects that exist now, for the
#: duration (nested and concurrent uses restore once, at the last exit)
fewer_collections = SharedSetting(_raise_and_freeze, _restore)


def _pause() -> bool:
    was = gc.isenabled()
    gc.disable()
    return was


def _resume(was: bool) -> None:
    if was:
        gc.enable()


#: the cyclic collector off for the duration (back on at the last exit, if it was on): every
#: pause in the process goes through it, so that one thread's end of a pause never turns the
#: collector back on inside another's (a `gc.disable()` / `gc.enable()` pair of its own would)
collector_paused = SharedSetting(_pause, _resume)


@contextmanager
def kept_unwalked() -> Iterator[None]:
    """For making many objects that live on (a dataset's records): no collection while inside,
    and what was made joins the last generation without a walk when it ends (as at the end of
    `fewer_collections`, which it holds). Inside a run's `fewer_collections` what is made stays
    young (the run's freeze is not undone early). Usable as a decorator."""
    with collector_paused(), fewer_collections():
        yield
