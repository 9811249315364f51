"""Feature flags in the results store: seed 002's `EvalFeatureFlag` (section 4.3) in
`eval_flags`, one row per flag (revision 0013).

Columns: `feature_id` (the flag's name, seed 002's `flagName`; also the name of its A/B test in
`eval_ab_tests` and of its shadow experiment in `eval_shadow_runs`), `rollout_percent` (0-100,
the share of identities the flag is on for), `shadow_enabled` (0/1), `shadow_percent` (0-100,
the share of queries shadowed while shadowing is on), `min_samples` and `graduation_threshold`
(the A/B test's pairs before graduation and minimum improvement), `feed_ab` (0/1: the flag's
shadow runner feeds its A/B test by itself), `created_at`, `updated_at`.

The flag's test state is not copied here: `flags()` reads it from the A/B test's row (status,
pairs fed, decision), and graduating the test sets the rollout to 100 (`ab_tests.set_status`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import sqlalchemy as sa

from memgauge._util.clock import utc_now
from memgauge.store.ab_tests import update_config
from memgauge.store.base import Store
from memgauge.store.dialect import insert_ignore
from memgauge.store.tables import eval_ab_tests as _tests
from memgauge.store.tables import eval_flags as _flags
from memgauge.store.url import FLAGS

__all__ = ["FLAG_FIELDS", "FlagStore"]

#: the settable columns
FLAG_FIELDS = (
    "rollout_percent",
    "shadow_enabled",
    "shadow_percent",
    "min_samples",
    "graduation_threshold",
    "feed_ab",
)
_BOOLEAN = ("shadow_enabled", "feed_ab")


def _flag(row: sa.Row[Any]) -> dict[str, Any]:
    out = {"name": row.feature_id, **{k: getattr(row, k) for k in FLAG_FIELDS}}
    for k in _BOOLEAN:
        out[k] = bool(out[k])
    out.update(created_at=row.created_at, updated_at=row.updated_at)
    test = None
    if row.status is not None:
        state = json.loads(row.state_json)
        test = {
            "status": row.status,
            "pairs": row.sample_count,
            "decision": state.get("decision"),
            "log_lr": state.get("log_lr"),
            "graduated_at": row.graduated_at,
        }
    out["test"] = test
    return out


class FlagStore(Store):
    """`eval_flags`, read with each flag's A/B test state."""

    RECORDS = FLAGS

    def create(self, name: str, values: Mapping[str, Any]) -> bool:
        """Create flag `name` with `values` (every one of FLAG_FIELDS); False when it exists."""
        now = utc_now()
        row = {"feature_id": name, **{k: values[k] for k in FLAG_FIELDS}}
        row.update({k: int(bool(row[k])) for k in _BOOLEAN}, created_at=now, updated_at=now)
        with self._write_tx() as c:
            made = c.execute(
                insert_ignore(c, _flags, ["feature_id"]).returning(_flags.c.feature_id), row
            ).first()
        return made is not None

    def update(
        self, name: str, values: Mapping[str, Any], test_config: Mapping[str, Any] | None = None
    ) -> bool:
        """Set some of FLAG_FIELDS and, with `test_config`, that much of its A/B test's
        configuration (`ab_tests.update_config`), in one transaction: a failure between leaves
        neither changed. False when there is no such flag."""
        row = {k: v for k, v in values.items() if k in FLAG_FIELDS}
        row.update({k: int(bool(row[k])) for k in _BOOLEAN if k in row})
        with self._write_tx() as c:
            if test_config:  # the test's row first, as graduating takes the two (no deadlock)
                c.execute(
                    sa.select(_tests.c.id).where(_tests.c.feature_id == name).with_for_update()
                )
            done = c.execute(
                sa.update(_flags)
                .where(_flags.c.feature_id == name)
                .values(**row, updated_at=utc_now())
            )
            if done.rowcount and test_config:
                update_config(c, name, test_config)
        return bool(done.rowcount)

    def flags(self, name: str | None = None) -> list[dict[str, Any]]:
        """Every flag (or only `name`), by name, each with its A/B test's state (`test`: None
        when it has none)."""
        t = _tests.c
        query = (
            sa.select(_flags, t.status, t.sample_count, t.state_json, t.graduated_at)
            .select_from(_flags.outerjoin(_tests, t.feature_id == _flags.c.feature_id))
            .order_by(_flags.c.feature_id)
        )
        if name is not None:
            query = query.where(_flags.c.feature_id == name)
        with self._read() as c:
            return [_flag(r) for r in c.execute(query).all()]
