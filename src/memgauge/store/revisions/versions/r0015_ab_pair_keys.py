"""A/B test pairs are counted once: `eval_ab_test_pairs.pair_key`, unique per test.

A pair's key is what identifies it: a pair from a file, its query id and every value it
carries (`online.ab.pair_key`); a pair from a shadow run, that run's row (`shadow:<id>`).
`ab add` skips the pairs whose key the test holds, so adding a file twice counts it once.

Rows stored before get their key where they have one (a query id, or a shadow row); where an
earlier memgauge stored the same pair twice, the first keeps the key and the later copies
stay as they were counted (NULL key): this migration recognises them from now on, it does not
rewrite a test's history or its SPRT state.

Revision ID: 0015
Revises: 0014
"""

from __future__ import annotations

import json
from typing import Any

import sqlalchemy as sa
from alembic import op

from memgauge.store.revisions import columns_of

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None

_VALUES = (
    "control",
    "treatment",
    "control_latency_ms",
    "treatment_latency_ms",
    "constitutional_delta",
)


def _key(row: sa.Row[Any]) -> str | None:
    """`online.ab.pair_key` as of this revision (frozen here: a migration never changes)."""
    m = row._mapping
    if m["shadow_run_id"] is not None:
        return f"shadow:{m['shadow_run_id']}"
    if m["query_id"] is None:
        return None
    values = [None if m[k] is None else float(m[k]) for k in _VALUES]
    return json.dumps([str(m["query_id"]), *values], separators=(",", ":"))


def upgrade() -> None:
    """Add the key column, fill it for the rows that have a key, and make it unique per test
    (each step skipped where a store already has it: an older memgauge's record of the
    revision may lag its schema)."""
    bind = op.get_bind()
    inspector = sa.inspect(bind)
    if "pair_key" not in columns_of("eval_ab_test_pairs"):
        op.add_column("eval_ab_test_pairs", sa.Column("pair_key", sa.Text(), nullable=True))
    pairs = sa.table(
        "eval_ab_test_pairs",
        *(
            sa.column(c)
            for c in ("feature_id", "seq", "query_id", *_VALUES, "shadow_run_id", "pair_key")
        ),
    )
    rows = bind.execute(sa.select(pairs).order_by(pairs.c.feature_id, pairs.c.seq)).all()
    seen = {(r.feature_id, r.pair_key) for r in rows if r.pair_key is not None}
    keyed: list[dict[str, Any]] = []
    for row in rows:
        key = None if row.pair_key is not None else _key(row)
        if key is not None and (row.feature_id, key) not in seen:
            seen.add((row.feature_id, key))
            keyed.append({"f": row.feature_id, "s": row.seq, "k": key})
    if keyed:
        bind.execute(
            sa.update(pairs)
            .where(pairs.c.feature_id == sa.bindparam("f"), pairs.c.seq == sa.bindparam("s"))
            .values(pair_key=sa.bindparam("k")),
            keyed,
        )
    if "ux_eval_ab_test_pairs_key" not in {
        i["name"] for i in inspector.get_indexes("eval_ab_test_pairs")
    }:
        op.create_index(
            "ux_eval_ab_test_pairs_key",
            "eval_ab_test_pairs",
            ["feature_id", "pair_key"],
            unique=True,
        )
