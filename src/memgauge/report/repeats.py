"""The repeats of a run (`repeat: N`) where a command draws its own view of a run rather than
every aggregate's sections (`memgauge run`, `evaluate`, `demo`): the `repeats` aggregate's
shapes, drawn by the shape renderers, and a line per nondeterministic subject."""

from __future__ import annotations

from rich.console import Console

from memgauge.data.records import RunSummary
from memgauge.report.shapes import Section, sections
from memgauge.report.shapes_markdown import sections_markdown
from memgauge.report.shapes_terminal import print_sections
from memgauge.report.suite_run import repeat_notes

__all__ = ["render_repeats", "repeats_markdown"]


def _repeats(summary: RunSummary) -> list[Section]:
    return [s for s in sections(summary) if s.aggregate == "repeats"]


def render_repeats(summary: RunSummary, out: Console) -> None:
    """The repeats' tables on the terminal, then the nondeterministic subjects."""
    print_sections(out, _repeats(summary))
    for line in repeat_notes(summary):
        out.print(f"warning: {line}", highlight=False)


def repeats_markdown(summary: RunSummary) -> str:
    """The repeats' sections as Markdown ('' when the run has none)."""
    found = _repeats(summary)
    return "\n" + sections_markdown(found) if found else ""
