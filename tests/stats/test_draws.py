"""The resampling tests' draws and gathers made cheaper, with the same numbers: the signs read
from the generator's raw stream (`stats.draws`) are `Generator.integers`' own, the
randomization test's p-values and the bootstrap's resample means are those of the code before
(kept here as the definitions)."""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

from memgauge.stats import draws
from memgauge.stats.bootstrap import resample_means
from memgauge.stats.draws import coin_bytes
from memgauge.stats.paired import randomization_tests


@pytest.mark.parametrize("seed", [0, 1, 7, 2**31 - 1])
def test_coin_bytes_are_the_signs_integers_draws_and_leave_the_generator_where_it_does(
    seed: int,
) -> None:
    # odd sizes leave half of a 32-bit output's bytes and half of a 64-bit output behind
    shapes = [(1, 1), (3, 5), (2, 2), (1, 7), (20, 1000), (0, 4), (3, 3), (1, 8), (5, 9)]
    ours, theirs = np.random.default_rng(seed), np.random.default_rng(seed)
    for shape in shapes:
        mine = coin_bytes(ours, shape) >> np.uint8(7)
        expected = theirs.integers(0, 2, size=shape, dtype=np.int8)
        assert mine.shape == expected.shape
        assert np.array_equal(mine.view(np.int8), expected)
    assert ours.bit_generator.state == theirs.bit_generator.state
    assert ours.random() == theirs.random()


def test_another_bit_generator_draws_through_integers() -> None:
    ours = np.random.Generator(np.random.MT19937(3))
    theirs = np.random.Generator(np.random.MT19937(3))
    mine = coin_bytes(ours, (4, 11)) >> np.uint8(7)
    assert np.array_equal(mine.view(np.int8), theirs.integers(0, 2, (4, 11), dtype=np.int8))


def test_a_numpy_that_draws_otherwise_draws_through_integers(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(draws, "_checked", False)
    ours, theirs = np.random.default_rng(5), np.random.default_rng(5)
    mine = coin_bytes(ours, (3, 7)) >> np.uint8(7)
    assert np.array_equal(mine.view(np.int8), theirs.integers(0, 2, (3, 7), dtype=np.int8))


def _integers_randomization(
    diffs: npt.NDArray[np.float64], n_permutations: int, seed: int
) -> list[float]:
    """The randomization test as it was: `integers`' signs, every column multiplied."""
    d = np.asarray(diffs, dtype=np.float64)
    rows, n = d.shape
    rng = np.random.default_rng(seed)
    observed = np.abs(d.mean(axis=1))
    hits = np.zeros(rows, dtype=np.int64)
    step = max(1, 2_000_000 // n)
    tol = 1e-12 * np.maximum(1.0, observed)
    for start in range(0, n_permutations, step):
        size = min(step, n_permutations - start)
        signs = rng.integers(0, 2, size=(size, n), dtype=np.int8) * 2 - 1
        product = (signs @ d[0])[:, None] if rows == 1 else signs @ d.T
        hits += np.count_nonzero(np.abs(product) / n >= observed - tol, axis=0)
    return [(int(h) + 1) / (n_permutations + 1) for h in hits]


def _cases() -> list[tuple[npt.NDArray[np.float64], int, int]]:
    """Continuous, tied (few values: many sign-flip means equal the observed one) and sparse
    differences, of odd and even sizes (a chunk of signs not a whole number of 32-bit words),
    one row and several."""
    rng = np.random.default_rng(31)
    out = []
    for i in range(36):
        n = [3, 5, 10, 13, 101, 1001][i % 6]
        rows = [1, 3][i % 2]
        kind = i % 3
        if kind == 0:
            d = rng.normal(0.02, 0.1, (rows, n))
        elif kind == 1:
            d = rng.integers(-2, 3, (rows, n)) / 3.0
        else:
            d = np.where(rng.random((rows, n)) < 0.05, rng.choice([-1.0, 0.5], (rows, n)), 0.0)
        d[:, 0] = 0.25  # no row all zero
        out.append((d, [0, 1, 99, 2000][i % 4], int(rng.integers(0, 2**31))))
    return out


@pytest.mark.parametrize(("diffs", "n_permutations", "seed"), _cases())
def test_the_randomization_test_finds_the_p_of_integers_signs(
    diffs: npt.NDArray[np.float64], n_permutations: int, seed: int
) -> None:
    expected = _integers_randomization(diffs, n_permutations, seed)
    assert randomization_tests(diffs, n_permutations, seed) == expected


def _gathered_means(values: npt.NDArray[np.float64], n_resamples: int, seed: int) -> Any:
    """The bootstrap's resample means as they were: one gather of every row a chunk."""
    rng = np.random.default_rng(seed)
    rows, n = values.shape
    out = np.empty((rows, n_resamples))
    step = max(1, 5_000_000 // (n * rows))
    for start in range(0, n_resamples, step):
        stop = min(n_resamples, start + step)
        idx = rng.integers(0, n, size=(stop - start, n), dtype=np.intp)
        out[:, start:stop] = np.take(values, idx, axis=1).sum(axis=-1) / n
    return out


def _bootstrap_cases() -> list[tuple[npt.NDArray[np.float64], int]]:
    """Few distinct columns (coded, -0.0 and 0.0 kept apart), many (gathered from the values),
    small (never coded) and a chunk of more than one resample."""
    rng = np.random.default_rng(8)
    hits = rng.integers(0, 2, (3, 12_000)).astype(float)
    sparse = np.where(
        rng.random((6, 20_000)) < 0.2, rng.choice([-1.0, 0.5, 1 / 3], (6, 20_000)), 0.0
    )
    sparse[:, ::7] = -0.0
    return [
        (hits, 30),
        (sparse, 12),
        (rng.normal(size=(2, 15_000)), 9),
        (rng.integers(-2, 3, (4, 50)) / 3.0, 500),
        (np.full((1, 10_000), -0.0), 3),
        (np.vstack([hits, hits[1], sparse[:3, :12_000], hits[0]]), 7),  # rows alike
        (np.vstack([np.zeros(40), np.full(40, -0.0), np.zeros(40)]), 50),  # 0.0 is not -0.0
        # rows alike over more than one chunk of indices (166 resamples for 3 rows, 250 for 2)
        (np.vstack([hits[:, :10_000], hits[0, :10_000]])[[0, 1, 3]], 300),
    ]


@pytest.mark.parametrize(("values", "n_resamples"), _bootstrap_cases())
def test_resample_means_are_those_of_one_gather_of_every_row(
    values: npt.NDArray[np.float64], n_resamples: int
) -> None:
    found = resample_means(values, n_resamples, np.random.default_rng(4))
    assert found.tobytes() == _gathered_means(values, n_resamples, 4).tobytes()
