"""Shapes on the terminal. A shape with values is drawn as a table fitted to the console's
width (`fitted.print_fitted`: value columns that do not fit go to a table below, repeating the
leading text columns; no cell is cut); a list of texts as one table. Names and texts are data,
drawn as `Text`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from memgauge.data.records import RunSummary
from memgauge.data.shapes import Cell, Examples, Shape
from memgauge.report.escape import term
from memgauge.report.fitted import print_fitted
from memgauge.report.shapes import Grid, Section, cell_text, footnotes, grid, sections

__all__ = ["print_sections", "print_shape"]

_STYLE = {True: "green", False: "red", None: ""}

#: the examples a terminal shows of a list (an audit of LoCoMo has two thousand probes); the
#: report files and the viewer show them all
MAX_EXAMPLES = 20

#: the widest a leading text column after the first (a target, a tier) is drawn before it wraps
_LEAD_WIDTH = 12


def _cell(c: Cell) -> Text:
    return term(cell_text(c), _STYLE[c.met] if c.text is None else "")


def _lead(g: Grid) -> int:
    """How many leading columns hold text in every row (at least the first)."""
    n = 1
    while n < len(g.columns) and all(len(r) > n and r[n].text is not None for r in g.rows):
        n += 1
    return n


def print_shape(out: Console, shape: Shape, title: str | None = None) -> None:
    """One shape, titled `title` (else its own), its note and the cells' notes under it."""
    g = grid(shape)
    rows, notes = g.rows, [*([g.note] if g.note else []), *footnotes(g)]
    if isinstance(shape, Examples) and len(rows) > MAX_EXAMPLES:
        notes.append(f"{len(rows) - MAX_EXAMPLES} more in the report files and the viewer")
        rows = rows[:MAX_EXAMPLES]
    heading = term(title or g.title)
    lead = _lead(g)
    if lead < len(g.columns):
        head = [(col, None if i == 0 else _LEAD_WIDTH) for i, col in enumerate(g.columns[:lead])]
        fitted = [([_cell(c) for c in r[:lead]], [_cell(c) for c in r[lead:]]) for r in rows]
        print_fitted(out, heading, head, g.columns[lead:], fitted)
    else:
        table = Table(title=heading, title_justify="left")
        for col in g.columns:
            table.add_column(term(col))
        for r in rows:
            table.add_row(*(_cell(c) for c in r))
        out.print(table)
    for line in notes:
        out.print(term(line))


def print_sections(
    out: Console, summary: RunSummary | Mapping[str, Any] | Sequence[Section] | None
) -> list[Section]:
    """Print every aggregate's shapes of a run (or `sections`), each titled `task · section:
    shape`; the sections printed."""
    shown = list(summary) if isinstance(summary, Sequence) else sections(summary)
    for sec in shown:
        for shape in sec.shapes:
            print_shape(out, shape, f"{sec.task} · {sec.title}: {grid(shape).title}")
    return shown
