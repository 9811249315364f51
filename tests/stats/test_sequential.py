"""The paired SPRT holds its error rates (simulation), continues across processes from its
persisted state, and the Beta-Binomial probability matches Monte Carlo."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from memgauge.stats.sequential import (
    SPRT,
    SPRTState,
    prob_treatment_better,
    simulate_sprt,
    simulate_sprt_draws,
    sparse_differences,
)

N_SIMS = 4000


def _mc(p: float) -> float:
    return 3 * math.sqrt(p * (1 - p) / N_SIMS)  # three Monte Carlo standard errors


@pytest.mark.parametrize(("delta", "sd"), [(0.2, 1.0), (0.05, 0.15), (0.02, 0.1)])
def test_type_one_error_at_most_alpha_and_power_at_least_one_minus_beta(
    delta: float, sd: float
) -> None:
    test = SPRT(delta=delta)
    null = simulate_sprt(test, 0.0, sd, N_SIMS, seed=11, horizon=2000)
    alt = simulate_sprt(test, delta, sd, N_SIMS, seed=12, horizon=2000)
    assert null["treatment_better"] <= test.alpha + _mc(test.alpha)
    assert alt["treatment_better"] >= 1 - test.beta - _mc(1 - test.beta)
    assert null["inconclusive"] < 0.01
    assert alt["inconclusive"] < 0.01


@pytest.mark.parametrize(("delta", "p_informative"), [(0.05, 0.3), (0.02, 0.05)])
def test_error_rates_hold_on_sparse_discrete_mrr_like_differences(
    delta: float, p_informative: float
) -> None:
    """Most queries tie (both arms rank the first relevant memory alike); the rest move by a
    reciprocal-rank step. Far from normal, yet the error rates hold."""
    test = SPRT(delta=delta)
    null = simulate_sprt_draws(
        test, sparse_differences(0.0, p_informative), N_SIMS // 2, seed=21, horizon=6000
    )
    alt = simulate_sprt_draws(
        test, sparse_differences(delta, p_informative), N_SIMS // 2, seed=22, horizon=6000
    )
    n = N_SIMS // 2
    assert null["treatment_better"] <= test.alpha + 3 * math.sqrt(0.05 * 0.95 / n)
    assert alt["treatment_better"] >= 1 - test.beta - 3 * math.sqrt(0.2 * 0.8 / n)
    assert null["inconclusive"] < 0.01
    assert alt["inconclusive"] < 0.01


def test_the_simulation_and_the_incremental_test_decide_alike() -> None:
    draw = sparse_differences(0.03, 0.2)
    test = SPRT(delta=0.03)
    rng = np.random.default_rng(3)
    data = draw(rng, 40, 3000)
    incremental = [test.update(SPRTState(), row).decision for row in data]
    sim = simulate_sprt_draws(test, lambda _r, n, h: data[:n, :h], 40, horizon=3000, chunk=40)
    assert sim["treatment_better"] == incremental.count("treatment_better") / 40
    assert sim["no_difference"] == incremental.count("no_difference") / 40


def test_the_incremental_test_matches_the_simulation_path() -> None:
    rng = np.random.default_rng(5)
    diffs = rng.normal(0.2, 1.0, 3000)
    test = SPRT(delta=0.2)
    whole = test.update(SPRTState(), diffs)
    # the same data fed in chunks, with the state serialized in between (another process)
    state = SPRTState()
    for chunk in np.array_split(diffs, 17):
        state = SPRTState(**json.loads(json.dumps(state.as_dict())))
        state = test.update(state, chunk)
    assert state == whole
    assert whole.decision in ("treatment_better", "no_difference")
    assert whole.n >= test.min_samples
    assert test.update(whole, [5.0, 5.0]) == whole  # decided: further data changes nothing


def test_no_decision_before_min_samples_and_inconclusive_at_the_cap() -> None:
    test = SPRT(delta=0.2, min_samples=30, max_samples=40)
    early = test.update(SPRTState(), [3.0] * 29)
    assert early.decision == "continue"
    flat = test.update(SPRTState(), np.tile([0.1, 0.0], 20))
    assert flat.decision == "inconclusive"  # 20 informative pairs of the 30 needed, at the cap
    assert (flat.n, flat.n_nonzero) == (40, 20)
    ties = SPRT(delta=0.03).update(SPRTState(), [0.0] * 200)  # both arms always alike
    assert ties.decision == "continue"  # no information either way: never "no difference"
    with pytest.raises(ValueError, match="positive"):
        SPRT(delta=0)


def test_beta_binomial_probability_matches_monte_carlo() -> None:
    rng = np.random.default_rng(0)
    for c, t in [
        ((40, 100), (55, 100)),
        ((5, 10), (5, 10)),
        ((0, 3), (3, 3)),
        ((90, 100), (80, 100)),
    ]:
        exact = prob_treatment_better(c[0], c[1], t[0], t[1])
        sim = (
            rng.beta(t[0] + 1, t[1] - t[0] + 1, 400_000)
            > rng.beta(c[0] + 1, c[1] - c[0] + 1, 400_000)
        ).mean()
        assert exact == pytest.approx(sim, abs=0.004)
    assert prob_treatment_better(5, 10, 5, 10) == pytest.approx(0.5)
    with pytest.raises(ValueError, match="between 0 and trials"):
        prob_treatment_better(5, 3, 1, 2)


@pytest.mark.parametrize("bounds", ["ville", "wald"])
def test_each_bounds_simulated_error_rates_are_near_alpha_and_beta(bounds: str) -> None:
    """What `memgauge ab simulate` prints, at a small size: both bounds' type I error near
    alpha and power near 1 - beta; Ville's type I error at most alpha (within Monte Carlo
    error), Wald's (seed 002's) a little above it and its bounds narrower."""
    from memgauge.stats.sprt_rates import bounds_rates

    n = 3000
    rates = [r for r in bounds_rates(n, cells=((0.2, 1.0),), seed=7) if r.bounds == bounds]
    (rate,) = rates
    se_alpha = math.sqrt(0.05 * 0.95 / n)
    se_power = math.sqrt(0.2 * 0.8 / n)
    assert abs(rate.type_one - 0.05) <= 0.01 + 3 * se_alpha
    assert abs(rate.power - 0.80) <= 0.04 + 3 * se_power
    test = SPRT(delta=0.2, bounds=bounds)  # type: ignore[arg-type]
    if bounds == "ville":
        assert rate.type_one <= 0.05 + 3 * se_alpha
        assert (test.upper, test.lower) == (math.log(20), math.log(0.2))
    else:
        assert (test.upper, test.lower) == (math.log(0.8 / 0.05), math.log(0.2 / 0.95))
