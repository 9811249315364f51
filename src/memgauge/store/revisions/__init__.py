"""The results store's Alembic migrations: `env.py` and one script per revision under
`versions/`, shipped in the package and run through Alembic's programmatic API
(`memgauge.store.engine.upgrade`); and what the scripts share (imported only by them, so only
while migrating)."""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

__all__ = ["PACKED", "columns_of", "create_serial_table"]

#: JSON deflated past a few hundred bytes (`stored_forms.packed`): text or a BLOB on SQLite,
#: bytea on PostgreSQL
PACKED = sa.Text().with_variant(postgresql.BYTEA(), "postgresql")


def columns_of(table: str) -> set[str]:
    """The columns `table` has in the database being migrated: a revision adds only those it
    lacks (a store an earlier memgauge made may have them already)."""
    return {c["name"] for c in sa.inspect(op.get_bind()).get_columns(table)}


def create_serial_table(name: str, *items: Any, key: str = "id") -> None:
    """`op.create_table(name, ...)` of a table keyed by a serial integer `key`, its first
    column (on SQLite AUTOINCREMENT: a deleted row's id is never given again)."""
    op.create_table(
        name,
        sa.Column(key, sa.Integer(), autoincrement=True, nullable=False),
        *items,
        sa.PrimaryKeyConstraint(key),
        sqlite_autoincrement=True,
    )
