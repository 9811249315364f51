"""Each item's searchable document, `suite_run_search` (`store.search_docs`): the lower-case
text of every value the viewer's search looks in, so that a search of a 100,000-item run reads
one text an item (SQL's `instr`) instead of inflating 100,000 deflated outputs in Python.

The runs stored before get their documents here, by the rules the live store writes them
with (`stored_forms.search_batches`, one copy for both: a change there is a change here, see
its docstring), 5,000 at a time; an item whose document SQL text cannot hold (a NUL, a lone
surrogate) gets none and is searched as before.

Revision ID: 0023
Revises: 0022
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from memgauge.store.stored_forms import INSERT_SEARCH, search_batches

revision = "0023"
down_revision = "0022"
branch_labels = None
depends_on = None

_KEY = ("run_id", "subject", "task", "item_id")


def _fill(bind: sa.Connection) -> None:
    """Each item's document, run by run (one run's values in memory at a time, and 5,000 of
    its documents)."""
    run_ids = [r[0] for r in bind.execute(sa.text("SELECT run_id FROM suite_runs")).all()]
    for run_id in run_ids:
        for rows in search_batches(bind, run_id):
            bind.execute(INSERT_SEARCH, rows)


def upgrade() -> None:
    """Add the table, then fill it run by run."""
    bind = op.get_bind()
    op.create_table(
        "suite_run_search",
        *(sa.Column(c, sa.Text(), nullable=False) for c in _KEY),
        sa.Column("doc", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint(*_KEY),
        sa.ForeignKeyConstraint(
            list(_KEY), [f"suite_run_items.{c}" for c in _KEY], ondelete="CASCADE"
        ),
    )
    _fill(bind)
