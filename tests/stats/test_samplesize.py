"""Paired-t power, sample size and minimum detectable effect for every N from 2 to 10^6: against
statsmodels' TTestPower where it gives a number (its power is NaN where scipy's noncentral t
cdf is), and against a Monte-Carlo simulation of the paired t-test itself.

Set MEMGAUGE_TEST_SEED to replay a simulation; the seed is in every failure message.
"""

from __future__ import annotations

import math
import os
import secrets
import warnings

import numpy as np
import pytest
from tests.helpers import lazy_import

from memgauge import api
from memgauge.cli.main import main
from memgauge.stats import minimum_detectable_effect, paired_t_power, sample_size_paired

power_module = lazy_import("statsmodels.stats.power")
stats = lazy_import("scipy.stats")

NS = [2, 3, 5, 10, 15, 50, 100, 200, 1000, 10_000, 1_000_000]
REPS = 10_000


def _statsmodels_power(effect: float, n: int, two_sided: bool) -> float:
    with warnings.catch_warnings():  # it warns where it returns NaN
        warnings.simplefilter("ignore")
        return float(
            power_module.TTestPower().power(
                effect_size=effect,
                nobs=n,
                alpha=0.05,
                alternative="two-sided" if two_sided else "larger",
            )
        )


@pytest.mark.parametrize("two_sided", [True, False], ids=["two-sided", "one-sided"])
def test_power_equals_statsmodels_wherever_it_has_a_number(two_sided: bool) -> None:
    compared = 0
    for n in NS:
        for effect in (0.001, 0.01, 0.1, 1 / 3, 1.0, 3.0, 20.0):
            ours = paired_t_power(n, effect, 0.05, two_sided)
            assert 0.0 <= ours <= 1.0
            theirs = _statsmodels_power(effect, n, two_sided)
            if math.isfinite(theirs):
                assert ours == pytest.approx(theirs, abs=1e-12), (n, effect)
                compared += 1
    assert compared >= 50


@pytest.mark.parametrize("n", NS)
def test_minimum_detectable_effect_equals_statsmodels_solve_power(n: int) -> None:
    ours = minimum_detectable_effect(n, 1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = power_module.TTestPower().solve_power(
            effect_size=None, nobs=n, alpha=0.05, power=0.8
        )
    # statsmodels' root finder stops early (its own power at its answer is up to 0.80006)...
    assert ours == pytest.approx(theirs, rel=1e-3)
    # ...while its power at ours is the target, wherever it computes one
    sm_power = _statsmodels_power(ours, n, True)
    assert math.isnan(sm_power) or sm_power == pytest.approx(0.8, abs=1e-9)
    assert paired_t_power(n, ours) == pytest.approx(0.8, abs=1e-9)
    assert minimum_detectable_effect(n, 0.15) == pytest.approx(0.15 * ours, rel=1e-9)


def _simulated_power(rng: np.random.Generator, n: int, effect: float, two_sided: bool) -> float:
    """Share of REPS paired t-tests that reject, on differences ~ Normal(effect, 1)."""
    crit = stats.t.isf(0.025 if two_sided else 0.05, n - 1)
    if n <= 1000:  # the data themselves
        t = np.empty(REPS)
        chunk = max(1, 2_000_000 // n)
        for lo in range(0, REPS, chunk):
            x = rng.normal(effect, 1.0, size=(min(chunk, REPS - lo), n))
            t[lo : lo + len(x)] = x.mean(axis=1) / (x.std(axis=1, ddof=1) / math.sqrt(n))
    else:  # the sample mean and variance from their exact, independent laws (Cochran)
        mean = rng.normal(effect, 1.0 / math.sqrt(n), size=REPS)
        var = rng.chisquare(n - 1, size=REPS) / (n - 1)
        t = mean / np.sqrt(var / n)
    return float(np.mean(np.abs(t) > crit if two_sided else t > crit))


def test_power_equals_a_simulation_of_the_paired_t_test() -> None:
    seed = int(os.environ.get("MEMGAUGE_TEST_SEED") or secrets.randbits(32))
    rng = np.random.default_rng(seed)
    cases = [(n, two_sided) for n in NS for two_sided in (True, False)]
    checks = [(n, minimum_detectable_effect(n, 1.0, two_sided=s), s) for n, s in cases]
    # two queries and a large effect: power about 0.985, not the 1 once assumed past nc = 30
    checks.append((2, 31 / math.sqrt(2), True))
    for n, effect, two_sided in checks:
        want = paired_t_power(n, effect, 0.05, two_sided)
        got = _simulated_power(rng, n, effect, two_sided)
        tol = 5 * math.sqrt(want * (1 - want) / REPS)
        assert abs(got - want) <= tol, f"seed {seed}: n={n} effect={effect} {got} vs {want}"
    assert paired_t_power(2, 31 / math.sqrt(2)) < 0.99


def test_sample_size_is_the_smallest_n_reaching_the_power() -> None:
    for delta in (0.01, 0.05, 0.2, 0.5):
        s = sample_size_paired(delta, 0.15)
        assert paired_t_power(s.n_t, delta / 0.15) >= 0.8
        assert s.n_t == 2 or paired_t_power(s.n_t - 1, delta / 0.15) < 0.8


def test_power_at_or_below_alpha_is_refused() -> None:
    with pytest.raises(ValueError, match="exceed alpha"):
        minimum_detectable_effect(10, 0.15, power=0.05)


@pytest.mark.parametrize("n", [2, 5, 10, 50, 100, 200, 1000, 1_000_000])
def test_the_cli_gives_the_effect_for_every_group_size(
    n: int, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["sample-size", "--per-group", str(n)]) == 0
    out = capsys.readouterr().out
    assert f"{n} queries per group detect differences of about" in out
    assert f"{minimum_detectable_effect(n, 0.15):.3g}" in out


@pytest.mark.parametrize(("alpha", "n"), [("1e-20", 2), ("1e-100", 2), ("1e-300", 5)])
def test_a_tiny_alpha_still_gives_the_effect_of_a_small_group(
    alpha: str, n: int, capsys: pytest.CaptureFixture[str]
) -> None:
    """A tiny alpha on 2 to 5 queries needs effects of 10^18 sigma and more: the noncentral tail
    at such noncentralities was an OverflowError (exit 70) or a hang (alpha 1e-300, 5 queries)."""
    assert main(["sample-size", "--alpha", alpha, "--per-group", str(n)]) == 0
    assert f"{n} queries per group detect differences of about" in capsys.readouterr().out
    effect = minimum_detectable_effect(n, 0.15, alpha=float(alpha))
    assert paired_t_power(n, effect / 0.15, float(alpha)) == pytest.approx(0.8, abs=1e-6)


@pytest.mark.parametrize("args", [[], ["--per-group", "5"]])
def test_a_one_sided_alpha_of_a_half_or_more_names_alpha(
    args: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    """It said `p must be in (0, 0.5)`, the t quantile's own words, naming no option."""
    assert main(["sample-size", "--one-sided", "--alpha", "0.5", *args]) == 2
    err = capsys.readouterr().err
    assert "--alpha 0.5: a one-sided test's alpha must be below 0.5" in err
    assert "p must be" not in err


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--delta", "0"], "--delta 0.0: delta must be positive (e.g. 0.05)"),
        (["--sigma", "-1"], "--sigma -1.0: sigma must be positive (e.g. 0.15)"),
        (["--sigma", "0", "--per-group", "5"], "--sigma 0.0: sigma must be positive"),
        (["--power", "1"], "--power 1.0: power must be between 0 and 1 (e.g. 0.8)"),
        (["--alpha", "0"], "--alpha 0.0: alpha must be between 0 and 1 (e.g. 0.05)"),
        # these named no option, or named it as Python does
        (["--power", "0.01"], "--power 0.01 must exceed --alpha 0.05: with no effect"),
        (["--one-sided", "--alpha", "0.5"], "--alpha 0.5: a one-sided test's alpha must be"),
        (
            ["--delta", "1e308", "--sigma", "1e-308"],
            "--delta 1e+308 is inf times --sigma 1e-308: past 1e+150",
        ),
        (["--delta", "1e-300"], "detecting --delta 1e-300 at --sigma 0.15 (--alpha 0.05,"),
    ],
)
def test_an_option_out_of_range_is_named_with_its_value(
    args: list[str], says: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """It said "delta and sigma must be positive" or "alpha and power must be in (0, 1)": one
    of two options, unnamed, and no value to fix it by."""
    assert main(["sample-size", *args]) == 2
    out, err = capsys.readouterr()
    assert says in err
    assert out == ""


def test_from_python_the_argument_is_named_as_python_writes_it() -> None:
    with pytest.raises(ValueError, match=r"^delta=0: delta must be positive"):
        api.sample_size(delta=0, sigma=1.0)
    with pytest.raises(ValueError, match=r"^power=1.5: power must be between 0 and 1"):
        api.minimum_detectable_effect(10, 0.15, power=1.5)
