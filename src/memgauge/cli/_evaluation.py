"""What every evaluating command does around its run (`run`, `evaluate`, `demo`, `extraction`,
`operations`, `audit`; their shared options are `cli._options`): the progress bar, Ctrl-C /
SIGTERM as a clean, resumable stop, and the one exit-code policy."""

from __future__ import annotations

import signal
import sys
from collections.abc import Collection, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from rich.console import Console

from memgauge import api
from memgauge._util.interrupts import as_ctrl_c
from memgauge.cli._common import console
from memgauge.cli._options import RunArgs
from memgauge.report.escape import term
from memgauge.report.fmt import fmt_target_value

if TYPE_CHECKING:
    from rich.progress import Task, TaskID

__all__ = ["RunProgressBar", "conclude", "running", "sigterm_as_interrupt"]


class RunProgressBar:
    """A rich progress bar on stderr: done / total, items per second, ETA, failures so far."""

    def __init__(self) -> None:
        # imported here: a run without a bar (--quiet, stderr not a terminal) never draws one
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        self.progress = Progress(
            TextColumn("{task.description}", markup=False),  # names are data
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
        self.ingest_task: TaskID | None = None
        self.failed = 0

    def _task(self, task_id: TaskID) -> Task:
        return next(t for t in self.progress.tasks if t.id == task_id)

    def start(self, run_id: str, total: int, done: int) -> None:
        self.progress.start()
        self.task = self.progress.add_task(
            f"run {run_id}", total=total, completed=done, rate="", failed=""
        )

    def phase(self, subject: str, task: str, corpus: str | None) -> None:
        assert self.task is not None
        where = f" [{corpus}]" if corpus else ""
        self.progress.update(self.task, description=f"{subject} / {task}{where}")

    def ingest(self, subject: str, corpus: str | None, done: int, total: int) -> None:
        """A bar of its own while a memory is filled (embedding included), with its ETA;
        hidden once the memory holds every memory of the corpus."""
        where = f" [{corpus}]" if corpus else ""
        description = f"ingest {subject}{where}"
        if self.ingest_task is None:
            self.ingest_task = self.progress.add_task(
                description, total=total, completed=done, rate="", failed=""
            )
        elif done == 0:
            self.progress.reset(self.ingest_task, total=total, description=description)
        speed = self._task(self.ingest_task).speed
        self.progress.update(
            self.ingest_task,
            completed=done,
            description=description,
            rate=f"{speed:.0f} memories/s" if speed else "",
            visible=done < total,
        )

    def advance(self, row: api.ItemRecord) -> None:
        assert self.task is not None
        if row.status == "failed":
            self.failed += 1
        speed = self._task(self.task).speed
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
    """`kill PID` cancels the run cleanly (recorded as cancelled, resumable; exit 143), like
    Ctrl-C (in a process `cli.main.run` has set this for every command; here for `main`
    called in process)."""
    previous = signal.signal(signal.SIGTERM, as_ctrl_c)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


@contextmanager
def running(show: bool | None) -> Iterator[RunProgressBar | None]:
    """While a run goes: a progress bar (when asked, or when stderr is a terminal), SIGTERM as
    Ctrl-C, and the LLM clients closed at the end."""
    enabled = sys.stderr.isatty() if show is None else show
    bar = RunProgressBar() if enabled else None
    try:
        with sigterm_as_interrupt():
            yield bar
    finally:
        if bar is not None:
            bar.stop()
        api.close_llm()


def conclude(
    out: Console,
    report: api.RunReport,
    run_args: RunArgs,
    *,
    say_where: bool = True,
    optional: Collection[str] = (),
) -> int:
    """Print how the run ended (targets, unavailable subjects, where it is stored unless the
    command says it itself), write its JUnit XML if --junit asked, and return its exit code; an
    `optional` subject that is unavailable is said so, and does not count."""
    if run_args.junit is not None:
        # imported here: the JUnit writer (and the XML and gate modules it needs) only for
        # --junit
        from memgauge.report.junit import run_junit, write_junit

        write_junit(run_args.junit, run_junit(report, optional))
    for name, why in report.unavailable.items():
        if name in optional:
            out.print(
                term(f"{name} was not run (optional; the exit code ignores it):", "yellow"),
                term(why),
            )
        else:
            out.print(term(f"subject {name} unavailable:", "yellow"), term(why))
    if report.judge_unreachable:
        out.print(
            term("an LLM judge's endpoint could not be reached:", "yellow"),
            term(report.judge_error or "no call connected"),
        )
    for warning in report.warnings:
        out.print(term("warning:", "yellow"), term(warning))
    missed = {id(t) for t in api.missed_targets(report)}
    for t in report.summary.targets:
        if not t.enforced and t.met is not False:
            continue
        verdict = api.target_verdict(t, missed)
        mark = "" if t.enforced else " (shown, not enforced)"
        value = fmt_target_value(t, report.summary.measures())
        bound = "" if t.bound is None else f" (CI bound {t.bound:.4g})"
        out.print(
            f"target {t.subject}/{t.task}/{t.measure} {t.op} {t.target:g}: {value}{bound} "
            f"{verdict}{mark} [{t.source}]",
            markup=False,  # names and sources are data: `[ir]` is not a style
        )
    if report.status != "completed" and report.reason:
        out.print(f"run {report.run_id} {report.status}: {report.reason}", markup=False)
    where = run_args.where() if say_where else None
    if where is not None:
        out.print(
            f"recorded run {report.run_id} in {where}; see `memgauge runs show {report.run_id}`",
            markup=False,
        )
    return api.exit_code(report, optional=optional)
