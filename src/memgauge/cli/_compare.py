"""The options and output shared by the commands that compare several systems with
significance tests (`memgauge metrics QRELS RUN RUN ...`, `memgauge runs compare`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

import click

from memgauge import api
from memgauge._util.jsonout import dumps_strict
from memgauge._util.numbers import ALPHA
from memgauge.cli._common import choice_option, console
from memgauge.cli._numbers import MAX_RESAMPLES, SEED, integer, number
from memgauge.errors import UsageError

__all__ = [
    "FORMATS",
    "check_json",
    "compare_options",
    "headline_measures",
    "print_systems",
    "show_trec_comparison",
    "systems_options",
]

F = TypeVar("F", bound=Callable[..., Any])

# spelled out rather than imported from memgauge.stats, which loads NumPy: a command's --help
# stays light (tests/cli/test_compare_cli.py checks they are stats' own)
TESTS = ("fisher", "student", "wilcoxon", "tukey")
CORRECTIONS = ("holm", "bonferroni", "none")
FAMILIES = ("table", "measure")
PAIRINGS = ("all", "baseline")
FORMATS = ("table", "markdown", "latex")


def compare_options(f: F) -> F:
    """--test, --correction, --family, --pairs, --alpha, --seed, --permutations, --format,
    --digits."""
    options = [
        choice_option(
            "--test",
            "stat_test",
            choices=TESTS,
            help="Significance test between systems: fisher (Fisher's randomization test, "
            "paired sign flips), student (paired t), wilcoxon (signed-rank), tukey (Tukey's "
            "HSD over all systems, queries as blocks).",
        ),
        click.option(
            "--correction",
            type=click.Choice(CORRECTIONS),
            default=None,
            help="Multiple-comparison correction over the family [default: holm; with tukey, "
            "bonferroni across measures (family table) or none (family measure)].",
        ),
        choice_option(
            "--family",
            choices=FAMILIES,
            help="What the correction covers: every comparison of the table, or each "
            "measure's comparisons (PyTerrier's and Tukey's family).",
        ),
        choice_option(
            "--pairs",
            "pairing",
            choices=PAIRINGS,
            help="Compare every pair of systems, or the first (the baseline) with each other.",
        ),
        click.option(
            "--alpha",
            type=number(0, 1, min_open=True, max_open=True),
            default=ALPHA,
            help="Significance level: a difference is marked when its corrected p < alpha.",
        ),
        click.option("--seed", type=SEED, default=0, help="Random seed."),
        click.option(
            "--permutations",
            "n_permutations",
            type=integer(1, MAX_RESAMPLES),
            default=10_000,
            help="Random sign flips of Fisher's randomization test.",
        ),
        choice_option(
            "--format",
            "fmt",
            choices=FORMATS,
            help="table (terminal), markdown, or latex (booktabs; best value bold, "
            "superscripts naming the systems beaten), ready for a paper.",
        ),
        click.option(
            "--digits",
            type=integer(1, 10),
            default=4,
            help="Decimals shown in the comparison table.",
        ),
    ]
    for option in reversed(options):
        f = option(f)
    return f


def systems_options(given: Mapping[str, Any]) -> dict[str, Any]:
    """`stats.compare_systems`' keyword arguments from the options `compare_options` adds; a
    UsageError for a correction the test cannot take."""
    test, family, correction = given["stat_test"], given["family"], given["correction"]
    if test == "tukey" and correction == "holm":
        raise UsageError(
            "--correction holm with --test tukey: Tukey's HSD already adjusts over the pairs "
            "of each measure, and Holm's step-down does not extend over such families; use "
            "--correction bonferroni (across measures) or none"
        )
    if test == "tukey" and family == "measure" and correction not in (None, "none"):
        raise UsageError(
            "--test tukey --family measure: Tukey's HSD is its own correction over the pairs "
            "of a measure; use --correction none, or --family table to cover every measure"
        )
    return {
        "test": test,
        "correction": correction,
        "family": family,
        "pairing": given["pairing"],
        "alpha": given["alpha"],
        "seed": given["seed"],
        "n_permutations": given["n_permutations"],
    }


def print_systems(
    cmp: Any,
    *,
    fmt: str,
    digits: int,
    as_json: bool,
    extra: Mapping[str, Any],
    notes: list[str],
    measures: Sequence[Mapping[str, Any]] = (),
) -> None:
    """The comparison (a `stats.SystemsComparison`) as JSON (`extra` merged in), a terminal
    table (then `notes`), Markdown or LaTeX on stdout; then, but for LaTeX (a paper's table of
    significance), the headline ones of `measures` (`runs.suite_compare.system_measures`:
    the numbers the evaluators' rows do not show), as `runs show` draws them (JSON: every
    one, in `aggregate_measures`)."""
    from memgauge.report.shapes import systems_measures_table
    from memgauge.report.shapes_markdown import shape_markdown
    from memgauge.report.shapes_terminal import print_shape
    from memgauge.report.systems_table import (
        caption,
        systems_latex,
        systems_markdown,
        systems_table,
    )

    shown, more = headline_measures(measures)
    table = systems_measures_table(shown, cmp.systems) if shown else None
    if as_json:
        doc = {**cmp.as_dict(), **extra}
        if measures:
            doc["aggregate_measures"] = list(measures)
        click.echo(dumps_strict(doc, indent=2))
    elif fmt == "markdown":
        click.echo(systems_markdown(cmp, digits=digits), nl=False)
        if table is not None:
            click.echo("\n" + shape_markdown(table), nl=False)
        if more:
            click.echo(f"\n{more}")
    elif fmt == "latex":
        click.echo(systems_latex(cmp, digits=digits), nl=False)
    else:
        out = console()
        out.print(systems_table(cmp, digits=digits))
        for line in [caption(cmp), *notes]:
            if line:
                out.print(line, markup=False, highlight=False)
        if table is not None:
            print_shape(out, table)
        if more:
            out.print(more)


def headline_measures(
    measures: Sequence[Mapping[str, Any]],
) -> tuple[list[Mapping[str, Any]], str | None]:
    """Of a comparison's measures (`measure_deltas`', `system_measures`' rows), the ones the
    gate decides on, which a table shows, and the line counting the others (None: none)."""
    shown = [m for m in measures if m["headline"]]
    more = len(measures) - len(shown)
    return shown, f"{more} secondary measures compared in --json" if more else None


def check_json(as_json: bool, fmt: str) -> None:
    """A UsageError when both --json and a --format other than table are given."""
    if as_json and fmt != "table":
        raise UsageError(f"--json and --format {fmt} each choose the output: give one")


def show_trec_comparison(
    qrels: Path,
    runs: Sequence[Path],
    measures: Sequence[Any],
    config: Any,
    *,
    conventions: str,
    per_query: bool,
    as_json: bool,
    given: Mapping[str, Any],
    depth: int | None = None,
) -> None:
    """`memgauge metrics QRELS RUN RUN ...` (or one run `--format markdown|latex`): each run's
    means with the significance of their differences."""
    if per_query:
        raise UsageError(
            "--per-query gives one run's values: score each run alone for them, or use --json "
            "for the comparison"
        )
    check_json(as_json, given["fmt"])
    evaluations, cmp = api.compare_trec_runs(
        qrels, runs, measures, config, depth=depth, **systems_options(given)
    )
    counts = {name: ev.counts.as_dict() for name, ev in zip(cmp.systems, evaluations, strict=True)}
    notes = [f"conventions: {conventions}"] + [
        f"{name}: {c['n_judged']} judged queries, {c['n_scored']} scored, "
        f"{c['n_missing_from_run']} absent from the run"
        for name, c in counts.items()
    ]
    extra = {"counts": counts, "config": {"conventions": conventions}}
    print_systems(
        cmp, fmt=given["fmt"], digits=given["digits"], as_json=as_json, extra=extra, notes=notes
    )
