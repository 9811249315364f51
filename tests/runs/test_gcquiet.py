"""The collector while a run goes (`memgauge._util.gcquiet`)."""

from __future__ import annotations

import gc
import json
import re
import threading
from collections import Counter
from pathlib import Path
from typing import Any

from memgauge._util.gcquiet import GC_THRESHOLD, collector_paused, fewer_collections
from memgauge.data.jsonio import load_records
from memgauge.data.models import Memory


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


def test_loaded_records_are_made_unwalked_and_join_the_last_generation(tmp_path: Path) -> None:
    """A dataset's records live on: `load_records` makes them with the collector paused (no
    collection walks them as they are made, 3-4 of them for LoCoMo), and they join the last
    generation when it returns; the collector is on again and its thresholds are back."""
    path = tmp_path / "memories.jsonl"
    path.write_text(
        "".join(json.dumps({"id": f"m{i}", "text": f"t {i}"}) + "\n" for i in range(3000))
    )
    started: Counter[int] = Counter()

    def count(phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            started[info["generation"]] += 1

    saved = gc.get_threshold()
    gc.set_threshold(700, 10, 10)
    # the young generation's count starts at 0, not at what earlier tests left under the
    # suite's higher threshold: past 700, the first allocation of `load_records`, before its
    # pause, set off a collection (seen in whole-suite runs)
    gc.collect(0)
    gc.callbacks.append(count)
    try:
        loaded = load_records(path, Memory)
        during, thresholds, enabled = dict(started), gc.get_threshold(), gc.isenabled()
        in_last = {id(o) for o in gc.get_objects(generation=2)}
    finally:
        gc.callbacks.remove(count)
        gc.set_threshold(*saved)
    assert len(loaded.records) == 3000
    assert loaded.problems == []
    assert during == {}
    assert id(loaded.records[-1]) in in_last
    assert id(loaded.valid) in in_last
    assert (thresholds, enabled) == ((700, 10, 10), True)


def test_one_threads_pause_ending_never_turns_the_collector_on_inside_anothers() -> None:
    """The console script's command import and a store revision paused the collector with a
    `gc.disable()` / `gc.enable()` of their own: one ending while `load_records` was pausing it
    in another thread turned it back on there (a worker's `load_records` test saw a collection
    during the load). Every pause goes through `collector_paused`, which ends at the last."""
    inside, leave = threading.Event(), threading.Event()

    def other() -> None:
        with collector_paused():
            inside.set()
            leave.wait(5)

    assert gc.isenabled()
    thread = threading.Thread(target=other)
    thread.start()
    inside.wait(5)
    with collector_paused():
        leave.set()
        thread.join(5)
        assert not gc.isenabled()  # the other pause ended; this one has not
    assert gc.isenabled()
    src = Path(__file__).resolve().parents[2] / "src" / "memgauge"
    own = [
        str(p.relative_to(src))
        for p in src.rglob("*.py")
        if p.name != "gcquiet.py" and re.search(r"gc\.(disable|enable)\(\)", p.read_text())
    ]
    assert own == []
