"""Values named in a message: the first few, and `...` for the rest; a count and its noun."""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["counted", "some"]


def some(values: Sequence[object], limit: int) -> str:
    """Up to `limit` of `values`, each as `repr` writes it, with `, ...` when there are more."""
    shown = ", ".join(repr(v) for v in values[:limit])
    return shown + (", ..." if len(values) > limit else "")


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """`n` and `noun`, plural unless `n` is 1: `1 session`, `2 sessions` (`plural` when not +s)."""
    return f"{n} {noun if n == 1 else plural or noun + 's'}"
