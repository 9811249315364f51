"""Whole traces kept (`memgauge logs import-traces --store`): `traces` holds one row per trace
(its session, start and end, root span's name, final answer, first error, counts and token
sums), `trace_spans` one row per span of it (kind, name, parent, timing, error, input and
output, and what the span did: a retriever's query and hits, a tool's name, arguments and
result, a model's name, tokens and output). A trace imported again replaces its rows.

Revision ID: 0021
Revises: 0020
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from memgauge.store.columns import cols

revision = "0021"
down_revision = "0020"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Create both tables and their indexes."""
    op.create_table(
        "traces",
        sa.Column("trace_id", sa.Text(), nullable=False),
        *cols(sa.Text(), "format", "source", nullable=False),
        *cols(sa.Text(), "session_id", "root_span_id", "root_name"),
        *cols(sa.BigInteger(), "start_ns", "end_ns"),
        *cols(sa.Text(), "answer", "error"),
        *cols(
            sa.Integer(), "n_spans", "n_retrievals", "n_tool_calls", "n_llm_calls", nullable=False
        ),
        *cols(sa.Integer(), "prompt_tokens", "completion_tokens", "total_tokens"),
        *cols(sa.Text(), "imported_at", nullable=False),
        sa.PrimaryKeyConstraint("trace_id"),
    )
    op.create_index("idx_traces_session", "traces", ["session_id", "start_ns"])
    op.create_index("idx_traces_start", "traces", ["start_ns"])
    op.create_table(
        "trace_spans",
        *cols(sa.Text(), "trace_id", "span_id", nullable=False),
        *cols(sa.Integer(), "seq", nullable=False),
        *cols(sa.Text(), "parent_id", "kind", "name", "session_id"),
        *cols(sa.BigInteger(), "start_ns", "end_ns"),
        *cols(sa.Integer(), "line"),
        *cols(sa.Text(), "error", "input_json", "output_json"),
        *cols(sa.Text(), "tags_json", nullable=False, server_default="[]"),
        *cols(sa.Text(), "query", "hits_json"),
        *cols(sa.Double(), "latency_ms"),
        *cols(sa.Text(), "tool_name", "tool_args_json", "tool_result_json", "tool_error"),
        *cols(sa.Text(), "model"),
        *cols(sa.Integer(), "prompt_tokens", "completion_tokens", "total_tokens"),
        *cols(sa.Text(), "llm_output", "llm_error"),
        sa.ForeignKeyConstraint(["trace_id"], ["traces.trace_id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("trace_id", "span_id"),
    )
