"""`memgauge extraction CASES`: fact extraction precision, recall, F1, conflict resolution and
minimalism (seed 001), for a live extractor or outputs recorded in production."""

from __future__ import annotations

from pathlib import Path

import click
from rich.table import Table

from memgauge._util.files import atomic_write_text
from memgauge._util.jsonout import dumps_strict
from memgauge.cli._common import console
from memgauge.cli._llm import configure_llm, llm_options
from memgauge.cli._subjects_eval import outputs_for, pct, report_options
from memgauge.data.detect import detect_kind
from memgauge.data.importers.locomo import locomo_extraction_cases
from memgauge.data.io import load_extraction_cases
from memgauge.errors import SubjectError
from memgauge.llm.context import llm_context
from memgauge.runs.extraction import TARGETS, evaluate_extraction, summarize_extraction
from memgauge.scorers.extraction import CaseScore, ExactMatcher, FactMatcher, SemanticMatcher
from memgauge.scorers.judges import FactsJudge
from memgauge.subjects.extractors import extract_safely, load_extractor
from memgauge.subjects.specs import build_subject

__all__ = ["extraction"]


@click.command()
@click.argument("cases_path", metavar="CASES", type=click.Path(path_type=Path))
@click.option(
    "--extractor",
    "extractor_spec",
    default=None,
    help="e.g. '{llm: {model: gpt-4o-mini}}' or '{python: {target: pkg.mod:make}}'.",
)
@click.option(
    "--match",
    "match",
    type=click.Choice(["exact", "semantic", "judge"]),
    default="semantic",
    show_default=True,
)
@click.option(
    "--threshold", type=float, default=0.75, show_default=True, help="Cosine for --match semantic."
)
@click.option(
    "--judge-model", default=None, help="Model of the fact-enumeration judge (--match judge)."
)
@click.option("--limit", type=click.IntRange(1), default=None)
@report_options
@llm_options
def extraction(
    cases_path: Path,
    extractor_spec: str | None,
    outputs_path: Path | None,
    match: str,
    threshold: float,
    judge_model: str | None,
    out_dir: Path | None,
    concurrency: int,
    limit: int | None,
    as_json: bool,
    cache_only: bool,
    no_cache: bool,
    refresh_cache: bool,
    llm_cache: Path | None,
) -> None:
    """Score fact extraction on CASES (memgauge cases JSON/JSONL, or LoCoMo: its sessions'
    observations as silver facts): per case TP / FP / FN with the matched pairs; precision,
    recall, F1 micro and macro with 95% CIs; conflict resolution; minimalism; seed 001's
    targets beside them."""
    cases = (
        locomo_extraction_cases(cases_path)
        if cases_path.exists() and detect_kind(cases_path) == "locomo"
        else load_extraction_cases(cases_path)
    )
    cases = cases[:limit] if limit else cases
    configure_llm(
        cache_only=cache_only, no_cache=no_cache, refresh_cache=refresh_cache, llm_cache=llm_cache
    )
    try:
        outputs, source = outputs_for(
            cases,
            flag="extractor",
            spec_text=extractor_spec,
            recorded=outputs_path,
            build=lambda spec: load_extractor(spec, build_subject),
            call=lambda ex, c: extract_safely(ex, c.conversation, c.existing_memory),
            case_id=lambda c: c.id,
        )
        matcher: FactMatcher = ExactMatcher() if match == "exact" else SemanticMatcher(threshold)
        judge = FactsJudge(model=judge_model) if match == "judge" else None
        results = evaluate_extraction(cases, outputs, matcher, judge=judge, concurrency=concurrency)
    finally:
        llm_context().close()
    summary = summarize_extraction(results)
    report = {
        "schema_version": 1,
        "cases": str(cases_path),
        "extractor": source,
        "matching": results[0].method if results and isinstance(results[0], CaseScore) else match,
        **summary,
        "per_case": [r.as_dict() if isinstance(r, CaseScore) else r for r in results],
    }
    if out_dir is not None:
        out_dir.mkdir(parents=True, exist_ok=True)
        atomic_write_text(out_dir / "extraction.json", dumps_strict(report, indent=2) + "\n")
    out = console(stderr=as_json)
    table = Table(title=f"Fact extraction: {source} on {cases_path.name}", title_justify="left")
    for col in ("case", "scenario", "TP", "FP", "FN", "P", "R", "F1", "notes"):
        table.add_column(
            col, justify="right" if col in ("TP", "FP", "FN", "P", "R", "F1") else "left"
        )
    for r in results:
        if not isinstance(r, CaseScore):
            table.add_row(r["id"], "", "", "", "", "", "", "", f"[red]failed: {r['error']}[/red]")
            continue
        notes = []
        if r.conflict_ok is not None:
            notes.append("conflict " + ("ok" if r.conflict_ok else "WRONG"))
        if r.minimal_ok is not None:
            notes.append("unchanged " + ("ok" if r.minimal_ok else "WRONG"))
        notes += [f"invented: {x}" for x in r.false_positives[:2]] + [
            f"missed: {x}" for x in r.missed[:2]
        ]
        table.add_row(
            r.id,
            r.scenario or "",
            str(r.tp),
            str(r.fp),
            str(r.fn),
            f"{r.precision:.2f}",
            f"{r.recall:.2f}",
            f"{r.f1:.2f}",
            "; ".join(notes),
        )
    out.print(table)
    for name in ("precision", "recall", "f1"):
        e = summary[name]
        if e["micro"] is None:
            out.print(f"{name}: n/a (0 cases scored)")
            continue
        out.print(
            f"{name}: micro {e['micro']:.3f} [{e['micro_ci95'][0]:.3f}, {e['micro_ci95'][1]:.3f}], "
            f"macro {e['macro']:.3f}; target > {TARGETS[name]} {'met' if e['met'] else 'NOT met'}"
        )
    for name in ("conflict", "minimalism"):
        e = summary[name]
        value = f"{pct(e['value'])} of {e['n']}" if e["n"] else "n/a (0 cases)"
        met = "" if e["met"] is None else ("met" if e["met"] else "NOT met")
        out.print(f"{name}: {value}; target {pct(e['target'])} {met}")
    out.print(
        f"scored {summary['n_scored']} of {summary['n_cases']} cases; {summary['n_failed']} failed; matching: {report['matching']}"
    )
    if as_json:
        click.echo(dumps_strict({k: v for k, v in report.items() if k != "per_case"}))
    if summary["n_scored"] == 0 and summary["n_cases"]:
        raise SubjectError("no case could be scored; see the failures above")
