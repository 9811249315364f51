"""`is_measure`: the one test of a measure's name, shared by the IR aggregate and the pytest
plug-in, agrees with `parse_measure` on names it takes and names it refuses."""

from __future__ import annotations

import re
from typing import Any

import pytest

from memgauge import api
from memgauge.errors import UsageError
from memgauge.metrics import Measure, evaluate, is_measure, parse_measure

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


@pytest.mark.parametrize(("name", "at"), [("RBP", "@10"), ("RBP_resid", "")])
def test_a_measure_built_by_hand_names_and_uses_the_default_persistence(name: str, at: str) -> None:
    """`Measure("RBP", 10)` is `RBP@10` as parsed: the same name (with the persistence it uses,
    ir_measures' 0.8) and the same value."""
    by_hand, parsed = Measure(name, int(at[1:]) if at else None), parse_measure(name + at)
    assert str(by_hand) == str(parsed) == f"{name}(p=0.8){at}"
    assert by_hand == parsed
    qrels = {"q1": {"a": 2, "b": 0}, "q2": {"c": 2}}
    run = {"q1": {"a": 1.0, "b": 2.0, "x": 0.5}, "q2": {"y": 2.0, "c": 1.0}}
    hand = evaluate(qrels, run, [by_hand])
    assert hand.aggregate() == evaluate(qrels, run, [parsed]).aggregate()
    assert hand.aggregate()[str(parsed)] > 0


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (("IPrec",), "give its recall level from 0 to 1"),
        (("IPrec", None, 1.5), "give its recall level from 0 to 1"),
        (("IPrec", 5, 0.5), "takes no cutoff"),
        (("P",), "needs a cutoff, e.g. P@10"),
        (("Bpref", 10), "takes no cutoff"),
        (("nDCG", 0), "the cutoff must be 1 or more"),
        (("nDGC", 10), "not a measure"),
    ],
)
def test_a_measure_built_by_hand_holds_to_what_the_parser_holds_a_name_to(
    args: tuple[Any, ...], says: str
) -> None:
    """`Measure("IPrec")` printed `IPrec@None`, `Measure("P")` was a P with no cutoff that no
    parser reads back: each is refused as `parse_measure` refuses its text."""
    with pytest.raises(ValueError, match=re.escape(says)):
        Measure(*args)


def test_every_measure_built_by_hand_prints_a_name_the_parser_reads_back() -> None:
    for text in ("IPrec@0.25", "P@5", "nDCG", "R-prec", "RBP(p=0.5)@10", "AP(rel=2)"):
        m = parse_measure(text)
        again = Measure(m.name, m.cutoff, m.param, m.options)
        assert parse_measure(str(again)) == again == m
