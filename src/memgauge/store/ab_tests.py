"""Sequential A/B tests in the results store, in seed 002's `eval_ab_tests` (one row per test:
status, SPRT state and bounds, running sums, graduation settings) and `eval_ab_test_pairs` (the
paired per-query results fed to it), so a test continues across processes and days.

`feature_id` is the test's name. The running sums follow the test's metric: an MRR / RR test
fills `control_mrr_sum` and `treatment_mrr_sum`, an nDCG test the nDCG sums, and a test on
another metric leaves all four NULL (its sums are in the state). `sample_count` counts every
pair fed; the SPRT's own count, which stops at its decision, is in `state_json`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from memgauge.store.connection import SQLiteStore
from memgauge.store.seed_rows import ab_test_eval_row, metric_family, replace_eval_results

__all__ = ["STATUSES", "ABTestStore"]

STATUSES = ("running", "graduated", "rejected", "paused")

_PAIR_COLUMNS = (
    "query_id",
    "control",
    "treatment",
    "control_latency_ms",
    "treatment_latency_ms",
    "constitutional_delta",
)
_TEST_COLUMNS = (
    "feature_id",
    "status",
    "metric",
    "config_json",
    "state_json",
    "started_at",
    "updated_at",
    "graduated_at",
    "log_likelihood_ratio",
    "upper_bound",
    "lower_bound",
    "sample_count",
    "control_mrr_sum",
    "treatment_mrr_sum",
    "control_ndcg_sum",
    "treatment_ndcg_sum",
    "min_samples",
    "graduation_threshold",
)


def _now() -> str:
    return datetime.now(UTC).isoformat()


class ABTestStore(SQLiteStore):
    """`eval_ab_tests` and `eval_ab_test_pairs`."""

    def create(
        self,
        name: str,
        metric: str,
        config: Mapping[str, Any],
        state: Mapping[str, Any],
        *,
        upper_bound: float,
        lower_bound: float,
    ) -> bool:
        """Create a running test; False when one of that name exists."""
        family = metric_family(metric)
        mrr0 = 0.0 if family == "mrr" else None
        ndcg0 = 0.0 if family == "ndcg" else None
        now = _now()
        with self._conn:
            cur = self._conn.execute(
                "INSERT OR IGNORE INTO eval_ab_tests (feature_id, status, metric, config_json,"
                " state_json, started_at, updated_at, log_likelihood_ratio, upper_bound,"
                " lower_bound, sample_count, control_mrr_sum, treatment_mrr_sum,"
                " control_ndcg_sum, treatment_ndcg_sum, min_samples, graduation_threshold)"
                " VALUES (?, 'running', ?, ?, ?, ?, ?, ?, ?, ?, 0, ?, ?, ?, ?, ?, ?)",
                (
                    name,
                    metric,
                    json.dumps(dict(config)),
                    json.dumps(dict(state)),
                    now,
                    now,
                    float(state.get("log_lr", 0.0)),
                    upper_bound,
                    lower_bound,
                    mrr0,
                    mrr0,
                    ndcg0,
                    ndcg0,
                    int(config["min_samples"]),
                    float(config["improvement"]),
                ),
            )
        return cur.rowcount == 1

    def get(self, name: str) -> dict[str, Any] | None:
        """One test: every column, with `name`, `config` and `state` parsed."""
        row = self._conn.execute(
            f"SELECT {', '.join(_TEST_COLUMNS)} FROM eval_ab_tests WHERE feature_id = ?", (name,)
        ).fetchone()
        if row is None:
            return None
        out = dict(zip(_TEST_COLUMNS, row, strict=True))
        out["name"] = out["feature_id"]
        out["config"] = json.loads(out.pop("config_json"))
        out["state"] = json.loads(out.pop("state_json"))
        return out

    def names(self) -> list[str]:
        """Every test, oldest first."""
        return [
            str(r[0])
            for r in self._conn.execute("SELECT feature_id FROM eval_ab_tests ORDER BY id")
        ]

    def add(self, name: str, pairs: Sequence[Mapping[str, Any]], state: Mapping[str, Any]) -> None:
        """Append pairs, save the SPRT state and update the running sums, in one transaction."""
        c_sum = sum(float(p["control"]) for p in pairs)
        t_sum = sum(float(p["treatment"]) for p in pairs)
        with self._conn:
            start = self._conn.execute(
                "SELECT COALESCE(MAX(seq), 0) FROM eval_ab_test_pairs WHERE feature_id = ?",
                (name,),
            ).fetchone()[0]
            self._conn.executemany(
                f"INSERT INTO eval_ab_test_pairs (feature_id, seq, {', '.join(_PAIR_COLUMNS)})"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (name, start + i + 1, *(p.get(c) for c in _PAIR_COLUMNS))
                    for i, p in enumerate(pairs)
                ],
            )
            self._conn.execute(
                "UPDATE eval_ab_tests SET state_json = ?, log_likelihood_ratio = ?,"
                " sample_count = sample_count + ?,"
                " control_mrr_sum = control_mrr_sum + ?, treatment_mrr_sum = treatment_mrr_sum + ?,"
                " control_ndcg_sum = control_ndcg_sum + ?,"
                " treatment_ndcg_sum = treatment_ndcg_sum + ?, updated_at = ? WHERE feature_id = ?",
                (
                    json.dumps(dict(state)),
                    float(state.get("log_lr", 0.0)),
                    len(pairs),
                    c_sum,
                    t_sum,
                    c_sum,
                    t_sum,
                    _now(),
                    name,
                ),
            )
            self._project(name)

    def _project(self, name: str) -> None:
        """The test's `eval_results` row (run_type ab_test), in the caller's transaction."""
        test = self.get(name)
        if test is not None:
            row = ab_test_eval_row(test, self.pairs(name), str(test["updated_at"]))
            replace_eval_results(self._conn, str(row["run_id"]), [row])

    def set_status(self, name: str, status: str) -> None:
        """Set the status; `graduated_at` is the time it first graduated, and is cleared if
        the test leaves `graduated`."""
        if status not in STATUSES:
            raise ValueError(f"status must be one of {STATUSES}, not {status!r}")
        now = _now()
        with self._conn:
            self._conn.execute(
                "UPDATE eval_ab_tests SET graduated_at = CASE WHEN ? = 'graduated'"
                " THEN COALESCE(graduated_at, ?) END, status = ?, updated_at = ?"
                " WHERE feature_id = ?",
                (status, now, status, now, name),
            )
            self._project(name)

    def pairs(self, name: str) -> list[dict[str, Any]]:
        """The test's pairs in order."""
        rows = self._conn.execute(
            f"SELECT {', '.join(_PAIR_COLUMNS)} FROM eval_ab_test_pairs WHERE feature_id = ?"
            " ORDER BY seq",
            (name,),
        ).fetchall()
        return [dict(zip(_PAIR_COLUMNS, r, strict=True)) for r in rows]
