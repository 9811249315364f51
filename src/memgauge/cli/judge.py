"""`memgauge judge`: how far to trust an LLM judge.

    memgauge judge calibrate LABELS.jsonl --judge '{qa-judge: strict}'
    memgauge judge calibrate --from-store --store results.db   # `view --review` labels
    memgauge judge rejudge OUTPUTS.jsonl --judge rubric -k 5

LABELS.jsonl: one object per line, `{id, input, output, expected, label}` with label pass or
fail. OUTPUTS.jsonl: the same without labels; `memgauge runs export ID --format jsonl` works.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click
from rich.table import Table

from memgauge import api
from memgauge._util.jsonout import dumps_strict
from memgauge._util.listing import counted
from memgauge.cli._common import PATH, console, json_option, open_suite_store, store_option
from memgauge.cli._llm import llm_options
from memgauge.cli._numbers import integer
from memgauge.errors import SubjectError, UsageError
from memgauge.report.fmt import fmt_num as _fmt

if TYPE_CHECKING:
    from memgauge.api import Calibration

__all__ = ["judge"]


@click.group()
def judge() -> None:
    """Check an LLM judge: calibrate it against people, or re-judge to measure its noise."""


@judge.command()
@click.argument("labels", type=PATH, required=False)
@click.option("--judge", "spec", default=None, help="Judge spec, e.g. '{qa-judge: strict}'.")
@click.option(
    "--from-store",
    "from_store",
    is_flag=True,
    help="Read people's labels from `memgauge view --review` in --store instead of LABELS;"
    " the machine's verdicts are the stored ones (no LLM call).",
)
@store_option
@click.option("--run", default=None, help="With --from-store: only this run's labels.")
@click.option(
    "--kind",
    type=click.Choice(api.LABEL_KINDS),
    default="verdict",
    help="With --from-store: which labels (verdicts, hit grades, facts, operation decisions).",
)
@click.option(
    "--evaluator", default=None, help="With --from-store: only this evaluator's verdicts."
)
@json_option("Print the report as JSON.")
@llm_options
def calibrate(
    labels: Path | None,
    spec: str | None,
    from_store: bool,
    store_path: str | None,
    run: str | None,
    kind: str,
    evaluator: str | None,
    as_json: bool,
) -> None:
    """Judge LABELS (outputs a person labelled pass/fail) and compare: confusion matrix,
    accuracy with a 95% Wilson interval, Cohen's kappa. Items the judge could not judge are
    counted apart, never guessed.

    With --from-store: people's labels from `memgauge view --review` against the verdicts the
    run stored, per reviewer (confusion matrix, accuracy, kappa), and Cohen's kappa between
    each pair of reviewers on what both labelled."""
    if from_store:
        if labels is not None or spec is not None:
            raise UsageError(
                "--from-store reads the labels and verdicts in the store: drop LABELS and --judge"
            )
        if evaluator is not None and kind != "verdict":
            # a hit's, fact's or decision's target is a memory id or an index, not an evaluator
            raise UsageError(
                f"--evaluator keeps one evaluator's verdicts: drop it, or use --kind verdict"
                f" (not {kind})"
            )
        _calibrate_from_store(store_path, run, kind, evaluator, as_json)
        return
    if labels is None or spec is None:
        raise UsageError("give LABELS and --judge (or --from-store to read review labels)")
    rows = api.load_judged(labels, labels=True)
    built = api.judge_from_spec(spec)
    report = api.calibrate_judge(built, rows)
    data = report.as_dict()
    if as_json:
        click.echo(dumps_strict(data, sort_keys=True))
        _judged_something(report.calibration.n, report.n_failed, report.failures)
        return
    cal = report.calibration
    out = console()
    out.print(_confusion(cal, f"judge vs human on {labels.name}", "human", "judge"))
    ci = cal.accuracy_ci
    out.print(
        f"accuracy {_fmt(cal.accuracy)}"
        + (f" (95% CI {ci[0]:.3f}-{ci[1]:.3f})" if ci else "")
        + f", Cohen's kappa {_fmt(cal.kappa)}, n {cal.n}; "
        f"the judge could not judge {report.n_failed}"
    )
    for f in report.failures[:10]:
        out.print(f"  {f['id']}: {f['reason']}")
    _judged_something(cal.n, report.n_failed, report.failures)


def _confusion(cal: Calibration, title: str, rows: str, columns: str) -> Table:
    """`cal`'s confusion matrix, `rows` (the person) against `columns` (the machine)."""
    table = Table(title=f"{title} (rows: {rows}, columns: {columns})")
    table.add_column(f"{rows} \\ {columns}")
    for lab in cal.labels:
        table.add_column(lab, justify="right")
    for lab, row in zip(cal.labels, cal.confusion, strict=True):
        table.add_row(lab, *(str(n) for n in row))
    return table


def _calibrate_from_store(
    store: str | None, run: str | None, kind: str, evaluator: str | None, as_json: bool
) -> None:
    if run is not None:  # its whole id, as `runs show` names it, not the characters typed
        with open_suite_store(store) as runs:
            run = api.resolve_run_id(runs, run)
    report = api.calibrate_review(store, kind=kind, run=run, target=evaluator)
    if as_json:
        click.echo(dumps_strict(report.as_dict(), sort_keys=True))
        return
    out = console()
    table = Table(title=f"the machine against reviewers' {kind} labels")
    for col in ("reviewer", "n", "accuracy", "95% CI", "Cohen's kappa"):
        table.add_column(col, justify="left" if col == "reviewer" else "right")
    for who, cal in report.per_reviewer.items():
        ci = cal.accuracy_ci
        table.add_row(
            who,
            str(cal.n),
            _fmt(cal.accuracy),
            f"{ci[0]:.3f}-{ci[1]:.3f}" if ci else "n/a",
            _fmt(cal.kappa),
        )
    out.print(table)
    for who, cal in report.per_reviewer.items():
        if cal.n:
            out.print(_confusion(cal, f"{who} vs the machine", who, "machine"))
    for pair in report.between:
        out.print(
            f"{pair['a']} vs {pair['b']}: Cohen's kappa {_fmt(pair['kappa'])} on {pair['n']}"
            " labelled by both"
        )
    if not report.per_reviewer:
        where = f" of run {run}" if run else ""
        out.print(f"no {kind} labels{where} in the store: n/a (0 labelled)")
    if report.n_without_machine:
        out.print(
            f"{report.n_without_machine} label(s) with no machine verdict to compare (left out)"
        )


def _judged_something(
    n: int, n_failed: int, failures: list[dict[str, str]], what: str = "items"
) -> None:
    """A judge that judged none of what it was given failed (exit 4), as a subject that
    answered nothing does: its report, all n/a, is printed, and is no measurement."""
    if n == 0 and n_failed:
        first = f" (the first: {failures[0]['reason']})" if failures else ""
        raise SubjectError(f"the judge judged none of the {n_failed} {what}{first}")


@judge.command()
@click.argument("outputs", type=PATH)
@click.option("--judge", "spec", required=True, help="Judge spec, e.g. rubric.")
@click.option("-k", "k", type=integer(2, 100), default=5)
@json_option("Print the report as JSON.")
@llm_options
def rejudge(
    outputs: Path,
    spec: str,
    k: int,
    as_json: bool,
) -> None:
    """Judge frozen OUTPUTS k times each and split the spread into judge noise and real
    differences between items (a run export works as OUTPUTS)."""
    rows = api.load_judged(outputs)
    built = api.judge_from_spec(spec)
    report = api.rejudge(built, rows, k)
    data = report.as_dict()
    judged = report.n_verdicts - report.n_failed
    if as_json:
        click.echo(dumps_strict(data, sort_keys=True))
        _judged_something(judged, report.n_failed, [], "verdicts")
        return
    out = console()
    out.print(
        f"{counted(report.n_items, 'item')} x {counted(k, 'verdict')}; {counted(report.n_failed, 'verdict')} failed (not counted)"
    )
    out.print(
        f"mean {_fmt(report.mean)}; per repeat: " + ", ".join(_fmt(m) for m in report.repeat_means)
    )
    out.print(
        f"judge variance {_fmt(report.judge_variance, 4)}, item variance "
        f"{_fmt(report.item_variance, 4)}, judge share {_fmt(report.judge_share)}; "
        f"pass/fail flips on {_fmt(report.flip_rate)} of items"
        + (
            f" (the variances over the {report.n_complete} of {counted(report.n_items, 'item')} whose"
            f" {k} verdicts all came back)"
            if report.n_complete < report.n_items
            else ""
        )
    )
    out.print(
        f"the judge alone moves the mean by about +-{_fmt(report.sd_of_mean_from_judge, 4)} "
        "(one SD): smaller differences between systems are judge noise"
    )
    _judged_something(judged, report.n_failed, [], "verdicts")
