"""`memgauge run SUITE`: execute a suite, recording every item in the store as it finishes."""

from __future__ import annotations

import signal
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import Any

import click
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from memgauge._util.jsonout import dumps_strict
from memgauge.cli._common import console, open_suite_store, resolve_run_id
from memgauge.cli._llm import configure_llm, llm_options
from memgauge.llm.context import llm_context
from memgauge.report.suite_run import failures_table, judge_notes, result_rows, summary_table
from memgauge.runs.engine import RunReport, run_suite
from memgauge.runs.suite import load_suite

__all__ = ["RunProgressBar", "run", "sigterm_as_interrupt"]


class RunProgressBar:
    """A rich progress bar on stderr: done / total, items per second, ETA, failures so far."""

    def __init__(self) -> None:
        self.progress = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[rate]}"),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            TextColumn("{task.fields[failed]}"),
            console=console(stderr=True),
            transient=False,
        )
        self.task: TaskID | None = None
        self.failed = 0

    def start(self, run_id: str, total: int, done: int) -> None:
        self.progress.start()
        self.task = self.progress.add_task(
            f"run {run_id}", total=total, completed=done, rate="", failed=""
        )

    def phase(self, subject: str, task: str, corpus: str | None) -> None:
        assert self.task is not None
        where = f" [{corpus}]" if corpus else ""
        self.progress.update(self.task, description=f"{subject} / {task}{where}")

    def advance(self, row: Mapping[str, Any]) -> None:
        assert self.task is not None
        if row["status"] == "failed":
            self.failed += 1
        speed = self.progress.tasks[0].speed
        self.progress.update(
            self.task,
            advance=1,
            rate=f"{speed:.1f} items/s" if speed else "",
            failed=f"[red]{self.failed} failed[/red]" if self.failed else "",
        )

    def stop(self) -> None:
        self.progress.stop()


@contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    """`kill PID` cancels the run cleanly (recorded as cancelled, resumable), like Ctrl-C."""

    def handler(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


@click.command()
@click.argument("suite_file", type=click.Path(path_type=Path))
@click.option(
    "--store",
    "store_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="SQLite results store (default: MEMGAUGE_HOME/results.db).",
)
@click.option(
    "--concurrency",
    type=click.IntRange(1, 1000),
    default=None,
    help="Items in flight at once (default: the suite's concurrency, else 4).",
)
@click.option("--resume", "resume", default=None, help="Finish the run with this id (or prefix).")
@click.option(
    "--retry-failed",
    is_flag=True,
    help="With --resume: run the failed items again too, and the items whose LLM judge "
    "failed on a transient call failure (timeout, 5xx, 429, dropped connection).",
)
@click.option(
    "--force",
    is_flag=True,
    help="With --resume: take over a run whose recorded owner is a process on another host "
    "(which this host cannot check). A live owner on this host is never displaced.",
)
@click.option("--json", "as_json", is_flag=True, help="Print a JSON summary as the last line.")
@click.option(
    "--progress/--no-progress",
    default=None,
    help="Show a progress bar on stderr (default: when stderr is a terminal).",
)
@llm_options
def run(
    suite_file: Path,
    store_path: Path | None,
    concurrency: int | None,
    resume: str | None,
    retry_failed: bool,
    force: bool,
    as_json: bool,
    progress: bool | None,
    cache_only: bool,
    no_cache: bool,
    refresh_cache: bool,
    llm_cache: Path | None,
) -> None:
    """Run SUITE_FILE: every subject on every task, each item recorded as it finishes.

    Exit codes: 0 the run completed; 1 it failed (more items failed than max_failure_rate
    allows); 2 a mistake in the suite or its datasets, or a run another process drives (nothing
    is written); 3 a capability is
    missing; 4 a subject could not start; 130 interrupted (the run is kept as cancelled: finish
    it with --resume ID).

    One process drives a run at a time: the run records its owner (pid, host, the pid's start
    time, a heartbeat). --resume ID refuses (exit 2, naming the pid) while the owner is alive on
    this host; an owner that is gone (kill -9, a crash) is taken over without a flag; an owner
    on another host only with --force. Of two processes resuming at once, one drives the run
    and the other is refused.

    LLM judges read MEMGAUGE_MODEL, OPENAI_BASE_URL and OPENAI_API_KEY; their responses are
    cached, so running the same suite again makes no calls (--cache-only proves it).
    """
    if retry_failed and not resume:
        raise click.UsageError("--retry-failed needs --resume ID")
    if force and not resume:
        raise click.UsageError("--force needs --resume ID")
    configure_llm(
        cache_only=cache_only, no_cache=no_cache, refresh_cache=refresh_cache, llm_cache=llm_cache
    )
    suite = load_suite(suite_file)
    show = sys.stderr.isatty() if progress is None else progress
    bar = RunProgressBar() if show else None
    with open_suite_store(store_path) as store:
        run_id = resolve_run_id(store, resume) if resume else None
        try:
            with sigterm_as_interrupt():
                report = run_suite(
                    suite,
                    store,
                    suite_path=suite_file.resolve(),
                    concurrency=concurrency,
                    resume=run_id,
                    retry_failed=retry_failed,
                    force=force,
                    progress=bar,
                )
        finally:
            if bar is not None:
                bar.stop()
            llm_context().close()
        failures = store.failures(report.run_id, limit=10)
    _print(report, failures, store.path, as_json)
    if report.status != "completed":
        raise click.exceptions.Exit(1)


def _print(report: RunReport, failures: list[dict[str, Any]], db: Path, as_json: bool) -> None:
    summary = report.summary
    out = console(stderr=as_json)
    out.print(summary_table(summary))
    for line in judge_notes(summary):
        out.print(line)
    if failures:
        out.print(failures_table(failures, summary["n_failed"]))
    verb = "resumed and finished" if report.resumed else "finished"
    out.print(
        f"run {report.run_id} {verb}: {report.status}; {summary['n_completed']} completed, "
        f"{summary['n_failed']} failed, {summary['n_queued']} not run, of {summary['n_items']}"
    )
    if report.reason:
        out.print(f"reason: {report.reason}")
    out.print(f"stored in {db}; see `memgauge runs show {report.run_id}`")
    if as_json:
        click.echo(
            dumps_strict(
                {
                    "run_id": report.run_id,
                    "status": report.status,
                    "reason": report.reason,
                    "n_items": summary["n_items"],
                    "n_completed": summary["n_completed"],
                    "n_failed": summary["n_failed"],
                    "results": result_rows(summary),
                    "llm_usage": summary.get("llm_usage", {}),
                    "store": str(db),
                },
                sort_keys=True,
            )
        )
