"""Reports: a retrieval run's JSON, Markdown and terminal views, and any run as one
self-contained HTML file drawn with the viewer's templates (`render_run_report`); `serve`
starts the viewer itself.

Each name loads on first use (as in `memgauge.api`): a command that writes one file with
`atomic_write_text` does not load the viewer's templates, the store and the aggregates."""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from memgauge._util.files import atomic_write_text
    from memgauge.aggregates.retrieval_result import RetrievalEvalResult
    from memgauge.report.json_io import read_json, write_json
    from memgauge.report.markdown import render_markdown
    from memgauge.report.terminal import render_terminal
    from memgauge.store.url import StoreURL
    from memgauge.view import render_run_report, report_from_store
    from memgauge.view.retrieval import retrieval_result

__all__ = [
    "LOCAL_HOSTS",
    "RetrievalEvalResult",
    "atomic_write_text",
    "read_json",
    "render_markdown",
    "render_run_report",
    "render_terminal",
    "report_from_store",
    "retrieval_result",
    "serve",
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
    "render_run_report": "memgauge.view.render",
    "report_from_store": "memgauge.view.render",
    "retrieval_result": "memgauge.view.retrieval",
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


def serve(store: str | Path | StoreURL, *, host: str = "127.0.0.1", port: int = 8765) -> None:
    """Serve `memgauge view` over the store at `store` (see `memgauge.view.server`)."""
    from memgauge.view.server import serve as run_server  # the web stack, only when serving

    run_server(store, host=host, port=port)


#: hosts that only this machine reaches; binding elsewhere shows the store to the network
LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1")
