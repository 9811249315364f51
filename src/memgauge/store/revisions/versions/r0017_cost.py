"""Cost beside accuracy in the store: seed 002's `tokenUsageRatio` and `pressureLevel` in the
query log (`eval_queries.token_usage_ratio`, `eval_queries.pressure_level`), and the value of a
constrained optimization's bounded measure per candidate
(`optimization_iterations.constraint_value`), which a resumed study replays to know which
candidates met the constraint.

Each column is nullable: rows stored before it have no value.

Revision ID: 0017
Revises: 0016
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from alembic import op

revision = "0017"
down_revision = "0016"
branch_labels = None
depends_on = None

_COLUMNS: tuple[tuple[str, str, sa.types.TypeEngine[Any]], ...] = (
    ("eval_queries", "token_usage_ratio", sa.Double()),
    ("eval_queries", "pressure_level", sa.Text()),
    ("optimization_iterations", "constraint_value", sa.Double()),
)


def upgrade() -> None:
    """Add the columns (each skipped where a store already has it)."""
    inspector = sa.inspect(op.get_bind())
    for table, name, type_ in _COLUMNS:
        if name not in {c["name"] for c in inspector.get_columns(table)}:
            op.add_column(table, sa.Column(name, type_, nullable=True))
