"""What `evaluate` and `demo` show last: the retrieval run on the terminal and its report files."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console

from memgauge import api
from memgauge._util.jsonout import dumps_strict
from memgauge._util.listing import counted
from memgauge.cli._options import POOLED_JUDGMENTS, REPORT_FILES
from memgauge.report import (
    RetrievalEvalResult,
    atomic_write_text,
    render_markdown,
    render_terminal,
    retrieval_result,
    write_json,
)
from memgauge.report.cost import cost_markdown, render_cost
from memgauge.report.repeats import render_repeats, repeats_markdown
from memgauge.report.retrieval import pool_judgments
from memgauge.view import render_run_report

__all__ = ["report_retrieval", "sequential_lines", "write_reports"]


def report_retrieval(report: api.RunReport, out_dir: Path, out: Console) -> None:
    """What `evaluate` and `demo` show last: the terminal view and the three report files,
    rendered from the run's record."""
    if report.summary.aggregate("ir") is None:
        return
    result = retrieval_result(report.run)
    render_terminal(result, out)
    render_cost(report.summary, out)
    render_repeats(report.summary, out)
    for line in sequential_lines(result):
        out.print(line, highlight=False)
    for warning in result.dataset.warnings:
        out.print(f"warning: {warning}", highlight=False)
    paths = write_reports(result, out_dir, report)
    out.print("wrote " + ", ".join(str(p) for p in paths))


def sequential_lines(result: RetrievalEvalResult) -> list[str]:
    """Seed 002's sequential test of each comparison, one line each."""
    lines = []
    for comp in result.comparisons:
        sq = comp.sequential
        if sq is None:
            continue
        state = (
            f"log LR {sq.log_lr:.2f}, bounds {sq.lower:.2f} / {sq.upper:.2f}"
            if sq.log_lr is not None
            else f"not started: {sq.n_informative} of {sq.min_samples} informative pairs"
        )
        lines.append(
            f"sequential test (SPRT on {sq.measure}, effect {sq.delta:g}, {sq.bounds} bounds):"
            f" {comp.candidate} against {comp.baseline}: {sq.sequential_test_decision}"
            f" after {sq.n} of {counted(sq.n_pairs, 'pair')} ({state})"
        )
    return lines


def write_reports(result: RetrievalEvalResult, out_dir: Path, report: api.RunReport) -> list[Path]:
    """Write result.json, summary.md and report.html (the run drawn by the viewer's templates,
    as `memgauge report` draws it) into `out_dir`; return their paths."""
    out_dir.mkdir(parents=True, exist_ok=True)
    json_path, md_path, html_path = (out_dir / name for name in REPORT_FILES)
    write_json(result, json_path)
    atomic_write_text(
        md_path,
        render_markdown(result) + cost_markdown(report.summary) + repeats_markdown(report.summary),
    )
    atomic_write_text(html_path, render_run_report(report.run, report.items))
    paths = [json_path, md_path, html_path]
    ir = report.summary.aggregate("ir")
    judgments = pool_judgments(ir) if ir is not None else None
    if judgments is not None:
        # the judge's grades in the dataset's judgments format, to review and merge back
        boot = out_dir / POOLED_JUDGMENTS
        atomic_write_text(
            boot, "".join(dumps_strict(j.model_dump(mode="json")) + "\n" for j in judgments)
        )
        paths.append(boot)
    return paths
