"""Reports of a retrieval evaluation: JSON, Markdown, self-contained HTML and the terminal."""

from memgauge.report.html import render_html
from memgauge.report.json_io import read_json, write_json
from memgauge.report.markdown import render_markdown
from memgauge.report.terminal import render_terminal

__all__ = ["read_json", "render_html", "render_markdown", "render_terminal", "write_json"]
