"""Seed 002 sections 1.1, 5.3 and 5.4 in the query log: what `eval_queries` did not hold yet (the
fallback and degraded flags, the per-stage trace, when a query was harvested for the golden
set), and three tables: `eval_sessions` (a session's turn count and span, for the session-length
signal), `eval_outcomes` (task outcomes linked to a session, `task_postflight`) and
`eval_agent_outputs` (what the agent wrote, for copy/reference detection).

Revision ID: 0014
Revises: 0013
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from memgauge.store.columns import cols
from memgauge.store.revisions import columns_of, create_serial_table

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Add the query columns (nullable: rows logged before them have no value) and the tables."""
    have = columns_of("eval_queries")
    for column in [
        *cols(sa.Integer(), "fallback_triggered"),
        *cols(sa.Text(), "fallback_reason"),
        *cols(sa.Integer(), "degraded_mode"),
        *cols(sa.Text(), "stage_trace", "harvested_at"),
    ]:
        if column.name not in have:
            op.add_column("eval_queries", column)
    op.create_table(
        "eval_sessions",
        *cols(sa.Text(), "session_id", nullable=False),
        *cols(sa.Integer(), "turns"),
        *cols(sa.Text(), "started_at", nullable=False),
        *cols(sa.Text(), "ended_at"),
        *cols(sa.Text(), "updated_at", nullable=False),
        *cols(sa.Text(), "metadata", server_default="{}"),
        sa.PrimaryKeyConstraint("session_id"),
    )
    create_serial_table(
        "eval_outcomes",
        *cols(sa.Text(), "session_id", nullable=False),
        *cols(sa.Text(), "task_id"),
        *cols(sa.Integer(), "success"),
        *cols(sa.Double(), "score", "knowledge_delta", "uncertainty_reduction", "learning_index"),
        *cols(sa.Text(), "spec_folder"),
        *cols(sa.Text(), "metadata", server_default="{}"),
        *cols(sa.Text(), "created_at", nullable=False),
        sa.CheckConstraint("success IS NULL OR success IN (0, 1)", name="ck_eval_outcomes_success"),
    )
    op.create_index("idx_eval_outcomes_session", "eval_outcomes", ["session_id"])
    create_serial_table(
        "eval_agent_outputs",
        *cols(sa.Text(), "session_id", nullable=False),
        *cols(sa.Text(), "query_id"),
        *cols(sa.Text(), "text", "created_at", nullable=False),
    )
    op.create_index("idx_eval_agent_outputs_session", "eval_agent_outputs", ["session_id"])
