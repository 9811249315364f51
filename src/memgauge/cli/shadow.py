"""`memgauge shadow`: what shadow runs recorded (seed 002 section 4)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import click

from memgauge import api
from memgauge._util.jsonout import dumps_strict
from memgauge.cli._common import console, json_option, store_option
from memgauge.report.escape import term
from memgauge.report.fmt import fmt_pct as _pct
from memgauge.report.fmt import fmt_signed

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
    rows = [([term(label)], [term(cell(out[n])) for n in names]) for label, cell in _ROWS]
    title = term("shadow experiments: control against treatment, per query shadowed")
    print_fitted(con, title, [("measure", None)], names, rows)
    for name in names if by == "intent" else []:
        groups = out[name]["by_intent"]
        intents = list(groups)
        # drops are counted per experiment, not per query: no intent is known for them
        per = [
            ([term(label)], [term(cell(groups[i])) for i in intents])
            for label, cell in _ROWS
            if label != "dropped (queue full)"
        ]
        title = term(f"shadow experiment {name} by intent")
        print_fitted(con, title, [("measure", None)], intents, per)


def _share(s: Mapping[str, Any], cls: str) -> str:
    if not s["n"]:
        return "n/a"
    count = s["classes"][cls]
    return f"{count} ({count / s['n']:.0%})"


#: The rows of the summary table: a label, and how an experiment's summary fills the cell
#: (n/a for a number with no data: no compared query, no judged one).
_ROWS: list[tuple[str, Callable[[Mapping[str, Any]], str]]] = [
    ("queries compared", lambda s: str(s["n"])),
    ("identical", lambda s: _share(s, "identical")),
    ("minor change", lambda s: _share(s, "minor")),
    ("major change", lambda s: _share(s, "major")),
    ("incompatible", lambda s: _share(s, "incompatible")),
    ("top-1 changed", lambda s: "n/a" if not s["n"] else _pct(s["top1_changed_rate"])),
    ("mean Kendall tau-b", lambda s: _f(s.get("mean_kendall_tau_b"))),
    ("mean Spearman rho", lambda s: _f(s.get("mean_spearman_rho"))),
    ("mean Jaccard", lambda s: _f(s.get("mean_jaccard"))),
    ("mean positions that differ", lambda s: _f(s.get("mean_order_differences"), 1)),
    ("mean MRR delta (judged)", lambda s: _f(s.get("mean_mrr_delta"), sign=True)),
    ("mean nDCG delta (judged)", lambda s: _f(s.get("mean_ndcg_delta"), sign=True)),
    ("p95 latency ms, control", lambda s: _f((s.get("p95_latency_ms") or {}).get("control"), 1)),
    (
        "p95 latency ms, treatment",
        lambda s: _f((s.get("p95_latency_ms") or {}).get("treatment"), 1),
    ),
    ("treatment errors", lambda s: str(s["n_errors"])),
    ("dropped (queue full)", lambda s: str(s["n_dropped"])),
]


def _f(x: float | None, digits: int = 3, *, sign: bool = False) -> str:
    """n/a for a metric with no data (no judged query), never 0."""
    if x is None:
        return "n/a"
    return fmt_signed(x, digits) if sign else f"{x:.{digits}f}"
