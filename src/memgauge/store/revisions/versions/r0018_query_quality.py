"""Seed 002 section 1.1's quality telemetry in the query log: `eval_queries` gains
`avg_relevance_score` (the mean of the result scores), `top_result_score` (the highest),
`boost_impact_delta` (how much boosting moved them) and `dedup_tokens_saved` (the tokens of the
results the session dedup filtered out, as the host counts them). The writer derives the first
two and `quality_proxy_score` from the scores the host logs (`memgauge.store.quality`).

Revision ID: 0018
Revises: 0017
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from alembic import op

revision = "0018"
down_revision = "0017"
branch_labels = None
depends_on = None

_QUERY_COLUMNS: tuple[tuple[str, sa.types.TypeEngine[Any]], ...] = (
    ("avg_relevance_score", sa.Double()),
    ("top_result_score", sa.Double()),
    ("boost_impact_delta", sa.Double()),
    ("dedup_tokens_saved", sa.Integer()),
)


def upgrade() -> None:
    """Add the columns (nullable: rows logged before them have no value), each skipped where a
    store already has it."""
    have = {c["name"] for c in sa.inspect(op.get_bind()).get_columns("eval_queries")}
    for name, type_ in _QUERY_COLUMNS:
        if name not in have:
            op.add_column("eval_queries", sa.Column(name, type_, nullable=True))
