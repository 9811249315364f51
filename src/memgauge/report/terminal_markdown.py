"""Markdown drawn on a terminal (`memgauge gate` on a TTY): rich's renderer, with tables whose
cells wrap and fold instead of being cut with an ellipsis, so a long measure name
(`tier_precision[critical]@5`) is read whole in a narrow terminal."""

from __future__ import annotations

from typing import ClassVar

from rich.console import Console, ConsoleOptions, RenderResult
from rich.markdown import Markdown, MarkdownElement, TableElement
from rich.table import Table

__all__ = ["TerminalMarkdown"]


class _FoldingTable(TableElement):
    """rich's Markdown table, every column folding what does not fit."""

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        for renderable in super().__rich_console__(console, options):
            if isinstance(renderable, Table):
                for column in renderable.columns:
                    column.overflow = "fold"
            yield renderable


class TerminalMarkdown(Markdown):
    """`rich.markdown.Markdown` whose tables fold long cells."""

    elements: ClassVar[dict[str, type[MarkdownElement]]] = {
        **Markdown.elements,
        "table_open": _FoldingTable,
    }
