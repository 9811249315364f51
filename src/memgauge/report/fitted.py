"""A terminal table with a column per system (or experiment) that fits the console's width:
the columns that do not fit beside the others go to a table below, which repeats the leading
columns; no cell is cut."""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Console
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

from memgauge.report.escape import term

__all__ = ["Row", "print_fitted"]

#: A row of a table with a column per system: its leading cells (measure, target, ...), then
#: one cell per system.
Row = tuple[list[Text], list[Text]]


def _table(
    title: Text,
    head: Sequence[tuple[str, int | None]],
    names: Sequence[str],
    rows: Sequence[Row],
    chosen: Sequence[int],
    *,
    whole: bool = True,
) -> Table:
    """The table of the systems at `chosen`, beside `head`'s columns; `whole`: cells are drawn
    on one line (a bounded column, a target, wraps within its width), else they wrap."""
    table = Table(title=title, title_justify="left")
    for header, width in head:
        table.add_column(header, no_wrap=whole and width is None, max_width=width, overflow="fold")
    for j in chosen:
        table.add_column(term(names[j]), no_wrap=whole, overflow="fold")
    for lead, cells in rows:
        table.add_row(*lead, *(cells[j] for j in chosen))
    return table


def print_fitted(
    console: Console,
    title: Text,
    head: Sequence[tuple[str, int | None]],
    names: Sequence[str],
    rows: Sequence[Row],
) -> None:
    """A table with `head`'s columns, then a column per system, drawn at the console's width:
    when the systems do not all fit side by side, they are split over several tables, one
    under the other, each repeating the leading columns, so that no cell is cut (rich cuts a
    `no_wrap` cell with an ellipsis, and would otherwise break `0.798 [0.67, 0.91]` inside its
    interval). A single system wider than the console folds its cells."""

    unbounded = console.options.update_width(1 << 16)

    def fits(chosen: list[int]) -> bool:
        table = _table(title, head, names, rows, chosen)
        return Measurement.get(console, unbounded, table).maximum <= console.width

    chunks: list[list[int]] = []
    for i in range(len(names)):
        if chunks and fits([*chunks[-1], i]):
            chunks[-1].append(i)
        else:
            chunks.append([i])
    for k, chunk in enumerate(chunks or [[]]):
        shown = title if k == 0 else Text.assemble(title, " (continued)")
        console.print(_table(shown, head, names, rows, chunk, whole=fits(chunk)))
