"""The layer contract of DESIGN.md: each layer imports only layers below it."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "memgauge"

# Lowest first. Names in one tuple are peers and must not import each other.
LAYERS: list[tuple[str, ...]] = [
    ("errors", "_types", "_util"),
    ("data",),
    ("llm", "embed", "metrics", "stats", "store"),
    ("subjects",),
    ("scorers", "probes"),
    ("aggregates",),
    ("runs",),
    ("optimize", "track", "online"),
    ("api",),
    ("view",),
    ("report",),
    ("cli",),
]
LEVEL = {name: i for i, names in enumerate(LAYERS) for name in names}


def _top(module: str) -> str | None:
    parts = module.split(".")
    if parts[0] != "memgauge" or len(parts) < 2:
        return None
    return parts[1]


def _imports(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = ".".join(("memgauge", *path.relative_to(SRC).with_suffix("").parts[:-1]))
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                mod = ".".join([*base, node.module] if node.module else base)
            else:
                mod = node.module or ""
            found.append((node.lineno, mod))
    return found


def test_every_package_is_placed_in_a_layer() -> None:
    for child in SRC.iterdir():
        if child.name.startswith("__") or child.name == "py.typed":
            continue
        name = child.stem
        assert name in LEVEL, f"{child} is in no layer: add it to DESIGN.md and LAYERS"


def test_layers_import_only_downwards() -> None:
    violations: list[str] = []
    for path in SRC.rglob("*.py"):
        rel = path.relative_to(SRC)
        if len(rel.parts) == 1 and rel.name in {"__init__.py", "__main__.py"}:
            continue
        own = rel.parts[0].removesuffix(".py")
        for lineno, module in _imports(path):
            other = _top(module)
            if other is None or other == own:
                continue
            if LEVEL[other] >= LEVEL[own]:
                violations.append(f"{rel}:{lineno} ({own}) imports {module} ({other})")
    assert not violations, "\n".join(violations)
