"""Fewer garbage collections while a run holds many objects.

A run keeps thousands of records alive (a LoCoMo evaluation: 4,608 items of 25 hits each), and
CPython's cyclic collector, triggered every 700 allocations, walks them again and again: 1.3 s
of a 9 s run. While a run goes, the first generation's threshold is raised and what existed
before the run (the datasets, the plan) is frozen out of the collector's sight; both are
restored when the last run in the process ends. Nothing is leaked: garbage cycles are still
collected, just in larger batches.
"""

from __future__ import annotations

import gc

from memgauge._util.shared import SharedSetting

__all__ = ["GC_THRESHOLD", "fewer_collections"]

GC_THRESHOLD = 20_000


def _raise_and_freeze() -> tuple[int, int, int]:
    saved = gc.get_threshold()
    gc.set_threshold(max(saved[0], GC_THRESHOLD), saved[1], saved[2])
    gc.freeze()
    return saved


def _restore(saved: tuple[int, int, int]) -> None:
    gc.unfreeze()
    gc.set_threshold(*saved)


#: raise the collector's first threshold and freeze the objects that exist now, for the
#: duration (nested and concurrent uses restore once, at the last exit)
fewer_collections = SharedSetting(_raise_and_freeze, _restore)
