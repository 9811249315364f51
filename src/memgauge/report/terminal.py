"""The terminal view: the summary table with CIs and significance marks, then the rest.

Names, reasons and notes are data, drawn as `Text` (`escape.term`): they print as themselves
on any console, `[...]` included; colours are styles, never markup."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table
from rich.text import Text

from memgauge.aggregates.retrieval_result import (
    RetrievalEvalResult,
    SystemResult,
)
from memgauge.report.agent_notes import DEFINITIONS_HEADING, definitions, na_reasons
from memgauge.report.escape import term
from memgauge.report.fitted import Row, print_fitted
from memgauge.report.fmt import (
    Mark,
    agent_names,
    category_marks,
    fmt_agent,
    fmt_ci,
    fmt_num,
    fmt_p,
    fmt_pct,
    fmt_summary,
    mark_of,
    marks,
    ok_systems,
)

__all__ = ["render_terminal"]

#: The widest a target (`critical > important > normal`) is drawn before it wraps.
_TARGET_WIDTH = 12


def render_terminal(result: RetrievalEvalResult, console: Console) -> None:
    """Print the result: IR table, agent-memory table, unavailable systems, accounting notes."""
    st = result.settings
    systems = ok_systems(result)
    mk = marks(result)
    title = term(
        f"{result.dataset.name}"
        + (f", {result.dataset.protocol}" if result.dataset.protocol else "")
        + f": {st.confidence:.0%} bootstrap CIs, {st.conventions}"
    )
    # Measures as rows, systems as columns: a few systems fit a terminal; many measures do not.
    rows: list[Row] = [
        (
            [term(m)],
            [
                _marked(fmt_summary(s.metrics.get(m), ci_digits=2), mk.get((s.name, m)))
                for s in systems
            ],
        )
        for m in st.measures
    ]
    print_fitted(console, title, [("measure", None)], [s.name for s in systems], rows)
    if len(systems) > 1:
        console.print(
            term(
                f"marks: vs {systems[0].name}, paired randomization test, Holm-corrected; "
                f"* p < {st.alpha}, ** p < {st.alpha / 5:g}"
            )
        )
    names = agent_names(result)
    if names:
        rows = []
        for n in names:
            first = next((s.agent_metrics[n] for s in systems if n in s.agent_metrics), None)
            cells = []
            for s in systems:
                a = s.agent_metrics.get(n)
                met = None if a is None else a.meets_target
                cells.append(
                    term(fmt_agent(a), "" if met is None else "green" if met else "yellow")
                )
            rows.append(([term(n), term(first.target or "") if first else Text("")], cells))
        head = [("metric", None), ("target", _TARGET_WIDTH)]
        print_fitted(console, Text("agent-memory metrics"), head, [s.name for s in systems], rows)
        for line in na_reasons(names, systems):
            console.print(term(line))
        console.print(term(DEFINITIONS_HEADING + ":"))
        for label, text in definitions(names):
            console.print(term(f"  {label}: {text}"))
    _categories(result, systems, console)
    _expansion(systems, console)
    for s in result.systems:
        if s.status != "ok":
            console.print(term(f"{s.name}: {s.status}", "yellow"), term(f"({s.reason or ''})"))
    for s in systems:
        for note in s.notes:
            console.print(term(f"{s.name}: {note}"))


def _categories(result: RetrievalEvalResult, systems: list[SystemResult], console: Console) -> None:
    """The first measure by query category, with each candidate's paired mark in that
    category (Holm-corrected across measures within the category)."""
    st = result.settings
    primary = st.measures[0] if st.measures else None
    groups = list(dict.fromkeys(g for s in systems for g in s.breakdown.get("category", {})))
    if primary is None or not groups:
        return
    cmk = category_marks(result)
    rows: list[Row] = []
    for g in groups:
        cells = []
        for s in systems:
            cell = fmt_summary(s.breakdown.get("category", {}).get(g, {}).get(primary), ci_digits=2)
            cells.append(_marked(cell, cmk.get((s.name, g, primary))))
        rows.append(([term(g)], cells))
    title = term(f"{primary} by category")
    print_fitted(console, title, [("category", None)], [s.name for s in systems], rows)


def _marked(cell: str, mark: Mark | None) -> Text:
    """`cell` with a significant mark after it, green up or red down."""
    text = term(cell)
    if mark and mark.mark:
        text.append(" ")
        text.append(f"{mark.arrow}{mark.mark}", style="green" if mark.arrow == "▲" else "red")
    return text


def _expansion(systems: list[SystemResult], console: Console) -> None:
    """Before against after query expansion, for the systems that reported both rankings."""
    expanded = [s for s in systems if s.expansion is not None]
    if not expanded:
        return
    table = Table(title="query-expansion impact (a = before, b = after)", title_justify="left")
    for column in ("system", "measure", "before", "after", "Δ [95% CI]", "p (Holm)", "n"):
        table.add_column(column, no_wrap=True)
    for s in expanded:
        assert s.expansion is not None
        for mc in s.expansion.metrics:
            delta = "n/a" if mc.delta is None else f"{mc.delta:+.3f}"
            table.add_row(
                term(s.name),
                term(mc.measure),
                fmt_num(mc.mean_a),
                fmt_num(mc.mean_b),
                _marked(f"{delta} {fmt_ci(mc.ci_low, mc.ci_high, 2)}".rstrip(), mark_of(mc)),
                fmt_p(mc.p_holm),
                str(mc.n),
            )
    console.print(table)
    for s in expanded:
        assert s.expansion is not None
        console.print(
            term(
                f"{s.name}: {fmt_pct(s.expansion.new_hit_share)} of the returned memories found "
                f"only after expansion; {s.expansion.new_relevant} relevant memories found only "
                "after"
            )
        )
