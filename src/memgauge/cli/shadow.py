"""`memgauge shadow`: what shadow runs recorded (seed 002 section 4)."""

from __future__ import annotations

import click

from memgauge import api
from memgauge._util.jsonout import dumps_strict
from memgauge.cli._common import console, store_option
from memgauge.report.escape import term

__all__ = ["shadow"]


@click.group()
def shadow() -> None:
    """Shadow runs recorded by `memgauge.online.shadow.ShadowRunner`."""


@shadow.command()
@click.argument("experiment", required=False)
@store_option
@click.option("--json", "as_json", is_flag=True)
def summary(experiment: str | None, store_path: str | None, as_json: bool) -> None:
    """Per experiment: queries compared, identical / minor / major / incompatible, mean Kendall
    tau-b and Jaccard, top-1 change rate, MRR / nDCG deltas where judged, p95 latencies, and
    the shadowed queries dropped because the runner's queue was full."""
    # seed 002's eval_results row of each experiment (run_type shadow) is refreshed too
    out = api.shadow_summaries(experiment, store=store_path)
    if as_json:
        click.echo(dumps_strict(out))
        return
    con = console()
    for name, s in out.items():
        con.print(
            term(name, "bold")
            + term(
                f": {s['n']} queries compared, {s['n_errors']} treatment errors,"
                f" {s['n_dropped']} dropped (queue full)"
            )
        )
        if s["n"]:
            con.print(f"  classes: {s['classes']}")
            con.print(
                f"  mean Kendall tau-b {s['mean_kendall_tau_b']:.3f}, mean Jaccard {s['mean_jaccard']:.3f}, "
                f"top-1 changed {s['top1_changed_rate']:.1%}; p95 latency ms {s['p95_latency_ms']}"
            )
            con.print(
                f"  mean Spearman rho {_f(s['mean_spearman_rho'])}, mean positions that differ"
                f" {_f(s['mean_order_differences'], 1)}; where judged: mean MRR delta"
                f" {_f(s['mean_mrr_delta'], sign=True)}, mean nDCG delta"
                f" {_f(s['mean_ndcg_delta'], sign=True)}"
            )


def _f(x: float | None, digits: int = 3, *, sign: bool = False) -> str:
    """n/a for a metric with no data (no judged query), never 0."""
    if x is None:
        return "n/a"
    return f"{x:+.{digits}f}" if sign else f"{x:.{digits}f}"
