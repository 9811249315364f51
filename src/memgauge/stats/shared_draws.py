"""Resample indices drawn once for the intervals of one summary that draw the same ones.

A bootstrap seeded by `seed` draws its item indices as `default_rng(seed).integers(0, n,
size=(chunk, n))`, chunk after chunk. Intervals over the same number of values with the same
seed and chunks draw the very same indices: the cost aggregate's token and latency means, their
quantiles, accuracy per 1,000 tokens and the accuracy (seven draws of 1,000 x 1,536 for LoCoMo).
Within `shared_draws()` the first such draw is kept and handed to the others (read-only); outside
it every call draws its own, as before. The indices are the same, so the intervals are too.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

import numpy as np
import numpy.typing as npt

__all__ = ["drawn", "shared_draws"]

_Idx = npt.NDArray[np.intp]
_ITEMSIZE = np.dtype(np.intp).itemsize
#: the most a kept draw may hold: a bigger one (1,000 resamples of more than 8,000 values) is
#: drawn by each interval chunk by chunk, as outside `shared_draws`, so a big run's summary
#: never holds a whole draw (800 MB at 100,000 items)
KEEP_BYTES = 64 * 1024 * 1024
_kept: ContextVar[dict[tuple[int, int, int, int], list[_Idx]] | None] = ContextVar(
    "memgauge_shared_draws", default=None
)


@contextmanager
def shared_draws() -> Iterator[None]:
    """Within: a draw of the same (seed, n, resamples, chunk) is made once (its memory freed
    on leaving), if it holds at most `KEEP_BYTES`."""
    token = _kept.set({})
    try:
        yield
    finally:
        _kept.reset(token)


def _draw(seed: int | None, n: int, n_resamples: int, step: int) -> Iterator[_Idx]:
    rng = np.random.default_rng(seed)
    for start in range(0, n_resamples, step):
        stop = min(n_resamples, start + step)
        yield rng.integers(0, n, size=(stop - start, n), dtype=np.intp)


def drawn(seed: int | None, n: int, n_resamples: int, step: int) -> Iterator[_Idx]:
    """The indices a generator fresh from `seed` draws for `n_resamples` resamples of `n`
    items, `step` resamples a chunk: one array per chunk, not to be written to."""
    kept = _kept.get()
    # seed None: fresh entropy each call, nothing to share
    if kept is None or seed is None or n * n_resamples * _ITEMSIZE > KEEP_BYTES:
        yield from _draw(seed, n, n_resamples, step)
        return
    key = (seed, n, n_resamples, step)
    found = kept.get(key)
    if found is None:
        found = []
        for idx in _draw(seed, n, n_resamples, step):
            idx.flags.writeable = False
            found.append(idx)
        kept[key] = found
    yield from found
