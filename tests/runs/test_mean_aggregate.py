"""The mean summary of judged runs: stand-in values are kept out of means, panels get
agreement, no data is n/a."""

from __future__ import annotations

import pytest

from memgauge.aggregates.mean import summarize_items
from memgauge.data.records import ItemRecord, ScoreRecord


def _items(verdicts: list[list[ScoreRecord]]) -> list[ItemRecord]:
    return [
        ItemRecord(subject="s", task="t", item_id=f"i{i}", status="completed", scores=v)
        for i, v in enumerate(verdicts)
    ]


def test_fallbacks_are_the_number_opted_into_counted_and_flagged() -> None:
    items = _items(
        [
            [ScoreRecord(evaluator="rubric", value=1.0, passed=True)],
            [ScoreRecord(evaluator="rubric", value=0.8, passed=True)],
            [ScoreRecord(evaluator="rubric", value=0.5, fallback=True)],
        ]
    )
    _counts, _tasks, (row,) = summarize_items(items, {"t": ["rubric"]})
    # on_failure: neutral is opted into: the evaluator's one number counts the stand-in, says
    # how many there are, and has no CI (a stand-in is no draw from the judge's spread)
    assert row.mean == pytest.approx((1.0 + 0.8 + 0.5) / 3)
    assert (row.ci_low, row.ci_high) == (None, None)
    assert row.n_scored == 3
    assert row.n_fallback == 1
    assert row.mean_without_fallback == pytest.approx(0.9)


def test_panel_votes_give_percent_agreement_and_fleiss_kappa() -> None:
    votes = [[True, True, True], [True, True, False], [False, False, False], [True, False, False]]
    items = _items(
        [
            [ScoreRecord(evaluator="panel", value=0.5, passed=True, detail={"panel_passed": v})]
            for v in votes
        ]
    )
    (row,) = summarize_items(items, {"t": ["panel"]})[2]
    agreement = row.agreement
    assert agreement is not None
    assert (agreement["n_items"], agreement["n_judges"]) == (4, 3)
    # per item: 1, 1/3, 1, 1/3
    assert agreement["percent_agreement"] == pytest.approx((1 + 1 / 3 + 1 + 1 / 3) / 4)
    # p_true = 6/12, p_false = 6/12: P_e = 0.5; kappa = (2/3 - 0.5) / 0.5
    assert agreement["fleiss_kappa"] == pytest.approx(1 / 3)


def test_no_data_is_none_not_zero() -> None:
    (row,) = summarize_items(_items([[]]), {"t": ["rubric"]})[2]
    assert row.mean is None
    assert row.n_scored == 0
    assert row.agreement is None
