"""Pieces shared by the commands: the results store location, the console, progress."""

from __future__ import annotations

import sys
from pathlib import Path

import click
from rich.console import Console

from memgauge import api
from memgauge.errors import UsageError
from memgauge.report import (
    RetrievalEvalResult,
    atomic_write_text,
    render_html,
    render_markdown,
    render_terminal,
    retrieval_result,
    write_json,
)

__all__ = [
    "console",
    "existing_store",
    "gain_option",
    "open_suite_store",
    "rel_threshold_option",
    "report_retrieval",
    "resolve_run_id",
    "results_db",
    "store_option",
    "write_reports",
]

# The two conventions where trec_eval and seed 002 disagree, spelled the same in every command.
rel_threshold_option = click.option(
    "--rel-threshold",
    type=click.IntRange(min=0),
    default=2,
    show_default=True,
    help="Grade at or above which a memory is relevant for binary measures (trec_eval: 1).",
)
gain_option = click.option(
    "--gain",
    type=click.Choice(["exp", "linear"]),
    default="exp",
    show_default=True,
    help="nDCG gain: exp = 2^grade - 1 (seed 002); linear = the grade (trec_eval).",
)


def console(stderr: bool = False) -> Console:
    """A rich console: the terminal's width, or 160 columns when writing to a file or pipe."""
    stream = sys.stderr if stderr else sys.stdout
    width = None if stream.isatty() else 160
    return Console(stderr=stderr, highlight=False, soft_wrap=True, width=width)


def results_db() -> Path:
    """`MEMGAUGE_HOME/results.db`."""
    return api.results_path()


#: `--store`: where runs are recorded and read (precedence: flag > MEMGAUGE_STORE > default)
store_option = click.option(
    "--store",
    "store_path",
    default=None,
    metavar="STORE",
    help="Results store: a path, sqlite:///PATH, or postgresql://USER:PASSWORD@HOST:PORT/DB"
    " (default: MEMGAUGE_STORE, else MEMGAUGE_HOME/results.db).",
)


def existing_store(where: str | None) -> api.StoreURL:
    """The store `where` names (default: MEMGAUGE_STORE, else MEMGAUGE_HOME/results.db) for a
    command that only reads it: a UsageError, and no empty file left behind, when it is a
    SQLite file that does not exist."""
    return api.existing_store(where)


def open_suite_store(where: str | None, *, read_only: bool = False) -> api.SuiteRunStore:
    """The suite-run store `where` names; with `read_only`, a UsageError when there is none
    (rather than creating it)."""
    return api.open_store(existing_store(where) if read_only else where)


def resolve_run_id(store: api.SuiteRunStore, given: str) -> str:
    """The run id that `given` (a whole id or its first characters) names; UsageError if none
    or several."""
    found = store.find_run_ids(given)
    if given in found:
        return given
    if not found:
        raise UsageError(f"no run {given!r} in {store.url}; see `memgauge runs list`")
    if len(found) > 1:
        raise UsageError(f"{given!r} matches {len(found)} runs ({', '.join(found[:5])}); type more")
    return found[0]


def report_retrieval(report: api.RunReport, out_dir: Path, out: Console) -> None:
    """What `evaluate` and `demo` show last: the terminal view and the three report files,
    rendered from the run's record."""
    if report.summary.aggregate("ir") is None:
        return
    result = retrieval_result(report.run)
    render_terminal(result, out)
    paths = write_reports(result, out_dir)
    out.print("wrote " + ", ".join(str(p) for p in paths))


def write_reports(result: RetrievalEvalResult, out_dir: Path) -> list[Path]:
    """Write result.json, summary.md and report.html into `out_dir`; return their paths."""
    out_dir.mkdir(parents=True, exist_ok=True)
    json_path = out_dir / "result.json"
    md_path = out_dir / "summary.md"
    html_path = out_dir / "report.html"
    write_json(result, json_path)
    atomic_write_text(md_path, render_markdown(result))
    atomic_write_text(html_path, render_html(result))
    return [json_path, md_path, html_path]
