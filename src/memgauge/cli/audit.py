"""`memgauge audit DATASET`: does an agent recall facts, refuse to invent, use the newest value,
order events in time? (seed 003, compatible with memaudit's `audit`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
from click.core import ParameterSource

from memgauge import api
from memgauge._util.jsonout import dumps_strict
from memgauge._util.numbers import AUDIT_MAX_FAILURE_RATE
from memgauge.cli._common import PATH, console, json_option
from memgauge.cli._evaluation import conclude, running
from memgauge.cli._kind import kind_option
from memgauge.cli._numbers import SEED, integer
from memgauge.cli._options import RunArgs, run_options
from memgauge.cli._shared_options import report_dir_option
from memgauge.errors import UsageError
from memgauge.report.audit import AUDIT_FILES, source_lines, write_audit
from memgauge.report.shapes_terminal import print_sections

__all__ = ["audit"]


def _formats(fmt: str) -> list[str]:
    """--format's formats: memaudit's `--format json` writes its AuditResult, so a memaudit
    user asking for JSON gets that shape (memaudit.json), memgauge's own results beside it."""
    return {"all": ["json", "markdown", "memaudit"], "json": ["json", "memaudit"]}.get(fmt, [fmt])


@click.command()
@click.argument("dataset", type=PATH)
@click.option(
    "--agent",
    type=click.Choice(["chat", "memory", "extractive"]),
    default=None,
    help="chat: a model shown the whole history; memory: --subject plus a reader model; "
    "extractive: no LLM. Default: memory with --subject, chat when a model is known, else "
    "extractive (the offline baseline).",
)
@click.option(
    "--model",
    default=None,
    help="The agent's model (default: MEMGAUGE_MODEL or MEMAUDIT_MODEL; with OPENAI_API_KEY set,"
    " gpt-4o-mini as in memaudit); with --scoring auto it also judges the answers.",
)
@click.option(
    "--subject", "subject_text", default=None, help="The memory of a memory-backed agent."
)
@click.option("-k", "k", type=integer(1, 200), default=10)
@click.option(
    "--scoring",
    type=click.Choice(["auto", "judge", "offline"]),
    default="auto",
    help="judge: the QA judge; offline: token F1 / embeddings / abstention phrases. auto: judge "
    "when a model is known (--judge-model, --model, MEMGAUGE_MODEL, MEMAUDIT_MODEL, "
    "OPENAI_API_KEY).",
)
@click.option(
    "--judge-preset",
    type=click.Choice(["longmemeval", "mem0-locomo", "strict"]),
    default="longmemeval",
)
@click.option("--judge-model", default=None, help="The judge's model (default: the agent's).")
@report_dir_option("audit-results", "--output", "the files --format names")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["all", "json", "markdown", "memaudit"]),
    default="all",
    help="all: results.json, report.md and memaudit.json (memaudit's own AuditResult); json:"
    " the JSON files (memgauge's results.json, memaudit's AuditResult beside it as"
    " memaudit.json); markdown: report.md; memaudit: memaudit.json alone.",
)
@click.option("--concurrency", type=integer(1, 1000), default=8)
@click.option("--limit", type=integer(1), default=None, help="Only the first N probes.")
@click.option("--seed", type=SEED, default=0, help="Seed of probe generation.")
@json_option("Print the results (without probes) as JSON.")
@click.option(
    "--attribute",
    is_flag=True,
    help="Attribute each wrong answer to its cause: retrieval miss (with the rank the evidence "
    "was at), budget cut, reader error, stale/conflicting, or unattributable with its reason.",
)
@click.option(
    "--context-budget",
    type=integer(1),
    default=None,
    help="With --attribute: a simulated context budget in tokens; evidence retrieved but past "
    "it is a budget cut.",
)
@kind_option("probes", "DATASET")
@run_options(
    reports=lambda given: [AUDIT_FILES[f] for f in _formats(given["fmt"])],
    max_failure_rate=AUDIT_MAX_FAILURE_RATE,
)
def audit(
    dataset: Path,
    subject_text: str | None,
    out_dir: Path,
    fmt: str,
    as_json: bool,
    kind: str | None,
    attribute: bool,
    context_budget: int | None,
    run_args: RunArgs,
    **settings: Any,
) -> None:
    """Audit an agent's memory on DATASET (memaudit JSON/JSONL, LoCoMo, LongMemEval): recall,
    hallucinated memories, conflict resolution, temporal order, each with n and a Wilson 95%
    interval. Writes OUTPUT/results.json, OUTPUT/report.md and OUTPUT/memaudit.json
    (memaudit's AuditResult: datasetId, timestamp, metrics.recallAccuracy, ..., probeResults);
    every probe is recorded in the results store. With no model and no OPENAI_API_KEY the agent
    is the extractive baseline, offline."""
    # settings: --agent, --model, --k, --scoring, --judge-preset, --judge-model, --limit, --seed,
    # --concurrency, named as plan_audit's keywords
    if context_budget is not None and not attribute:
        raise UsageError("--context-budget is read with --attribute: add --attribute")
    given = click.get_current_context().get_parameter_source("judge_preset")
    if settings.get("scoring") == "offline" and given is ParameterSource.COMMANDLINE:
        raise UsageError(
            "--judge-preset sets how the QA judge judges, and --scoring offline judges nothing:"
            " drop one of them (--scoring judge uses the judge)"
        )
    attribution = (
        ({"budget": context_budget} if context_budget is not None else {}) if attribute else None
    )
    plan = api.plan_audit(
        dataset,
        subject=subject_text,
        attribution=attribution,
        max_failure_rate=run_args.max_failure_rate,
        dataset_kind=kind,
        **settings,
    )
    with running(run_args.progress) as bar:
        report = api.run_suite(plan.suite, options=run_args.options, progress=bar, kind="audit")
    result = api.audit_result(plan, report)
    formats = _formats(fmt)
    out = console(stderr=as_json)
    out.print(f"Memory audit of {plan.source.name}: {result['agent']}", markup=False)
    shown = print_sections(out, report.summary)
    written = write_audit(out_dir, result, formats, shown)
    out.print(f"scoring: {plan.method}")
    for line in source_lines(result):
        out.print(line)
    out.print(f"wrote {', '.join(str(p) for p in written)}")
    code = conclude(out, report, run_args)
    if as_json:
        click.echo(dumps_strict({k: v for k, v in result.items() if k != "probes"}, default=str))
    if code:
        raise click.exceptions.Exit(code)
