"""One query in plain Python (`metrics.single`) against the vectorised measures
(`metrics.ir`), on thousands of random cases with ties, unjudged and negative grades, every
threshold and both gains."""

from __future__ import annotations

import os
import random

import pytest

from memgauge.metrics import MetricConfig, evaluate_ranked, parse_measure
from memgauge.metrics.single import score_one

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
