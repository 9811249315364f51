"""An A/B test's state as people read it: the SPRT's decision and path, the bootstrap CI of the
paired deltas, P(treatment > control) for a binary metric, latency, and the graduation rules'
verdict. `memgauge ab status` prints it; the viewer draws it."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from memgauge._util.listing import counted
from memgauge._util.numbers import fmean
from memgauge.stats import bootstrap_ci
from memgauge.stats.sequential import (
    DEFAULT_BOUNDS,
    PROB_THRESHOLD,
    SPRT,
    GraduationRules,
    SPRTState,
    beta_binomial_decision,
    graduation,
    prob_treatment_better,
)

__all__ = ["STORED_DEFAULTS", "ab_report", "sprt_of", "sprt_path", "sprt_started", "sprt_text"]

#: what a stored test's configuration without a setting holds: tests made before the setting
#: was (issue 19's rule, the bounds), or by `flags create`, whose test has no rule or bounds
STORED_DEFAULTS: dict[str, Any] = {
    "rule": "sprt",
    "bounds": DEFAULT_BOUNDS,
    "prob_threshold": PROB_THRESHOLD,
    "allow_unmeasured": False,
}


def sprt_of(config: Mapping[str, Any]) -> SPRT:
    """The test's SPRT, from its stored configuration."""
    return SPRT(
        delta=config["delta"],
        alpha=config["alpha"],
        beta=config["beta"],
        bounds=config.get("bounds", STORED_DEFAULTS["bounds"]),
    )


def sprt_started(state: SPRTState, sprt: SPRT) -> bool:
    """Whether the SPRT has computed a likelihood ratio: it waits for `min_samples`
    informative pairs (a tie says nothing of the sign) to estimate a variance."""
    return state.n >= 2 and state.n_nonzero >= sprt.min_samples


def sprt_text(state: SPRTState, sprt: SPRT) -> str:
    """The SPRT's state in words, as every medium shows it (`ab status`, the viewer): before it
    starts, how far it is from starting, never a log LR of 0.00 (which reads as a measured
    "no evidence either way")."""
    if not sprt_started(state, sprt):
        return (
            f"not started: {state.n_nonzero} of {sprt.min_samples} informative pairs"
            f" (pairs whose arms differ; {counted(state.n, 'pair')} in all)"
        )
    return (
        f"{state.decision} (log LR {state.log_lr:.2f}; bounds {sprt.lower:.2f} / {sprt.upper:.2f})"
    )


def sprt_path(config: Mapping[str, Any], pairs: Sequence[Mapping[str, Any]]) -> list[float | None]:
    """The log likelihood ratio after each pair, as the test saw them: None (a gap) until the
    SPRT has enough informative pairs to compute one; flat after its decision."""
    sprt = sprt_of(config)
    state = SPRTState()
    path: list[float | None] = []
    for p in pairs:
        state = sprt.update(state, [float(p["treatment"]) - float(p["control"])])
        path.append(state.log_lr if sprt_started(state, sprt) else None)
    return path


def ab_report(test: Mapping[str, Any], pairs: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The test (`ABTestStore.get`) with its pairs, summed up (the keys of `ab status --json`).
    `rule_decision` is the decision rule's (the SPRT's, or the Beta-Binomial P(T > C) against
    the test's `prob_threshold`), which the graduation rules read."""
    cfg, state = test["config"], SPRTState(**test["state"])
    deltas = np.array([p["treatment"] - p["control"] for p in pairs], dtype=np.float64)
    ci = bootstrap_ci(deltas, seed=0) if len(deltas) else None
    binary = bool(pairs) and all(p["control"] in (0, 1) and p["treatment"] in (0, 1) for p in pairs)
    p_better = None
    if binary:
        c = int(sum(p["control"] for p in pairs))
        t = int(sum(p["treatment"] for p in pairs))
        p_better = prob_treatment_better(c, len(pairs), t, len(pairs))
    lat_c = [p["control_latency_ms"] for p in pairs if p["control_latency_ms"] is not None]
    lat_t = [p["treatment_latency_ms"] for p in pairs if p["treatment_latency_ms"] is not None]
    p95_c = float(np.percentile(lat_c, 95)) if lat_c else None
    p95_t = float(np.percentile(lat_t, 95)) if lat_t else None
    const = [p["constitutional_delta"] for p in pairs if p["constitutional_delta"] is not None]
    rule = cfg.get("rule", STORED_DEFAULTS["rule"])
    decided = state
    if rule == "beta-binomial":
        # the rule decides; the SPRT's state is still kept and shown
        bb, p_better = beta_binomial_decision(
            int(sum(p["control"] for p in pairs)),
            int(sum(p["treatment"] for p in pairs)),
            len(pairs),
            threshold=cfg.get("prob_threshold", STORED_DEFAULTS["prob_threshold"]),
            min_samples=cfg["min_samples"],
        )
        decided = dataclasses.replace(state, decision=bb)
    rules = GraduationRules(
        cfg["min_samples"],
        cfg["improvement"],
        cfg["max_latency_increase"],
        allow_unmeasured=cfg.get("allow_unmeasured", STORED_DEFAULTS["allow_unmeasured"]),
    )
    decision, reasons = graduation(
        decided,
        rules,
        n_pairs=len(pairs),
        # the mean delta the report gives (`fmean`'s, exact), not NumPy's: a mean shown as
        # meeting the threshold exactly was "below" it
        mean_delta=ci.mean if ci else None,
        constitutional_delta=fmean(const) if const else None,
        p95_control_ms=p95_c,
        p95_treatment_ms=p95_t,
    )
    sprt = sprt_of(cfg)
    started = sprt_started(state, sprt)
    return {
        "name": test["name"],
        "status": test["status"],
        "graduated_at": test["graduated_at"],
        "metric": test["metric"],
        "n_pairs": len(pairs),
        "mean_delta": ci.mean if ci else None,
        "delta_ci95": [ci.low, ci.high] if ci else None,
        "sprt": {
            **state.as_dict(),
            # n/a until computed: the stored 0.0 is a starting value, not a measurement
            "log_lr": state.log_lr if started else None,
            "upper": sprt.upper,
            "lower": sprt.lower,
            "min_samples": sprt.min_samples,
            "started": started,
            "text": sprt_text(state, sprt),
        },
        "rule": rule,
        "rule_decision": decided.decision,
        "p_treatment_better": p_better,
        "p95_latency_ms": {"control": p95_c, "treatment": p95_t},
        "decision": decision,
        "reasons": reasons,
        "config": cfg,
    }
