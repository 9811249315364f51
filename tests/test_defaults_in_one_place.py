"""A default lives in one place: the bootstrap's resamples and confidence level are
`memgauge._util.numbers.N_RESAMPLES` and `CONFIDENCE`, and every function, aggregate field and
option that takes them defaults to those names, never to a copy of the number (a copy is a
second place to change, and a path that keeps the old value when the first one moves)."""

from __future__ import annotations

import ast
from pathlib import Path

from memgauge.stats import bootstrap

SRC = Path(__file__).resolve().parents[1] / "src" / "memgauge"
NAMES = {"n_resamples", "resamples", "confidence"}


def _literal_defaults(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, name) of each parameter, dataclass field or `--resamples` option in `tree` whose
    default is a number written out."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            args = node.args
            positional = [*args.posonlyargs, *args.args]
            pairs = list(
                zip(positional[len(positional) - len(args.defaults) :], args.defaults, strict=True)
            )
            pairs += [
                (a, d)
                for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True)
                if d is not None
            ]
            found += [
                (d.lineno, a.arg)
                for a, d in pairs
                if a.arg in NAMES and isinstance(d, ast.Constant) and not isinstance(d.value, bool)
            ]
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            if node.target.id in NAMES and isinstance(node.value, ast.Constant):
                found.append((node.lineno, node.target.id))
        elif isinstance(node, ast.Call) and any(
            isinstance(a, ast.Constant) and a.value == "--resamples" for a in node.args
        ):
            found += [
                (k.lineno, "--resamples")
                for k in node.keywords
                if k.arg == "default" and isinstance(k.value, ast.Constant)
            ]
    return found


def test_the_bootstraps_defaults_are_named_not_copied() -> None:
    copies = [
        f"{path.relative_to(SRC)}:{line} {name}"
        for path in sorted(SRC.rglob("*.py"))
        for line, name in _literal_defaults(ast.parse(path.read_text(encoding="utf-8")))
    ]
    assert copies == []


def test_the_names_are_the_one_default() -> None:
    from memgauge._util.numbers import CONFIDENCE, N_RESAMPLES  # the one place

    assert (bootstrap.N_RESAMPLES, bootstrap.CONFIDENCE) == (N_RESAMPLES, CONFIDENCE)
    assert (N_RESAMPLES, CONFIDENCE) == (1000, 0.95)
