"""`memgauge metrics`: nearest-name suggestions, trec_eval's layout beside its conventions, and
run-level measures kept out of per-query averages."""

from __future__ import annotations

from pathlib import Path

import pytest

from memgauge.aggregates.ir import IRAggregate
from memgauge.cli.main import main
from memgauge.errors import UsageError
from memgauge.scorers.retrieval import RetrievalMeasure

DATA = Path(__file__).resolve().parents[1] / "data" / "trec_eval"
FILES = [str(DATA / "qrels.test"), str(DATA / "results.test")]


@pytest.mark.parametrize(
    ("typed", "meant"),
    [("nDGC@10", "nDCG@10"), ("bperf", "Bpref"), ("ndgc_cut_10", "nDCG@10"), ("RPB", "RBP")],
)
def test_an_unknown_measure_exits_2_with_the_nearest_name(
    capsys: pytest.CaptureFixture[str], typed: str, meant: str
) -> None:
    assert main(["metrics", *FILES, "-m", typed]) == 2
    err = capsys.readouterr().err
    assert f"unknown measure '{typed}' (did you mean '{meant}" in err
    assert "Traceback" not in err


@pytest.mark.parametrize("typed", ["nDCG@x", "nDGC@x", "ndcg_cut_x", "RBP(p)x", "Recall@"])
def test_a_known_name_with_no_cutoff_it_can_take_exits_2(
    capsys: pytest.CaptureFixture[str], typed: str
) -> None:
    """The guess for a misspelt name is parsed without a guess of its own: a name whose cutoff
    is no number ended in a RecursionError (exit 70)."""
    assert main(["metrics", *FILES, "-m", typed]) == 2
    err = capsys.readouterr().err
    assert f"measure '{typed}'" in err
    assert "Traceback" not in err


def test_trec_evals_layout_keeps_the_conventions_beside_it(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """stdout diffs clean against trec_eval's; the conventions still print, on stderr."""
    args = ["--conventions", "trec_eval", *FILES, "-m", "P@5", "-m", "Judged@10"]
    assert main(["metrics", *args]) == 0
    out, err = capsys.readouterr()
    assert out == "P_5                   \tall\t0.2667\nJudged@10             \tall\t1.0000\n"
    assert err.startswith("conventions: relevant: grade >= 1, gain: linear")
    assert "queries: 3 judged, 3 scored" in err


def test_memgauge_layout_prints_counts_as_integers(capsys: pytest.CaptureFixture[str]) -> None:
    args = [*FILES, "-m", "NumRet", "-m", "NumRel", "-m", "SetP", "--rel-threshold", "1"]
    assert main(["metrics", *args]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[:3] == ["NumRet  all  1500", "NumRel  all  561", "SetP    all  0.0873"]


@pytest.mark.parametrize("measure", ["gm_map", "NumRet", "num_rel_ret", "NumQ"])
def test_run_level_numbers_are_not_averaged_per_query_in_suites(measure: str) -> None:
    """A mean of per-query gm_map would be MAP under another name; of NumRet, no score."""
    with pytest.raises(UsageError, match="run-level number"):
        IRAggregate(measures=[measure])
    with pytest.raises(UsageError, match="run-level number"):
        RetrievalMeasure(measure=measure)
