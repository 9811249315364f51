"""A mean is one number: every path that reports the mean of the same values (a run's
evaluator row, the IR aggregate, a comparison's means and paired delta, a repeat's cluster
mean, an item's repeats) sums them exactly (`math.fsum`), so their order and the path cannot
change its last bits, nor the digits it prints.

Twenty F1-like scores whose mean is 0.4775: NumPy's pairwise sum gave 0.4774999999999999
(printed 0.477), `math.fsum` 0.47750000000000004 (0.478, as `statistics.fmean` and a
spreadsheet say), and a permutation of them could print either."""

from __future__ import annotations

import math
import statistics

import numpy as np

from memgauge._util.numbers import fmean
from memgauge.data.records import mean_of_repeats
from memgauge.metrics import MetricConfig
from memgauge.metrics.ir import Counts, Evaluation
from memgauge.stats import bootstrap_ci, compare_systems, paired_compare
from memgauge.stats.repeats import cluster_bootstrap_ci

FRACTIONS = [(3, 6), (1, 1), (2, 6), (0, 3), (1, 4), (3, 6), (2, 5), (0, 2), (3, 5), (5, 5)]
FRACTIONS += [(5, 5), (0, 4), (2, 2), (1, 4), (0, 2), (3, 4), (3, 5), (1, 5), (1, 6), (1, 1)]
VALUES = np.array([a / b for a, b in FRACTIONS])
EXACT = statistics.fmean(VALUES.tolist())


def _orders() -> list[np.ndarray]:
    rng = np.random.default_rng(0)
    return [VALUES, VALUES[::-1], *(rng.permutation(VALUES) for _ in range(20))]


def test_the_values_mean_prints_as_its_exact_sum_says() -> None:
    assert (EXACT, format(EXACT, ".3f")) == (math.fsum(VALUES) / 20, "0.478")


def test_every_path_gives_the_exact_mean_whatever_the_order() -> None:
    zeros = np.zeros_like(VALUES)
    for x in _orders():
        assert bootstrap_ci(x, n_resamples=10).mean == EXACT
        assert cluster_bootstrap_ci([[v] for v in x], n_resamples=10).mean == EXACT
        assert mean_of_repeats(x.tolist()) == EXACT
        paired = paired_compare(zeros, x, n_resamples=10, n_permutations=10)
        assert (paired.mean_b, paired.delta) == (EXACT, EXACT)
        cmp = compare_systems(["a", "b"], {"m": np.stack([x, zeros])}, n_permutations=10)
        assert cmp.means["m"][0] == EXACT
        ids = [f"q{i}" for i in range(x.size)]
        ev = Evaluation(ids, {"RR@10": x}, Counts(x.size, x.size), MetricConfig())
        assert ev.aggregate()["RR@10"] == EXACT


def test_a_mean_of_values_whose_sum_passes_the_largest_float_is_still_their_mean() -> None:
    """`math.fsum` raises where NumPy's sum gave inf (a sum past 1.8e308) or nan (inf and
    -inf): every path reporting a mean ended in OverflowError or ValueError (exit 70)."""
    huge = np.array([1e308, 1e308, 1e308])
    assert (fmean(huge), mean_of_repeats(huge.tolist())) == (1e308, 1e308)
    assert fmean([1e308, -1e308, 1e308, 1e308]) == 5e307
    assert math.isnan(mean_of_repeats([math.inf, -math.inf]))
    assert fmean([math.inf, 1.0]) == math.inf


def test_an_ab_test_graduates_on_the_mean_delta_it_reports() -> None:
    """`ab status` reported the bootstrap's (exact) mean delta, while graduation compared
    NumPy's with the improvement threshold: a test whose reported mean met the threshold
    exactly was kept testing, "improvement below the threshold"."""
    from memgauge.online.ab_report import ab_report

    pairs = [
        {
            "control": 0.0,
            "treatment": float(v),
            "control_latency_ms": 10.0,
            "treatment_latency_ms": 10.0,
            "constitutional_delta": 0.0,
        }
        for v in VALUES
    ]
    config = {
        "delta": 0.05,
        "alpha": 0.05,
        "beta": 0.2,
        "min_samples": 10,
        "improvement": EXACT,
        "max_latency_increase": 0.2,
    }
    state = {"n": 20, "total": 9.55, "total_sq": 6.0, "decision": "treatment_better"}
    test = {"name": "t", "status": "running", "graduated_at": None, "metric": "mrr"}
    report = ab_report({**test, "config": config, "state": state}, pairs)
    assert report["mean_delta"] == EXACT
    assert report["decision"] == "graduate", report["reasons"]
