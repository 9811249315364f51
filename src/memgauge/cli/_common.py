"""Pieces shared by the commands: the results store location, the console, progress."""

from __future__ import annotations

import sys
from pathlib import Path

import click
from rich.console import Console

from memgauge import api
from memgauge._util.jsonout import dumps_strict
from memgauge.cli._numbers import integer
from memgauge.report import (
    RetrievalEvalResult,
    atomic_write_text,
    render_markdown,
    render_run_report,
    render_terminal,
    retrieval_result,
    write_json,
)

__all__ = [
    "console",
    "gain_option",
    "no_relevant_option",
    "open_suite_store",
    "print_markdown",
    "rel_threshold_option",
    "report_retrieval",
    "store_option",
    "write_reports",
]

# The three conventions where trec_eval and seed 002 disagree, spelled the same in every command,
# with the defaults every other entry point has (`MetricConfig`'s).
_DEFAULT = api.MetricConfig()
rel_threshold_option = click.option(
    "--rel-threshold",
    type=integer(min=0),
    default=_DEFAULT.rel_threshold,
    show_default=True,
    help="Grade at or above which a memory is relevant for binary measures (trec_eval: 1).",
)
gain_option = click.option(
    "--gain",
    type=click.Choice(["exp", "linear"]),
    default=_DEFAULT.gain,
    show_default=True,
    help="nDCG gain: exp = 2^grade - 1 (seed 002); linear = the grade (trec_eval).",
)
no_relevant_option = click.option(
    "--no-relevant",
    type=click.Choice(["zero", "one", "skip"]),
    default=_DEFAULT.no_relevant,
    show_default=True,
    help="A judged query with no relevant memory: score 0 (trec_eval); 1.0 on the measures "
    "where that is 0/0 (Recall, recall_all, AP, R-prec, nDCG and ndcg_any with no ideal gain: "
    "seed 002's Recall); or leave it out of the means (skip). Always counted.",
)


def console(stderr: bool = False) -> Console:
    """A rich console: the terminal's width, or 160 columns when writing to a file or pipe.

    It reads no markup and no emoji codes: what is printed is data (names, messages, stored
    failures), and `[anthropic]` in `pip install 'memgauge[anthropic]'` is not a style. Words
    that need a colour are `rich.text.Text` (`report.escape.term`)."""
    stream = sys.stderr if stderr else sys.stdout
    width = None if stream.isatty() else 160
    return Console(
        stderr=stderr, highlight=False, soft_wrap=True, width=width, markup=False, emoji=False
    )


def print_markdown(text: str) -> None:
    """Markdown on stdout: drawn (headings, tables, lists) when stdout is a terminal, the text
    itself when it is piped or redirected, where it goes into a file, a pull-request comment or
    a CI job summary. Whether stdout is a terminal is asked of stdout itself, not of
    FORCE_COLOR, which asks for colours and not for a different document."""
    if not sys.stdout.isatty():
        click.echo(text, nl=False)
        return
    from memgauge.report.terminal_markdown import TerminalMarkdown

    console().print(TerminalMarkdown(text), soft_wrap=False)


#: `--store`: where runs are recorded and read (precedence: flag > MEMGAUGE_STORE > default)
store_option = click.option(
    "--store",
    "store_path",
    default=None,
    metavar="STORE",
    help="Results store: a path, sqlite:///PATH, or postgresql://USER:PASSWORD@HOST:PORT/DB"
    " (default: MEMGAUGE_STORE, else MEMGAUGE_HOME/results.db).",
)


def open_suite_store(where: str | None, *, read_only: bool = False) -> api.SuiteRunStore:
    """The suite-run store `where` names, created and migrated if need be; with `read_only`
    (a command that only reads), opened as it is: a UsageError when there is none (nothing is
    created) or when it is at another schema (see `engine.open_read_only`)."""
    if read_only:
        return api.SuiteRunStore(api.results_store(where), read_only=True)
    return api.open_store(where)


def report_retrieval(report: api.RunReport, out_dir: Path, out: Console) -> None:
    """What `evaluate` and `demo` show last: the terminal view and the three report files,
    rendered from the run's record."""
    if report.summary.aggregate("ir") is None:
        return
    result = retrieval_result(report.run)
    render_terminal(result, out)
    paths = write_reports(result, out_dir, report)
    out.print("wrote " + ", ".join(str(p) for p in paths))


def write_reports(result: RetrievalEvalResult, out_dir: Path, report: api.RunReport) -> list[Path]:
    """Write result.json, summary.md and report.html (the run drawn by the viewer's templates,
    as `memgauge report` draws it) into `out_dir`; return their paths."""
    out_dir.mkdir(parents=True, exist_ok=True)
    json_path = out_dir / "result.json"
    md_path = out_dir / "summary.md"
    html_path = out_dir / "report.html"
    write_json(result, json_path)
    atomic_write_text(md_path, render_markdown(result))
    atomic_write_text(html_path, render_run_report(report.run, report.items))
    paths = [json_path, md_path, html_path]
    ir = report.summary.aggregate("ir")
    pooled = ir.detail.get("pool_judge") if ir is not None else None
    if pooled:
        # the judge's grades in the dataset's judgments format, to review and merge back
        boot = out_dir / "bootstrapped_judgments.jsonl"
        atomic_write_text(boot, "".join(dumps_strict(j) + "\n" for j in pooled["judgments"]))
        paths.append(boot)
    return paths
