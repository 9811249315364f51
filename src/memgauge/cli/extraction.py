"""`memgauge extraction CASES`: fact extraction precision, recall, F1, conflict resolution and
minimalism (seed 001), for a live extractor or outputs recorded in production."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from memgauge.cli._cases import case_options, case_report, outputs_option, score_cases
from memgauge.cli._common import PATH, choice_option
from memgauge.cli._kind import kind_option
from memgauge.cli._numbers import SEED, integer, number
from memgauge.cli._options import run_options
from memgauge.cli._shared_options import share_option

__all__ = ["extraction"]


@click.command()
@click.argument("cases_path", metavar="[CASES]", type=PATH, required=False)
@click.option(
    "--extractor",
    "extractor_spec",
    default=None,
    help="e.g. '{llm: {model: gpt-4o-mini}}' or '{python: {target: pkg.mod:make}}' (a factory"
    " returning an object with extract(conversation, existing_memory), or such a function).",
)
@outputs_option(
    "Outputs recorded in production: JSONL of {case_id, output}, or production traces"
    " {conversation, existing_memory, output, tags}: lines with no case_id are judged alone."
)
@click.option(
    "--tag",
    "tags",
    multiple=True,
    help="Judge only the trace lines tagged TAG (repeatable; seed 001: memory_extraction).",
)
@share_option(
    "--sample", about="Judge this share of the trace lines, chosen per line from --seed and its id."
)
@click.option("--seed", type=SEED, default=0, help="Seed of --sample.")
@choice_option(
    "--match",
    "match",
    choices=["exact", "semantic", "judge"],
    default="semantic",
)
@click.option(
    "--threshold",
    type=number(-1, 1),
    default=0.75,
    help="Cosine for --match semantic.",
)
@click.option(
    "--judge-model", default=None, help="Model of the fact-enumeration judge (--match judge)."
)
@click.option("--limit", type=integer(1), default=None)
@case_options("extraction")
@kind_option("extraction", "CASES")
@run_options(
    no_targets="Report seed 001's targets without failing on them.",
    reports=lambda given: (case_report("extraction"),),
)
def extraction(
    cases_path: Path | None,
    extractor_spec: str | None,
    outputs_path: Path | None,
    kind: str | None,
    **given: Any,
) -> None:
    """Score fact extraction on CASES (memgauge cases JSON/JSONL, or LoCoMo: its sessions'
    observations as silver facts), and on the unlabelled lines of a production trace
    (--outputs, with or without CASES; --tag, --sample), which the fact-enumeration judge
    scores from their conversation, existing memory and output alone (--judge-model or
    MEMGAUGE_MODEL): per case TP / FP / FN with the matched pairs; precision,
    recall, F1 micro and macro with 95% CIs; conflict resolution; minimalism; seed 001's
    targets beside them (P > 0.95, R > 0.85, F1 > 0.90, conflict and minimalism 100%).

    Exit codes: 0 every target met; 1 a target missed (--no-targets: reported only); 2 bad
    input; 3 a capability or the judge's endpoint unavailable; 4 more cases failed than
    --max-failure-rate allows.
    """
    # given: --tag ... --limit, --concurrency as `api.extraction_suite` names them, --output,
    # --json and the run's options
    score_cases(
        "extraction",
        extractor_spec,
        outputs_path,
        cases_path,
        trace=outputs_path,
        dataset_kind=kind,
        **given,
    )
