"""Sequential A/B tests in the results store, in seed 002's `eval_ab_tests` (one row per test:
status, SPRT state and bounds, running sums, graduation settings) and `eval_ab_test_pairs` (the
paired per-query results fed to it), so a test continues across processes and days.

`feature_id` is the test's name. The running sums follow the test's metric: an MRR / RR test
fills `control_mrr_sum` and `treatment_mrr_sum`, an nDCG test the nDCG sums, and a test on
another metric leaves all four NULL (its sums are in the state). `sample_count` counts every
pair taken; the SPRT's own count, which stops at its decision, is in `state_json`. A pair is
taken once: `pair_key` (unique per test, revision 0015) names it, and a pair whose key the
test holds is skipped.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import sqlalchemy as sa

from memgauge._util.clock import utc_now
from memgauge.store.base import Store
from memgauge.store.dialect import insert_ignore
from memgauge.store.seed_rows import ab_test_eval_row, metric_family, replace_eval_results
from memgauge.store.tables import eval_ab_test_pairs as _pairs
from memgauge.store.tables import eval_ab_tests as _tests
from memgauge.store.tables import eval_flags as _flags

__all__ = ["STATUSES", "ABTestStore", "project", "update_config"]

STATUSES = ("running", "graduated", "rejected", "paused")

_PAIR_COLUMNS = (
    "query_id",
    "control",
    "treatment",
    "control_latency_ms",
    "treatment_latency_ms",
    "constitutional_delta",
)
#: every column of a test's row but its serial id (`get`'s keys, with `name`, `config`, `state`)
_TEST_COLUMNS = tuple(c.name for c in _tests.columns if c.name != "id")


class ABTestStore(Store):
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
        now = utc_now()
        values = {
            "feature_id": name,
            "status": "running",
            "metric": metric,
            "config_json": json.dumps(dict(config)),
            "state_json": json.dumps(dict(state)),
            "started_at": now,
            "updated_at": now,
            "log_likelihood_ratio": float(state.get("log_lr", 0.0)),
            "upper_bound": upper_bound,
            "lower_bound": lower_bound,
            "sample_count": 0,
            "control_mrr_sum": mrr0,
            "treatment_mrr_sum": mrr0,
            "control_ndcg_sum": ndcg0,
            "treatment_ndcg_sum": ndcg0,
            "min_samples": int(config["min_samples"]),
            "graduation_threshold": float(config["improvement"]),
        }
        with self._write_tx() as c:
            made = c.execute(
                insert_ignore(c, _tests, ["feature_id"]).returning(_tests.c.id), values
            ).first()
        return made is not None

    def get(self, name: str) -> dict[str, Any] | None:
        """One test: every column, with `name`, `config` and `state` parsed."""
        with self._read() as c:
            row = c.execute(
                sa.select(*(_tests.c[k] for k in _TEST_COLUMNS)).where(_tests.c.feature_id == name)
            ).first()
        return None if row is None else _test(row)

    def names(self) -> list[str]:
        """Every test, oldest first."""
        with self._read() as c:
            return [
                str(r[0]) for r in c.execute(sa.select(_tests.c.feature_id).order_by(_tests.c.id))
            ]

    def add(
        self,
        name: str,
        pairs: Sequence[Mapping[str, Any]],
        advance: Callable[[dict[str, Any], list[Mapping[str, Any]]], Mapping[str, Any]],
    ) -> list[Mapping[str, Any]]:
        """Append the pairs the test does not hold yet, save the SPRT state and update the
        running sums, in one transaction (which holds the test's row: two processes adding at
        once take turns, each seeing the other's pairs and state).

        A pair whose `pair_key` the test already holds, or which repeats an earlier pair of
        `pairs`, is skipped (a pair without a key is always new). `advance(test, new)` gives
        the state after the new pairs from the test as it stands under the lock (`get`'s
        dict: its `state`, and its `status`, which another process may have changed since
        the caller read it); it may refuse them. Returns the new pairs."""
        with self._write_tx() as c:
            c.execute(sa.select(_tests.c.id).where(_tests.c.feature_id == name).with_for_update())
            held = set(
                c.execute(
                    sa.select(_pairs.c.pair_key).where(
                        _pairs.c.feature_id == name, _pairs.c.pair_key.is_not(None)
                    )
                ).scalars()
            )
            fresh: list[Mapping[str, Any]] = []
            for p in pairs:
                key = p.get("pair_key")
                if key is not None:
                    if key in held:
                        continue
                    held.add(key)
                fresh.append(p)
            stored = c.execute(
                sa.select(*(_tests.c[k] for k in _TEST_COLUMNS)).where(_tests.c.feature_id == name)
            ).one()
            state = advance(_test(stored), fresh)
            pairs = fresh
            c_sum = sum(float(p["control"]) for p in pairs)
            t_sum = sum(float(p["treatment"]) for p in pairs)
            start = c.execute(
                sa.select(sa.func.coalesce(sa.func.max(_pairs.c.seq), 0)).where(
                    _pairs.c.feature_id == name
                )
            ).scalar_one()
            if pairs:
                c.execute(
                    sa.insert(_pairs),
                    [
                        {
                            "feature_id": name,
                            "seq": start + i + 1,
                            "shadow_run_id": p.get("shadow_run_id"),
                            "pair_key": p.get("pair_key"),
                            **{k: p.get(k) for k in _PAIR_COLUMNS},
                        }
                        for i, p in enumerate(pairs)
                    ],
                )
            t = _tests.c
            c.execute(
                sa.update(_tests)
                .where(t.feature_id == name)
                .values(
                    state_json=json.dumps(dict(state)),
                    log_likelihood_ratio=float(state.get("log_lr", 0.0)),
                    sample_count=t.sample_count + len(pairs),
                    control_mrr_sum=t.control_mrr_sum + c_sum,
                    treatment_mrr_sum=t.treatment_mrr_sum + t_sum,
                    control_ndcg_sum=t.control_ndcg_sum + c_sum,
                    treatment_ndcg_sum=t.treatment_ndcg_sum + t_sum,
                    updated_at=utc_now(),
                )
            )
            project(c, name)
        return fresh

    def set_status(self, name: str, status: str, *, expect: str | None = None) -> bool:
        """Set the status; `graduated_at` is the time it first graduated, and is cleared if
        the test leaves `graduated`. Graduating (from another status) rolls the feature flag
        of the same name, if any, out to 100%: flag, shadow runs and test are one workflow.

        With `expect`, only while the status is still `expect` (a compare-and-swap under the
        test's row lock): a decision drawn from what the caller read does not undo a change
        another process made since (`ab pause`, or a later decision). False when not set."""
        if status not in STATUSES:
            raise ValueError(f"status must be one of {STATUSES}, not {status!r}")
        now = utc_now()
        graduated = sa.func.coalesce(_tests.c.graduated_at, now) if status == "graduated" else None
        with self._write_tx() as c:
            before = c.execute(
                sa.select(_tests.c.status).where(_tests.c.feature_id == name).with_for_update()
            ).scalar()
            if expect is not None and before != expect:
                return False
            if status == "graduated" and before != "graduated":
                c.execute(
                    sa.update(_flags)
                    .where(_flags.c.feature_id == name)
                    .values(rollout_percent=100.0, updated_at=now)
                )
            c.execute(
                sa.update(_tests)
                .where(_tests.c.feature_id == name)
                .values(graduated_at=graduated, status=status, updated_at=now)
            )
            project(c, name)
        return True

    def last_shadow_run(self, name: str) -> int:
        """The newest `eval_shadow_runs` id fed to the test as a pair (0: none yet)."""
        with self._read() as c:
            n = c.execute(
                sa.select(sa.func.max(_pairs.c.shadow_run_id)).where(_pairs.c.feature_id == name)
            ).scalar()
        return int(n or 0)

    def pairs(self, name: str) -> list[dict[str, Any]]:
        """The test's pairs in order."""
        with self._read() as c:
            return _read_pairs(c, name)


def _test(row: Sequence[Any]) -> dict[str, Any]:
    out = dict(zip(_TEST_COLUMNS, row, strict=True))
    out["name"] = out["feature_id"]
    out["config"] = json.loads(out.pop("config_json"))
    out["state"] = json.loads(out.pop("state_json"))
    return out


def _read_pairs(c: sa.Connection, name: str) -> list[dict[str, Any]]:
    rows = c.execute(
        sa.select(*(_pairs.c[k] for k in _PAIR_COLUMNS))
        .where(_pairs.c.feature_id == name)
        .order_by(_pairs.c.seq)
    ).all()
    return [dict(zip(_PAIR_COLUMNS, r, strict=True)) for r in rows]


def project(c: sa.Connection, name: str) -> None:
    """Test `name`'s `eval_results` row (run_type ab_test), in the caller's transaction."""
    row = c.execute(
        sa.select(*(_tests.c[k] for k in _TEST_COLUMNS)).where(_tests.c.feature_id == name)
    ).first()
    if row is not None:
        test = _test(row)
        result = ab_test_eval_row(test, _read_pairs(c, name), str(test["updated_at"]))
        replace_eval_results(c, str(result["run_id"]), [result])


def update_config(c: sa.Connection, name: str, changes: Mapping[str, Any]) -> bool:
    """Set some of test `name`'s configuration (its flag's min_samples or threshold changed),
    in the caller's transaction, read and written under the test's row lock: two processes
    changing different settings at once keep both (each read of the whole configuration
    outside it lost the other's). False when there is no such test."""
    stored = c.execute(
        sa.select(_tests.c.config_json).where(_tests.c.feature_id == name).with_for_update()
    ).scalar()
    if stored is None:
        return False
    config = {**json.loads(stored), **changes}
    c.execute(
        sa.update(_tests)
        .where(_tests.c.feature_id == name)
        .values(
            config_json=json.dumps(config),
            min_samples=int(config["min_samples"]),
            graduation_threshold=float(config["improvement"]),
            updated_at=utc_now(),
        )
    )
    project(c, name)
    return True
