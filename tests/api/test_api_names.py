"""memgauge.api declares each public name once (an import under `if TYPE_CHECKING:`, which
type checkers read), and every one resolves at run time, on first use, to its module's object."""

from __future__ import annotations

import ast
import importlib
from collections import Counter
from pathlib import Path

import pytest

from memgauge import api
from memgauge._util.lazy import declared_names

FACE = Path(api.__file__)


def test_every_name_in_all_resolves_to_what_its_module_defines() -> None:
    assert len(api.__all__) == len(set(api.__all__)) > 100
    for name in api.__all__:
        module, _, original = api._LAZY[name].partition(":")
        expected = getattr(importlib.import_module(module), original or name)
        assert getattr(api, name) is expected, name
    star: dict[str, object] = {}
    exec("from memgauge.api import *", star)
    assert set(star) - {"__builtins__"} == set(api.__all__)
    assert set(api.__all__) <= set(dir(api))
    with pytest.raises(AttributeError, match=r"memgauge\.api.*not_a_name"):
        api.not_a_name  # noqa: B018


def test_each_name_is_written_once_in_the_face() -> None:
    """Once: not again in `__all__`, nor in a table of modules."""
    tree = ast.parse(FACE.read_text(encoding="utf-8"))
    written: Counter[str] = Counter()
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            written[node.value] += 1
        elif isinstance(node, ast.alias):
            written[node.asname or node.name] += 1
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            written[node.id] += 1
    assert {name: written[name] for name in api.__all__ if written[name] != 1} == {}


def test_a_declaration_type_checkers_would_not_export_is_refused() -> None:
    face = "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n{}\n"
    assert declared_names(
        face.format("    from m.a import f as f\n    from m.b import g\n    h = g")
    ) == {
        "f": "m.a",
        "h": "m.b:g",
    }
    with pytest.raises(ValueError, match=r"face:4: `g as h` is not exported"):
        declared_names(
            face.format("    from m.a import f as f\n    from m.b import g as h"), "face"
        )
    with pytest.raises(ValueError, match="face:4: not a declaration"):
        declared_names(face.format("    from m.a import f as f\n    x = 1"), "face")
