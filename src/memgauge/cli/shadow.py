"""`memgauge shadow`: what shadow runs recorded (seed 002 section 4)."""

from __future__ import annotations

import click

from memgauge import api
from memgauge._util.jsonout import dumps_strict
from memgauge.cli._common import console, json_option, store_option
from memgauge.report.escape import term
from memgauge.report.shadow import DROPPED, SHADOW_ROWS

__all__ = ["shadow"]


@click.group()
def shadow() -> None:
    """Shadow runs recorded by `memgauge.online.shadow.ShadowRunner`."""


@shadow.command()
@click.argument("experiment", required=False)
@store_option
@click.option(
    "--by",
    type=click.Choice(["intent"]),
    default=None,
    help="Also break each experiment down by the intent its queries were recorded with"
    " (seed 002's per-intent error breakdown; `by_intent` in --json).",
)
@json_option()
def summary(experiment: str | None, store_path: str | None, by: str | None, as_json: bool) -> None:
    """Per experiment: queries compared, identical / minor / major / incompatible, mean Kendall
    tau-b and Jaccard, top-1 change rate, MRR / nDCG deltas where judged, p95 latencies, and
    the shadowed queries dropped because the runner's queue was full."""
    # seed 002's eval_results row of each experiment (run_type shadow) is refreshed too
    out = api.shadow_summaries(
        experiment, store=store_path, by="intent" if by == "intent" else None
    )
    if as_json:
        click.echo(dumps_strict(out))
        return
    con = console()
    if not out:
        where = api.results_store(store_path)
        con.print(
            term(
                f"no shadow experiment recorded in {where} yet: wrap a production search in"
                " memgauge.online.shadow.ShadowRunner (or shadow a feature flag's share,"
                " `memgauge flags create NAME --shadow`), and its comparisons appear here"
            )
        )
        return
    from memgauge.report.fitted import print_fitted

    names = list(out)
    rows = [([term(label)], [term(cell(out[n])) for n in names]) for label, cell in SHADOW_ROWS]
    title = term("shadow experiments: control against treatment, per query shadowed")
    print_fitted(con, title, [("measure", None)], names, rows)
    for name in names if by == "intent" else []:
        groups = out[name]["by_intent"]
        intents = list(groups)
        # drops are counted per experiment, not per query: no intent is known for them
        per = [
            ([term(label)], [term(cell(groups[i])) for i in intents])
            for label, cell in SHADOW_ROWS
            if label != DROPPED
        ]
        title = term(f"shadow experiment {name} by intent")
        print_fitted(con, title, [("measure", None)], intents, per)
