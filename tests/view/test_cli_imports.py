"""`cli/view.py` reaches the viewer only through memgauge's public faces (memgauge,
memgauge.api, memgauge.report, memgauge.view, memgauge.errors, memgauge._util, memgauge.cli.*)."""

from __future__ import annotations

import ast
from pathlib import Path

import memgauge.cli.view

ALLOWED = ("memgauge", "memgauge.api", "memgauge.report", "memgauge.view", "memgauge.errors")
ALLOWED_PREFIXES = ("memgauge._util", "memgauge.cli")


def test_cli_view_imports_only_public_modules() -> None:
    tree = ast.parse(Path(memgauge.cli.view.__file__).read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.append(node.module)
        elif isinstance(node, ast.Import):
            found.extend(a.name for a in node.names)
    ours = [m for m in found if m.split(".")[0] == "memgauge"]
    assert ours, "the check must see memgauge's imports"
    bad = [m for m in ours if m not in ALLOWED and not m.startswith(ALLOWED_PREFIXES)]
    assert not bad, f"cli/view.py imports {bad}: expose what it needs through memgauge.view"
