"""The quantiles' bootstrap: each resample's quantiles are `np.percentile`'s, to the bit."""

from __future__ import annotations

import numpy as np
import pytest

from memgauge.stats import resampled
from memgauge.stats.resampled import quantile_cis


def _partitioned(values: np.ndarray, qs: list[float], n_resamples: int, seed: int) -> np.ndarray:
    """The resamples' quantiles as NumPy gives them (what `quantile_cis` computed before)."""
    q = np.asarray(qs, dtype=np.float64)
    parts = [
        np.percentile(values[idx], q, axis=1)
        for idx in resampled._indices(values.size, n_resamples, seed)
    ]
    return np.concatenate(parts, axis=1)


def _cases() -> list[tuple[str, np.ndarray]]:
    rng = np.random.default_rng(7)
    return [
        ("token counts, many ties", rng.integers(100, 1500, 1536).astype(np.float64)),
        ("latencies", rng.lognormal(0.0, 1.5, 701)),
        ("two values", np.array([3.0, -1.0])),
        ("all equal", np.full(50, 2.5)),
        ("negatives and zeros", np.array([0.0, 0.0, -3.5, 7.25, 0.0, -1.0, 1e300])),
        # NumPy's partition orders 0.0 and -0.0 as it meets them: it is asked
        ("signed zeros", np.array([0.0, -0.0, -3.5, 7.25, 0.0, -0.0, 1e300])),
        ("tiny and huge", np.concatenate([rng.normal(0, 1e-300, 40), rng.normal(0, 1e300, 40)])),
    ]


@pytest.mark.parametrize("radix", [1 << 15, 0])  # ranks sorted as int16; counted
@pytest.mark.parametrize("qs", [[50.0, 95.0], [0.0, 25.0, 99.9], [33.3, 50.0, 66.6]])
@pytest.mark.parametrize("case", range(7))
def test_counted_order_statistics_are_numpys_percentile_to_the_bit(
    case: int, qs: list[float], radix: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A resample's order statistics from its ranks sorted (up to `_RADIX` values) or counted
    (past it) are NumPy's partition's, to the bit."""
    monkeypatch.setattr(resampled, "_RADIX", radix)
    name, values = _cases()[case]
    for n_resamples, seed in ((1000, 0), (37, 12345)):
        want = _partitioned(values, qs, n_resamples, seed)
        got = resampled._quantile_draws(values, np.asarray(qs, np.float64), n_resamples, seed)
        assert got.shape == want.shape, name
        assert got.view(np.int64).tolist() == want.view(np.int64).tolist(), name


@pytest.mark.parametrize("n", [32_768, 32_769])
def test_the_largest_ranks_sorted_as_int16_and_the_first_counted(n: int) -> None:
    values = np.random.default_rng(5).lognormal(0.0, 1.0, n)
    want = _partitioned(values, [0.0, 50.0, 99.99], 3, 2)
    got = resampled._quantile_draws(values, np.asarray([0.0, 50.0, 99.99]), 3, 2)
    assert got.view(np.int64).tolist() == want.view(np.int64).tolist()


def test_chunked_draws_are_counted_per_chunk(monkeypatch: pytest.MonkeyPatch) -> None:
    """Resamples drawn in several chunks (a large n) give the same floats as NumPy's."""
    monkeypatch.setattr(resampled, "_CHUNK", 3000)
    values = np.random.default_rng(3).integers(0, 40, 997).astype(np.float64)
    want = _partitioned(values, [50.0, 95.0], 500, 9)
    cis = quantile_cis(values, (50.0, 95.0), n_resamples=500, seed=9)
    for ci, draws in zip(cis, want, strict=True):
        low, high = np.percentile(draws, [2.5, 97.5])
        assert (ci.low, ci.high) == (float(low), float(high))


@pytest.mark.parametrize(
    ("values", "qs"),
    [
        (np.array([1.0, 5.0, 2.0, 9.0]), (100.0,)),
        (np.array([1.0, np.inf, 2.0, 9.0, -np.inf]), (50.0,)),
        (np.array([1.0, -0.0, 2.0, 9.0]), (50.0,)),
    ],
)
def test_numpys_edge_rules_are_left_to_numpy(values: np.ndarray, qs: tuple[float, ...]) -> None:
    """A quantile of 100, an infinite value, a -0.0: NumPy's own partition decides, as before."""
    assert resampled._resampled_quantiles(values, np.asarray(qs), np.zeros((2, 4), np.intp)) is None
    with np.errstate(invalid="ignore"):
        want = _partitioned(values, list(qs), 200, 1)
        cis = quantile_cis(values, qs, n_resamples=200, seed=1)
    for ci, draws in zip(cis, want, strict=True):
        finite = draws[np.isfinite(draws)]
        if finite.size:
            low, high = np.percentile(finite, [2.5, 97.5])
            assert (ci.low, ci.high) == (float(low), float(high))


def test_intervals_sharing_their_draws_are_those_drawing_their_own(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Within `shared_draws` the means, quantiles and ratios over the same number of values
    and seed draw their indices once, and give the intervals each gives alone."""
    from memgauge.stats import shared_draws as shared
    from memgauge.stats.bootstrap import bootstrap_cis
    from memgauge.stats.resampled import ratio_ci

    rng = np.random.default_rng(5)
    tokens = rng.integers(100, 1500, 600).astype(np.float64)
    latency = rng.lognormal(0.0, 1.0, 600)
    accuracy = rng.integers(0, 2, 600).astype(np.float64)

    def every() -> list[object]:
        return [
            *bootstrap_cis(tokens[None, :], seed=11),
            *quantile_cis(tokens, (50.0, 95.0), seed=11),
            *bootstrap_cis(latency[None, :], seed=11),
            *quantile_cis(latency, (50.0, 95.0), seed=11),
            ratio_ci(accuracy, tokens, scale=1000.0, seed=11),
            *bootstrap_cis(np.vstack([accuracy, tokens]), seed=11),
        ]

    alone = every()
    calls: list[tuple[int, int, int, int]] = []
    draw = shared._draw

    def counted(seed: int, n: int, n_resamples: int, step: int):  # type: ignore[no-untyped-def]
        calls.append((seed, n, n_resamples, step))
        return draw(seed, n, n_resamples, step)

    monkeypatch.setattr(shared, "_draw", counted)
    with shared.shared_draws():
        together = every()
    assert together == alone
    # one draw for the one-row means, quantiles and ratio, one for the two rows' chunks
    assert sorted(set(calls)) == sorted(calls)
    assert len(calls) == 2
    calls.clear()
    assert every() == alone
    assert len(calls) == 6  # outside, each draws its own


def test_a_draw_bigger_than_the_budget_is_not_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    """A big run's draws (1,000 resamples of 100,000 values: 800 MB) are made chunk by chunk
    by each interval, never held whole; the intervals are the same."""
    from memgauge.stats import shared_draws as shared

    values = np.random.default_rng(3).lognormal(0.0, 1.0, 600)
    alone = quantile_cis(values, (50.0,), seed=2)
    # the budget below one draw of these 600 values
    monkeypatch.setattr(shared, "KEEP_BYTES", 600 * 1000 * 8 - 1)
    calls: list[int] = []
    draw = shared._draw

    def counted(seed: int, n: int, n_resamples: int, step: int):  # type: ignore[no-untyped-def]
        calls.append(n)
        return draw(seed, n, n_resamples, step)

    monkeypatch.setattr(shared, "_draw", counted)
    with shared.shared_draws():
        assert quantile_cis(values, (50.0,), seed=2) == alone
        assert quantile_cis(values, (50.0,), seed=2) == alone
        assert shared._kept.get() == {}
    assert calls == [600, 600]


def test_seed_none_draws_from_fresh_entropy_as_before() -> None:
    """`seed=None` is NumPy's `default_rng(None)`: an interval from fresh entropy (it raised
    TypeError once the draws could be shared), never shared within `shared_draws`."""
    from memgauge.stats import shared_draws as shared
    from memgauge.stats.bootstrap import bootstrap_cis

    values = np.random.default_rng(4).lognormal(0.0, 1.0, 300)
    with shared.shared_draws():
        (ci,) = bootstrap_cis(values[None, :], seed=None)  # type: ignore[arg-type]
        (q,) = quantile_cis(values, (50.0,), seed=None)  # type: ignore[arg-type]
        assert shared._kept.get() == {}
    assert ci.low is not None
    assert ci.high is not None
    assert ci.low <= float(values.mean()) <= ci.high
    assert q.low is not None
    assert q.high is not None
    assert q.low <= float(np.median(values)) <= q.high
