"""Agreement statistics against published worked examples."""

from __future__ import annotations

import pytest

from memgauge.stats.agreement import calibrate, cohen_kappa, fleiss_kappa, percent_agreement

# Fleiss (1971) as worked on Wikipedia: 10 subjects, 14 raters, 5 categories -> kappa 0.210
FLEISS_TABLE = [
    [0, 0, 0, 0, 14],
    [0, 2, 6, 4, 2],
    [0, 0, 3, 5, 6],
    [0, 3, 9, 2, 0],
    [2, 2, 8, 1, 1],
    [7, 7, 0, 0, 0],
    [3, 2, 6, 3, 0],
    [2, 5, 3, 2, 2],
    [6, 5, 2, 1, 0],
    [0, 2, 2, 3, 7],
]


def _labels(table: list[list[int]]) -> list[list[int]]:
    return [[c for c, n in enumerate(row) for _ in range(n)] for row in table]


def test_fleiss_kappa_matches_the_worked_example() -> None:
    ratings = _labels(FLEISS_TABLE)
    assert fleiss_kappa(ratings) == pytest.approx(0.210, abs=5e-4)
    assert percent_agreement(ratings) == pytest.approx(0.378, abs=5e-4)


def test_cohen_kappa_matches_the_worked_example() -> None:
    # Wikipedia: 20 yes/yes, 5 yes/no, 10 no/yes, 15 no/no -> p_o 0.7, p_e 0.5, kappa 0.4
    a = ["y"] * 25 + ["n"] * 25
    b = ["y"] * 20 + ["n"] * 5 + ["y"] * 10 + ["n"] * 15
    assert cohen_kappa(a, b) == pytest.approx(0.4)


def test_edge_cases_say_none_not_zero() -> None:
    assert cohen_kappa([], []) is None
    assert fleiss_kappa([]) is None
    assert fleiss_kappa([[1, 1], [1, 1]]) is None  # one category only: chance agreement is 1
    assert percent_agreement([[1, 1], [1, 1]]) == 1.0
    assert cohen_kappa(["a", "a"], ["a", "a"]) == 1.0
    with pytest.raises(ValueError, match="same number"):
        fleiss_kappa([[1, 2], [1, 2, 2]])


def test_calibration_reports_confusion_accuracy_ci_and_kappa() -> None:
    human = ["yes"] * 40 + ["no"] * 10
    judge = ["yes"] * 36 + ["no"] * 4 + ["no"] * 8 + ["yes"] * 2
    cal = calibrate(human, judge)
    assert cal.labels == ["no", "yes"]
    assert cal.confusion == [[8, 2], [4, 36]]
    assert cal.accuracy == pytest.approx(44 / 50)
    assert cal.accuracy_ci is not None
    low, high = cal.accuracy_ci
    assert low < 0.88 < high
    assert (round(low, 3), round(high, 3)) == (0.762, 0.944)  # Wilson 95% for 44/50
    assert cal.kappa == pytest.approx(cohen_kappa(human, judge))
