"""The cost table: accuracy beside context tokens and latency, per subject, as memory-system
write-ups print it (terminal and Markdown), from a run's `cost` aggregates.

Measures as rows, subjects as columns, like the IR table; each token figure's row names the
encoding that counted it, and the title the latency stage and the token budget.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rich.console import Console

from memgauge.aggregates.cost_shapes import CostFacts
from memgauge.data.records import AggregateResult, MeasureValue, RunSummary
from memgauge.data.shapes import Curve, Table
from memgauge.report.escape import md_text, term
from memgauge.report.fitted import Row, print_fitted
from memgauge.report.fmt import fmt_ci

__all__ = [
    "CostTable",
    "ScatterText",
    "cost_markdown",
    "cost_tables",
    "render_cost",
    "scatter_lines",
]

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
    """One task's cost table: its title, the subjects, per row (label, cell per subject), and
    the charts of accuracy against tokens and latency in their compact text form."""

    title: str
    subjects: list[str]
    rows: list[tuple[str, list[str]]]
    charts: list[ScatterText]


_BAR = 10


@dataclass(frozen=True)
class ScatterText:
    """A scatter in text: its heading, and per dot (best y first) the subject and the rest of
    its line (`███████░░░ 0.700 [0.500, 0.900] at 480 [410, 530]`)."""

    title: str
    dots: list[tuple[str, str]]

    def lines(self) -> list[str]:
        """The terminal's form: the heading, then a line per dot, names padded to align."""
        width = max(len(name) for name, _rest in self.dots)
        return [self.title, *(f"  {name.ljust(width)}  {rest}" for name, rest in self.dots)]

    def markdown(self) -> list[str]:
        """The Markdown form: the heading in bold, then a list item per dot, every text escaped."""
        return [
            f"**{md_text(self.title)}**",
            "",
            *(f"- {md_text(name)} {md_text(rest)}" for name, rest in self.dots),
        ]


def scatter_lines(shape: Curve) -> ScatterText | None:
    """A scatter's compact text form: a line per dot, best y first: the subject, a bar of y
    (on a 0-1 scale when every y lies in it, else relative to the largest), y with its CI, and
    x with its CI; None when no dot has a y."""
    dots = [
        (s.name, x, y, s.x_ci[i] if s.x_ci else None, s.y_ci[i] if s.y_ci else None)
        for s in shape.series
        for i, (x, y) in enumerate(s.points)
        if y is not None
    ]
    if not dots:
        return None
    top = max(abs(d[2]) for d in dots)
    scale = 1.0 if all(0.0 <= d[2] <= 1.0 for d in dots) else (top or 1.0)
    out = []
    for name, x, y, x_ci, y_ci in sorted(dots, key=lambda d: (-d[2], d[1], d[0])):
        filled = max(0, min(_BAR, round(_BAR * y / scale)))
        bar = "█" * filled + "░" * (_BAR - filled)
        y_text = f"{y:.3f} {fmt_ci(*y_ci, 3) if y_ci else ''}".rstrip()
        digits = 0 if abs(x) >= 100 else 1
        x_text = f"{x:.{digits}f} {fmt_ci(*x_ci, digits) if x_ci else ''}".rstrip()
        out.append((name, f"{bar} {y_text} at {x_text}"))
    return ScatterText(f"{shape.title} (y: {shape.y}; x: {shape.x})", out)


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


def _own_accuracy(agg: AggregateResult, accuracy: str) -> list[MeasureValue]:
    """The accuracy the aggregate computed beside its costs, per subject: its charts' y (the
    `cost-accuracy` table), over the queries its other measures count (with `repeat: N`, the
    first repeat's). The run's measure of that name can be another number (the `repeats`
    aggregate's mean over every repeat), so the accuracy row is read here, where its ratio per
    1k tokens and its dots were computed. [] for a result stored without that table."""
    for shape in agg.shapes:
        if isinstance(shape, Table) and shape.key == "cost-accuracy":
            return [
                MeasureValue(
                    subject=str(row[0].text),
                    task=agg.task,
                    name=accuracy,
                    value=row[1].value,
                    ci_low=row[1].ci[0] if row[1].ci else None,
                    ci_high=row[1].ci[1] if row[1].ci else None,
                    n_scored=row[1].n or 0,
                    source=agg.aggregate,
                )
                for row in shape.rows
            ]
    return []


def _table(agg: AggregateResult, measures: Sequence[MeasureValue]) -> CostTable:
    facts = agg.facts_as(CostFacts) or CostFacts()
    encoding, accuracy = facts.encoding, facts.accuracy
    subjects = list(dict.fromkeys(m.subject for m in agg.measures))
    by = {(m.subject, m.name): m for m in measures if m.task == agg.task}
    by.update({(m.subject, m.name): m for m in _own_accuracy(agg, str(accuracy))})
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
    budget = facts.budget
    title = (
        f"{agg.task}: accuracy against context tokens ({encoding}) and latency (ms, stage "
        f"{facts.stage})" + (f", token budget {budget}" if budget else "")
    )
    charts = [
        scatter_lines(shape)
        for shape in agg.shapes
        if isinstance(shape, Curve) and shape.style == "scatter"
    ]
    return CostTable(title, subjects, rows, [c for c in charts if c is not None])


def cost_tables(summary: RunSummary) -> list[CostTable]:
    """One table per task with a cost aggregate."""
    measures = summary.measures()
    return [_table(a, measures) for a in summary.aggregates if a.aggregate == "cost"]


def render_cost(summary: RunSummary, console: Console) -> None:
    """The cost tables on the terminal."""
    for t in cost_tables(summary):
        rows: list[Row] = [([term(label)], [term(c) for c in cells]) for label, cells in t.rows]
        print_fitted(console, term(t.title), [("measure", None)], t.subjects, rows)
        for chart in t.charts:
            for line in chart.lines():
                console.print(term(line), highlight=False)


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
        for chart in t.charts:
            out += ["", *chart.markdown()]
    return "\n".join(out) + ("\n" if out else "")
