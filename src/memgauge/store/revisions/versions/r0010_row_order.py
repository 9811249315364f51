"""Order without SQLite's rowid: `suite_run_tasks.seq` (a task's place in its suite) and
`suite_run_scores.seq` (a verdict's place among its item's), which readers used rowid for.

On SQLite the rows already stored take their rowid (the order they were read in before); the
hand-run migrations' `schema_migrations` goes, its history now being Alembic's.

Revision ID: 0010
Revises: 0009
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Add the two order columns (backfilled from rowid on SQLite)."""
    for table in ("suite_run_tasks", "suite_run_scores"):
        op.add_column(table, sa.Column("seq", sa.Integer(), nullable=True))
        if op.get_bind().dialect.name == "sqlite":
            op.execute(f"UPDATE {table} SET seq = rowid")
    op.execute("DROP TABLE IF EXISTS schema_migrations")
