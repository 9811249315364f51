"""Small cases labelled by hand, item by item; each expectation is worked out in the comment."""

from __future__ import annotations

import math

import pytest

from memgauge.errors import UsageError
from memgauge.metrics import Measure, MetricConfig, evaluate_ranked, parse_measure

# One query. Ranking: a(3) x(unjudged) b(1) c(2) d(0). Judged relevant (grade >= 2): a, c, e(3,
# never retrieved). So rel = [1, 0, 0, 1, 0], R = 3.
QRELS = {"q": {"a": 3, "b": 1, "c": 2, "d": 0, "e": 3}}
RANKED = {"q": ["a", "x", "b", "c", "d"]}


def _one(measure: str, **cfg: object) -> float:
    ev = evaluate_ranked(QRELS, RANKED, [measure], MetricConfig(**cfg))  # type: ignore[arg-type]
    return float(ev.per_query[str(parse_measure(measure))][0])


def test_precision_recall_rr_hit() -> None:
    assert _one("P@1") == 1.0  # a relevant
    assert _one("P@5") == 2 / 5  # a, c
    assert _one("P@10") == 2 / 10  # trec_eval divides by k even with 5 returned
    assert _one("Recall@3") == 1 / 3  # a of {a, c, e}
    assert _one("Recall@5") == 2 / 3
    assert _one("RR@10") == 1.0
    assert _one("Hit@1") == 1.0
    assert _one("recall_all@5") == 0.0  # e missing
    assert _one("recall_any@1") == 1.0


def test_threshold_one_makes_b_relevant() -> None:
    # rel = [1, 0, 1, 1, 0], R = 4 (a, b, c, e)
    assert _one("P@5", rel_threshold=1) == 3 / 5
    assert _one("Recall@5", rel_threshold=1) == 3 / 4


def test_average_precision_divides_by_all_relevant() -> None:
    # relevant at ranks 1 and 4: P@1 = 1, P@4 = 2/4; AP = (1 + 0.5) / R(3) = 0.5
    assert _one("AP@100") == pytest.approx(0.5)
    # cut at 3: only rank 1 counts: 1 / 3
    assert _one("AP@3") == pytest.approx(1 / 3)


def test_r_precision() -> None:
    # R = 3: top 3 = a, x, b -> 1 relevant -> 1/3
    assert _one("R-prec") == pytest.approx(1 / 3)


def test_ndcg_exponential_and_linear() -> None:
    # exp gains of ranking: a 7, x 0, b 1, c 3, d 0 ; discounts 1/log2(i+1)
    dcg = 7 / math.log2(2) + 0 + 1 / math.log2(4) + 3 / math.log2(5) + 0
    # ideal grades: 3, 3, 2, 1, 0 -> gains 7, 7, 3, 1, 0
    idcg = 7 / math.log2(2) + 7 / math.log2(3) + 3 / math.log2(4) + 1 / math.log2(5)
    assert _one("nDCG@10") == pytest.approx(dcg / idcg, abs=1e-12)
    ldcg = 3 + 0 + 1 / math.log2(4) + 2 / math.log2(5)
    lidcg = 3 + 3 / math.log2(3) + 2 / math.log2(4) + 1 / math.log2(5)
    assert _one("nDCG@10", gain="linear") == pytest.approx(ldcg / lidcg, abs=1e-12)
    # cut at 2: dcg = 7 ; idcg = 7 + 7/log2(3)
    assert _one("nDCG@2") == pytest.approx(7 / (7 + 7 / math.log2(3)), abs=1e-12)


def test_ndcg_any_is_longmemeval_formula() -> None:
    # binary rel [1, 0, 0, 1, 0] ; LongMemEval DCG = r1 + sum_{i>=2} r_i / log2(i)
    dcg = 1 + 1 / math.log2(4)
    # ideal: R = 3 ones: 1 + 1/log2(2) + 1/log2(3)
    idcg = 1 + 1 / math.log2(2) + 1 / math.log2(3)
    assert _one("ndcg_any@5") == pytest.approx(dcg / idcg, abs=1e-12)


def test_duplicates_in_a_hit_list_count_once() -> None:
    ev = evaluate_ranked({"q": {"a": 2}}, {"q": ["x", "x", "a"]}, ["RR@10"])
    assert ev.per_query["RR@10"][0] == 0.5


def test_parse_measure_canonical_and_aliases() -> None:
    assert str(parse_measure("MRR@10")) == "RR@10"
    assert str(parse_measure("MAP@100")) == "AP@100"
    assert str(parse_measure("ndcg_cut_10")) == "nDCG@10"
    assert parse_measure("nDCG") == Measure("nDCG", None)
    assert str(parse_measure("R-prec")) == "R-prec"
    assert str(parse_measure("recall_any@5")) == "recall_any@5"
    for bad in ("Recall", "foo@3", "P@0", "R-prec@5", ""):
        with pytest.raises(UsageError):
            parse_measure(bad)
