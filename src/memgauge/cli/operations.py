"""`memgauge operations CASES`: are merge decisions (CREATE / UPDATE / NOOP / DELETE) right?
Seed 000's tiers: heuristic checks, the operation itself, and the merge-quality judge."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
from pydantic import BaseModel
from rich.table import Table

from memgauge._util.files import atomic_write_text
from memgauge._util.jsonout import dumps_strict
from memgauge.cli._common import console
from memgauge.cli._llm import configure_llm, llm_options
from memgauge.cli._subjects_eval import outputs_for, pct, report_options
from memgauge.data.jsonio import read_records
from memgauge.data.models import OperationCase
from memgauge.errors import DataError, Problem
from memgauge.llm.context import llm_context
from memgauge.runs.operations import evaluate_operations, summarize_operations
from memgauge.scorers.judges import RubricJudge
from memgauge.subjects.deciders import load_decider

__all__ = ["operations"]


def _decide(decider: Any, case: OperationCase) -> Any:
    inc = case.incoming
    incoming = inc.model_dump() if isinstance(inc, BaseModel) else dict(inc)
    try:
        return decider.decide([m.model_dump() for m in case.existing], incoming)
    except Exception as exc:
        return exc


@click.command()
@click.argument("cases_path", metavar="CASES", type=click.Path(path_type=Path))
@click.option(
    "--decider",
    "decider_spec",
    default=None,
    help="e.g. '{llm: {model: m}}', '{heuristic: {}}', '{python: {target: pkg.mod:make}}'.",
)
@click.option(
    "--judge/--no-judge",
    "use_judge",
    default=False,
    help="Score merged texts with the merge-quality rubric judge.",
)
@click.option("--judge-model", default=None)
@report_options
@llm_options
def operations(
    cases_path: Path,
    decider_spec: str | None,
    outputs_path: Path | None,
    use_judge: bool,
    judge_model: str | None,
    out_dir: Path | None,
    concurrency: int,
    as_json: bool,
    cache_only: bool,
    no_cache: bool,
    refresh_cache: bool,
    llm_cache: Path | None,
) -> None:
    """Score merge decisions on CASES: heuristic tier (target 95%), operation tier (80%),
    LLM-judge tier (70%), each check's pass rate with a Wilson 95% interval."""
    cases = read_records(cases_path, OperationCase, key="cases")
    ids = [c.id for c in cases]
    dupes = sorted({i for i in ids if ids.count(i) > 1})
    if dupes:
        raise DataError(
            Problem(str(cases_path), None, "id", f"duplicate case ids: {', '.join(dupes)}")
        )
    configure_llm(
        cache_only=cache_only, no_cache=no_cache, refresh_cache=refresh_cache, llm_cache=llm_cache
    )
    try:
        outputs, source = outputs_for(
            cases,
            flag="decider",
            spec_text=decider_spec,
            recorded=outputs_path,
            build=load_decider,
            call=_decide,
            case_id=lambda c: c.id,
        )
        judge = RubricJudge(preset="merge-quality", model=judge_model) if use_judge else None
        rows = evaluate_operations(cases, outputs, judge=judge, concurrency=concurrency)
    finally:
        llm_context().close()
    summary = summarize_operations(rows)
    report = {
        "schema_version": 1,
        "cases": str(cases_path),
        "decider": source,
        **summary,
        "per_case": rows,
    }
    if out_dir is not None:
        out_dir.mkdir(parents=True, exist_ok=True)
        atomic_write_text(
            out_dir / "operations.json", dumps_strict(report, indent=2, default=str) + "\n"
        )
    out = console(stderr=as_json)
    table = Table(title=f"Memory operations: {source} on {cases_path.name}", title_justify="left")
    for col in ("case", "scenario", "decision", "checks"):
        table.add_column(col)
    for r in rows:
        if "error" in r:
            table.add_row(r["id"], r["scenario"] or "", "", f"[red]failed: {r['error']}[/red]")
            continue
        d = r["decision"]
        checks = "; ".join(
            f"{name} {'ok' if v.get('passed') else 'FAILED' if v.get('passed') is False else 'n/a'}"
            + ("" if v.get("passed") else f" ({v.get('reason') or v.get('error')})")
            for name, v in r["checks"].items()
        )
        table.add_row(
            r["id"], r["scenario"] or "", f"{d['action']} {d.get('id') or ''}".strip(), checks
        )
    out.print(table)
    tiers = Table(title="Tiers (seed 000)", title_justify="left")
    for col in ("tier", "pass rate", "95% CI", "n", "target", ""):
        tiers.add_column(col)
    for tier, e in summary["tiers"].items():
        ci = e["ci95"]
        tiers.add_row(
            tier,
            pct(e["pass_rate"]) if e["n"] else "n/a (0 checks)",
            f"{pct(ci[0])} - {pct(ci[1])}" if ci else "",
            str(e["n"]),
            pct(e["target"]),
            "" if e["met"] is None else ("met" if e["met"] else "NOT met"),
        )
    out.print(tiers)
    if as_json:
        click.echo(dumps_strict({k: v for k, v in report.items() if k != "per_case"}, default=str))
