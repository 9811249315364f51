"""Shapes in Markdown: a heading per section, a table per shape. Every text is data
(`escape.md_text`)."""

from __future__ import annotations

from collections.abc import Sequence

from memgauge.data.records import RunRecord
from memgauge.data.shapes import Shape
from memgauge.report.escape import md_text
from memgauge.report.shapes import (
    Section,
    cell_text,
    footnotes,
    grid,
    measures_table,
    sections,
)

__all__ = ["run_markdown", "sections_markdown", "shape_markdown"]

_MET = {True: " (met)", False: " (NOT met)", None: ""}


def shape_markdown(shape: Shape, level: int = 3) -> str:
    """One shape: its heading, its note, its table."""
    g = grid(shape)
    lines = [f"{'#' * level} {md_text(g.title)}", ""]
    if g.note:
        lines += [md_text(g.note), ""]
    lines.append("| " + " | ".join(md_text(c) for c in g.columns) + " |")
    lines.append("|" + "---|" * len(g.columns))
    for row in g.rows:
        cells = [md_text(cell_text(c)) + _MET[c.met] for c in row]
        lines.append("| " + " | ".join(cells) + " |")
    notes = footnotes(g)
    if notes:
        lines += ["", *(f"- {md_text(n)}" for n in notes)]
    return "\n".join(lines) + "\n"


def sections_markdown(sections: Sequence[Section]) -> str:
    """Every section: `## title (task)`, then its shapes."""
    out = []
    for sec in sections:
        out.append(f"## {md_text(sec.title)} (task {md_text(sec.task)})\n")
        out += [shape_markdown(s) for s in sec.shapes]
    return "\n".join(out)


def run_markdown(run: RunRecord) -> str:
    """A run in Markdown: its state, every measure per subject, then each aggregate's section."""
    summary = run.summary
    lines = [
        f"# {md_text(run.suite_name)}: run {md_text(run.run_id)}",
        "",
        f"- status: {md_text(run.status)}; created {md_text(run.created_at)}",
    ]
    if summary is not None:
        counts = f"{summary.n_completed} completed, {summary.n_failed} failed, of {summary.n_items}"
        lines += [f"- items: {counts}", ""]
        lines.append(shape_markdown(measures_table(summary), level=2))
    return "\n".join(lines) + "\n" + sections_markdown(sections(summary))
