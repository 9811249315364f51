"""The terminal view of a retrieval evaluation: a title saying how it was computed, then the ir
aggregate's shapes, drawn as every terminal report draws them (`shapes_terminal`)."""

from __future__ import annotations

from rich.console import Console

from memgauge.aggregates.ir_shapes import ir_shapes
from memgauge.aggregates.retrieval_result import RetrievalEvalResult
from memgauge.report.escape import term
from memgauge.report.shapes_terminal import print_shape

__all__ = ["render_terminal"]


def render_terminal(result: RetrievalEvalResult, console: Console) -> None:
    """Print the result: how it was computed, then each of its shapes."""
    st, ds = result.settings, result.dataset
    protocol = f", {ds.protocol}" if ds.protocol else ""
    console.print(term(f"{ds.name}{protocol}: {st.confidence:.0%} bootstrap CIs, {st.conventions}"))
    for shape in ir_shapes(result.shapes_source()):
        print_shape(console, shape)
