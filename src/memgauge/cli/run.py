"""`memgauge run SUITE`: execute a suite, recording every item in the store as it finishes."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import click

from memgauge import api
from memgauge._util.jsonout import dumps_strict
from memgauge.cli._common import PATH, console, json_option, store_option
from memgauge.cli._evaluation import conclude, running
from memgauge.cli._numbers import integer
from memgauge.cli._options import RunArgs, run_options
from memgauge.cli._shared_options import (
    force_option,
    progress_option,
    resume_option,
    retry_failed_option,
)
from memgauge.cli.bench_systems import print_rankings
from memgauge.report.cost import render_cost
from memgauge.report.repeats import render_repeats
from memgauge.report.shapes import beyond_tables
from memgauge.report.shapes_terminal import print_shape
from memgauge.report.suite_run import (
    counts_line,
    failures_table,
    judge_notes,
    result_rows,
    shown_failures,
    summary_table,
)

__all__ = ["run"]


@click.command()
@click.argument("suite_file", type=PATH)
@store_option
@click.option(
    "--concurrency",
    type=integer(1, 1000),
    default=None,
    help="Items in flight at once (default: the suite's concurrency, else 4).",
)
@resume_option("Finish the run with this id (or prefix).", metavar=None)
@retry_failed_option
@force_option(
    "With --resume: take over a run whose recorded owner is a process on another host "
    "(which this host cannot check). A live owner on this host is never displaced."
)
@json_option("Print a JSON summary as the last line.")
@progress_option("Show a progress bar on stderr (default: when stderr is a terminal).")
@run_options(store=False, repeat=True)
def run(suite_file: Path, concurrency: int | None, as_json: bool, run_args: RunArgs) -> None:
    """Run SUITE_FILE: every subject on every task, each item recorded as it finishes.

    Exit codes: 0 the run completed and met its targets; 1 a target (a task's `targets:`, a
    seed's, --fail-under) was missed; 2 a mistake in the suite or its datasets, or a run another
    process drives (nothing is written); 3 a capability or a judge's endpoint is unavailable;
    4 more items failed than max_failure_rate allows (a dead subject); 130 interrupted, 143
    killed (the run is kept as cancelled: finish it with --resume ID).

    One process drives a run at a time: the run records its owner (pid, host, the pid's start
    time, a heartbeat). --resume ID refuses (exit 2, naming the pid) while the owner is alive on
    this host; an owner that is gone (kill -9, a crash) is taken over without a flag; an owner
    on another host only with --force. Of two processes resuming at once, one drives the run
    and the other is refused.

    LLM judges read MEMGAUGE_MODEL, OPENAI_BASE_URL and OPENAI_API_KEY; their responses are
    cached, so running the same suite again makes no calls (--cache-only proves it).
    """
    options = replace(run_args.options, concurrency=concurrency)
    with running(run_args.progress) as bar:
        report = api.run_suite(suite_file, options=options, progress=bar)
    where = run_args.where()
    assert where is not None  # `run` has no --no-store
    failures = [
        {"subject": it.subject, "task": it.task, "item_id": it.item_id, **f.model_dump()}
        for it in report.items
        for f in it.failures
    ]
    _print(report, failures, where, as_json)
    code = conclude(console(stderr=as_json), report, run_args, say_where=False)
    if code:
        raise click.exceptions.Exit(code)


def _print(report: api.RunReport, failures: list[dict[str, Any]], db: str, as_json: bool) -> None:
    summary = report.summary.model_dump()
    out = console(stderr=as_json)
    out.print(summary_table(summary))
    # an audit's rates, the tiers', pass@k, ...; render_cost draws every cost measure
    for table in beyond_tables(report.summary, apart={"cost"}):
        print_shape(out, table)
    render_cost(report.summary, out)  # accuracy beside tokens and latency, where asked
    print_rankings(report.summary, out)  # a bench suite's systems, ranked
    for line in judge_notes(summary):
        out.print(line)
    render_repeats(report.summary, out)  # the system's own variance, where asked
    if failures:
        out.print(failures_table(shown_failures(failures, 10), len(failures)))
    verb = "resumed and finished" if report.resumed else "finished"
    out.print(f"run {report.run_id} {verb}: {report.status}; {counts_line(summary, 'not run')}")
    if report.reason:
        out.print(f"reason: {report.reason}")
    for warning in report.warnings:
        out.print(f"warning: {warning}", markup=False)
    out.print(f"stored in {db}; see `memgauge runs show {report.run_id}`")
    if as_json:
        flags = [f.model_dump(mode="json") for f in report.summary.nondeterminism()]
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
                    # every run-level number (the rows' and the aggregates'): what gate reads
                    "measures": [m.model_dump(mode="json") for m in report.summary.measures()],
                    "llm_usage": summary.get("llm_usage", {}),
                    "store": str(db),
                    # with repeats, the subjects whose outputs varied (only then: a run
                    # without repeats prints what it always did)
                    **({"nondeterministic": flags} if flags else {}),
                },
                sort_keys=True,
            )
        )
