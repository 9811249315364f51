"""Shadow-run comparisons in the results store: seed 002's `eval_shadow_runs`, one row per
shadowed query (`memgauge.store.seed_rows` says which column holds what), and
`eval_shadow_drops`, how many shadowed queries a runner's full queue dropped."""

from __future__ import annotations

import threading
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from memgauge.store.base import Store
from memgauge.store.dialect import upsert
from memgauge.store.seed_rows import (
    SHADOW_CONTEXT,
    SHADOW_KEYS,
    replace_eval_results,
    shadow_eval_row,
    shadow_row,
    shadow_values,
)
from memgauge.store.tables import eval_shadow_drops as _drops
from memgauge.store.tables import eval_shadow_runs as _shadow
from memgauge.store.url import StoreURL

__all__ = ["ShadowStore"]


class ShadowStore(Store):
    """`eval_shadow_runs`: record comparisons (from any thread) and read them back."""

    threads = True

    def __init__(
        self, where: str | Path | StoreURL | None = None, *, read_only: bool = False
    ) -> None:
        super().__init__(where, read_only=read_only)
        self._lock = threading.Lock()

    def record_shadow(self, experiment: str, row: Mapping[str, Any]) -> None:
        """Keep one comparison."""
        values = shadow_values(experiment, row, datetime.now(UTC).isoformat())
        values.update({k: row.get(k) for k in SHADOW_CONTEXT})
        with self._lock, self._write_tx() as c:
            c.execute(sa.insert(_shadow), values)

    def record_shadow_dropped(self, experiment: str, n: int) -> None:
        """Add `n` to the queries of `experiment` a full queue dropped."""
        now = datetime.now(UTC).isoformat()
        with self._lock, self._write_tx() as c:
            c.execute(
                upsert(c, _drops, ["feature_id"], add=["dropped"]),
                {"feature_id": experiment, "dropped": n, "updated_at": now},
            )

    def shadow_dropped(self, experiment: str) -> int:
        """How many shadowed queries of `experiment` were dropped (the queue was full)."""
        with self._lock, self._read() as c:
            n = c.execute(
                sa.select(_drops.c.dropped).where(_drops.c.feature_id == experiment)
            ).scalar()
        return int(n or 0)

    def shadow_pairs(self, experiment: str, after_id: int = 0) -> list[dict[str, Any]]:
        """The comparisons of `experiment` after row `after_id` whose treatment answered, oldest
        first: `id`, `query_id`, each arm's RR and nDCG (None where the query had no
        judgments) and latency, for a sequential test to take as pairs."""
        keys = ("id", "query_id", *SHADOW_CONTEXT[4:], "control_latency_ms", "treatment_latency_ms")
        with self._lock, self._read() as c:
            rows = c.execute(
                sa.select(*(_shadow.c[k] for k in keys))
                .where(
                    _shadow.c.feature_id == experiment,
                    _shadow.c.error.is_(None),
                    _shadow.c.id > after_id,
                )
                .order_by(_shadow.c.id)
            ).all()
        return [dict(zip(keys, r, strict=True)) for r in rows]

    def shadow_rows(self, experiment: str) -> list[dict[str, Any]]:
        """Every comparison of `experiment` whose treatment answered, oldest first, with the
        keys `ShadowRunner` recorded, and the `intent` it was recorded with."""
        with self._lock, self._read() as c:
            rows = c.execute(
                sa.select(*(_shadow.c[k] for k in SHADOW_KEYS), _shadow.c.intent)
                .where(_shadow.c.feature_id == experiment, _shadow.c.error.is_(None))
                .order_by(_shadow.c.id)
            ).all()
        return [{**shadow_row(r[:-1]), "intent": r[-1]} for r in rows]

    def shadow_errors(self, experiment: str) -> int:
        """How many treatment calls failed."""
        with self._lock, self._read() as c:
            n = c.execute(
                sa.select(sa.func.count()).where(
                    _shadow.c.feature_id == experiment, _shadow.c.error.is_not(None)
                )
            ).scalar_one()
        return int(n)

    def shadow_errors_by_intent(self, experiment: str) -> dict[str | None, int]:
        """How many treatment calls failed, per intent (None: recorded with no intent)."""
        with self._lock, self._read() as c:
            rows = c.execute(
                sa.select(_shadow.c.intent, sa.func.count())
                .where(_shadow.c.feature_id == experiment, _shadow.c.error.is_not(None))
                .group_by(_shadow.c.intent)
            ).all()
        return {r[0]: int(r[1]) for r in rows}

    def experiments(self) -> list[str]:
        """Experiment names (with a comparison or a dropped query)."""
        with self._lock, self._read() as c:
            rows = c.execute(
                sa.union(sa.select(_shadow.c.feature_id), sa.select(_drops.c.feature_id))
            ).all()
        return sorted({str(r[0]) for r in rows})

    def project(self, experiment: str) -> None:
        """Summarize `experiment` into seed 002's `eval_results` (one row, run_type shadow):
        done when its summary is read, off the recording path."""
        rows = self.shadow_rows(experiment)
        summary = shadow_eval_row(experiment, rows, datetime.now(UTC).isoformat())
        with self._lock, self._write_tx() as c:
            replace_eval_results(c, f"shadow:{experiment}", [summary])
