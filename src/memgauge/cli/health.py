"""`memgauge health`: what a memory server's `memory_health` tool reports (seed 002)."""

from __future__ import annotations

from typing import Any

import click

from memgauge import api
from memgauge._util.jsonout import dumps_strict
from memgauge._util.listing import counted
from memgauge.cli._common import console, json_option, store_option
from memgauge.report.escape import term
from memgauge.report.fmt import fmt_num as _num

__all__ = ["health"]


def _n(n_scored: int | None, n_failed: int | None) -> str:
    """` (n=37)`, ` (n=36, 1 failed)`, or nothing when the run has no count."""
    if n_scored is None:
        return ""
    return f" (n={n_scored}{f', {n_failed} failed' if n_failed else ''})"


def _drift(drift: dict[str, Any]) -> str:
    n = len(drift["baseline_runs"])
    if not n:
        return "no earlier run of its suite to compare with"
    return f"{drift['status']} against {counted(n, 'earlier run')}"


@click.command()
@store_option
@click.option("--suite", default=None, help="The latest run of this suite (default: of any).")
@click.option(
    "--logs",
    "logs_store",
    default=None,
    metavar="STORE",
    help="The query log's store, when it is not the results store.",
)
@json_option("The summary as JSON.")
def health(
    store_path: str | None, suite: str | None, logs_store: str | None, as_json: bool
) -> None:
    """The latest evaluation of each kind (evaluate, demo, audit, ...) with its metrics and
    their 95% CIs and its drift against its suite's baseline, logging volume, open A/B tests,
    and the golden set's coverage of seed 002's category targets (280 queries, at least 15 per
    category), with a warning for each shortfall."""
    out = api.memory_health(store_path, suite=suite, logs=logs_store)
    if as_json:
        click.echo(dumps_strict(out))
        return
    con = console()
    evaluations: list[dict[str, Any]] = out["latest_evaluations"]
    if not evaluations:
        con.print(term("latest evaluation", "bold") + term(": none"))
    for ev in evaluations:
        con.print(
            term(f"latest {ev['kind']} run", "bold"),
            term(f"{ev['run_id']} ({ev['suite']}, {ev['created_at']})"),
        )
        for m in ev["metrics"]:
            ci = f" [{_num(m['ci'][0])}, {_num(m['ci'][1])}]" if m["ci"] else ""
            n = _n(m["n_scored"], m["n_failed"])
            con.print(
                term(f"  {m['subject']}/{m['task']} {m['measure']}: {_num(m['value'])}{ci}{n}")
            )
        con.print(term(f"  drift: {_drift(ev['drift'])}"))
    vol = out["logging"]["eval_queries"]
    con.print(
        term("logging", "bold")
        + term(
            f": {counted(vol['total'], 'query', 'queries')} ({vol['last_24h']} in 24 h,"
            f" {vol['last_7d']} in 7 days), {counted(out['logging']['sessions'], 'session')}"
        )
    )
    tests = out["ab_tests"]
    con.print(term("open A/B tests", "bold") + term(f": {len(tests)}"))
    for t in tests:
        con.print(
            f"  {t['name']} ({t['status']}): {counted(t['n_pairs'], 'pair')}, {t['decision']}"
        )
    gs = out["golden_set"]
    con.print(term("golden set", "bold") + term(f": {gs['queries']} of {gs['target']} queries"))
    for cat, c in gs["categories"].items():
        con.print(f"  {cat}: {c['queries']} / {c['target']}")
    for w in out["warnings"]:
        con.print(term("warning", "yellow") + term(f": {w}"))
