"""Pieces shared by the commands: the results store location, the console, progress."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from memgauge._util.files import atomic_write_text
from memgauge._util.home import memgauge_home
from memgauge.errors import UsageError
from memgauge.report import render_html, render_markdown, render_terminal, write_json
from memgauge.runs.recorder import record_result
from memgauge.runs.result import RetrievalEvalResult
from memgauge.runs.retrieval import ProgressCallback
from memgauge.store.results import ResultStore
from memgauge.store.suite_runs import SuiteRunStore

__all__ = [
    "console",
    "existing_store",
    "gain_option",
    "open_suite_store",
    "progress_bar",
    "rel_threshold_option",
    "report_result",
    "resolve_run_id",
    "results_db",
    "store_result",
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
    return memgauge_home() / "results.db"


def existing_store(path: Path | None) -> Path:
    """`path` (default `MEMGAUGE_HOME/results.db`) for a command that only reads it: a
    UsageError, and no empty file left behind, when it does not exist."""
    where = path or results_db()
    if not where.is_file():
        raise UsageError(
            f"no results store at {where}: nothing has been recorded there yet (run `memgauge"
            " run SUITE` or `memgauge evaluate`), or give the right one with --store"
        )
    return where


def open_suite_store(path: Path | None, *, read_only: bool = False) -> SuiteRunStore:
    """The suite-run store at `path`, else `MEMGAUGE_HOME/results.db`; with `read_only`, a
    UsageError when there is none (rather than creating it)."""
    return SuiteRunStore(existing_store(path) if read_only else path or results_db())


def resolve_run_id(store: SuiteRunStore, given: str) -> str:
    """The run id that `given` (a whole id or its first characters) names; UsageError if none
    or several."""
    found = store.find_run_ids(given)
    if given in found:
        return given
    if not found:
        raise UsageError(f"no run {given!r} in {store.path}; see `memgauge runs list`")
    if len(found) > 1:
        raise UsageError(f"{given!r} matches {len(found)} runs ({', '.join(found[:5])}); type more")
    return found[0]


def store_result(result: RetrievalEvalResult) -> Path:
    """Record a result in the results store and return the database path."""
    path = results_db()
    with ResultStore(path) as store:
        record_result(store, result)
    return path


@contextmanager
def progress_bar(enabled: bool) -> Iterator[ProgressCallback | None]:
    """A progress bar on stderr fed by the runner's progress callback."""
    if not enabled:
        yield None
        return
    progress = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console(stderr=True),
        transient=True,
    )
    tasks: dict[str, object] = {}

    def callback(event: str, system: str, done: int, total: int) -> None:
        key = f"{system}:{event}"
        if event == "system-done":
            return
        if key not in tasks:
            label = "ingesting" if event == "ingest" else "searching"
            tasks[key] = progress.add_task(f"{system} {label}", total=total)
        progress.update(tasks[key], completed=done)  # type: ignore[arg-type]

    with progress:
        yield callback


def report_result(result: RetrievalEvalResult, out_dir: Path, store: bool, out: Console) -> None:
    """What every evaluating command does last: the terminal view, the three report files and,
    unless told not to, the results store."""
    render_terminal(result, out)
    paths = write_reports(result, out_dir)
    if store:
        db = store_result(result)
        out.print(f"recorded run {result.run_id} in {db}")
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
