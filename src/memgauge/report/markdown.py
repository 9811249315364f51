"""The Markdown summary of a retrieval evaluation (`summary.md`): what was evaluated and how,
then the ir aggregate's shapes, drawn as every report draws them (`shapes_markdown`).

Every text from the data goes through `escape.md_text`, every table cell included: a name
cannot bring raw HTML, a link, or a `|` or line break that reshapes a table."""

from __future__ import annotations

from memgauge._util.listing import counted
from memgauge.aggregates.ir_shapes import ir_shapes
from memgauge.aggregates.retrieval_result import RetrievalEvalResult
from memgauge.report.escape import md_text
from memgauge.report.shapes_markdown import shape_markdown

__all__ = ["render_markdown"]


def render_markdown(result: RetrievalEvalResult) -> str:
    """The whole result as Markdown: its header, then measures, comparisons, agent metrics,
    breakdowns, latency and accounting."""
    st, ds = result.settings, result.dataset
    out = [
        f"# Retrieval evaluation: {md_text(ds.name)}",
        "",
        f"run `{result.run_id}` · {result.created_at:%Y-%m-%d %H:%M} UTC · memgauge "
        f"{result.memgauge_version}",
        "",
        f"{counted(ds.n_memories, 'memory', 'memories')}, {counted(ds.n_queries, 'query', 'queries')}, {counted(ds.n_judgments, 'judgment')}. "
        f"Conventions: {st.conventions}; search depth {st.k}; "
        f"{st.confidence:.0%} bootstrap CIs ({st.n_resamples} resamples, seed {st.seed}).",
        "",
        *([f"Dataset protocol: {md_text(ds.protocol)}.", ""] if ds.protocol else []),
    ]
    shapes = ir_shapes(result.shapes_source())
    return "\n".join(out) + "\n" + "\n".join(shape_markdown(s, level=2) for s in shapes)
