"""`memgauge gate` and `memgauge history`: a suite's runs over time, rolling baselines and
regression gates for CI (seed 000)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
from rich.table import Table

from memgauge import api
from memgauge._util.jsonout import dumps_strict
from memgauge.cli._common import (
    EXISTING_FILE,
    FILE,
    console,
    distinct_outputs,
    json_option,
    print_markdown,
    refuse_unwritable,
    store_option,
)
from memgauge.cli._numbers import integer
from memgauge.cli._options import junit_option
from memgauge.cli._shared_options import by_option, drop_option, fraction_option, window_option
from memgauge.errors import UsageError
from memgauge.report import atomic_write_text
from memgauge.report.fmt import series_cells
from memgauge.report.gate import gate_markdown
from memgauge.report.junit import gate_junit, write_junit

__all__ = ["gate", "history", "learnings"]


#: `--learnings FILE`: the failure-memory database `gate` writes and `learnings query` reads
learnings_option = click.option(
    "--learnings",
    "learnings_path",
    type=FILE,
    default=None,
    help="The failure memories' database (default: MEMGAUGE_HOME/learnings.db).",
)

learn_into_option = click.option(
    "--learn-into",
    "learn_into",
    default=None,
    metavar="MEMORY",
    help="Keep failure memories in this memory subject instead (a spec file, http://...,"
    " mcp:..., python:...; as `memgauge evaluate -s`).",
)


@click.command()
@click.argument("target", metavar="SUITE_OR_RUN", required=False)
@store_option
@window_option("runs")
@drop_option("a regression")
@fraction_option("--exact-threshold", default=0.10, about=None)
@fraction_option("--judge-threshold", default=0.20, about=None)
@click.option(
    "--threshold-for",
    "overrides",
    multiple=True,
    metavar="EVALUATOR=DROP",
    help="Per-evaluator threshold, repeatable.",
)
@click.option(
    "--measure",
    "measures",
    multiple=True,
    metavar="[SUBJECT/][TASK/]NAME",
    help="A measure that decides the gate besides the run's targets and each task's primary"
    " measures, repeatable (e.g. tier_precision[critical]@5, hybrid/retrieval/folder_ils@5);"
    " every other measure is shown as information.",
)
@by_option(
    "point: the run's value decides (the seed's rule); ci-upper: the favourable bound of"
    " its 95% CI, so a drop its own noise can explain passes.",
)
@click.option(
    "--accept",
    "accept",
    default=None,
    metavar="RUN",
    help="Count RUN in later baselines although it failed the gate (a change made on purpose).",
)
@click.option(
    "--markdown",
    "md_path",
    type=FILE,
    default=None,
    help="Write the pull-request summary here, as Markdown (on a terminal, stdout shows it"
    " drawn; piped, stdout is the Markdown too).",
)
@json_option()
@click.option(
    "--learn/--no-learn",
    default=True,
    help="Store each regression as a failure memory (eval-to-learning).",
)
@learnings_option
@click.option(
    "--baseline",
    "baselines",
    multiple=True,
    type=EXISTING_FILE,
    help="Runs exported earlier (`memgauge runs export ID --format bundle`) to gate against,"
    " beside the store's own; repeat for several (CI on a runner with no shared store).",
)
@learn_into_option
@junit_option
def gate(
    target: str | None,
    store_path: str | None,
    overrides: tuple[str, ...],
    measures: tuple[str, ...],
    by: str,
    accept: str | None,
    md_path: Path | None,
    as_json: bool,
    learn: bool,
    learnings_path: Path | None,
    learn_into: str | None,
    baselines: tuple[Path, ...],
    junit: Path | None,
    **thresholds: Any,
) -> None:
    """Gate a run (an id, or a suite file: its run that completed last) against the rolling
    baseline of the suite's earlier runs (those that failed the gate left out). Exit 1 when a
    measure that decides (a target of the run, a --measure, a task's primary measure) dropped
    by its threshold or more; the other measures are shown as information."""
    if accept is not None:
        run_id, before = api.accept_gate(accept, store=store_path)
        click.echo(
            f"run {run_id} accepted ({'was ' + before if before else 'never gated'}): it counts"
            " in later baselines",
            err=True,
        )
        if target is None:
            return
    if target is None:
        raise UsageError("gate: name a suite file or a run (SUITE_OR_RUN), or --accept RUN")
    # the JUnit XML was written over the Markdown summary, without a word
    distinct_outputs(
        {"--markdown": md_path, "--junit": junit},
        store=store_path,
        inputs={"--baseline": baselines},
    )
    for flag, path in (("--markdown", md_path), ("--junit", junit)):
        if path is not None:  # before the verdict is recorded, not after
            refuse_unwritable(flag, path)
    parsed: dict[str, float] = {}
    for item in overrides:
        name, sep, value = item.partition("=")
        try:
            parsed[name] = float(value)
        except ValueError:
            sep = ""
        if not sep or not name:
            raise UsageError(f"--threshold-for {item!r}: write EVALUATOR=DROP, e.g. rubric=0.25")
        if not 0 < parsed[name] <= 1:
            raise UsageError(
                f"--threshold-for {item!r}: the drop is a fraction of the baseline, in (0, 1]"
                " (0.25 is a 25% drop)"
            )
    # thresholds: --window, --threshold, --exact-threshold, --judge-threshold, as GateConfig
    # names them
    cfg = api.GateConfig(
        overrides=parsed, by="ci-upper" if by == "ci-upper" else "point", **thresholds
    )
    result, learned = api.gate(
        target,
        store=store_path,
        config=cfg,
        learn=learn,
        learnings=learnings_path,
        learn_into=learn_into,
        baseline=baselines,
        measures=measures,
    )
    if learned:
        ids = ", ".join(m.id for m in result.memories if m.new)
        click.echo(f"stored {learned} failure memories for future prompts: {ids}", err=True)
    if md_path is not None:
        atomic_write_text(md_path, gate_markdown(result))
    if junit is not None:
        write_junit(junit, gate_junit(result))
    if as_json:
        click.echo(dumps_strict(result.as_dict()))
    else:
        print_markdown(gate_markdown(result, information="moved"))
    if result.status == "fail":
        raise click.exceptions.Exit(1)


@click.command()
@click.argument("suite_name", metavar="SUITE")
@store_option
@click.option("--last", type=integer(1, 1000), default=20)
@window_option("runs")
@json_option()
def history(suite_name: str, store_path: str | None, last: int, window: int, as_json: bool) -> None:
    """A suite's completed runs over time (SUITE: its name or its file): per metric a sparkline
    of the last runs, the latest value and the rolling baseline before it."""
    runs = api.history(suite_name, store=store_path, last=last)
    suite_name = runs[-1].suite_name
    series = api.metric_series(runs, api.failed_gates(suite_name, store=store_path))
    if as_json:
        click.echo(
            dumps_strict(
                {
                    "suite": suite_name,
                    "runs": [{"run_id": r.run_id, "created_at": r.created_at} for r in runs],
                    "metrics": [
                        {
                            "subject": m.subject,
                            "task": m.task,
                            "evaluator": m.measure,
                            "values": m.values,
                        }
                        for m in series
                    ],
                }
            )
        )
        return
    table = Table(
        title=f"History of {suite_name}: {len(runs)} completed runs, oldest first",
        title_justify="left",
    )
    for col in (
        "subject",
        "task",
        "evaluator",
        "trend",
        "latest",
        f"baseline (last {window} before)",
    ):
        table.add_column(col, justify="right" if col in ("latest",) else "left")
    for m in series:
        table.add_row(
            m.subject,
            m.task,
            m.measure,
            api.sparkline(m.values),
            *series_cells(m, window),
        )
    console().print(table)


@click.group()
def learnings() -> None:
    """Failure memories stored by `memgauge gate` (eval-to-learning)."""


@learnings.command()
@click.argument("text")
@click.option("-k", "k", type=integer(1, 50), default=5)
@click.option(
    "--budget",
    type=integer(20),
    default=500,
    help="Tokens, about 4 characters each.",
)
@learnings_option
@learn_into_option
def query(
    text: str, k: int, budget: int, learnings_path: Path | None, learn_into: str | None
) -> None:
    """The past failures most relevant to TEXT, ready to paste into a prompt."""
    where = api.learnings_path(learnings_path)
    if learn_into is None and not api.learnings_stored(where):
        click.echo(f"no stored failure is relevant (no failure has been stored in {where})")
        return
    found = api.learnings_query(
        text, k=k, budget=budget, learnings=learnings_path, learn_into=learn_into
    )
    click.echo(found or "no stored failure is relevant")
