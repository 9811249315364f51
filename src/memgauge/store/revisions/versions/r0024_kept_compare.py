"""A big run's comparison with the suite's run before it, kept when the run is recorded
(`suite_run_compared`, `store.compared_rows`); and the searchable documents' new form, each
JSON string holding a double quote or a backslash as the page shows it (`store.search_docs`):
the documents that hold a backslash are made again (the others have no such string).

The rules are `store.stored_forms`' (frozen there: the live store writes the same documents).

Revision ID: 0024
Revises: 0023
"""

from __future__ import annotations

import itertools

import sqlalchemy as sa
from alembic import op

from memgauge.store.revisions import PACKED
from memgauge.store.stored_forms import INSERT_SEARCH, search_batches

revision = "0024"
down_revision = "0023"
branch_labels = None
depends_on = None


def _refill(bind: sa.Connection) -> None:
    """The documents holding a backslash, made again with the forms of this revision, run by
    run (an item whose document SQL text cannot hold gets none: searched value by value), a batch
    at a time."""
    find = "strpos" if bind.dialect.name == "postgresql" else "instr"

    def with_backslash(alias: str) -> str:
        return (
            " AND EXISTS (SELECT 1 FROM suite_run_search x WHERE x.run_id = :run"
            f" AND x.subject = {alias}.subject AND x.task = {alias}.task"
            f" AND x.item_id = {alias}.item_id AND {find}(x.doc, :backslash) > 0)"
        )

    run_ids = [r[0] for r in bind.execute(sa.text("SELECT run_id FROM suite_runs")).all()]
    for run_id in run_ids:
        params = {"run": run_id, "backslash": "\\"}
        batches = search_batches(
            bind, run_id, None, params, with_backslash("i"), with_backslash("s")
        )
        # the first batch is asked for before the old documents go: the rows it selects by
        # them are all read by then (`search_batches`)
        first = next(batches, [])
        bind.execute(
            sa.text(
                f"DELETE FROM suite_run_search WHERE run_id = :run AND {find}(doc, :backslash) > 0"
            ),
            params,
        )
        for rows in itertools.chain([first], batches):
            if rows:
                bind.execute(INSERT_SEARCH, rows)


def upgrade() -> None:
    """Add the kept comparisons' table, then make the documents with a backslash again."""
    op.create_table(
        "suite_run_compared",
        sa.Column("run_id", sa.Text(), nullable=False),
        sa.Column("baseline_id", sa.Text(), nullable=False),
        sa.Column("state_key", sa.Text(), nullable=False),
        sa.Column("payload_json", PACKED, nullable=False),
        sa.PrimaryKeyConstraint("run_id", "baseline_id"),
        sa.ForeignKeyConstraint(["run_id"], ["suite_runs.run_id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["baseline_id"], ["suite_runs.run_id"], ondelete="CASCADE"),
    )
    _refill(op.get_bind())
