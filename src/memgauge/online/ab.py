"""Sequential A/B tests of a memory change (seed 002 section 4): paired per-query results are fed
to an SPRT whose state persists in the results store (`store.ab_tests`), and the graduation
rules decide, after every batch, whether the treatment ships, is rejected, or keeps testing."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from typing import Annotated, Any

from pydantic import (
    AfterValidator,
    ConfigDict,
    Field,
    field_validator,
    model_validator,
)

from memgauge._util.model import Model
from memgauge._util.numbers import INT32_MAX
from memgauge.data.models import FiniteFloat
from memgauge.errors import UsageError, argument, check_number, on_command_line
from memgauge.online.ab_report import STORED_DEFAULTS, sprt_of
from memgauge.online.ab_report import ab_report as report_of
from memgauge.stats.sequential import DECISION_RULES, SPRT_BOUNDS, SPRTState
from memgauge.store.ab_tests import ABTestStore

__all__ = [
    "MAX_ABS_VALUE",
    "Pair",
    "ab_report",
    "add_pairs",
    "check_settings",
    "create_test",
    "pair_key",
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


class Pair(Model):
    """One query answered by both arms."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    query_id: str = Field(
        min_length=1,
        description="The query. With the values it identifies the pair: a pair already added "
        "to a test (the same query id and values) is skipped when added again.",
    )
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

    @model_validator(mode="before")
    @classmethod
    def _missing_id(cls, data: Any) -> Any:
        # a missing id goes to _named, which says why it is required ("field is missing"
        # would not); the other fields are still checked
        if isinstance(data, dict) and "query_id" not in data:
            return {"query_id": None, **data}
        return data

    @field_validator("query_id", mode="before")
    @classmethod
    def _named(cls, value: Any) -> Any:
        if value is None or value == "":
            raise ValueError(
                "required: a pair is identified by its query id and values, so that adding "
                "the file again does not count it twice"
            )
        return value


#: graduation's decision -> the test's status in eval_ab_tests
_STATUS = {
    "graduate": "graduated",
    "reject": "rejected",
    "keep_testing": "running",
    "unmeasured": "running",  # not graduated: a guardrail has no data
}


def pair_key(pair: Pair) -> str:
    """What identifies a pair from a file: its query id and every value it carries, as
    compact JSON (floats in their shortest exact form, so a value read back from the store
    gives the same key). The same query measured again, with other values, is another pair.
    Revision 0015 keys the pairs stored before it the same way; keep the two in step."""
    values = (
        pair.control,
        pair.treatment,
        pair.control_latency_ms,
        pair.treatment_latency_ms,
        pair.constitutional_delta,
    )
    return json.dumps(
        [pair.query_id, *(None if v is None else float(v) for v in values)],
        separators=(",", ":"),
    )


#: the settings of a test's configuration that are numbers (`create_test`)
_NUMBERS = (
    "delta",
    "alpha",
    "beta",
    "min_samples",
    "improvement",
    "max_latency_increase",
    "prob_threshold",
)


#: the numbers `ab create`'s options take, as (least, most, what to give): from Python they
#: went unchecked (`min_samples=-1` and `prob_threshold=nan` stored, `improvement=nan` a NOT
#: NULL error of the store's); `prob_threshold`'s ends are open
_RANGES = {
    "min_samples": (2, INT32_MAX, f"from 2 to {INT32_MAX:,} pairs"),
    "improvement": (-math.inf, math.inf, "a finite improvement (e.g. 0.03)"),
    "max_latency_increase": (0.0, math.inf, "a finite fraction, at least 0"),
    "prob_threshold": (0.5, 1.0, "more than 0.5 and less than 1"),
}


def check_settings(config: Mapping[str, Any]) -> None:
    """A test's configuration refused before a store is made or a flag stored without its
    test: a TypeError naming a setting that is not a number, as it came from Python (stored,
    it would fail every later read of the test); a UsageError for one out of its range
    (`_RANGES`), or an unknown rule or bounds;
    a ValueError for a delta, alpha or beta no SPRT takes (`delta=nan`, `alpha=2`)."""
    for key in _NUMBERS:
        if key in config:
            check_number(key, config[key], whole=key == "min_samples")
    for key, (least, most, says) in _RANGES.items():
        value = config.get(key)
        if value is None:
            continue
        ends = (least, most) if key == "prob_threshold" else ()
        if not (math.isfinite(value) and least <= value <= most) or value in ends:
            raise UsageError(f"{argument(key, value)}: {says}")
    for key, known in (("rule", DECISION_RULES), ("bounds", SPRT_BOUNDS)):
        if (value := config.get(key, STORED_DEFAULTS[key])) not in known:
            raise UsageError(f"{argument(key, repr(value))}: one of {', '.join(known)}")
    if {"delta", "alpha", "beta"} <= config.keys():
        sprt_of(config)


def create_test(
    store: ABTestStore,
    name: str,
    metric: str,
    config: Mapping[str, Any],
    *,
    exist_ok: bool = False,
) -> bool:
    """Start test `name` on `metric` (`config`: delta, alpha, beta, min_samples, improvement,
    max_latency_increase, and optionally rule, bounds, prob_threshold, allow_unmeasured), its
    SPRT at zero; whether it did. A test of that name with the same metric and settings is
    kept (a notebook or CI job run again, whose `add_pairs` then adds nothing); a UsageError
    when the rule or bounds are unknown, or when the name is taken by a test of other
    settings (unless `exist_ok`: the test that holds it is kept); a TypeError naming a
    setting that is not a number (`check_settings`)."""
    check_settings(config)
    sprt = sprt_of(config)
    created = store.create(
        name,
        metric,
        config,
        SPRTState().as_dict(),
        upper_bound=sprt.upper,
        lower_bound=sprt.lower,
    )
    if not created and not exist_ok:
        held = store.get(name) or {}
        asked = {"metric": metric, **json.loads(json.dumps(dict(config)))}
        # a setting the stored test lacks is its default (a flag's test has no bounds)
        has = {"metric": held.get("metric"), **STORED_DEFAULTS, **(held.get("config") or {})}
        other = next((k for k in asked if has.get(k) != asked[k]), None)
        if other is not None:
            raise UsageError(
                f"an A/B test called {name!r} exists with {argument(other)} {has.get(other)},"
                f" not {asked[other]}; pick another name"
            )
    return created


def _running_test(store: ABTestStore, name: str) -> dict[str, Any]:
    test = store.get(name)
    if test is None:
        how = (
            f"memgauge ab create {name} --delta ..."
            if on_command_line()
            else f"create_ab_test({name!r}, delta=...)"
        )
        raise UsageError(f"no A/B test {name!r}; create it with `{how}`")
    _refuse_paused(name, test)
    return test


def _refuse_paused(name: str, test: Mapping[str, Any]) -> None:
    if test["status"] == "paused":
        how = (
            f"memgauge ab resume {name}"
            if on_command_line()
            else f"pause_ab_test({name!r}, paused=False)"
        )
        raise UsageError(f"A/B test {name!r} is paused; resume it with `{how}`")


def add_pairs(
    store: ABTestStore,
    name: str,
    pairs: Sequence[Pair],
    shadow_run_ids: Sequence[int] | None = None,
) -> tuple[int, SPRTState, dict[str, Any]]:
    """Feed `pairs` to test `name`, each once: a pair the test already holds (`pair_key`; from
    a shadow run, its `eval_shadow_runs` row, `shadow_run_ids`), or one repeated in `pairs`,
    is skipped. Returns how many were new, the SPRT's state after them (stored with them, in
    the transaction that took them), and the test's report (its status set to what the
    graduation rules now decide)."""
    test = _running_test(store, name)
    if test["config"].get("rule") == "beta-binomial":
        _require_binary(name, pairs)
    sprt = sprt_of(test["config"])
    rows = [p.model_dump() for p in pairs]
    for row, p in zip(rows, pairs, strict=True):
        row["pair_key"] = pair_key(p)
    for row, sid in zip(rows, shadow_run_ids or (), strict=False):
        row["shadow_run_id"], row["pair_key"] = sid, f"shadow:{sid}"
    after: list[SPRTState] = []
    seen: list[str] = []  # the status under the lock that took the pairs

    def advance(now: dict[str, Any], new: list[Mapping[str, Any]]) -> dict[str, Any]:
        # the test as it stands under its lock: another process may have graduated or paused
        # it since `_running_test` read it
        _refuse_paused(name, now)
        seen.append(now["status"])
        graduated = now["graduated_at"] if now["status"] == "graduated" else None
        if graduated and new:
            # its decision rolled its flag out to 100%: later pairs turning the test to
            # rejected would leave the flag on for everyone on a verdict the store no longer
            # holds (pairs it holds already are skipped as ever: adding a file again is fine)
            raise UsageError(
                f"A/B test {name!r} graduated at {graduated} (a flag of that name, if any, was"
                f" rolled out to 100%): it is decided and takes no more pairs ({len(new)} new"
                " here, nothing written); to measure the change again, create another test"
            )
        state = sprt.update(
            _finite_state(name, now["state"]),
            [float(p["treatment"]) - float(p["control"]) for p in new],
        )
        after.append(state)
        return state.as_dict()

    added = store.add(name, rows, advance)
    report = ab_report(store, name)
    # only if no other process changed the status since the pairs were taken: an `ab pause`
    # in between stays paused, and a decision on more pairs is not undone by this older one
    store.set_status(name, _STATUS[report["decision"]], expect=seen[-1])
    return len(added), after[-1], report


def _require_binary(name: str, pairs: Sequence[Pair]) -> None:
    """The Beta-Binomial rule counts successes: every value must be 0 or 1."""
    for i, p in enumerate(pairs, 1):
        if p.control not in (0, 1) or p.treatment not in (0, 1):
            raise UsageError(
                f"A/B test {name!r} decides by the Beta-Binomial rule, for binary metrics: pair"
                f" {i} ({p.query_id or 'no query id'}) has control {p.control}, treatment"
                f" {p.treatment}; give 0 or 1 (e.g. hit@1), or use a test with"
                f" {'--rule sprt' if on_command_line() else 'rule=' + repr('sprt')}"
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
    status (on resuming, what the graduation rules decide). A graduated test is decided (its
    flag, if any, was rolled out to 100%): both are refused, keeping its graduation time."""
    test = store.get(name)
    if test is None:
        raise UsageError(f"no A/B test {name!r}")
    _refuse_graduated(name, test, "pause" if paused else "resume")
    status = "paused" if paused else _STATUS[ab_report(store, name)["decision"]]
    # only from the status read here: a graduation since is refused as above, not undone
    if not store.set_status(name, status, expect=test["status"]):
        now = store.get(name)
        if now is not None:
            _refuse_graduated(name, now, "pause" if paused else "resume")
        raise UsageError(f"A/B test {name!r} changed while this ran; run it again")
    return status


def _refuse_graduated(name: str, test: Mapping[str, Any], verb: str) -> None:
    if test["status"] == "graduated":
        what = f"`ab {verb}`" if on_command_line() else "pausing or resuming"
        raise UsageError(
            f"A/B test {name!r} graduated at {test['graduated_at']} (a flag of that name, if"
            f" any, was rolled out to 100%): it is decided, and {what} does not apply; to"
            " measure the change again, create another test"
        )


def ab_report(store: ABTestStore, name: str) -> dict[str, Any]:
    """Test `name` as it stands: pairs, mean delta with its bootstrap 95% CI, the SPRT's state
    and bounds, P(treatment better) when the metric is binary (Beta(1, 1) priors), p95
    latencies, and the graduation decision with its reasons (`ab_report.ab_report`)."""
    test = store.get(name)
    assert test is not None
    return report_of(test, store.pairs(name))
