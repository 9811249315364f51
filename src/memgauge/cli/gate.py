"""`memgauge gate` and `memgauge history`: a suite's runs over time, rolling baselines and
regression gates for CI (seed 000)."""

from __future__ import annotations

from pathlib import Path

import click
from rich.table import Table

from memgauge import api
from memgauge._util.jsonout import dumps_strict
from memgauge.cli._common import console, store_option
from memgauge.errors import UsageError
from memgauge.report import atomic_write_text
from memgauge.report.gate import gate_markdown

__all__ = ["gate", "history", "learnings"]


def _fmt(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.3f}"


learn_into_option = click.option(
    "--learn-into",
    "learn_into",
    default=None,
    metavar="MEMORY",
    help="Keep failure memories in this memory subject instead (a spec file, http://...,"
    " mcp:..., python:...; as `memgauge evaluate -s`).",
)


@click.command()
@click.argument("target", metavar="SUITE_OR_RUN")
@store_option
@click.option(
    "--window",
    type=click.IntRange(1, 100),
    default=5,
    show_default=True,
    help="Runs in the rolling baseline.",
)
@click.option(
    "--threshold",
    type=click.FloatRange(0, 1),
    default=0.15,
    show_default=True,
    help="Relative drop that is a regression.",
)
@click.option("--exact-threshold", type=click.FloatRange(0, 1), default=0.10, show_default=True)
@click.option("--judge-threshold", type=click.FloatRange(0, 1), default=0.20, show_default=True)
@click.option(
    "--threshold-for",
    "overrides",
    multiple=True,
    metavar="EVALUATOR=DROP",
    help="Per-evaluator threshold, repeatable.",
)
@click.option(
    "--phase",
    type=click.Choice(["auto", "bootstrap", "stabilization", "production"]),
    default="auto",
    show_default=True,
)
@click.option("--min-history", type=click.IntRange(0), default=3, show_default=True)
@click.option("--production-after", type=click.IntRange(0), default=10, show_default=True)
@click.option(
    "--markdown",
    "md_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Write the pull-request summary here.",
)
@click.option("--json", "as_json", is_flag=True)
@click.option(
    "--learn/--no-learn",
    default=True,
    show_default=True,
    help="Store each regression as a failure memory (eval-to-learning).",
)
@click.option(
    "--learnings",
    "learnings_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Where failure memories go (default: MEMGAUGE_HOME/learnings.db).",
)
@click.option(
    "--baseline",
    "baselines",
    multiple=True,
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Runs exported earlier (`memgauge runs export ID --format bundle`) to gate against,"
    " beside the store's own; repeat for several (CI on a runner with no shared store).",
)
@learn_into_option
def gate(
    target: str,
    store_path: str | None,
    window: int,
    threshold: float,
    exact_threshold: float,
    judge_threshold: float,
    overrides: tuple[str, ...],
    phase: str,
    min_history: int,
    production_after: int,
    md_path: Path | None,
    as_json: bool,
    learn: bool,
    learnings_path: Path | None,
    learn_into: str | None,
    baselines: tuple[Path, ...],
) -> None:
    """Gate a run (an id, or a suite file: its latest completed run) against the rolling
    baseline of the suite's earlier runs. Exit 1 on a regression in the production phase."""
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
    cfg = api.GateConfig(
        window=window,
        threshold=threshold,
        exact_threshold=exact_threshold,
        judge_threshold=judge_threshold,
        overrides=parsed,
        min_history=min_history,
        production_after=production_after,
        phase=None if phase == "auto" else phase,
    )
    result, learned = api.gate(
        target,
        store=store_path,
        config=cfg,
        learn=learn,
        learnings=learnings_path,
        learn_into=learn_into,
        baseline=baselines,
    )
    if learned:
        click.echo(f"stored {learned} failure memories for future prompts", err=True)
    text = gate_markdown(result)
    if md_path is not None:
        atomic_write_text(md_path, text)
    if as_json:
        click.echo(dumps_strict(result.as_dict()))
    else:
        click.echo(text, nl=False)
    if result.status == "fail":
        raise click.exceptions.Exit(1)


@click.command()
@click.argument("suite_name", metavar="SUITE")
@store_option
@click.option("--last", type=click.IntRange(1, 1000), default=20, show_default=True)
@click.option("--window", type=click.IntRange(1, 100), default=5, show_default=True)
@click.option("--json", "as_json", is_flag=True)
def history(suite_name: str, store_path: str | None, last: int, window: int, as_json: bool) -> None:
    """A suite's completed runs over time (SUITE: its name or its file): per metric a sparkline
    of the last runs, the latest value and the rolling baseline before it."""
    runs = api.history(suite_name, store=store_path, last=last)
    suite_name = runs[-1].suite_name
    keys: list[tuple[str, str, str]] = []
    per_run = [
        {(m.subject, m.task, m.name): m.value for m in r.summary.measures()} if r.summary else {}
        for r in runs
    ]
    for measured in per_run:
        for key in measured:
            if key not in keys:
                keys.append(key)
    series: dict[tuple[str, str, str], list[float | None]] = {
        k: [measured.get(k) for measured in per_run] for k in keys
    }
    if as_json:
        click.echo(
            dumps_strict(
                {
                    "suite": suite_name,
                    "runs": [{"run_id": r.run_id, "created_at": r.created_at} for r in runs],
                    "metrics": [
                        {"subject": k[0], "task": k[1], "evaluator": k[2], "values": series[k]}
                        for k in keys
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
    for k in keys:
        values = series[k]
        # as the gate: the last `window` runs, averaged over those that measured it
        prior = [v for v in values[:-1][-window:] if v is not None]
        table.add_row(
            *k,
            api.sparkline(values),
            _fmt(values[-1]),
            _fmt(sum(prior) / len(prior) if prior else None),
        )
    console().print(table)


@click.group()
def learnings() -> None:
    """Failure memories stored by `memgauge gate` (eval-to-learning)."""


@learnings.command()
@click.argument("text")
@click.option("-k", "k", type=click.IntRange(1, 50), default=5, show_default=True)
@click.option(
    "--budget",
    type=click.IntRange(20),
    default=500,
    show_default=True,
    help="Tokens, about 4 characters each.",
)
@click.option(
    "--learnings", "learnings_path", type=click.Path(dir_okay=False, path_type=Path), default=None
)
@learn_into_option
def query(
    text: str, k: int, budget: int, learnings_path: Path | None, learn_into: str | None
) -> None:
    """The past failures most relevant to TEXT, ready to paste into a prompt."""
    where = api.learnings_path(learnings_path)
    if learn_into is None and not where.is_file():
        click.echo(f"no stored failure is relevant (no failure has been stored in {where})")
        return
    found = api.learnings_query(
        text, k=k, budget=budget, learnings=learnings_path, learn_into=learn_into
    )
    click.echo(found or "no stored failure is relevant")
