"""People's labels from `memgauge view --review`: `review_labels` holds one row per label given
(a retrieval hit's grade 0-3; a verdict confirmed or overridden, pass/fail; an extracted fact
correct/incorrect; an operation decision right/wrong), with its reviewer, note, time and what
the machine said then. Rows are only ever added: a reviewer's latest label on a target is
theirs, the earlier ones are its history, and another reviewer's are never touched.

Revision ID: 0019
Revises: 0018
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from memgauge.store.columns import cols
from memgauge.store.revisions import create_serial_table

revision = "0019"
down_revision = "0018"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Create the table and its index on the labelled item."""
    create_serial_table(
        "review_labels",
        *cols(sa.Text(), "run_id", "subject", "task", "item_id", "kind", nullable=False),
        *cols(sa.Text(), "target", nullable=False, server_default=""),
        *cols(sa.Text(), "reviewer", nullable=False),
        *cols(sa.Integer(), "grade"),
        *cols(sa.Text(), "label", "machine"),
        *cols(sa.Text(), "note", nullable=False, server_default=""),
        *cols(sa.Text(), "created_at", nullable=False),
        sa.CheckConstraint(
            "kind IN ('hit', 'verdict', 'fact', 'operation')", name="ck_review_labels_kind"
        ),
        sa.CheckConstraint("grade IS NULL OR grade BETWEEN 0 AND 3", name="ck_review_labels_grade"),
    )
    op.create_index(
        "idx_review_labels_item", "review_labels", ["run_id", "subject", "task", "item_id"]
    )
