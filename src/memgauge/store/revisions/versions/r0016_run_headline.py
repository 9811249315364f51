"""A run's headline beside its summary: `suite_runs.headline_json`, the summary without its
aggregates' per-query detail (`memgauge.store.headline`), so that the run page, the gate's
baseline and a suite's trends need not parse every query of every run; and an index of a
run's items in run order (`idx_suite_run_items_seq`), so that a page of a 100,000-item run's
items is read from it rather than every item sorted for each page.

The runs stored before get theirs here (the same rule, frozen: a migration never changes);
a run with no summary keeps NULL, and a reader falls back to the summary where it is NULL.

Revision ID: 0016
Revises: 0015
"""

from __future__ import annotations

import json
from typing import Any

import sqlalchemy as sa
from alembic import op

from memgauge.store.revisions import PACKED, columns_of
from memgauge.store.stored_forms import packed, unpacked

revision = "0016"
down_revision = "0015"
branch_labels = None
depends_on = None


def _headline(summary: dict[str, Any]) -> dict[str, Any]:
    for agg in summary.get("aggregates") or ():
        # the systems of an aggregate stored with its facts (form 3) or its detail (before)
        systems = (agg.get("facts") or agg.get("detail") or {}).get("systems")
        if isinstance(systems, list):
            for system in systems:
                if isinstance(system, dict):
                    system.pop("per_query", None)
    return summary


def upgrade() -> None:
    """Add the column and the index (each skipped where a store already has it), then fill
    the column run by run."""
    bind = op.get_bind()
    inspector = sa.inspect(bind)
    if "idx_suite_run_items_seq" not in {
        i["name"] for i in inspector.get_indexes("suite_run_items")
    }:
        op.create_index(
            "idx_suite_run_items_seq", "suite_run_items", ["run_id", "subject", "task", "seq"]
        )
    if "headline_json" not in columns_of("suite_runs"):
        op.add_column("suite_runs", sa.Column("headline_json", PACKED, nullable=True))
    runs = sa.table(
        "suite_runs",
        sa.column("run_id"),
        sa.column("summary_json", PACKED),
        sa.column("headline_json", PACKED),
    )
    ids = bind.execute(
        sa.select(runs.c.run_id).where(
            runs.c.summary_json.is_not(None), runs.c.headline_json.is_(None)
        )
    ).all()
    for (run_id,) in ids:  # one summary in memory at a time: a big run's is tens of MB
        raw = bind.execute(
            sa.select(runs.c.summary_json).where(runs.c.run_id == run_id)
        ).scalar_one()
        text = json.dumps(
            _headline(json.loads(unpacked(raw))), separators=(",", ":"), ensure_ascii=False
        )
        bind.execute(
            sa.update(runs).where(runs.c.run_id == run_id).values(headline_json=packed(text))
        )
