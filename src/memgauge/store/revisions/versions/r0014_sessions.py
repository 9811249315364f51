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

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None

_QUERY_COLUMNS = (
    ("fallback_triggered", sa.Integer()),
    ("fallback_reason", sa.Text()),
    ("degraded_mode", sa.Integer()),
    ("stage_trace", sa.Text()),
    ("harvested_at", sa.Text()),
)


def upgrade() -> None:
    """Add the query columns (nullable: rows logged before them have no value) and the tables."""
    have = {c["name"] for c in sa.inspect(op.get_bind()).get_columns("eval_queries")}
    for name, type_ in _QUERY_COLUMNS:
        if name not in have:
            op.add_column("eval_queries", sa.Column(name, type_, nullable=True))
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
    op.create_table(
        "eval_outcomes",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        *cols(sa.Text(), "session_id", nullable=False),
        *cols(sa.Text(), "task_id"),
        *cols(sa.Integer(), "success"),
        *cols(sa.Double(), "score", "knowledge_delta", "uncertainty_reduction", "learning_index"),
        *cols(sa.Text(), "spec_folder"),
        *cols(sa.Text(), "metadata", server_default="{}"),
        *cols(sa.Text(), "created_at", nullable=False),
        sa.CheckConstraint("success IS NULL OR success IN (0, 1)", name="ck_eval_outcomes_success"),
        sa.PrimaryKeyConstraint("id"),
        sqlite_autoincrement=True,
    )
    op.create_index("idx_eval_outcomes_session", "eval_outcomes", ["session_id"])
    op.create_table(
        "eval_agent_outputs",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        *cols(sa.Text(), "session_id", nullable=False),
        *cols(sa.Text(), "query_id"),
        *cols(sa.Text(), "text", "created_at", nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sqlite_autoincrement=True,
    )
    op.create_index("idx_eval_agent_outputs_session", "eval_agent_outputs", ["session_id"])
