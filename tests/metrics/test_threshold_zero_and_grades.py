"""Issue 12's minimal cases: threshold 0 as trec_eval -l0, grades that do not fit int8, exp gain's
limit. Expected values are trec_eval 10.0's (`trec_eval -l0 -m recall.10 -m map_cut.10`, and
`-m ndcg_cut.10`), written out by formula here."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from memgauge.cli.main import main
from memgauge.metrics import MetricConfig, evaluate, evaluate_judged, evaluate_ranked
from memgauge.metrics import agent as agent_metrics
from memgauge.metrics.arrays import from_arrays
from memgauge.metrics.ranking import from_ranked, from_run, grade_dtype

BAD = Path(__file__).resolve().parents[1] / "data" / "bad"
L0 = MetricConfig(rel_threshold=0)
# trec_eval's linear nDCG@10 of qrels a=200, b=2 and ranking b, a
NDCG_200 = (2 + 200 / math.log2(3)) / (200 + 2 / math.log2(3))


def _files(tmp_path: Path, qrels: str, run: str) -> tuple[str, str]:
    (tmp_path / "qrels").write_text(qrels)
    (tmp_path / "run").write_text(run)
    return str(tmp_path / "qrels"), str(tmp_path / "run")


def test_unjudged_documents_are_never_relevant_at_threshold_0() -> None:
    qrels = {"q": {"a": 1, "b": 0}}
    ev = evaluate(qrels, {"q": {"a": 1.0, "u1": 2.0, "u2": 3.0}}, ["Recall@10", "AP@10"], L0)
    assert ev.aggregate() == {"Recall@10": 0.5, "AP@10": pytest.approx(1 / 6, abs=1e-15)}
    ranked = evaluate_ranked(qrels, {"q": ["u2", "u1", "a"]}, ["Recall@10", "AP@10"], L0)
    assert ranked.aggregate() == ev.aggregate()
    # the array entry point: ids a=0, b=1, u1=2, u2=3
    arrays = evaluate_judged(
        from_arrays([[0, 2, 3]], [[1.0, 2.0, 3.0]], [[0, 1]], [[1, 0]]), ["Recall@10", "AP@10"], L0
    )
    assert arrays.aggregate() == ev.aggregate()


def test_judged_grade_0_is_relevant_at_threshold_0_and_negative_grades_never() -> None:
    # b judged 0 is relevant at -l0; c judged -1 is unjudged (trec_eval's RELVALUE_UNJUDGED)
    ev = evaluate_ranked({"q": {"b": 0, "c": -1}}, {"q": ["c", "b"]}, ["RR@10", "Recall@10"], L0)
    assert ev.aggregate() == {"RR@10": 0.5, "Recall@10": 1.0}


def test_padding_of_the_ideal_ranking_is_not_counted_as_relevant() -> None:
    qrels = {"q1": {"a": 1}, "q2": {"x": 1, "y": 1, "z": 1}}
    ev = evaluate(qrels, {"q1": {"a": 1.0}}, ["Recall@10", "R-prec"], L0)
    assert ev.per_query["Recall@10"].tolist() == [1.0, 0.0]
    assert ev.per_query["R-prec"].tolist() == [1.0, 0.0]
    j = from_arrays([[0], [-1]], [[1.0], [0.0]], [[0, -1, -1], [5, 6, 7]], [[1, 0, 0], [1, 1, 1]])
    assert evaluate_judged(j, ["Recall@10"], L0).per_query["Recall@10"].tolist() == [1.0, 0.0]


def test_threshold_0_through_the_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    q, r = _files(
        tmp_path, "q 0 a 1\nq 0 b 0\n", "q Q0 a 1 1.0 t\nq Q0 u1 2 2.0 t\nq Q0 u2 3 3.0 t\n"
    )
    code = main(
        ["metrics", q, r, "-m", "Recall@10", "-m", "AP@10", "--rel-threshold", "0", "--json"]
    )
    assert code == 0
    agg = json.loads(capsys.readouterr().out)["aggregate"]
    assert agg["Recall@10"] == 0.5
    assert agg["AP@10"] == pytest.approx(1 / 6, abs=1e-15)


def test_a_negative_threshold_is_refused() -> None:
    with pytest.raises(ValueError, match="negative"):
        MetricConfig(rel_threshold=-1)


def test_grades_above_127_do_not_wrap() -> None:
    qrels = {"q": {"a": 200, "b": 2}}
    lin = MetricConfig(gain="linear")
    assert evaluate(qrels, {"q": {"b": 2.0, "a": 1.0}}, ["nDCG@10"], lin).aggregate()[
        "nDCG@10"
    ] == pytest.approx(NDCG_200, rel=1e-15)
    ranked = evaluate_ranked(qrels, {"q": ["b", "a"]}, ["nDCG@10"], lin)  # raised OverflowError
    assert ranked.aggregate()["nDCG@10"] == pytest.approx(NDCG_200, rel=1e-15)
    arrays = evaluate_judged(
        from_arrays([[1, 0]], [[2.0, 1.0]], [[0, 1]], [[200, 2]]), ["nDCG@10"], lin
    )
    assert arrays.aggregate()["nDCG@10"] == pytest.approx(NDCG_200, rel=1e-15)


def test_grade_200_through_the_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    q, r = _files(tmp_path, "q 0 a 200\nq 0 b 2\n", "q Q0 b 1 2.0 t\nq Q0 a 2 1.0 t\n")
    assert main(["metrics", q, r, "-m", "nDCG@10", "--gain", "linear", "--json"]) == 0
    ndcg = json.loads(capsys.readouterr().out)["aggregate"]["nDCG@10"]
    assert round(ndcg, 4) == 0.6369
    assert ndcg == pytest.approx(NDCG_200, rel=1e-15)


def test_grade_dtype_is_the_narrowest_that_fits() -> None:
    assert [grade_dtype(g) for g in (3, 127, 128, 32767, 32768, 2**31 - 1)] == [
        np.int8,
        np.int8,
        np.int16,
        np.int16,
        np.int32,
        np.int32,
    ]
    with pytest.raises(ValueError, match="above 2147483647"):
        grade_dtype(2**31)
    # 0-3 grades keep the int8 fast path in every entry point
    small = {"q": {"a": 3, "b": 0}}
    assert from_run(small, {"q": {"a": 1.0}}).grades.dtype == np.int8
    assert from_ranked(small, {"q": ["a"]}).ideal.dtype == np.int8
    assert from_arrays([[0]], [[1.0]], [[0]], [[3]]).grades.dtype == np.int8
    assert from_run({"q": {"a": 40_000}}, {"q": {"a": 1.0}}).grades.dtype == np.int32


@pytest.mark.parametrize("grade", [2**31, 2**70])
def test_unstorable_grades_are_a_clear_error_in_every_entry_point(grade: int) -> None:
    qrels = {"q": {"a": grade}}
    for build in (
        lambda: from_run(qrels, {"q": {"a": 1.0}}),
        lambda: from_ranked(qrels, {"q": ["a"]}),
    ):
        with pytest.raises(ValueError, match="largest grade memgauge stores"):
            build()
    if grade < 2**63:
        with pytest.raises(ValueError, match="largest grade memgauge stores"):
            from_arrays([[0]], [[1.0]], [[0]], [[grade]])


def test_exp_gain_refuses_grades_above_1023_and_is_finite_up_to_it() -> None:
    with pytest.raises(ValueError, match="above 1023"):
        evaluate_ranked({"q": {"a": 1024}}, {"q": ["a"]}, ["nDCG@10"])
    # not refused where exp gain plays no part
    assert evaluate_ranked({"q": {"a": 1024}}, {"q": ["a"]}, ["RR@10"]).aggregate()["RR@10"] == 1.0
    top = {"q": {"a": 1023, "b": 1023, "c": 1023}}
    ndcg = evaluate_ranked(top, {"q": ["b", "x", "a"]}, ["nDCG@10"]).aggregate()["nDCG@10"]
    assert ndcg == pytest.approx((1 + 1 / 2) / (1 + 1 / math.log2(3) + 1 / 2), rel=1e-15)


def test_scaling_one_query_leaves_the_others_bit_identical() -> None:
    small = {"q1": {"a": 3, "b": 1, "c": 2}}
    ranked = {"q1": ["c", "x", "a"], "q2": ["m", "n"]}
    alone = evaluate_ranked(small, ranked, ["nDCG@10", "nDCG"])
    both = evaluate_ranked({**small, "q2": {"m": 990, "n": 1000}}, ranked, ["nDCG@10", "nDCG"])
    for m in ("nDCG@10", "nDCG"):
        assert both.per_query[m][0] == alone.per_query[m][0]  # exactly, not approximately
    assert both.per_query["nDCG@10"][1] == pytest.approx(
        (2**-10 + 1 / math.log2(3)) / (1 + 2**-10 / math.log2(3)), rel=1e-14
    )


def test_exp_gain_grade_1024_exits_2_naming_file_and_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    q, r = _files(tmp_path, "q 0 b 2\nq 0 a 1024\n", "q Q0 b 1 2.0 t\nq Q0 a 2 1.0 t\n")
    assert main(["metrics", q, r, "-m", "nDCG@10"]) == 2
    err = capsys.readouterr().err
    assert f"{q}:2" in err
    assert "grade 1024 is above 1023" in err
    assert "--gain linear" in err
    assert "Traceback" not in err
    assert main(["metrics", q, r, "-m", "nDCG@10", "--gain", "linear"]) == 0


def test_evaluate_refuses_a_dataset_grade_above_3_naming_file_and_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dataset = BAD / "dataset_qrels_grade_above_3"
    out = tmp_path / "out"
    assert main(["evaluate", str(dataset), "--no-store", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert f"{dataset / 'qrels.txt'}:2" in err
    assert "grade 1024 is above 3" in err
    assert not out.exists()


def test_a_doc_judged_twice_keeps_its_highest_grade_in_both_lookups() -> None:
    for width in (4, 80):  # <= 64 judged columns: per-column lookup; more: binary search
        ids = np.full((1, width), -1)
        grades = np.zeros((1, width), dtype=np.int64)
        ids[0, :2], grades[0, :2] = [7, 7], [3, 1]
        for order in ([0, 1], [1, 0]):
            j = from_arrays(
                [[7]],
                [[1.0]],
                ids[:, order + list(range(2, width))],
                grades[:, order + list(range(2, width))],
            )
            assert j.grades[0, 0] == 3


def test_tier_precision_counts_no_unjudged_hit_as_relevant_at_threshold_0() -> None:
    tiers = {"k1": "critical", "i1": "important", "n1": "normal", "n2": "normal"}
    v = agent_metrics.tier_stratified_precision(
        {"q": ["k1", "i1", "n1", "n2"]}, {"q": {"k1": 0, "i1": 0}}, tiers, k=4, threshold=0
    )
    assert v.detail["precision"] == {"critical": 1.0, "important": 1.0, "normal": 0.0}
