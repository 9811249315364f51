"""`memgauge ab`: sequential A/B tests of a memory change (seed 002 section 4), fed paired
per-query results, decided by an SPRT whose state persists in the results store."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
from rich.table import Table

from memgauge import api
from memgauge._util.jsonout import dumps_strict
from memgauge._util.listing import counted
from memgauge.cli._common import (
    PATH,
    choice_option,
    console,
    given,
    json_option,
    refuse_together,
    store_option,
)
from memgauge.cli._numbers import integer, number
from memgauge.cli._shared_options import (
    allow_unmeasured_option,
    mde_option,
    sprt_bounds_option,
    sprt_errors_options,
)
from memgauge.report.fmt import fmt_signed

__all__ = ["ab"]

_DECISIONS = {"unmeasured": "not graduated: unmeasured"}


@click.group()
def ab() -> None:
    """Sequential A/B tests: create one, feed it paired results, read its decision."""


@ab.command()
@click.argument("name")
@mde_option("--delta", "Minimum detectable effect (metric units).", required=True)
@click.option("--metric", default="MRR")
@sprt_errors_options(api.DEFAULT_GRADUATION.min_samples)
@click.option(
    "--improvement",
    type=number(),
    default=api.DEFAULT_GRADUATION.improvement,
    help="Graduation threshold.",
)
@click.option(
    "--max-latency-increase", type=number(0), default=api.DEFAULT_GRADUATION.max_latency_increase
)
@choice_option(
    "--rule",
    choices=["sprt", "beta-binomial"],
    help="Decision rule: the SPRT (any metric) or Beta-Binomial P(T>C) (binary metrics).",
)
@click.option(
    "--prob-threshold",
    type=number(0.5, 1, min_open=True, max_open=True),
    default=api.PROB_THRESHOLD,
    help="beta-binomial: graduate when P(T>C) exceeds this.",
)
@allow_unmeasured_option
@sprt_bounds_option(
    "--bounds",
    "The SPRT's stopping bounds: ville, log(1/alpha) and log(beta); wald, seed 002's"
    " log((1-beta)/alpha) and log(beta/(1-alpha)) (`memgauge ab simulate` shows each one's"
    " error rates).",
)
@store_option
def create(name: str, store_path: str | None, **test: Any) -> None:
    """Create test NAME."""
    # test: its options (--delta, --metric, --rule, --bounds, ...), named as create_ab_test's
    # keywords. An option of the other rule would be stored and never read.
    if test["rule"] == "beta-binomial" and given("bounds"):
        refuse_together("--rule beta-binomial", "--bounds", "the bounds are the SPRT's")
    if test["rule"] == "sprt" and given("prob_threshold"):
        refuse_together("--rule sprt", "--prob-threshold", "the threshold is beta-binomial's")
    created = api.create_ab_test(name, store=store_path, **test)
    click.echo(
        f"{'created' if created else 'kept'} A/B test {name!r} on {test['metric']}"
        f" ({test['rule']}): delta {test['delta']}, alpha {test['alpha']}, beta {test['beta']}"
        + (f", {test['bounds']} bounds" if test["rule"] == "sprt" else "")
        + ("" if created else " (it exists with these settings, its pairs kept)")
    )


@ab.command()
@click.option(
    "--sims",
    type=integer(100, 1_000_000),
    default=2000,
    help="Simulated tests per cell and hypothesis.",
)
@sprt_errors_options(30, show_default=False)
@click.option("--seed", type=integer(0), default=0)
def simulate(sims: int, alpha: float, beta: float, min_samples: int, seed: int) -> None:
    """The SPRT's type I error and power under each choice of bounds (ville, wald), by
    simulation on normal paired differences: the table `ab create --bounds` chooses from."""
    rates, table = api.simulate_sprt_bounds(
        sims, alpha=alpha, beta=beta, min_samples=min_samples, seed=seed
    )
    click.echo(
        f"{sims:,} simulated tests per cell and hypothesis; alpha {alpha}, beta {beta},"
        f" at least {min_samples} informative pairs; Monte Carlo error of a rate at alpha"
        f" +-{rates[0].mc_error:.4f} (3 standard errors)\n"
    )
    click.echo(table, nl=False)


@ab.command()
@click.argument("name")
@click.argument("pairs_file", type=PATH, required=False)
@click.option(
    "--from-shadow",
    is_flag=True,
    help="Feed the judged shadow comparisons of experiment NAME not fed yet, not a file.",
)
@store_option
def add(name: str, pairs_file: Path | None, from_shadow: bool, store_path: str | None) -> None:
    """Feed NAME the paired results in PAIRS_FILE (JSONL of {query_id, control, treatment,
    control_latency_ms, treatment_latency_ms, constitutional_delta}), or with --from-shadow
    those of its shadow runs (each arm's RR or nDCG, both latencies; a shadowed query with no
    judgments gives no pair). Each pair is taken once: one the test already holds (the same
    query_id and values) is skipped and counted, so adding a file again adds nothing."""
    if from_shadow == (pairs_file is not None):
        raise click.UsageError("give PAIRS_FILE or --from-shadow (one of them)")
    if pairs_file is not None:
        n_pairs, n_held, state, report = api.add_ab_pairs(name, pairs_file, store=store_path)
        skipped = f", {n_held} already added (skipped)"
    else:
        n_pairs, n_unjudged, maybe, report = api.add_ab_from_shadow(name, store=store_path)
        skipped = f" from shadow runs ({n_unjudged} without judgments left out)"
        if maybe is None:
            click.echo(f"{name}: no new judged shadow comparisons{skipped}")
            return
        state = maybe
    decision = _DECISIONS.get(report["decision"], report["decision"])
    click.echo(
        f"{name}: {counted(n_pairs, 'pair')} added{skipped}; {state.n} used by the SPRT; SPRT:"
        f" {state.decision}; {decision} ({'; '.join(report['reasons'])})"
    )


def _set_paused(name: str, store_path: str | None, paused: bool) -> None:
    status = api.pause_ab_test(name, paused=paused, store=store_path)
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


@ab.command()
@click.argument("name", required=False)
@store_option
@json_option()
def status(name: str | None, store_path: str | None, as_json: bool) -> None:
    """Each test's state and decision (or only NAME's)."""
    reports = api.ab_test_reports(name, store=store_path)
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
            else f"{fmt_signed(r['mean_delta'], 4)} [{fmt_signed(ci[0], 4)}, {fmt_signed(ci[1], 4)}]",
            r["sprt"]["text"],
            "n/a" if r["p_treatment_better"] is None else f"{r['p_treatment_better']:.3f}",
            _DECISIONS.get(r["decision"], r["decision"]),
            "; ".join(r["reasons"]),
        )
    console().print(table)
