"""Task kinds: what a task of each kind reads, asks and is summarized by, one module per kind.

A kind is a plug-in like any component: registered in the `memgauge.kinds` entry-point group
(memgauge's own in its `pyproject.toml`, a third party's in its own), so a package that
declares one adds a kind of evaluation without a line of memgauge changed. `TaskKind`
(`base.py`) is what a kind owns: its spec fields and their checks (and so `memgauge schema`),
how its items are planned and asked, its default aggregates, and its suite builder when a
command builds one (`evaluate`, `extraction`, `operations`, `audit`).
"""

from __future__ import annotations

from memgauge.runs.kinds.base import KINDS, Planning, TaskKind, kind_of

__all__ = ["KINDS", "Planning", "TaskKind", "kind_of"]
