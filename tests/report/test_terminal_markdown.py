"""Markdown drawn on a narrow terminal: table cells fold, never cut with an ellipsis."""

from __future__ import annotations

import io

from rich.console import Console
from rich.markdown import Markdown

from memgauge.report.terminal_markdown import TerminalMarkdown

TEXT = """### gate

| measure | value |
|---|---:|
| tier_precision[critical]@5 | 0.333 |
"""


def _draw(renderable: Markdown) -> str:
    buf = io.StringIO()
    Console(file=buf, width=24, color_system=None).print(renderable)
    return buf.getvalue()


def test_a_long_cell_folds_instead_of_being_cut() -> None:
    assert "…" in _draw(Markdown(TEXT))  # what rich's own renderer does
    out = _draw(TerminalMarkdown(TEXT))
    assert "…" not in out
    assert "###" not in out
    assert "|---" not in out
    cells = "".join(line.strip().split(" ")[0] for line in out.splitlines()[4:] if line.strip())
    assert "tier_precision[critical]@5" in cells
    assert "0.333" in out
