"""Reports: a retrieval run's JSON, Markdown, self-contained HTML and terminal views, rendered
from the run's record."""

from memgauge._util.files import atomic_write_text
from memgauge.aggregates.retrieval_result import RetrievalEvalResult
from memgauge.report.html import render_html
from memgauge.report.json_io import read_json, write_json
from memgauge.report.markdown import render_markdown
from memgauge.report.retrieval_view import retrieval_result
from memgauge.report.terminal import render_terminal

__all__ = [
    "RetrievalEvalResult",
    "atomic_write_text",
    "read_json",
    "render_html",
    "render_markdown",
    "render_terminal",
    "retrieval_result",
    "write_json",
]
