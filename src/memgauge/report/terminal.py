"""The terminal view: the summary table with CIs and significance marks, then the rest."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from memgauge.aggregates.retrieval_result import RetrievalEvalResult
from memgauge.view.fmt import agent_names, fmt_agent, fmt_summary, marks, ok_systems

__all__ = ["render_terminal"]


def render_terminal(result: RetrievalEvalResult, console: Console) -> None:
    """Print the result: IR table, agent-memory table, unavailable systems, accounting notes."""
    st = result.settings
    systems = ok_systems(result)
    mk = marks(result)
    table = Table(
        title=f"{result.dataset.name}"
        + (f", {result.dataset.protocol}" if result.dataset.protocol else "")
        + f": {st.confidence:.0%} bootstrap CIs, {st.conventions}",
        title_justify="left",
    )
    # Measures as rows, systems as columns: a few systems fit a terminal; many measures do not.
    table.add_column("measure", no_wrap=True)
    for s in systems:
        table.add_column(escape(s.name), no_wrap=True)
    for m in st.measures:
        row = [escape(m)]
        for s in systems:
            cell = fmt_summary(s.metrics.get(m), ci_digits=2)
            mark = mk.get((s.name, m))
            if mark and mark.mark:
                color = "green" if mark.arrow == "▲" else "red"
                cell += f" [{color}]{mark.arrow}{mark.mark}[/{color}]"
            row.append(cell)
        table.add_row(*row)
    console.print(table)
    if len(systems) > 1:
        console.print(
            f"marks: vs {systems[0].name}, paired randomization test, Holm-corrected; "
            f"* p < {st.alpha}, ** p < {st.alpha / 5:g}"
        )
    names = agent_names(result)
    if names:
        agent = Table(title="agent-memory metrics", title_justify="left")
        agent.add_column("metric", no_wrap=True)
        agent.add_column("target", no_wrap=True)
        for s in systems:
            agent.add_column(escape(s.name), no_wrap=True)
        for n in names:
            first = next((s.agent_metrics[n] for s in systems if n in s.agent_metrics), None)
            cells = []
            for s in systems:
                a = s.agent_metrics.get(n)
                text = fmt_agent(a)
                if a is not None and a.meets_target is not None:
                    text = f"[{'green' if a.meets_target else 'yellow'}]{text}[/]"
                cells.append(text)
            agent.add_row(escape(n), escape(first.target or "") if first else "", *cells)
        console.print(agent)
    for s in result.systems:
        if s.status != "ok":
            console.print(
                f"[yellow]{escape(s.name)}: {s.status}[/yellow] ({escape(s.reason or '')})"
            )
    for s in systems:
        for note in s.notes:
            console.print(escape(f"{s.name}: {note}"))
