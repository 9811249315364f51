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

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None

_SCORES = (
    "score",
    "ci_low",
    "ci_high",
    "delta",
    "delta_ci_low",
    "delta_ci_high",
    "baseline_delta",
    "baseline_delta_ci_low",
    "baseline_delta_ci_high",
)


def upgrade() -> None:
    """Create the two tables and their indexes."""
    if sa.inspect(op.get_bind()).has_table("optimization_studies"):
        return
    op.create_table(
        "optimization_studies",
        sa.Column("study_id", sa.Text(), nullable=False),
        sa.Column("suite_name", sa.Text(), nullable=False),
        sa.Column("suite_path", sa.Text(), nullable=True),
        sa.Column("task", sa.Text(), nullable=False),
        sa.Column("measure", sa.Text(), nullable=False),
        sa.Column("subject", sa.Text(), nullable=False),
        sa.Column("strategy", sa.Text(), nullable=False),
        sa.Column("status", sa.Text(), nullable=False),
        sa.Column("stopped_because", sa.Text(), nullable=True),
        sa.Column("config_json", sa.Text(), nullable=False),
        sa.Column("best_step", sa.Integer(), nullable=True),
        sa.Column("best_candidate", sa.Integer(), nullable=True),
        sa.Column("holdout_json", sa.Text(), nullable=True),
        sa.Column("usage_json", sa.Text(), server_default="{}", nullable=False),
        sa.Column("pid", sa.Integer(), nullable=True),
        sa.Column("pid_start", sa.Text(), nullable=True),
        sa.Column("host", sa.Text(), nullable=True),
        sa.Column("created_at", sa.Text(), nullable=False),
        sa.Column("updated_at", sa.Text(), nullable=False),
        sa.Column("finished_at", sa.Text(), nullable=True),
        sa.CheckConstraint(
            "status IN ('running', 'completed', 'cancelled', 'failed')",
            name="ck_optimization_studies_status",
        ),
        sa.PrimaryKeyConstraint("study_id"),
    )
    op.create_index("idx_optimization_studies_created", "optimization_studies", ["created_at"])
    op.create_table(
        "optimization_iterations",
        sa.Column("study_id", sa.Text(), nullable=False),
        sa.Column("phase", sa.Text(), nullable=False),
        sa.Column("step", sa.Integer(), nullable=False),
        sa.Column("candidate", sa.Integer(), nullable=False),
        sa.Column("target", sa.Text(), nullable=False),
        sa.Column("status", sa.Text(), nullable=False),
        sa.Column("params_json", sa.Text(), nullable=False),
        sa.Column("texts_json", sa.Text(), nullable=False),
        sa.Column("run_id", sa.Text(), nullable=True),
        *(sa.Column(name, sa.Double(), nullable=True) for name in _SCORES),
        sa.Column("accepted", sa.Integer(), nullable=True),
        sa.Column("values_json", sa.Text(), nullable=True),
        sa.Column("note", sa.Text(), nullable=True),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.Column("started_at", sa.Text(), nullable=False),
        sa.Column("finished_at", sa.Text(), nullable=True),
        sa.Column("seconds", sa.Double(), nullable=True),
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
