"""Every measure's breakdown from one bootstrap per group (`stats.breakdowns`, what the ir
aggregate draws) equals a `breakdown` per measure, to the bit."""

from __future__ import annotations

import numpy as np

from memgauge.stats.breakdown import breakdown, breakdowns


def test_rows_together_are_each_row_alone() -> None:
    rng = np.random.default_rng(7)
    # a group of about 3,600 items in 5 rows is drawn in chunks of 277 resamples, alone in one
    n = 12_000
    groups = [None if i % 11 == 0 else ("a", "b", "c")[i % 3] for i in range(n)]
    groups[5] = "single"
    rr = rng.choice([0.0, 1 / 3, 0.5, 1.0], n)
    with_nan = rng.random(n)
    with_nan[::4] = np.nan
    nothing = np.where(np.asarray(groups, dtype=object) == "b", np.nan, 1.0)
    matrix = np.vstack([rr, rng.random(n), rr, with_nan, nothing])
    together = breakdowns(matrix, groups, n_resamples=500, seed=3)
    assert len(together) == matrix.shape[0]
    for row, got in zip(matrix, together, strict=True):
        alone = breakdown(row, groups, n_resamples=500, seed=3)
        assert list(got) == list(alone)  # groups in the same (sorted) order
        assert got == alone  # means, intervals and counts equal as floats
    assert together[4]["b"].mean is None
    assert together[0]["single"].n == 1
    assert breakdowns(np.empty((0, 3)), ["a", "b", "a"]) == []
