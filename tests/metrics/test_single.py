"""One query in plain Python (`metrics.single`) against the vectorised measures
(`metrics.ir`), on thousands of random cases with ties, unjudged and negative grades, every
threshold and both gains."""

from __future__ import annotations

import math
import os
import random

import pytest

from memgauge.metrics import MetricConfig, evaluate_ranked, parse_measure
from memgauge.metrics.single import Prepared, score_one, score_prepared

MEASURES = [
    "P@1",
    "P@5",
    "Recall@3",
    "Recall@10",
    "Hit@3",
    "RR",
    "RR@5",
    "AP",
    "AP@10",
    "R-prec",
    "nDCG",
    "nDCG@5",
    "nDCG@20",
    "recall_any@5",
    "recall_all@5",
    "ndcg_any@5",
    "ndcg_any@10",
]


@pytest.mark.parametrize("threshold", [0, 1, 2, 3])
@pytest.mark.parametrize("gain", ["exp", "linear"])
def test_agrees_with_the_vectorised_measures(threshold: int, gain: str) -> None:
    seed = int(os.environ.get("MEMGAUGE_TEST_SEED", random.randrange(1 << 30)))
    rng = random.Random(seed)
    cfg = MetricConfig(rel_threshold=threshold, gain=gain)  # type: ignore[arg-type]
    for _ in range(400):
        pool = [f"d{i}" for i in range(rng.randint(1, 30))]
        grades = {
            d: rng.choice([-1, 0, 0, 1, 2, 3, 5])
            for d in rng.sample(pool, rng.randint(0, len(pool)))
        }
        ranked = [rng.choice([*pool, "u1", "u2"]) for _ in range(rng.randint(0, 25))]
        ev = evaluate_ranked({"q": grades}, {"q": ranked}, MEASURES, cfg)
        for name in MEASURES:
            expected = float(ev.per_query[str(parse_measure(name))][0])
            got = score_one(grades, ranked, parse_measure(name), cfg)
            assert got == pytest.approx(expected, abs=1e-12), (seed, name, grades, ranked)


def test_measures_it_does_not_compute_are_left_to_the_vectorised_path() -> None:
    cfg = MetricConfig(gain="exp")
    assert score_one({"a": 1000}, ["a"], parse_measure("nDCG@10"), cfg) is None


def _ndcg_term_by_term(
    grades: dict[str, int], ranked: list[str], k: int | None, gain: str
) -> float:
    """nDCG as `score_prepared` summed it over the cut ranking before its gains were kept."""
    docs = list(dict.fromkeys(ranked))
    top = docs if k is None else docs[:k]

    def g(grade: int) -> float:
        return 2.0 ** max(grade, 0) - 1.0 if gain == "exp" else float(max(grade, 0))

    dcg = sum(
        g(grades[d]) / math.log2(i + 2) for i, d in enumerate(top) if d in grades and grades[d] >= 0
    )
    ideal = sorted([x for x in grades.values() if x >= 0], reverse=True)
    ideal = ideal if k is None else ideal[:k]
    idcg = sum(g(x) / math.log2(i + 2) for i, x in enumerate(ideal))
    return dcg / idcg if idcg > 0 else 0.0


@pytest.mark.parametrize("gain", ["exp", "linear"])
def test_ndcg_at_every_cutoff_of_one_query_is_the_same_float_as_summed_anew(gain: str) -> None:
    # the ranking's discounted gains are kept on the prepared query and summed to each cutoff
    # (an item's nDCG@5, @10 and @20): the same terms in the same order, to the bit
    seed = int(os.environ.get("MEMGAUGE_TEST_SEED", random.randrange(1 << 30)))
    rng = random.Random(seed)
    cfg = MetricConfig(rel_threshold=1, gain=gain)  # type: ignore[arg-type]
    for _ in range(300):
        pool = [f"d{i}" for i in range(rng.randint(1, 30))]
        grades = {
            d: rng.choice([-1, 0, 0, 1, 2, 3, 5])
            for d in rng.sample(pool, rng.randint(0, len(pool)))
        }
        ranked = [rng.choice([*pool, "u1"]) for _ in range(rng.randint(0, 25))]
        prepared = Prepared(grades, ranked, 1)
        cutoffs = [None, 1, 3, 5, 10, 20, 40]
        rng.shuffle(cutoffs)  # whichever cutoff comes first keeps the gains
        for k in cutoffs:
            m = parse_measure("nDCG" if k is None else f"nDCG@{k}")
            got = score_prepared(prepared, m, cfg)
            assert got == _ndcg_term_by_term(grades, ranked, k, gain), (seed, k, grades, ranked)
