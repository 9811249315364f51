"""Sequential A/B testing on paired per-query differences (seed 002 section 4).

**SPRT.** Each query answered by both control and treatment gives a paired difference
`d = treatment - control` (e.g. of nDCG@10). Wald's sequential probability ratio test of
H0: mean(d) = 0 against H1: mean(d) = delta (the minimum detectable effect), with d modelled
as normal with a standard deviation estimated from the data seen so far:

    log LR_n = (delta * S_n - n * delta^2 / 2) / s_n^2,    S_n = sum of the n differences

stop for H1 ("treatment better") when log LR_n >= log(1 / alpha), for H0 when
log LR_n <= log(beta), continue otherwise; no decision before `min_samples` informative pairs
(the standard deviation needs data, and a tie, d = 0, says nothing of the sign: MRR-like
metrics tie on most queries, and counting ties let a sparse sample's tiny variance stop the
test for H0 early: power about 0.55 with 5% informative pairs, where this rule gives 0.99), and
"inconclusive" at `max_samples`. These boundaries (`bounds="ville"`, the default) are slightly
wider than Wald's approximate log((1 - beta) / alpha) and log(beta / (1 - alpha)), seed 002's
formula, which `bounds="wald"` selects: by Ville's
inequality the likelihood ratio, a martingale under H0, ever reaches 1 / alpha with
probability at most alpha (and symmetrically for beta under H1), so the error rates hold
without relying on Wald's approximations; Wald's boundaries with an estimated variance gave
a type I error of 5.7% for a nominal 5% in simulation. Seed 002's update formula
(`z * effect - effect^2 / 2` with a fixed variance) is the known-variance special case. The
error rates are checked by simulation in `tests/stats/test_sequential.py` and in
BENCHMARKS.md: under H0 the test stops for H1 at most alpha of the time, under H1 at least
1 - beta of the time, within Monte Carlo error. `stats.sprt_rates` simulates both bounds'
error rates side by side (`memgauge ab simulate`).

Seed 002's words for a decision (`sequentialTestDecision`): `treatment_better` is
"accept-treatment", `no_difference` "accept-control", `continue` and `inconclusive` "continue"
(`SEED_DECISIONS`).

**Beta-Binomial.** For a binary success metric, with Beta(1, 1) priors, the exact
P(p_T > p_C) = sum_{i=0}^{a_T - 1} B(a_C + i, b_C + b_T) / ((b_T + i) B(1 + i, b_T) B(a_C, b_C))
(Evan Miller's closed form), a = successes + 1, b = failures + 1. As a decision rule (seed 002
section 4.2, "decision at P > 0.95"): treatment better when P(p_T > p_C) > `threshold`, no
difference (the treatment is not better) when P < 1 - `threshold`, continue otherwise; no
decision before `min_samples` pairs. It is a Bayesian rule, checked after every batch: it does
not hold a frequentist type I error under such peeking the way the SPRT does.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any, Literal

import numpy as np

from memgauge._types import FloatArray
from memgauge._util.numbers import ALPHA, BETA

__all__ = [
    "DECISION_RULES",
    "DEFAULT_GRADUATION",
    "PROB_THRESHOLD",
    "SEED_DECISIONS",
    "SPRT",
    "SPRT_BOUNDS",
    "Bounds",
    "GraduationRules",
    "SPRTState",
    "beta_binomial_decision",
    "graduation",
    "normal_differences",
    "prob_treatment_better",
    "sequential_test",
    "simulate_sprt",
    "simulate_sprt_draws",
    "sparse_differences",
]


#: The SPRT's stopping boundaries: "ville", log(1 / alpha) and log(beta), whose error rates
#: hold with an estimated variance; "wald", seed 002's log((1 - beta) / alpha) and
#: log(beta / (1 - alpha)), Wald's approximations.
Bounds = Literal["ville", "wald"]
SPRT_BOUNDS: tuple[Bounds, ...] = ("ville", "wald")
#: the bounds a sequential test uses unless told otherwise
DEFAULT_BOUNDS: Bounds = "ville"

#: the Beta-Binomial rule's default: treatment better when P(p_T > p_C) exceeds it (seed 002
#: section 4.2, "decision at P > 0.95")
PROB_THRESHOLD = 0.95


#: the SPRT's decision -> seed 002's `sequentialTestDecision`
SEED_DECISIONS = {
    "treatment_better": "accept-treatment",
    "no_difference": "accept-control",
    "continue": "continue",
    "inconclusive": "continue",
}


@dataclass(frozen=True)
class SPRTState:
    """A test's persisted state: enough to continue it later, in another process."""

    n: int = 0
    total: float = 0.0
    total_sq: float = 0.0
    decision: str = "continue"  # continue | treatment_better | no_difference | inconclusive
    log_lr: float = 0.0
    n_nonzero: int = 0  # differences that are not exactly 0 (ties say nothing of the sign)

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return asdict(self)

    @property
    def mean(self) -> float | None:
        """Mean paired difference so far."""
        return self.total / self.n if self.n else None


@dataclass(frozen=True)
class SPRT:
    """Configuration of a paired SPRT.

    Attributes:
        delta: minimum detectable effect, in the metric's units (> 0).
        alpha: type I error (stop for treatment when there is no difference).
        beta: type II error (stop for no difference when the effect is delta): power 1 - beta.
        min_samples: no decision before this many informative pairs (difference not 0).
        max_samples: "inconclusive" when reached without a decision.
        sd_floor: the smallest standard deviation used (guards a run of identical values).
        bounds: "ville" (log(1 / alpha), log(beta)) or "wald" (seed 002's log((1 - beta) /
            alpha), log(beta / (1 - alpha))); see the module docstring.
    """

    delta: float
    alpha: float = ALPHA
    beta: float = BETA
    min_samples: int = 30
    max_samples: int = 100_000
    sd_floor: float = 1e-6
    bounds: Bounds = DEFAULT_BOUNDS

    def __post_init__(self) -> None:
        if not (math.isfinite(self.delta) and self.delta > 0):
            raise ValueError(
                "delta (the minimum detectable effect) must be a finite positive number"
            )
        if not (0 < self.alpha < 1 and 0 < self.beta < 1):
            raise ValueError("alpha and beta must be between 0 and 1")
        if self.bounds not in SPRT_BOUNDS:
            raise ValueError(f"bounds {self.bounds!r}: one of {', '.join(SPRT_BOUNDS)}")

    @property
    def upper(self) -> float:
        """Stop for H1 at or above: log(1 / alpha) (ville), log((1 - beta) / alpha) (wald)."""
        if self.bounds == "wald":
            return math.log((1 - self.beta) / self.alpha)
        return math.log(1 / self.alpha)

    @property
    def lower(self) -> float:
        """Stop for H0 at or below: log(beta) (ville), log(beta / (1 - alpha)) (wald)."""
        if self.bounds == "wald":
            return math.log(self.beta / (1 - self.alpha))
        return math.log(self.beta)

    def update(self, state: SPRTState, diffs: Sequence[float] | FloatArray) -> SPRTState:
        """Add paired differences one at a time, stopping at the first decision."""
        n, total, total_sq, log_lr = state.n, state.total, state.total_sq, state.log_lr
        decision, informative = state.decision, state.n_nonzero
        for d in np.asarray(diffs, dtype=np.float64):
            if decision != "continue":
                break
            n += 1
            total += float(d)
            total_sq += float(d) * float(d)
            informative += int(d != 0)
            if n >= 2 and informative >= self.min_samples:
                var = max((total_sq - total * total / n) / (n - 1), self.sd_floor**2)
                # delta times (total - n delta / 2): squaring a delta past 1e154 overflowed
                log_lr = self.delta * (total - n * self.delta / 2) / var
                if log_lr >= self.upper:
                    decision = "treatment_better"
                elif log_lr <= self.lower:
                    decision = "no_difference"
            if decision == "continue" and n >= self.max_samples:
                decision = "inconclusive"
        return SPRTState(n, total, total_sq, decision, log_lr, informative)


def sequential_test(test: SPRT, diffs: Sequence[float] | FloatArray) -> dict[str, Any]:
    """The SPRT run over paired differences `diffs` (treatment - control, in query order; NaN,
    a query one arm did not score, left out), as a comparison carries it: seed 002's
    `sequential_test_decision` ("continue", "accept-treatment", "accept-control"), the SPRT's
    own `decision`, `log_lr`, the pairs it read before deciding (`n`) of `n_pairs`, the
    informative ones, and its configuration (`delta`, `alpha`, `beta`, `bounds`, `upper`,
    `lower`, `min_samples`)."""
    d = np.asarray(diffs, dtype=np.float64)
    d = d[np.isfinite(d)]
    state = test.update(SPRTState(), d)
    return {
        "sequential_test_decision": SEED_DECISIONS[state.decision],
        "decision": state.decision,
        "log_lr": state.log_lr if state.n >= 2 and state.n_nonzero >= test.min_samples else None,
        "n": state.n,
        "n_pairs": int(d.size),
        "n_informative": state.n_nonzero,
        "delta": test.delta,
        "alpha": test.alpha,
        "beta": test.beta,
        "bounds": test.bounds,
        "upper": test.upper,
        "lower": test.lower,
        "min_samples": test.min_samples,
    }


Draw = Callable[[np.random.Generator, int, int], FloatArray]


def normal_differences(mean: float, sd: float) -> Draw:
    """Normal paired differences (continuous metrics)."""
    return lambda rng, n_sims, horizon: rng.normal(mean, sd, size=(n_sims, horizon))


def sparse_differences(mean: float, p_informative: float) -> Draw:
    """MRR-like paired differences: 0 (both arms rank alike) with probability
    1 - p_informative, else a reciprocal-rank-sized step (1, 1/2, 1/3, 1/4) up or down, the
    sign tilted so that the mean is `mean`."""
    steps = np.array([1.0, 0.5, 1 / 3, 0.25])
    up = 0.5 + mean / (2 * p_informative * float(steps.mean()))
    if not 0 <= up <= 1:
        raise ValueError("mean too large for p_informative: no such distribution")

    def draw(rng: np.random.Generator, n_sims: int, horizon: int) -> FloatArray:
        size = (n_sims, horizon)
        sign = np.where(rng.random(size) < up, 1.0, -1.0)
        step = rng.choice(steps, size=size)
        return np.where(rng.random(size) < p_informative, sign * step, 0.0)

    return draw


def simulate_sprt(
    test: SPRT, mean: float, sd: float, n_sims: int, *, seed: int = 0, horizon: int = 4000
) -> dict[str, float]:
    """`simulate_sprt_draws` on normal differences."""
    return simulate_sprt_draws(
        test, normal_differences(mean, sd), n_sims, seed=seed, horizon=horizon
    )


def simulate_sprt_draws(
    test: SPRT, draw: Draw, n_sims: int, *, seed: int = 0, horizon: int = 4000, chunk: int = 500
) -> dict[str, float]:
    """Run `n_sims` tests on differences from `draw` (vectorized, `chunk` tests at a time,
    the same rule as `SPRT.update`); the share of each decision and the mean number of pairs
    used. Pairs beyond `horizon` count as inconclusive."""
    rng = np.random.default_rng(seed)
    n = np.arange(1, horizon + 1, dtype=np.float64)
    h1_all, h0_all, used = [], [], []
    for start in range(0, n_sims, chunk):
        d = draw(rng, min(chunk, n_sims - start), horizon)
        s = np.cumsum(d, axis=1)
        ss = np.cumsum(d * d, axis=1)
        informative = np.cumsum(d != 0, axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            var = np.maximum((ss - s * s / n) / np.maximum(n - 1, 1), test.sd_floor**2)
            llr = test.delta * (s - n * test.delta / 2) / var
        active = (n >= 2) & (informative >= test.min_samples)
        up = (llr >= test.upper) & active
        down = (llr <= test.lower) & active
        first_up = np.where(up.any(axis=1), up.argmax(axis=1), horizon)
        first_down = np.where(down.any(axis=1), down.argmax(axis=1), horizon)
        h1_all.append(first_up < first_down)
        h0_all.append(first_down < first_up)
        used.append(np.minimum(np.minimum(first_up, first_down) + 1, horizon))
    h1, h0 = np.concatenate(h1_all), np.concatenate(h0_all)
    return {
        "treatment_better": float(h1.mean()),
        "no_difference": float(h0.mean()),
        "inconclusive": float((~h1 & ~h0).mean()),
        "mean_pairs": float(np.concatenate(used).mean()),
    }


def prob_treatment_better(
    control_successes: int, control_trials: int, treatment_successes: int, treatment_trials: int
) -> float:
    """P(p_treatment > p_control) under Beta(1, 1) priors, exactly (see the module docstring)."""
    from scipy.special import betaln  # scipy loads in ~0.5 s: only when used

    if min(control_trials, treatment_trials) < 0 or control_successes > control_trials:
        raise ValueError("successes must be between 0 and trials")
    if treatment_successes > treatment_trials:
        raise ValueError("successes must be between 0 and trials")
    a_c, b_c = control_successes + 1, control_trials - control_successes + 1
    a_t, b_t = treatment_successes + 1, treatment_trials - treatment_successes + 1
    i = np.arange(a_t, dtype=np.float64)
    terms = betaln(a_c + i, b_c + b_t) - np.log(b_t + i) - betaln(1 + i, b_t) - betaln(a_c, b_c)
    return float(np.clip(np.exp(terms).sum(), 0.0, 1.0))


#: how an A/B test decides: Wald's SPRT on paired differences (any metric), or the
#: Beta-Binomial P(T > C) (binary metrics only)
DECISION_RULES = ("sprt", "beta-binomial")


def beta_binomial_decision(
    control_successes: int,
    treatment_successes: int,
    n: int,
    *,
    threshold: float = PROB_THRESHOLD,
    min_samples: int = 30,
) -> tuple[str, float | None]:
    """The Beta-Binomial rule's decision on `n` paired binary outcomes (see the module
    docstring) and P(p_T > p_C) (None with no pairs): `treatment_better`, `no_difference` or
    `continue`, in the SPRT's vocabulary so that `graduation` reads either."""
    if not 0.5 < threshold < 1:
        raise ValueError("threshold must be between 0.5 and 1")
    if n == 0:
        return "continue", None
    p = prob_treatment_better(control_successes, n, treatment_successes, n)
    if n < min_samples:
        return "continue", p
    if p > threshold:
        return "treatment_better", p
    if p < 1 - threshold:
        return "no_difference", p
    return "continue", p


@dataclass(frozen=True)
class GraduationRules:
    """When a treatment ships (seed 002 section 4): enough pairs, the SPRT says better, the
    mean improvement reaches the threshold, no regression on constitutional surfacing, and
    p95 latency up by less than `max_latency_increase`. A guardrail with no data blocks
    graduation (decision `unmeasured`) unless `allow_unmeasured` says the user accepts that."""

    min_samples: int = 100
    improvement: float = 0.03
    max_latency_increase: float = 0.20
    allow_unmeasured: bool = False


#: an A/B test's graduation defaults (`ab create`, `memgauge.api.create_ab_test`, a feature
#: flag's test and its `min_samples` / `graduation_threshold`): these rules as written above
DEFAULT_GRADUATION = GraduationRules()


def graduation(
    state: SPRTState,
    rules: GraduationRules,
    *,
    n_pairs: int | None = None,
    mean_delta: float | None = None,
    constitutional_delta: float | None = None,
    p95_control_ms: float | None = None,
    p95_treatment_ms: float | None = None,
) -> tuple[str, list[str]]:
    """`graduate`, `reject`, `keep_testing` or `unmeasured`, with every reason. `n_pairs` and
    `mean_delta` count every pair fed, also those after the SPRT decided (default: the SPRT's
    own).

    The guardrails (constitutional surfacing, p95 latency) are applied once `min_samples`
    pairs are in, not on a handful. A guardrail with no data is never silently passed: a test
    that would graduate is `unmeasured` ("not graduated: unmeasured") instead, unless
    `rules.allow_unmeasured`, and then graduates with the unmeasured guardrails in its
    reasons."""
    n = state.n if n_pairs is None else n_pairs
    if n < rules.min_samples:
        return "keep_testing", [f"{n} of {rules.min_samples} pairs"]
    reasons: list[str] = []
    unmeasured: list[str] = []
    if constitutional_delta is None:
        unmeasured.append("constitutional surfacing not measured")
    elif constitutional_delta < 0:
        reasons.append(f"constitutional surfacing regressed ({constitutional_delta:+z.3f})")
    if not p95_control_ms or p95_treatment_ms is None:
        unmeasured.append("latency not measured")
    else:
        increase = p95_treatment_ms / p95_control_ms - 1
        if increase >= rules.max_latency_increase:
            reasons.append(
                f"p95 latency up {increase:.0%} (limit {rules.max_latency_increase:.0%})"
            )
    if reasons:
        return "reject", reasons
    if state.decision == "no_difference":
        return "reject", ["the SPRT found no improvement of the minimum detectable effect"]
    if state.decision != "treatment_better":
        return "keep_testing", [f"SPRT: {state.decision}", *unmeasured]
    mean = (state.mean or 0.0) if mean_delta is None else mean_delta
    if mean < rules.improvement:
        return "keep_testing", [
            f"improvement {mean:+z.4f} below the threshold {rules.improvement}",
            *unmeasured,
        ]
    better = f"treatment better; improvement {mean:+z.4f} >= {rules.improvement}"
    if unmeasured and not rules.allow_unmeasured:
        return "unmeasured", [
            f"not graduated: unmeasured ({'; '.join(unmeasured)})",
            better,
            "measure the guardrails, or create the test with --allow-unmeasured",
        ]
    return "graduate", [better, *unmeasured]
