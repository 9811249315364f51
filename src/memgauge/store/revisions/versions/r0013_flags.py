"""Feature flags, and what shadow runs need to drive their A/B tests (issue 19).

- `eval_flags`: seed 002's `EvalFeatureFlag` (section 4.3), one row per flag; the flag's test
  state is its A/B test's row in `eval_ab_tests` (same `feature_id`), never a copy.
- `eval_shadow_runs` gains the query's intent and session, the log level the row was written
  at and, at `full`, the query text; and each arm's RR / nDCG, so a shadowed query can be fed
  to a sequential test as a pair (the deltas alone cannot feed a binary rule).
- `eval_shadow_drops`: how many shadowed queries a full queue dropped, per experiment.
- `eval_ab_test_pairs.shadow_run_id`: the shadow row a pair came from (`ab add --from-shadow`
  feeds each row once).

Revision ID: 0013
Revises: 0012
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None

_SHADOW_COLUMNS: tuple[tuple[str, sa.types.TypeEngine[float] | sa.types.TypeEngine[str]], ...] = (
    ("intent", sa.Text()),
    ("session_id", sa.Text()),
    ("log_level", sa.Text()),
    ("query_text", sa.Text()),
    ("control_mrr", sa.Double()),
    ("treatment_mrr", sa.Double()),
    ("control_ndcg", sa.Double()),
    ("treatment_ndcg", sa.Double()),
)


def upgrade() -> None:
    """Create the flag and drop-count tables; add the shadow and pair columns."""
    op.create_table(
        "eval_flags",
        sa.Column("feature_id", sa.Text(), nullable=False),
        sa.Column("rollout_percent", sa.Double(), nullable=False),
        sa.Column("shadow_enabled", sa.Integer(), nullable=False),
        sa.Column("shadow_percent", sa.Double(), nullable=False),
        sa.Column("min_samples", sa.Integer(), nullable=False),
        sa.Column("graduation_threshold", sa.Double(), nullable=False),
        sa.Column("feed_ab", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.Text(), nullable=False),
        sa.Column("updated_at", sa.Text(), nullable=False),
        sa.CheckConstraint(
            "rollout_percent >= 0 AND rollout_percent <= 100", name="ck_eval_flags_rollout"
        ),
        sa.CheckConstraint(
            "shadow_percent >= 0 AND shadow_percent <= 100", name="ck_eval_flags_shadow"
        ),
        sa.PrimaryKeyConstraint("feature_id"),
    )
    op.create_table(
        "eval_shadow_drops",
        sa.Column("feature_id", sa.Text(), nullable=False),
        sa.Column("dropped", sa.Integer(), nullable=False),
        sa.Column("updated_at", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint("feature_id"),
    )
    for name, type_ in _SHADOW_COLUMNS:
        op.add_column("eval_shadow_runs", sa.Column(name, type_, nullable=True))
    op.add_column("eval_ab_test_pairs", sa.Column("shadow_run_id", sa.Integer(), nullable=True))
