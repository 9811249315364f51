"""Each item's searchable document, `suite_run_search` (`store.search_docs`): the lower-case
text of every value the viewer's search looks in, so that a search of a 100,000-item run reads
one text an item (SQL's `instr`) instead of inflating 100,000 deflated outputs in Python.

The runs stored before get their documents here (the same rules, frozen: a migration never
changes); an item whose document SQL text cannot hold (a NUL, a lone surrogate) gets none and
is searched as before.

Revision ID: 0023
Revises: 0022
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from alembic import op

from memgauge.store.stored_forms import document

revision = "0023"
down_revision = "0022"
branch_labels = None
depends_on = None

_KEY = ("run_id", "subject", "task", "item_id")


def _fill(bind: sa.Connection) -> None:
    """Each item's document, run by run (one run's values in memory at a time)."""
    run_ids = [r[0] for r in bind.execute(sa.text("SELECT run_id FROM suite_runs")).all()]
    insert = sa.text(
        "INSERT INTO suite_run_search (run_id, subject, task, item_id, doc)"
        " VALUES (:run_id, :subject, :task, :item_id, :doc)"
    )
    for run_id in run_ids:
        values: dict[tuple[str, str, str], list[Any]] = {}
        for r in bind.execute(
            sa.text(
                "SELECT i.subject, i.task, i.item_id, i.category, i.input_json,"
                " i.expected_json, o.output_json FROM suite_run_items i"
                " LEFT JOIN suite_run_outputs o ON o.run_id = i.run_id AND o.subject = i.subject"
                " AND o.task = i.task AND o.item_id = i.item_id WHERE i.run_id = :run"
            ),
            {"run": run_id},
        ):
            values[(r[0], r[1], r[2])] = [r[2], *r[3:]]
        for r in bind.execute(
            sa.text(
                "SELECT subject, task, item_id, reason, error FROM suite_run_scores"
                " WHERE run_id = :run"
            ),
            {"run": run_id},
        ):
            found = values.get((r[0], r[1], r[2]))
            if found is not None:
                found += [r[3], r[4]]
        rows = []
        for (subject, task, item_id), vals in values.items():
            doc = document(vals)
            if doc is not None:
                rows.append(
                    {"run_id": run_id, "subject": subject, "task": task, "item_id": item_id}
                    | {"doc": doc}
                )
            if len(rows) >= 5000:
                bind.execute(insert, rows)
                rows = []
        if rows:
            bind.execute(insert, rows)


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
