"""Columns written a run at a time: `cols(type, "a", "b", nullable=False)` is `sa.Column("a",
type, nullable=False), sa.Column("b", type, nullable=False)`, in that order.

`tables.py` and the migrations under `revisions/versions` both write their tables with it, so
it is frozen as they are: a shipped migration calls it, and a change here would change what
that migration creates (tests/store's upgrade tests and its schema comparison pin both)."""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa

__all__ = ["cols"]


def cols(type_: Any, *names: str, **options: Any) -> list[sa.Column[Any]]:
    """One column per name, of `type_` (a type or its class) and with the same `options`."""
    return [sa.Column(name, type_, **options) for name in names]
