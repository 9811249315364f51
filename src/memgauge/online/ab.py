"""Sequential A/B tests of a memory change (seed 002 section 4): paired per-query results are fed
to an SPRT whose state persists in the results store (`store.ab_tests`), and the graduation
rules decide, after every batch, whether the treatment ships, is rejected, or keeps testing."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from memgauge.data.jsonio import read_records
from memgauge.data.models import FiniteFloat
from memgauge.errors import UsageError
from memgauge.online.ab_report import ab_report as report_of
from memgauge.online.ab_report import sprt_of
from memgauge.stats.sequential import DECISION_RULES, SPRTState
from memgauge.store.ab_tests import ABTestStore

__all__ = [
    "MAX_ABS_VALUE",
    "Pair",
    "ab_report",
    "add_pairs",
    "create_test",
    "read_pairs",
    "set_paused",
]

#: The largest metric value taken: the SPRT squares and sums differences, and the store sums
#: each arm; within +-1e100 none of that can overflow a double into infinity or NaN.
MAX_ABS_VALUE = 1e100


def _in_range(value: float) -> float:
    if abs(value) > MAX_ABS_VALUE:
        raise ValueError(
            f"{value!r} is beyond +-1e100: a metric value this large would overflow the "
            "SPRT's sums; give the metric in its own units (e.g. MRR in 0-1)"
        )
    return value


Metric = Annotated[FiniteFloat, AfterValidator(_in_range)]


class Pair(BaseModel):
    """One query answered by both arms."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    query_id: str | None = Field(default=None, description="The query.")
    control: Metric = Field(description="The metric for control (e.g. its MRR on the query).")
    treatment: Metric = Field(description="The metric for treatment.")
    control_latency_ms: FiniteFloat | None = Field(
        default=None, ge=0, description="Control's latency."
    )
    treatment_latency_ms: FiniteFloat | None = Field(
        default=None, ge=0, description="Treatment's latency."
    )
    constitutional_delta: Metric | None = Field(
        default=None,
        description="Treatment minus control constitutional surfacing, if measured.",
    )


#: graduation's decision -> the test's status in eval_ab_tests
_STATUS = {
    "graduate": "graduated",
    "reject": "rejected",
    "keep_testing": "running",
    "unmeasured": "running",  # not graduated: a guardrail has no data
}


def read_pairs(path: Path) -> list[Pair]:
    """The paired results of a JSONL file (DataError naming each bad line)."""
    return read_records(path, Pair)


def create_test(store: ABTestStore, name: str, metric: str, config: Mapping[str, Any]) -> None:
    """Start test `name` on `metric` (`config`: delta, alpha, beta, min_samples, improvement,
    max_latency_increase, and optionally rule, prob_threshold, allow_unmeasured), its SPRT at
    zero; a UsageError when the name is taken or the rule unknown."""
    rule = config.get("rule", "sprt")
    if rule not in DECISION_RULES:
        raise UsageError(f"--rule {rule!r}: one of {', '.join(DECISION_RULES)}")
    sprt = sprt_of(config)
    created = store.create(
        name,
        metric,
        config,
        SPRTState().as_dict(),
        upper_bound=sprt.upper,
        lower_bound=sprt.lower,
    )
    if not created:
        raise UsageError(f"an A/B test called {name!r} exists; pick another name")


def _running_test(store: ABTestStore, name: str) -> dict[str, Any]:
    test = store.get(name)
    if test is None:
        raise UsageError(
            f"no A/B test {name!r}; create it with `memgauge ab create {name} --delta ...`"
        )
    if test["status"] == "paused":
        raise UsageError(f"A/B test {name!r} is paused; resume it with `memgauge ab resume {name}`")
    return test


def add_pairs(
    store: ABTestStore,
    name: str,
    pairs: Sequence[Pair],
    shadow_run_ids: Sequence[int] | None = None,
) -> tuple[SPRTState, dict[str, Any]]:
    """Feed `pairs` to test `name`: the SPRT's new state, stored with the pairs, and the test's
    report after them (its status set to what the graduation rules now decide).
    `shadow_run_ids`: the `eval_shadow_runs` row each pair came from."""
    test = _running_test(store, name)
    if test["config"].get("rule") == "beta-binomial":
        _require_binary(name, pairs)
    state = sprt_of(test["config"]).update(
        _finite_state(name, test["state"]), [p.treatment - p.control for p in pairs]
    )
    rows = [p.model_dump() for p in pairs]
    for row, sid in zip(rows, shadow_run_ids or (), strict=False):
        row["shadow_run_id"] = sid
    store.add(name, rows, state.as_dict())
    report = ab_report(store, name)
    store.set_status(name, _STATUS[report["decision"]])
    return state, report


def _require_binary(name: str, pairs: Sequence[Pair]) -> None:
    """The Beta-Binomial rule counts successes: every value must be 0 or 1."""
    for i, p in enumerate(pairs, 1):
        if p.control not in (0, 1) or p.treatment not in (0, 1):
            raise UsageError(
                f"A/B test {name!r} decides by the Beta-Binomial rule, for binary metrics: pair"
                f" {i} ({p.query_id or 'no query id'}) has control {p.control}, treatment"
                f" {p.treatment}; give 0 or 1 (e.g. hit@1), or use a test with --rule sprt"
            )


def _finite_state(name: str, state: dict[str, Any]) -> SPRTState:
    """The stored SPRT state, refused when an earlier memgauge let an infinite value in: every
    later update would turn it to NaN, which SQLite stores as NULL in a NOT NULL column."""
    bad = [k for k, v in state.items() if isinstance(v, float) and not math.isfinite(v)]
    if bad:
        raise UsageError(
            f"A/B test {name!r} holds a non-finite SPRT state ({', '.join(bad)}), from pairs an"
            " older memgauge accepted; its decision cannot be trusted: create a new test"
        )
    return SPRTState(**state)


def set_paused(store: ABTestStore, name: str, paused: bool) -> str:
    """Pause test `name` (adding pairs is refused until it resumes), or resume it; its new
    status (on resuming, what the graduation rules decide)."""
    if store.get(name) is None:
        raise UsageError(f"no A/B test {name!r}")
    status = "paused" if paused else _STATUS[ab_report(store, name)["decision"]]
    store.set_status(name, status)
    return status


def ab_report(store: ABTestStore, name: str) -> dict[str, Any]:
    """Test `name` as it stands: pairs, mean delta with its bootstrap 95% CI, the SPRT's state
    and bounds, P(treatment better) when the metric is binary (Beta(1, 1) priors), p95
    latencies, and the graduation decision with its reasons (`ab_report.ab_report`)."""
    test = store.get(name)
    assert test is not None
    return report_of(test, store.pairs(name))
