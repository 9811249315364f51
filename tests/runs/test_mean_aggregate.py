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


def test_an_evaluator_an_aggregate_measures_alike_shows_its_interval_without_a_bootstrap(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The summary shows one interval for one number (`_align_evaluators`): an evaluator row
    whose count and mean are an aggregate's gets the aggregate's interval, so its own
    bootstrap (10 ms for LoCoMo's 1,536 values, seven measures) is not drawn to be thrown
    away; a row that differs is bootstrapped as before."""
    from memgauge.aggregates import mean
    from memgauge.data.records import MeasureValue

    values = [1.0, 0.0, 0.5, 0.25]
    items = _items([[ScoreRecord(evaluator="RR@5", value=v)] for v in values])
    expected_ci = mean.mean_ci(values, 0)
    alike = MeasureValue(
        subject="s", task="t", name="RR@5", value=0.4375, ci_low=0.1, ci_high=0.9, n_scored=4
    )
    drawn: list[int] = []
    real = mean.bootstrap_ci

    def counted(values: object, **kw: object) -> object:
        drawn.append(1)
        return real(values, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(mean, "bootstrap_ci", counted)
    _, _, (row,) = summarize_items(items, {"t": ["RR@5"]}, measured={("s", "t", "RR@5"): alike})
    assert (row.mean, row.ci_low, row.ci_high, row.n_scored) == (0.4375, 0.1, 0.9, 4)
    assert drawn == []  # RR@5's interval is the aggregate's (the items carry no score)
    other = alike.model_copy(update={"value": 0.5})  # another number: its own interval
    _, _, (row,) = summarize_items(items, {"t": ["RR@5"]}, measured={("s", "t", "RR@5"): other})
    assert (row.ci_low, row.ci_high) == (expected_ci["ci_low"], expected_ci["ci_high"])
    assert len(drawn) == 1


def test_each_label_reads_an_items_first_verdict_of_it_in_one_pass() -> None:
    items = _items(
        [
            # an evaluator given twice in an item: its first verdict counts, as `verdict` finds
            [
                ScoreRecord(evaluator="a", value=1.0, passed=True),
                ScoreRecord(evaluator="b", value=0.0, error="boom"),
                ScoreRecord(evaluator="a", value=0.0, passed=False),
            ],
            [ScoreRecord(evaluator="b", value=0.5), ScoreRecord(evaluator="a", value=0.5)],
            [],
        ]
    )
    a, b, c = summarize_items(items, {"t": ["a", "b", "c"]})[2]
    assert (a.mean, a.n_scored, a.n_passed, a.pass_rate) == (0.75, 2, 1, 1.0)
    assert (b.mean, b.n_scored, b.n_failed) == (0.5, 1, 1)
    assert (c.mean, c.n_scored, c.n_failed) == (None, 0, 0)
    # the rows a scan of each item per label gives
    for row in (a, b, c):
        got = [v for r in items if (v := r.verdict(row.evaluator)) is not None]
        assert row.n_scored == sum(1 for v in got if v.value is not None and not v.error)


def test_one_pass_over_a_labels_verdicts_counts_each_kind_as_before() -> None:
    # errors and verdicts without a value are failed, a skip the user chose is neither scored
    # nor failed, a stand-in is counted apart, pass/fail calls leave stand-ins out, and a
    # panel's votes are read only where they were given
    items = _items(
        [
            [ScoreRecord(evaluator="e", value=1.0, passed=True, detail={"panel_passed": [1, 1]})],
            [ScoreRecord(evaluator="e", value=0.0, passed=False, detail={"panel_passed": []})],
            [ScoreRecord(evaluator="e", value=None, error="judge down")],
            [ScoreRecord(evaluator="e", value=0.5, error="partly")],
            [ScoreRecord(evaluator="e", value=None)],
            [ScoreRecord(evaluator="e", value=None, detail={"skipped": True})],
            [ScoreRecord(evaluator="e", value=0.5, passed=True, fallback=True)],
            [ScoreRecord(evaluator="e", value=0.25, detail={"panel_passed": [0, 1]})],
        ]
    )
    (row,) = summarize_items(items, {"t": ["e"]})[2]
    assert row.n_failed == 3
    assert row.n_scored == 4
    assert row.n_fallback == 1
    assert row.mean_without_fallback == pytest.approx((1.0 + 0.0 + 0.25) / 3)
    assert (row.n_passed, row.pass_rate) == (1, 0.5)
    assert row.agreement is not None
    assert row.agreement["n_items"] == 2
    assert row.agreement["percent_agreement"] == pytest.approx(0.5)
