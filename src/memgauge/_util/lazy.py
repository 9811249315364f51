"""A package face whose names load on first use, each declared once.

The face lists its public names as imports under `if TYPE_CHECKING:`, where type checkers and
IDEs read them (so they see every name with its real type) and the interpreter does not (so
importing the face loads nothing):

    if TYPE_CHECKING:
        from memgauge.api._runs import evaluate as evaluate     # `X as X`: a public name
        from memgauge.data.io import save_retrieval_dataset
        save_dataset = save_retrieval_dataset                   # a public name under another
    else:
        lazy_names(globals())

`lazy_names` reads that block from the face's source and gives the module its `__all__`, a
`_LAZY` table (name -> `module` or `module:attribute`) and the `__getattr__` / `__dir__` that
import a name on first use (PEP 562). Anything else in the block is refused when the face is
imported, so the one declaration cannot drift from what is exported.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
from pathlib import Path
from typing import Any

__all__ = ["lazy_names", "lazy_table"]


def _checking_block(tree: ast.Module) -> list[ast.stmt]:
    for node in tree.body:
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            return node.body
    raise ValueError("no `if TYPE_CHECKING:` block declares the names")


def declared_names(source: str, where: str = "<face>") -> dict[str, str]:
    """name -> `module` (`module:attribute` when renamed), in declaration order, from the
    `if TYPE_CHECKING:` block of a face's source; ValueError naming a statement that is not a
    declaration."""
    imported: dict[str, str] = {}  # names imported to be renamed: name -> module
    table: dict[str, str] = {}
    for stmt in _checking_block(ast.parse(source)):
        if isinstance(stmt, ast.ImportFrom) and stmt.module and not stmt.level:
            for alias in stmt.names:
                if alias.asname is None:
                    imported[alias.name] = stmt.module
                elif alias.asname == alias.name:
                    table[alias.name] = stmt.module
                else:
                    raise ValueError(
                        f"{where}:{stmt.lineno}: `{alias.name} as {alias.asname}` is not exported "
                        f"to type checkers; import {alias.name} and assign {alias.asname} = "
                        f"{alias.name}"
                    )
        elif (
            isinstance(stmt, ast.Assign)
            and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], ast.Name)
            and isinstance(stmt.value, ast.Name)
            and stmt.value.id in imported
        ):
            table[stmt.targets[0].id] = f"{imported[stmt.value.id]}:{stmt.value.id}"
        else:
            raise ValueError(f"{where}:{stmt.lineno}: not a declaration of a lazy name")
    return table


def lazy_names(namespace: dict[str, Any]) -> None:
    """Give the package face whose globals are `namespace` its `__all__`, `_LAZY`,
    `__getattr__` and `__dir__`, from the names declared in its `if TYPE_CHECKING:` block."""
    path = Path(namespace["__file__"])
    table = declared_names(path.read_text(encoding="utf-8"), str(path))
    namespace["__all__"] = sorted(table)
    lazy_table(namespace, table)


def lazy_table(namespace: dict[str, Any], table: dict[str, str]) -> None:
    """Give the package face whose globals are `namespace` the `_LAZY` table (name -> `module`
    or `module:attribute`) and the `__getattr__` / `__dir__` that import a name of it, or a
    subpackage of the face (`memgauge.api`, `memgauge.metrics`), on first use (PEP 562)."""
    name = namespace["__name__"]

    def module_getattr(attr: str) -> Any:
        target = table.get(attr)
        if target is None:
            # a name no module can have (`getattr(memgauge, "a.b", None)`) is no attribute,
            # not a ModuleNotFoundError for `memgauge.a` out of find_spec
            if (
                attr.startswith("_")
                or not attr.isidentifier()
                or importlib.util.find_spec(f"{name}.{attr}") is None
            ):
                raise AttributeError(f"module {name!r} has no attribute {attr!r}")
            # a subpackage, as `import memgauge` then `memgauge.api.close_llm()` reads it: the
            # import system sets it on the package too, so this runs once per subpackage
            return importlib.import_module(f"{name}.{attr}")
        module, _, original = target.partition(":")
        value = getattr(importlib.import_module(module), original or attr)
        namespace[attr] = value
        return value

    def module_dir() -> list[str]:
        return sorted(set(namespace) | set(table))

    namespace.update(_LAZY=table, __getattr__=module_getattr, __dir__=module_dir)
