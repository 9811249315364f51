"""Reports: a retrieval run's JSON, Markdown and terminal views (`retrieval_result` rebuilds
what they render from the run's record), and the number formatting every renderer shares
(`memgauge.report.fmt`, the viewer's too). The viewer (`memgauge.view`) stands above the
reports: it draws the one-file HTML report and uses these; nothing here imports it.

Each name loads on first use (as in `memgauge.api`): a command that writes one file with
`atomic_write_text` does not load the aggregates."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from memgauge._util.files import atomic_write_text
    from memgauge.aggregates.retrieval_result import RetrievalEvalResult
    from memgauge.report.json_io import read_json, write_json
    from memgauge.report.markdown import render_markdown
    from memgauge.report.retrieval import retrieval_result
    from memgauge.report.terminal import render_terminal

__all__ = [
    "RetrievalEvalResult",
    "atomic_write_text",
    "read_json",
    "render_markdown",
    "render_terminal",
    "retrieval_result",
    "write_json",
]

#: name -> the module that defines it, loaded on first use
_LAZY: dict[str, str] = {
    "RetrievalEvalResult": "memgauge.aggregates.retrieval_result",
    "atomic_write_text": "memgauge._util.files",
    "read_json": "memgauge.report.json_io",
    "write_json": "memgauge.report.json_io",
    "render_markdown": "memgauge.report.markdown",
    "render_terminal": "memgauge.report.terminal",
    "retrieval_result": "memgauge.report.retrieval",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'memgauge.report' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
