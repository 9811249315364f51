"""Values named in a message: the first few, and `...` for the rest."""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["some"]


def some(values: Sequence[object], limit: int) -> str:
    """Up to `limit` of `values`, each as `repr` writes it, with `, ...` when there are more."""
    shown = ", ".join(repr(v) for v in values[:limit])
    return shown + (", ..." if len(values) > limit else "")
