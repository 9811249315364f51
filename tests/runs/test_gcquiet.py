"""The collector while a run goes (`memgauge._util.gcquiet`)."""

from __future__ import annotations

import gc
from collections import Counter
from typing import Any

from memgauge._util.gcquiet import GC_THRESHOLD, fewer_collections


def test_what_a_run_keeps_alive_is_not_walked_again_and_again() -> None:
    """A run keeps its records alive: the first generation is still collected every
    `GC_THRESHOLD` allocations, but the second (every survivor so far) not every tenth time,
    which made each walk longer as the run grew; when the run ends, what it kept is in the
    last generation, not left in the second for the first collection after the run to walk;
    the thresholds come back."""
    started: Counter[int] = Counter()

    def count(phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            started[info["generation"]] += 1

    saved = gc.get_threshold()
    gc.callbacks.append(count)
    try:
        with fewer_collections():
            kept = [[i] for i in range(GC_THRESHOLD * 30)]
            during = dict(started)
        in_second = {id(o) for o in gc.get_objects(generation=1)}
        in_last = {id(o) for o in gc.get_objects(generation=2)}
    finally:
        gc.callbacks.remove(count)
    assert during.get(0, 0) >= 20
    assert during.get(1, 0) == 0
    assert id(kept[-1]) not in in_second
    assert id(kept[-1]) in in_last
    assert id(kept) in in_last
    assert gc.get_threshold() == saved
