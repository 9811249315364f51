"""Two runs' paired comparison, kept per viewer process once computed.

At 100,000 items a comparison of runs that differ resamples every measure (about 2.5 CPU-s of
bootstrap and sign flips, BENCHMARKS.md); the page asked again (a reload, a way back from an
item) reuses it. The key is a digest of what the numbers are made of, the measures' item ids
and values and the seed, so a run resumed or re-recorded since is compared again, never
answered from an older state.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections import OrderedDict
from typing import Any

import numpy as np

from memgauge.runs.suite_compare import Measures, compare_measures

__all__ = ["compared_measures"]

_KEPT = 8  # comparisons kept (each a few rows of numbers)
_lock = threading.Lock()
_kept: OrderedDict[bytes, list[dict[str, Any]]] = OrderedDict()


def _digest(measures_a: Measures, measures_b: Measures, seed: int) -> bytes:
    h = hashlib.blake2b(digest_size=20)
    h.update(json.dumps(seed).encode())
    ids_seen: dict[int, bytes] = {}  # a task's measures share one list of ids
    for measures in (measures_a, measures_b):
        h.update(b"\x00side")
        for key in sorted(measures):
            ids, values = measures[key]
            if id(ids) not in ids_seen:
                ids_seen[id(ids)] = hashlib.blake2b(json.dumps(list(ids)).encode()).digest()
            raw = np.asarray(values, dtype=np.float64).tobytes()
            # each part's length first: values running on into the next key are not that key
            name = json.dumps(list(key)).encode()
            h.update(len(name).to_bytes(8, "little") + name)
            h.update(ids_seen[id(ids)])
            h.update(len(raw).to_bytes(8, "little") + raw)
    return h.digest()


def compared_measures(
    measures_a: Measures, measures_b: Measures, *, seed: int
) -> list[dict[str, Any]]:
    """`compare_measures(measures_a, measures_b, seed=seed)`, computed once a process for the
    same measures and seed (each call gets its own copies of the rows)."""
    key = _digest(measures_a, measures_b, seed)
    with _lock:
        found = _kept.get(key)
        if found is not None:
            _kept.move_to_end(key)
    if found is None:
        found = compare_measures(measures_a, measures_b, seed=seed)
        with _lock:
            _kept[key] = found
            while len(_kept) > _KEPT:
                _kept.popitem(last=False)
    return [dict(row) for row in found]
