"""`memgauge audit DATASET`: does an agent recall facts, refuse to invent, use the newest value,
order events in time? (seed 003, compatible with memaudit's `audit`)."""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import click
from rich.table import Table

from memgauge import api
from memgauge._util.jsonout import dumps_strict
from memgauge.cli._common import console
from memgauge.cli._evaluation import (
    conclude,
    evaluation_options,
    running,
    store_arg,
    target_options,
)
from memgauge.cli._llm import configure_llm, llm_options
from memgauge.errors import UsageError
from memgauge.report.audit import locomo_lines, metric_lines, source_lines, write_audit

__all__ = ["audit"]

AGENT_LABELS = {
    "extractive": "extractive baseline (no LLM: answers with the best-matching turn)",
}


def _configured_model(model: str | None) -> str | None:
    return model or os.environ.get("MEMGAUGE_MODEL") or os.environ.get("MEMAUDIT_MODEL")


def _subject(agent: str, model: str | None, subject_text: str | None, k: int) -> dict[str, Any]:
    if agent == "extractive":
        return {"extractive": {}}
    if model is None:
        raise UsageError(
            f"--agent {agent} needs a model: give --model or set MEMGAUGE_MODEL (and "
            "OPENAI_BASE_URL / OPENAI_API_KEY); --agent extractive runs without one"
        )
    if agent == "chat":
        return {"chat": {"model": model}}
    if subject_text is None:
        raise UsageError("--agent memory needs --subject (e.g. hybrid, or a subject spec file)")
    memory = api.one_spec(subject_text, "--subject")
    return {"memory-agent": {"memory": memory, "model": model, "k": k}}


def _locomo_table(summary: dict[str, Any]) -> Table:
    table = Table(title=summary["label"], title_justify="left")
    for col in ("category", "mean", "n"):
        table.add_column(col, justify="left" if col == "category" else "right")
    for row in locomo_lines(summary):
        table.add_row(*row)
    return table


@click.command()
@click.argument("dataset", type=click.Path(path_type=Path))
@click.option(
    "--agent",
    type=click.Choice(["chat", "memory", "extractive"]),
    default=None,
    help="chat: a model shown the whole history; memory: --subject plus a reader model; "
    "extractive: no LLM. Default: memory with --subject, chat when a model is set, else extractive.",
)
@click.option(
    "--model", default=None, help="The agent's model (default: MEMGAUGE_MODEL or MEMAUDIT_MODEL)."
)
@click.option(
    "--subject", "subject_text", default=None, help="The memory of a memory-backed agent."
)
@click.option("-k", "k", type=click.IntRange(1, 200), default=10, show_default=True)
@click.option(
    "--scoring",
    type=click.Choice(["auto", "judge", "offline"]),
    default="auto",
    show_default=True,
    help="judge: the QA judge; offline: token F1 / embeddings / abstention phrases. auto: judge "
    "when a model is set.",
)
@click.option(
    "--judge-preset",
    type=click.Choice(["longmemeval", "mem0-locomo", "strict"]),
    default="longmemeval",
    show_default=True,
)
@click.option("--judge-model", default=None, help="The judge's model (default: the agent's).")
@click.option(
    "--output",
    "out_dir",
    type=click.Path(path_type=Path),
    default=Path("audit-results"),
    show_default=True,
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["all", "json", "markdown"]),
    default="all",
    show_default=True,
)
@click.option("--concurrency", type=click.IntRange(1, 1000), default=8, show_default=True)
@click.option("--limit", type=click.IntRange(1), default=None, help="Only the first N probes.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of probe generation.")
@click.option("--json", "as_json", is_flag=True, help="Print the results (without probes) as JSON.")
@evaluation_options
@target_options
@llm_options
def audit(
    dataset: Path,
    agent: str | None,
    model: str | None,
    subject_text: str | None,
    k: int,
    scoring: str,
    judge_preset: str,
    judge_model: str | None,
    out_dir: Path,
    fmt: str,
    concurrency: int,
    limit: int | None,
    seed: int,
    as_json: bool,
    store_path: str | None,
    no_store: bool,
    resume: str | None,
    force: bool,
    max_failure_rate: float | None,
    progress: bool | None,
    fail_under: tuple[str, ...],
    by: str,
    cache_only: bool,
    no_cache: bool,
    refresh_cache: bool,
    llm_cache: Path | None,
) -> None:
    """Audit an agent's memory on DATASET (memaudit JSON/JSONL, LoCoMo, LongMemEval): recall,
    hallucinated memories, conflict resolution, temporal order, each with n and a Wilson 95%
    interval. Writes OUTPUT/results.json and OUTPUT/report.md (and the probes, memories and
    suite it ran); every probe is recorded in the results store."""
    source = api.audit_source(dataset, seed=seed)
    configured = _configured_model(model)
    agent = agent or ("memory" if subject_text else "chat" if configured else "extractive")
    subject = _subject(agent, configured, subject_text, k)
    use_judge = scoring == "judge" or (
        scoring == "auto" and _configured_model(judge_model) is not None
    )
    evaluator: Any
    if use_judge:
        jm = judge_model or configured
        if jm is None:
            raise UsageError(
                "--scoring judge needs a model: --judge-model, --model or MEMGAUGE_MODEL"
            )
        evaluator = {"qa-judge": {"preset": judge_preset, "model": jm}}
        method = f"QA judge ({judge_preset} preset, model {jm})"
    else:
        evaluator, method = "audit-match", api.AUDIT_MATCH_METHOD
    suite = api.audit_suite(
        dataset,
        subject,
        evaluator,
        name=source.name,
        locomo=source.format == "locomo",
        limit=limit,
        seed=seed,
        concurrency=concurrency,
        max_failure_rate=0.5 if max_failure_rate is None else max_failure_rate,
    )
    configure_llm(
        cache_only=cache_only, no_cache=no_cache, refresh_cache=refresh_cache, llm_cache=llm_cache
    )
    with running(progress) as bar:
        report = api.run_suite(
            suite,
            store=store_arg(store_path, no_store, resume),
            resume=resume,
            force=force,
            fail_under=fail_under,
            by=by,  # type: ignore[arg-type]
            progress=bar,
            kind="audit",
        )
    audit = report.summary.aggregate("audit")
    per_subject = audit.detail["subjects"]["agent"] if audit is not None else {}
    result: dict[str, Any] = {
        "schema_version": 1,
        "dataset": source.name,
        "dataset_path": str(dataset),
        "format": source.format,
        **({"protocol": source.notes["protocol"]} if "protocol" in source.notes else {}),
        "agent": AGENT_LABELS.get(agent, f"{agent}: {next(iter(subject.values())).get('model')}"),
        "subject": subject,
        "scoring": method,
        "run_id": report.run_id,
        "status": report.status,
        "timestamp": datetime.now(UTC).isoformat(timespec="seconds"),
        "metrics": per_subject.get("metrics", {}),
        "counts": per_subject.get("counts", {}),
        **({"locomo_qa": per_subject["locomo_qa"]} if "locomo_qa" in per_subject else {}),
        "llm_usage": report.summary.llm_usage,
        "notes": source.notes,
        "probes": per_subject.get("probes", []),
    }
    formats = ["json", "markdown"] if fmt == "all" else [fmt]
    written = write_audit(out_dir, result, formats)
    out = console(stderr=as_json)
    table = Table(title=f"Memory audit of {source.name}: {result['agent']}", title_justify="left")
    for col in ("metric", "value", "95% CI", "n"):
        table.add_column(col, justify="left" if col == "metric" else "right")
    for row in metric_lines(result):
        table.add_row(*row)
    out.print(table)
    if "locomo_qa" in result:
        out.print(_locomo_table(result["locomo_qa"]))
    out.print(f"scoring: {method}")
    for line in source_lines(result):
        out.print(line)
    out.print(f"wrote {', '.join(str(p) for p in written)}")
    code = conclude(out, report, where=None if no_store else str(api.results_store(store_path)))
    if as_json:
        click.echo(dumps_strict({k: v for k, v in result.items() if k != "probes"}, default=str))
    if code:
        raise click.exceptions.Exit(code)
