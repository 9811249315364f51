"""The cost table: accuracy beside context tokens and latency, per subject, as memory-system
write-ups print it (terminal and Markdown), from a run's `cost` aggregates.

Measures as rows, subjects as columns, like the IR table; each token figure's row names the
encoding that counted it, and the title the latency stage and the token budget.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rich.console import Console

from memgauge.data.records import AggregateResult, MeasureValue, RunSummary
from memgauge.report.escape import md_text, term
from memgauge.report.fitted import Row, print_fitted
from memgauge.report.fmt import fmt_ci

__all__ = ["CostTable", "cost_markdown", "cost_tables", "render_cost"]

#: the figures shown, in order (the accuracy and its ratio are added per table)
_SHOWN = (
    "context_tokens.mean",
    "context_tokens.p50",
    "context_tokens.p95",
    "latency_ms.p50",
    "latency_ms.p95",
    "token_usage_ratio.mean",
    "context_overflow_rate",
    "budget_cut_relevant.mean",
    "budget_cut_relevant_rate",
    "llm_tokens.mean",
    "llm_cost_usd.mean",
)
_TOKENS = ("context_tokens", "budget_cut", "token_usage", "context_overflow")


@dataclass(frozen=True)
class CostTable:
    """One task's cost table: its title, the subjects, and per row (label, cell per subject)."""

    title: str
    subjects: list[str]
    rows: list[tuple[str, list[str]]]


def _cell(m: MeasureValue | None) -> str:
    if m is None:
        return "-"
    if m.value is None:
        return f"n/a ({m.n_scored} scored)"
    digits = 0 if m.name.startswith(("context_tokens", "latency_ms")) and m.value >= 100 else 3
    if m.name.startswith("latency_ms") and m.value < 100:
        digits = 1
    ci = fmt_ci(m.ci_low, m.ci_high, digits)
    return f"{m.value:.{digits}f} {ci}".rstrip()


def _table(agg: AggregateResult, measures: Sequence[MeasureValue]) -> CostTable:
    detail = agg.detail
    encoding, accuracy = detail.get("encoding"), detail.get("accuracy")
    subjects = list(dict.fromkeys(m.subject for m in agg.measures))
    by = {(m.subject, m.name): m for m in measures if m.task == agg.task}
    names = ([str(accuracy)] if accuracy else []) + list(_SHOWN)
    if accuracy:
        names.append(f"{accuracy}_per_1k_tokens")
    rows = []
    for name in names:
        cells = [by.get((s, name)) for s in subjects]
        if all(c is None for c in cells):
            continue
        label = f"{name} ({encoding})" if name.startswith(_TOKENS) or "_per_1k" in name else name
        rows.append((label, [_cell(c) for c in cells]))
    budget = detail.get("budget")
    title = (
        f"{agg.task}: accuracy against context tokens ({encoding}) and latency (ms, stage "
        f"{detail.get('stage')})" + (f", token budget {budget}" if budget else "")
    )
    return CostTable(title, subjects, rows)


def cost_tables(summary: RunSummary) -> list[CostTable]:
    """One table per task with a cost aggregate."""
    measures = summary.measures()
    return [_table(a, measures) for a in summary.aggregates if a.aggregate == "cost"]


def render_cost(summary: RunSummary, console: Console) -> None:
    """The cost tables on the terminal."""
    for t in cost_tables(summary):
        rows: list[Row] = [([term(label)], [term(c) for c in cells]) for label, cells in t.rows]
        print_fitted(console, term(t.title), [("measure", None)], t.subjects, rows)


def cost_markdown(summary: RunSummary) -> str:
    """The cost tables as Markdown sections ('' when the run has none)."""
    out = []
    for t in cost_tables(summary):
        out += [
            "",
            f"## {md_text(t.title)}",
            "",
            "| measure | " + " | ".join(md_text(s) for s in t.subjects) + " |",
            "|---|" + "---:|" * len(t.subjects),
        ]
        out += [
            f"| {md_text(label)} | " + " | ".join(md_text(c) for c in cells) + " |"
            for label, cells in t.rows
        ]
    return "\n".join(out) + ("\n" if out else "")
