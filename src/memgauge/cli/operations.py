"""`memgauge operations CASES`: are merge decisions (CREATE / UPDATE / NOOP / DELETE) right?
Seed 000's tiers: heuristic checks, the operation itself, and the merge-quality judge."""

from __future__ import annotations

from pathlib import Path

import click

from memgauge import api
from memgauge._util.jsonout import dumps_strict
from memgauge.cli._common import console
from memgauge.cli._evaluation import conclude, running
from memgauge.cli._numbers import integer
from memgauge.cli._options import RunArgs, run_options
from memgauge.report import atomic_write_text
from memgauge.report.shapes_terminal import print_sections
from memgauge.report.write_path import operations_report

__all__ = ["operations"]


@click.command()
@click.argument("cases_path", metavar="CASES", type=click.Path(path_type=Path))
@click.option(
    "--decider",
    "decider_spec",
    default=None,
    help="e.g. '{llm: {model: m}}', '{heuristic: {}}', '{python: {target: pkg.mod:make}}' (a"
    " factory returning an object with decide(existing, incoming), or such a function).",
)
@click.option(
    "--outputs",
    "outputs_path",
    type=click.Path(path_type=Path),
    default=None,
    help="Decisions recorded in production: JSONL of {case_id, output}.",
)
@click.option(
    "--judge/--no-judge",
    "use_judge",
    default=False,
    help="Score merged texts with the merge-quality rubric judge.",
)
@click.option("--judge-model", default=None)
@click.option(
    "--judge-learnings",
    default=None,
    metavar="QUERY|SPEC",
    help="Add past evaluation failures to the merge judge's prompt: a query looked up in the"
    " learnings memory, or '{query: Q, k: 3, budget: 500, path: FILE, memory: SPEC}'.",
)
@click.option(
    "--output",
    "out_dir",
    type=click.Path(path_type=Path),
    default=None,
    help="Write operations.json (every case) into this directory.",
)
@click.option("--concurrency", type=integer(1, 256), default=4, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON (last line).")
@run_options(no_targets="Report seed 000's tier targets without failing on them.")
def operations(
    cases_path: Path,
    decider_spec: str | None,
    outputs_path: Path | None,
    use_judge: bool,
    judge_model: str | None,
    judge_learnings: str | None,
    out_dir: Path | None,
    concurrency: int,
    as_json: bool,
    run_args: RunArgs,
) -> None:
    """Score merge decisions on CASES: heuristic tier (target 95%), operation tier (80%),
    LLM-judge tier (70%), each check's pass rate with a Wilson 95% interval.

    Exit codes: 0 every tier target met; 1 a target missed (--no-targets: reported only); 2 bad
    input; 3 a capability or the judge's endpoint unavailable; 4 more cases failed than
    --max-failure-rate allows.
    """
    subject, label = api.write_path_subject("decider", decider_spec, outputs_path)
    suite = api.operations_suite(
        cases_path,
        subject,
        judge=use_judge,
        judge_model=judge_model,
        judge_learnings=judge_learnings,
        concurrency=concurrency,
        max_failure_rate=run_args.failure_rate,
    )
    with running(run_args.progress) as bar:
        report = api.run_suite(suite, options=run_args.options, progress=bar, kind="operations")
    doc = operations_report(report.run, report.items, cases=str(cases_path), decider=label)
    if out_dir is not None:
        out_dir.mkdir(parents=True, exist_ok=True)
        atomic_write_text(
            out_dir / "operations.json", dumps_strict(doc, indent=2, default=str) + "\n"
        )
    out = console(stderr=as_json)
    out.print(f"Memory operations: {label} on {cases_path.name}", markup=False)
    print_sections(out, report.summary)
    code = conclude(out, report, run_args)
    if as_json:
        click.echo(dumps_strict({k: v for k, v in doc.items() if k != "per_case"}, default=str))
    if code:
        raise click.exceptions.Exit(code)
