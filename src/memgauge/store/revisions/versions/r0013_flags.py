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

from memgauge.store.columns import cols

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Create the flag and drop-count tables; add the shadow and pair columns."""
    op.create_table(
        "eval_flags",
        *cols(sa.Text(), "feature_id", nullable=False),
        *cols(sa.Double(), "rollout_percent", nullable=False),
        *cols(sa.Integer(), "shadow_enabled", nullable=False),
        *cols(sa.Double(), "shadow_percent", nullable=False),
        *cols(sa.Integer(), "min_samples", nullable=False),
        *cols(sa.Double(), "graduation_threshold", nullable=False),
        *cols(sa.Integer(), "feed_ab", nullable=False),
        *cols(sa.Text(), "created_at", "updated_at", nullable=False),
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
        *cols(sa.Text(), "feature_id", nullable=False),
        *cols(sa.Integer(), "dropped", nullable=False),
        *cols(sa.Text(), "updated_at", nullable=False),
        sa.PrimaryKeyConstraint("feature_id"),
    )
    # the query's context, the log level, each arm's RR and nDCG
    for column in [
        *cols(sa.Text(), "intent", "session_id", "log_level", "query_text"),
        *cols(sa.Double(), "control_mrr", "treatment_mrr", "control_ndcg", "treatment_ndcg"),
    ]:
        op.add_column("eval_shadow_runs", column)
    op.add_column("eval_ab_test_pairs", sa.Column("shadow_run_id", sa.Integer(), nullable=True))
