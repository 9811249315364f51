"""Paired comparisons of many measures at once (`paired_compare_many`, which `compare_systems`
uses): the same numbers as each measure compared alone, with the resamples and sign flips of
the measures that keep as many pairs drawn once."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from memgauge.stats import paired
from memgauge.stats.paired import paired_compare, paired_compare_many
from memgauge.stats.systems import compare_systems


def _pairs() -> list[tuple[np.ndarray, np.ndarray]]:
    """Measures of 300 queries: graded values, 0/1 values (ties in the sign-flip means), one
    with NaNs (fewer pairs), one with no difference, one pair, one shifted by a constant."""
    rng = np.random.default_rng(7)
    a = rng.random(300)
    b = a + rng.normal(0.02, 0.1, 300)
    hit_a = rng.integers(0, 2, 300).astype(float)
    hit_b = np.where(rng.random(300) < 0.2, 1 - hit_a, hit_a)
    holed = b.copy()
    holed[::7] = np.nan
    return [
        (a, b),
        (hit_a, hit_b),
        (a, holed),
        (hit_a, hit_a.copy()),
        (a[:1], b[:1]),
        (a, a + 0.25),
        (hit_b, hit_a),
        (np.array([]), np.array([])),
    ]


@pytest.mark.parametrize("n_permutations", [0, 2000])
def test_many_at_once_are_each_compared_alone(n_permutations: int) -> None:
    pairs = _pairs()
    alone = [paired_compare(a, b, seed=3, n_permutations=n_permutations) for a, b in pairs]
    together = paired_compare_many(pairs, seed=3, n_permutations=n_permutations)
    assert together == alone
    assert together[1].p_randomization == alone[1].p_randomization
    assert together[3].note == "all differences are zero"


def test_a_comparison_of_many_measures_draws_once_for_as_many_pairs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls: dict[str, int] = {"resample": 0, "signs": 0}
    resample = paired.resample_means

    def counted(values: Any, n: int, rng: Any) -> Any:
        calls["resample"] += 1
        return resample(values, n, rng)

    flips = paired.randomization_tests

    def counted_flips(diffs: Any, n: int, seed: int) -> Any:
        calls["signs"] += 1
        return flips(diffs, n, seed)

    monkeypatch.setattr(paired, "resample_means", counted)
    monkeypatch.setattr(paired, "randomization_tests", counted_flips)
    pairs = _pairs()
    measures = {str(i): np.vstack([a, b]) for i, (a, b) in enumerate(pairs[:3] + pairs[5:7])}
    cmp = compare_systems(["a", "b"], measures, n_permutations=500)
    # 300 pairs (four measures) and 258 (the one with NaNs): two draws, not five
    assert calls == {"resample": 2, "signs": 2}
    alone = [paired_compare(m[0], m[1], seed=0, n_permutations=500) for m in measures.values()]
    assert [p.paired for p in cmp.pairs] == alone
