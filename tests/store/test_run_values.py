"""A run's values as kept for comparing runs (`item_rows.replace_values`): each item's value,
the mean of its repeats' where it was asked more than once, read from the verdicts as stored,
with or without repeats in the run."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import sqlalchemy as sa

from memgauge.data.records import ItemRecord, RunPlan, RunRecord, ScoreRecord
from memgauge.store import item_rows
from memgauge.store.suite_runs import SuiteRunStore


def _stored(store: SuiteRunStore, run_id: str) -> item_rows.MeasureValues:
    with store._write() as c:
        item_rows.replace_values(c, run_id)
        rows = c.execute(
            sa.text(
                "SELECT subject, task, evaluator, item_ids_json, values_f8 FROM suite_run_values"
                " WHERE run_id = :run"
            ),
            {"run": run_id},
        ).all()
        joined = item_rows.measure_values(c.execute(item_rows.SCORES_OF_RUN, {"run": run_id}))
    kept = {
        (r[0], r[1], r[2]): (item_rows.loads_item(r[3]), list(memoryview(r[4]).cast("d")))
        for r in rows
    }
    assert kept.keys() == joined.keys()
    for key, (ids, values) in joined.items():
        assert kept[key][0] == ids
        assert kept[key][1] == pytest.approx(list(values), nan_ok=True)
    return joined


def _run(tmp_path: Path, repeats: bool) -> SuiteRunStore:
    run = RunRecord(
        run_id="r", suite_name="s", suite_sha256="0" * 64, suite={"name": "s"}, status="queued"
    )
    # an id that ends as a repeat's would, on an item asked once: kept as it is
    ids = [("a", 0), ("b#r1", 0)] + ([("a#r1", 1), ("a#r2", 2)] if repeats else [])
    items = [
        ItemRecord(subject="s", task="t", item_id=i, seq=n, repeat=r)
        for n, (i, r) in enumerate(ids)
    ]
    store = SuiteRunStore(tmp_path / "r.db")
    store.create_run(run, RunPlan({"s": {}}, [{"task": "t", "kind": "qa", "n_items": 2}], items))
    values = {"a": 1.0, "b#r1": 0.25, "a#r1": 0.5, "a#r2": None}
    store.record_items(
        "r",
        [
            it.model_copy(
                update={
                    "status": "completed",
                    "output": "x",
                    "scores": [
                        ScoreRecord(evaluator="e", value=values[it.item_id]),
                        ScoreRecord(evaluator="f", value=None, error="boom"),
                    ],
                }
            )
            for it in items
        ],
    )
    return store


@pytest.mark.parametrize("repeats", [False, True])
def test_the_values_are_each_items_mean_of_its_repeats(tmp_path: Path, repeats: bool) -> None:
    store = _run(tmp_path, repeats)
    with store:
        found = _stored(store, "r")
    ids, values = found[("s", "t", "e")]
    assert ids == ["a", "b#r1"]
    # a repeat not scored is left out of its item's mean
    assert list(values) == [0.75 if repeats else 1.0, 0.25]
    _, errors = found[("s", "t", "f")]
    assert all(math.isnan(v) for v in errors)
