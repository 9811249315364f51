"""`memgauge ab`: sequential A/B tests of a memory change (seed 002 section 4), fed paired
per-query results, decided by an SPRT whose state persists in the results store."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Annotated, Any

import click
import numpy as np
from pydantic import AfterValidator, BaseModel, ConfigDict, Field
from rich.table import Table

from memgauge import api
from memgauge._util.jsonout import dumps_strict
from memgauge.cli._common import console, existing_store, store_option
from memgauge.data.jsonio import read_records
from memgauge.data.models import FiniteFloat
from memgauge.errors import UsageError
from memgauge.stats import bootstrap_ci
from memgauge.stats.sequential import (
    SPRT,
    GraduationRules,
    SPRTState,
    graduation,
    prob_treatment_better,
)
from memgauge.store.ab_tests import ABTestStore

__all__ = ["ab"]


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


def _store(where: str | None) -> ABTestStore:
    return ABTestStore(api.results_store(where))


@click.group()
def ab() -> None:
    """Sequential A/B tests: create one, feed it paired results, read its decision."""


@ab.command()
@click.argument("name")
@click.option(
    "--delta",
    type=click.FloatRange(min=0, min_open=True),
    required=True,
    help="Minimum detectable effect (metric units).",
)
@click.option("--metric", default="MRR", show_default=True)
@click.option(
    "--alpha",
    type=click.FloatRange(0, 1, min_open=True, max_open=True),
    default=0.05,
    show_default=True,
)
@click.option(
    "--beta",
    type=click.FloatRange(0, 1, min_open=True, max_open=True),
    default=0.20,
    show_default=True,
)
@click.option("--min-samples", type=click.IntRange(2), default=100, show_default=True)
@click.option(
    "--improvement", type=float, default=0.03, show_default=True, help="Graduation threshold."
)
@click.option("--max-latency-increase", type=click.FloatRange(0), default=0.20, show_default=True)
@store_option
def create(
    name: str,
    delta: float,
    metric: str,
    alpha: float,
    beta: float,
    min_samples: int,
    improvement: float,
    max_latency_increase: float,
    store_path: str | None,
) -> None:
    """Create test NAME."""
    config = {
        "delta": delta,
        "alpha": alpha,
        "beta": beta,
        "min_samples": min_samples,
        "improvement": improvement,
        "max_latency_increase": max_latency_increase,
    }
    sprt = _sprt(config)
    with _store(store_path) as store:
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
    click.echo(f"created A/B test {name!r} on {metric}: delta {delta}, alpha {alpha}, beta {beta}")


def _sprt(config: dict[str, Any]) -> SPRT:
    return SPRT(delta=config["delta"], alpha=config["alpha"], beta=config["beta"])


@ab.command()
@click.argument("name")
@click.argument("pairs_file", type=click.Path(path_type=Path))
@store_option
def add(name: str, pairs_file: Path, store_path: str | None) -> None:
    """Feed NAME the paired results in PAIRS_FILE (JSONL of {query_id, control, treatment,
    control_latency_ms, treatment_latency_ms, constitutional_delta})."""
    pairs = read_records(pairs_file, Pair)
    with _store(store_path) as store:
        test = store.get(name)
        if test is None:
            raise UsageError(
                f"no A/B test {name!r}; create it with `memgauge ab create {name} --delta ...`"
            )
        if test["status"] == "paused":
            raise UsageError(
                f"A/B test {name!r} is paused; resume it with `memgauge ab resume {name}`"
            )
        state = _sprt(test["config"]).update(
            _finite_state(name, test["state"]), [p.treatment - p.control for p in pairs]
        )
        store.add(name, [p.model_dump() for p in pairs], state.as_dict())
        report = _report(store, name)
        store.set_status(name, _STATUS[report["decision"]])
    click.echo(
        f"{name}: {len(pairs)} pairs added; {state.n} used by the SPRT; SPRT: {state.decision};"
        f" {report['decision']} ({'; '.join(report['reasons'])})"
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


#: graduation's decision -> the test's status in eval_ab_tests
_STATUS = {"graduate": "graduated", "reject": "rejected", "keep_testing": "running"}


def _set_paused(name: str, store_path: str | None, paused: bool) -> None:
    with _store(store_path) as store:
        test = store.get(name)
        if test is None:
            raise UsageError(f"no A/B test {name!r}")
        status = "paused" if paused else _STATUS[_report(store, name)["decision"]]
        store.set_status(name, status)
    click.echo(f"{name}: {status}")


@ab.command()
@click.argument("name")
@store_option
def pause(name: str, store_path: str | None) -> None:
    """Pause NAME: `ab add` refuses it until it is resumed."""
    _set_paused(name, store_path, paused=True)


@ab.command()
@click.argument("name")
@store_option
def resume(name: str, store_path: str | None) -> None:
    """Resume NAME; its status becomes what the graduation rules decide."""
    _set_paused(name, store_path, paused=False)


def _report(store: ABTestStore, name: str) -> dict[str, Any]:
    test = store.get(name)
    assert test is not None
    cfg, state = test["config"], SPRTState(**test["state"])
    pairs = store.pairs(name)
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
    rules = GraduationRules(cfg["min_samples"], cfg["improvement"], cfg["max_latency_increase"])
    decision, reasons = graduation(
        state,
        rules,
        n_pairs=len(pairs),
        mean_delta=float(deltas.mean()) if len(deltas) else None,
        constitutional_delta=float(np.mean(const)) if const else None,
        p95_control_ms=p95_c,
        p95_treatment_ms=p95_t,
    )
    sprt = _sprt(cfg)
    return {
        "name": name,
        "status": test["status"],
        "graduated_at": test["graduated_at"],
        "metric": test["metric"],
        "n_pairs": len(pairs),
        "mean_delta": ci.mean if ci else None,
        "delta_ci95": [ci.low, ci.high] if ci else None,
        "sprt": {**state.as_dict(), "upper": sprt.upper, "lower": sprt.lower},
        "p_treatment_better": p_better,
        "p95_latency_ms": {"control": p95_c, "treatment": p95_t},
        "decision": decision,
        "reasons": reasons,
        "config": cfg,
    }


@ab.command()
@click.argument("name", required=False)
@store_option
@click.option("--json", "as_json", is_flag=True)
def status(name: str | None, store_path: str | None, as_json: bool) -> None:
    """Each test's state and decision (or only NAME's)."""
    with ABTestStore(existing_store(store_path)) as store:
        names = [name] if name else store.names()
        if name and store.get(name) is None:
            raise UsageError(f"no A/B test {name!r}")
        reports = [_report(store, n) for n in names]
    if as_json:
        click.echo(dumps_strict(reports))
        return
    table = Table(title="A/B tests", title_justify="left")
    for col in (
        "test",
        "status",
        "metric",
        "pairs",
        "mean delta (95% CI)",
        "SPRT",
        "P(T>C)",
        "decision",
        "why",
    ):
        table.add_column(col)
    for r in reports:
        ci = r["delta_ci95"]
        table.add_row(
            r["name"],
            r["status"],
            r["metric"],
            str(r["n_pairs"]),
            "n/a"
            if r["mean_delta"] is None
            else f"{r['mean_delta']:+.4f} [{ci[0]:+.4f}, {ci[1]:+.4f}]",
            f"{r['sprt']['decision']} (log LR {r['sprt']['log_lr']:.2f}; bounds {r['sprt']['lower']:.2f} / {r['sprt']['upper']:.2f})",
            "n/a" if r["p_treatment_better"] is None else f"{r['p_treatment_better']:.3f}",
            r["decision"],
            "; ".join(r["reasons"]),
        )
    console().print(table)
