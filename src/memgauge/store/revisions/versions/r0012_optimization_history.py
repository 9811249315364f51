"""`memgauge optimize`'s history: `optimization_studies` (one optimization) and
`optimization_iterations` (one candidate evaluation each); columns documented in
`memgauge.store.optimization`.

A SQLite store made by the memgauge that ran this as the hand-run migration
0011_optimization_history already has both tables, and keeps them as they are.

Revision ID: 0012
Revises: 0011
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from memgauge.store.columns import cols
from memgauge.store.stored_forms import ITERATION_SCORES

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Create the two tables and their indexes."""
    if sa.inspect(op.get_bind()).has_table("optimization_studies"):
        return
    op.create_table(
        "optimization_studies",
        *cols(sa.Text(), "study_id", "suite_name", nullable=False),
        *cols(sa.Text(), "suite_path"),
        *cols(sa.Text(), "task", "measure", "subject", "strategy", "status", nullable=False),
        *cols(sa.Text(), "stopped_because"),
        *cols(sa.Text(), "config_json", nullable=False),
        *cols(sa.Integer(), "best_step", "best_candidate"),
        *cols(sa.Text(), "holdout_json"),
        *cols(sa.Text(), "usage_json", server_default="{}", nullable=False),
        *cols(sa.Integer(), "pid"),
        *cols(sa.Text(), "pid_start", "host"),
        *cols(sa.Text(), "created_at", "updated_at", nullable=False),
        *cols(sa.Text(), "finished_at"),
        sa.CheckConstraint(
            "status IN ('running', 'completed', 'cancelled', 'failed')",
            name="ck_optimization_studies_status",
        ),
        sa.PrimaryKeyConstraint("study_id"),
    )
    op.create_index("idx_optimization_studies_created", "optimization_studies", ["created_at"])
    op.create_table(
        "optimization_iterations",
        *cols(sa.Text(), "study_id", "phase", nullable=False),
        *cols(sa.Integer(), "step", "candidate", nullable=False),
        *cols(sa.Text(), "target", "status", "params_json", "texts_json", nullable=False),
        *cols(sa.Text(), "run_id"),
        *(sa.Column(name, sa.Double(), nullable=True) for name in ITERATION_SCORES),
        *cols(sa.Integer(), "accepted"),
        *cols(sa.Text(), "values_json", "note", "reason"),
        *cols(sa.Text(), "started_at", nullable=False),
        *cols(sa.Text(), "finished_at"),
        *cols(sa.Double(), "seconds"),
        sa.CheckConstraint("phase IN ('tune', 'holdout')", name="ck_optimization_iterations_phase"),
        sa.CheckConstraint(
            "status IN ('running', 'completed', 'failed')",
            name="ck_optimization_iterations_status",
        ),
        sa.ForeignKeyConstraint(
            ["study_id"], ["optimization_studies.study_id"], ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("study_id", "phase", "step", "candidate"),
    )
    op.create_index("idx_optimization_iterations_run", "optimization_iterations", ["run_id"])
