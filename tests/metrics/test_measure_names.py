"""`is_measure`: the one test of a measure's name, shared by the IR aggregate and the pytest
plug-in, agrees with `parse_measure` on names it takes and names it refuses."""

from __future__ import annotations

import pytest

from memgauge import api
from memgauge.errors import UsageError
from memgauge.metrics import is_measure, parse_measure

NAMES = [
    "nDCG@10",
    "ndcg_cut_10",
    "Recall@5",
    "RR",
    "IPrec@0.1",
    "RBP(p=0.8)",
    "recall_any@5",
    "Recall",  # needs a cutoff
    "R-prec@5",  # takes none
    "IPrec@2",  # a recall level above 1
    "RBP(p=2)",
    "nDGC@10",  # a typo parse_measure hints at
    "accuracy",
    "",
]


@pytest.mark.parametrize("name", NAMES)
def test_is_measure_is_whether_parse_measure_takes_the_name(name: str) -> None:
    try:
        parse_measure(name)
        takes = True
    except UsageError:
        takes = False
    assert is_measure(name) is takes
    assert api.is_measure(name) is takes


def test_the_names_cover_both_answers() -> None:
    assert {is_measure(n) for n in NAMES} == {True, False}
