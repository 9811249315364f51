"""Repeats (`repeat: N`): every item of a run may go through a subject N times, each time a
stored item of its own; `suite_run_items.repeat_index` says which time it was (0 the first, as
every item stored before this revision was).

Revision ID: 0020
Revises: 0019
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0020"
down_revision = "0019"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Add the column (0 for every stored item), skipped where a store already has it."""
    have = {c["name"] for c in sa.inspect(op.get_bind()).get_columns("suite_run_items")}
    if "repeat_index" not in have:
        op.add_column(
            "suite_run_items",
            sa.Column("repeat_index", sa.Integer(), nullable=False, server_default="0"),
        )
