"""`memgauge operations CASES`: are merge decisions (CREATE / UPDATE / NOOP / DELETE) right?
Seed 000's tiers: heuristic checks, the operation itself, and the merge-quality judge."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from memgauge.cli._cases import case_options, case_report, outputs_option, score_cases
from memgauge.cli._common import PATH
from memgauge.cli._options import run_options

__all__ = ["operations"]


@click.command()
@click.argument("cases_path", metavar="CASES", type=PATH)
@click.option(
    "--decider",
    "decider_spec",
    default=None,
    help="e.g. '{llm: {model: m}}', '{heuristic: {}}', '{python: {target: pkg.mod:make}}' (a"
    " factory returning an object with decide(existing, incoming), or such a function).",
)
@outputs_option("Decisions recorded in production: JSONL of {case_id, output}.")
@click.option(
    "--judge/--no-judge",
    "judge",
    default=False,
    show_default=False,
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
@case_options("operations")
@run_options(
    no_targets="Report seed 000's tier targets without failing on them.",
    reports=lambda given: (case_report("operations"),),
)
def operations(
    cases_path: Path,
    decider_spec: str | None,
    outputs_path: Path | None,
    **given: Any,
) -> None:
    """Score merge decisions on CASES: heuristic tier (target 95%), operation tier (80%),
    LLM-judge tier (70%), each check's pass rate with a Wilson 95% interval.

    Exit codes: 0 every tier target met; 1 a target missed (--no-targets: reported only); 2 bad
    input; 3 a capability or the judge's endpoint unavailable; 4 more cases failed than
    --max-failure-rate allows.
    """
    # given: --judge, --judge-model, --judge-learnings, --concurrency as the builder names them,
    # --output, --json and the run's options
    score_cases("operations", decider_spec, outputs_path, cases_path, **given)
