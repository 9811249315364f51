"""Aggregates of judged runs: stand-in values are kept out of means, panels get agreement."""

from __future__ import annotations

import json

import pytest

from memgauge.runs.suite_summary import summarize


def _rows(n: int) -> list[dict[str, object]]:
    return [
        {"subject": "s", "task": "t", "item_id": f"i{i}", "status": "completed", "score": None}
        for i in range(n)
    ]


def _verdict(i: int, evaluator: str, value: float, **kw: object) -> dict[str, object]:
    row: dict[str, object] = {
        "subject": "s",
        "task": "t",
        "item_id": f"i{i}",
        "evaluator": evaluator,
        "value": value,
        "passed": True,
        "error": None,
        "fallback": 0,
        "panel_passed": None,
    }
    return {**row, **kw}


def test_fallbacks_are_counted_apart_and_never_averaged_in() -> None:
    scores = [
        _verdict(0, "rubric", 1.0),
        _verdict(1, "rubric", 0.8),
        _verdict(2, "rubric", 0.5, passed=None, fallback=1),
    ]
    summary = summarize(_rows(3), scores, {"t": ["rubric"]})
    (row,) = summary["evaluators"]
    assert row["mean"] == pytest.approx(0.9)
    assert row["n_scored"] == 2
    assert row["n_fallback"] == 1
    assert row["mean_with_fallback"] == pytest.approx((1.0 + 0.8 + 0.5) / 3)


def test_panel_votes_give_percent_agreement_and_fleiss_kappa() -> None:
    votes = [[True, True, True], [True, True, False], [False, False, False], [True, False, False]]
    scores = [_verdict(i, "panel", 0.5, panel_passed=json.dumps(v)) for i, v in enumerate(votes)]
    (row,) = summarize(_rows(4), scores, {"t": ["panel"]})["evaluators"]
    agreement = row["agreement"]
    assert (agreement["n_items"], agreement["n_judges"]) == (4, 3)
    # per item: 1, 1/3, 1, 1/3
    assert agreement["percent_agreement"] == pytest.approx((1 + 1 / 3 + 1 + 1 / 3) / 4)
    # p_true = 6/12, p_false = 6/12: P_e = 0.5; kappa = (2/3 - 0.5) / 0.5
    assert agreement["fleiss_kappa"] == pytest.approx(1 / 3)


def test_no_data_is_none_not_zero() -> None:
    (row,) = summarize(_rows(1), [], {"t": ["rubric"]})["evaluators"]
    assert row["mean"] is None
    assert row["n_scored"] == 0
    assert "agreement" not in row
