"""The gate's verdict on a run: `suite_runs.gate` ('pass', 'fail', 'accepted'; NULL: never
gated). A failed run is left out of later baselines unless accepted (`gate --accept`).

A SQLite store made by the memgauge that ran this as the hand-run migration 0010_suite_run_gate
already has the column, and keeps it as it is.

Revision ID: 0011
Revises: 0010
"""

from __future__ import annotations

from alembic import op

from memgauge.store.revisions import columns_of

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Add the column with its check (one ALTER both dialects take as written)."""
    if "gate" in columns_of("suite_runs"):
        return
    op.execute(
        "ALTER TABLE suite_runs ADD COLUMN gate TEXT CONSTRAINT ck_suite_runs_gate"
        " CHECK (gate IS NULL OR gate IN ('pass', 'fail', 'accepted'))"
    )
