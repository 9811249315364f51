"""Shapes on the terminal: each a rich table (names and texts are data, drawn as `Text`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from memgauge.data.records import RunSummary
from memgauge.data.shapes import Cell, Examples, Shape
from memgauge.report.escape import term
from memgauge.report.shapes import Section, cell_text, grid, sections

__all__ = ["print_sections", "section_tables", "shape_table"]

_STYLE = {True: "green", False: "red", None: ""}

#: the examples a terminal shows of a list (an audit of LoCoMo has two thousand probes); the
#: report files and the viewer show them all
MAX_EXAMPLES = 20


def _cell(c: Cell) -> Text:
    shown = term(cell_text(c), _STYLE[c.met] if c.text is None else "")
    return shown.append(f"\n{c.note}", "dim") if c.note else shown


def shape_table(shape: Shape) -> Table:
    """One shape as a table titled by it, its note as the caption."""
    g = grid(shape)
    rows, note = g.rows, g.note
    if isinstance(shape, Examples) and len(rows) > MAX_EXAMPLES:
        more = f"{len(rows) - MAX_EXAMPLES} more in the report files and the viewer"
        rows, note = rows[:MAX_EXAMPLES], f"{note}; {more}" if note else more
    table = Table(title=term(g.title), title_justify="left")
    if note:
        table.caption = term(note)
        table.caption_justify = "left"
    for col in g.columns:
        table.add_column(term(col))
    for row in rows:
        table.add_row(*(_cell(c) for c in row))
    return table


def section_tables(sections: Sequence[Section]) -> list[Table]:
    """Every shape of every section, each titled `task · section: shape`."""
    out = []
    for sec in sections:
        for shape in sec.shapes:
            table = shape_table(shape)
            table.title = term(f"{sec.task} · {sec.title}: {grid(shape).title}")
            out.append(table)
    return out


def print_sections(out: Console, summary: RunSummary | Mapping[str, Any] | None) -> list[Section]:
    """Print every aggregate's shapes of a run; the sections printed."""
    shown = sections(summary)
    for table in section_tables(shown):
        out.print(table)
    return shown
