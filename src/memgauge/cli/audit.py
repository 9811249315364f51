"""`memgauge audit DATASET`: does an agent recall facts, refuse to invent, use the newest value,
order events in time? (seed 003, compatible with memaudit's `audit`)."""

from __future__ import annotations

import json
import os
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import click
import yaml
from rich.table import Table

from memgauge._util.files import atomic_write_text
from memgauge._util.jsonout import dumps_strict
from memgauge.cli._common import console, open_suite_store
from memgauge.cli._llm import configure_llm, llm_options
from memgauge.cli._systems import one_spec
from memgauge.cli.run import RunProgressBar, sigterm_as_interrupt
from memgauge.errors import UsageError
from memgauge.llm.context import llm_context
from memgauge.probes.metrics import audit_metrics, locomo_qa_summary
from memgauge.probes.sources import AuditSource, load_audit_source
from memgauge.report.audit import locomo_lines, metric_lines, source_lines, write_audit
from memgauge.runs.engine import run_suite
from memgauge.runs.suite import load_suite
from memgauge.scorers.audit import AuditMatch

__all__ = ["audit"]

LOCOMO_QA = "locomo-qa"
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
    return {"memory-agent": {"memory": one_spec(subject_text, "--subject"), "model": model, "k": k}}


def _write_inputs(out_dir: Path, source: AuditSource, suite: dict[str, Any]) -> Path:
    out_dir.mkdir(parents=True, exist_ok=True)
    atomic_write_text(
        out_dir / "probes.jsonl", "".join(json.dumps(p.item()) + "\n" for p in source.probes)
    )
    atomic_write_text(
        out_dir / "memories.jsonl",
        "".join(m.model_dump_json(exclude_defaults=True) + "\n" for m in source.memories),
    )
    path = out_dir / "suite.yaml"
    atomic_write_text(path, yaml.safe_dump(suite, sort_keys=False))
    return path


def _probe_rows(
    export: list[dict[str, Any]], locomo_categories: dict[str, int]
) -> list[dict[str, Any]]:
    rows = []
    for r in export:
        by_label = {s["evaluator"]: s for s in r["scores"]}
        locomo = by_label.pop(LOCOMO_QA, None)
        score = next(iter(by_label.values()), None)  # the verdict: the one other evaluator
        failed = r["status"] != "completed" or score is None or score["error"] is not None
        correct = None
        if not failed and score is not None:
            correct = (
                bool(score["passed"]) if score["passed"] is not None else score["value"] >= 0.5
            )
        row = {
            "id": r["item_id"],
            "type": r["category"],
            "question": r["input"]["text"] if isinstance(r["input"], dict) else r["input"],
            "expected": r["expected"],
            "answer": r["output"],
            "correct": correct,
            "reason": (score or {}).get("reason") or r["status"],
            "detail": (score or {}).get("detail", {}),
        }
        if r["item_id"] in locomo_categories:
            row["locomo_category"] = locomo_categories[r["item_id"]]
            row["locomo_qa"] = None if locomo is None or locomo["error"] else locomo["value"]
        rows.append(row)
    return rows


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
@click.option(
    "--store", "store_path", type=click.Path(dir_okay=False, path_type=Path), default=None
)
@click.option("--concurrency", type=click.IntRange(1, 1000), default=8, show_default=True)
@click.option("--limit", type=click.IntRange(1), default=None, help="Only the first N probes.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of probe generation.")
@click.option("--json", "as_json", is_flag=True, help="Print the results (without probes) as JSON.")
@click.option("--progress/--no-progress", default=None)
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
    store_path: Path | None,
    concurrency: int,
    limit: int | None,
    seed: int,
    as_json: bool,
    progress: bool | None,
    cache_only: bool,
    no_cache: bool,
    refresh_cache: bool,
    llm_cache: Path | None,
) -> None:
    """Audit an agent's memory on DATASET (memaudit JSON/JSONL, LoCoMo, LongMemEval): recall,
    hallucinated memories, conflict resolution, temporal order, each with n and a Wilson 95%
    interval. Writes OUTPUT/results.json and OUTPUT/report.md (and the probes, memories and
    suite it ran); every probe is recorded in the results store."""
    source = load_audit_source(dataset, seed=seed)
    if limit is not None:
        source = AuditSource(
            source.name, source.format, source.probes[:limit], source.memories, source.notes
        )
    configured = _configured_model(model)
    agent = agent or ("memory" if subject_text else "chat" if configured else "extractive")
    subject = _subject(agent, configured, subject_text, k)
    use_judge = scoring == "judge" or (
        scoring == "auto" and _configured_model(judge_model) is not None
    )
    if use_judge:
        jm = judge_model or configured
        if jm is None:
            raise UsageError(
                "--scoring judge needs a model: --judge-model, --model or MEMGAUGE_MODEL"
            )
        evaluator: Any = {"qa-judge": {"preset": judge_preset, "model": jm}}
        method = f"QA judge ({judge_preset} preset, model {jm})"
    else:
        evaluator, method = "audit-match", AuditMatch().method
    evaluators: list[Any] = [evaluator]
    # LoCoMo's own numbers beside the verdicts: no LLM, so it costs nothing to add
    locomo_categories = {
        p.id: int(p.metadata["locomo_category"])
        for p in source.probes
        if source.format == "locomo" and "locomo_category" in p.metadata
    }
    if locomo_categories:
        evaluators.append(LOCOMO_QA)
    suite = {
        "name": f"audit-{source.name}",
        "description": f"memory audit of {dataset.name}",
        "concurrency": concurrency,
        "seed": seed,
        "max_failure_rate": 0.5,
        "subjects": {"agent": subject},
        "tasks": [
            {
                "name": "audit",
                "kind": "expected-output",
                "dataset": "probes.jsonl",
                "memories": "memories.jsonl",
                "evaluators": evaluators,
            }
        ],
    }
    suite_path = _write_inputs(out_dir, source, suite)
    configure_llm(
        cache_only=cache_only, no_cache=no_cache, refresh_cache=refresh_cache, llm_cache=llm_cache
    )
    show = sys.stderr.isatty() if progress is None else progress
    bar = RunProgressBar() if show else None
    with open_suite_store(store_path) as store:
        try:
            with sigterm_as_interrupt():
                report = run_suite(
                    load_suite(suite_path), store, suite_path=suite_path.resolve(), progress=bar
                )
        finally:
            if bar is not None:
                bar.stop()
            llm_context().close()
        probes = _probe_rows(list(store.iter_export(report.run_id)), locomo_categories)
    locomo = locomo_qa_summary(probes)
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
        **audit_metrics(probes),
        **({"locomo_qa": locomo} if locomo is not None else {}),
        "llm_usage": report.summary.get("llm_usage", {}),
        "notes": source.notes,
        "probes": probes,
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
    if locomo is not None:
        out.print(_locomo_table(locomo))
    out.print(f"scoring: {method}")
    for line in source_lines(result):
        out.print(line)
    out.print(f"wrote {', '.join(str(p) for p in written)}; run {report.run_id} in {store.path}")
    if as_json:
        click.echo(dumps_strict({k: v for k, v in result.items() if k != "probes"}, default=str))
    if report.status != "completed":
        raise click.exceptions.Exit(1)
