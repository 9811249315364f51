"""`memgauge view`: a local web viewer of the results store (runs, a run's grid, its items,
comparisons, trends, A/B tests and shadow runs), and the templates `memgauge report` renders
into one self-contained file. Read-only by construction: see `memgauge.view.app`.

The names below load on first use: importing `memgauge.view.fmt` (the number formatting every
renderer shares, the terminal's too) must not load Jinja2 and the store with the templates."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from memgauge.view.render import render_run_report, report_from_store

__all__ = ["render_run_report", "report_from_store"]

_LAZY = {"render_run_report": "memgauge.view.render", "report_from_store": "memgauge.view.render"}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'memgauge.view' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
