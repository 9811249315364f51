"""Shapes in Markdown: a heading per section, a table per shape. Every text is data
(`escape.md_text`); with `text=escape.plain_cell` the same tables are plain text, as a CI server
shows a JUnit case's output."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

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


Escape = Callable[[Any], str]


def shape_markdown(shape: Shape, level: int = 3, text: Escape = md_text) -> str:
    """One shape: its heading, its note, its table."""
    g = grid(shape)
    lines = [f"{'#' * level} {text(g.title)}", ""]
    if g.note:
        lines += [text(g.note), ""]
    lines.append("| " + " | ".join(text(c) for c in g.columns) + " |")
    lines.append("|" + "---|" * len(g.columns))
    for row in g.rows:
        cells = [text(cell_text(c)) + _MET[c.met] for c in row]
        lines.append("| " + " | ".join(cells) + " |")
    notes = footnotes(g)
    if notes:
        lines += ["", *(f"- {text(n)}" for n in notes)]
    return "\n".join(lines) + "\n"


def sections_markdown(sections: Sequence[Section], text: Escape = md_text) -> str:
    """Every section: `## title (task)`, then its shapes."""
    out = []
    for sec in sections:
        out.append(f"## {text(sec.title)} (task {text(sec.task)})\n")
        out += [shape_markdown(s, text=text) for s in sec.shapes]
    return "\n".join(out)


def run_markdown(run: RunRecord, text: Escape = md_text) -> str:
    """A run in Markdown: its state, every measure per subject, then each aggregate's section."""
    summary = run.summary
    lines = [
        f"# {text(run.suite_name)}: run {text(run.run_id)}",
        "",
        f"- status: {text(run.status)}; created {text(run.created_at)}",
    ]
    if summary is not None:
        counts = f"{summary.n_completed} completed, {summary.n_failed} failed, of {summary.n_items}"
        lines += [f"- items: {counts}", ""]
        lines.append(shape_markdown(measures_table(summary), level=2, text=text))
    return "\n".join(lines) + "\n" + sections_markdown(sections(summary), text)
