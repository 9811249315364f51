"""memgauge's IR measures against trec_eval on thousands of random queries, fresh seed each run.

Two oracles:

- pytrec_eval (trec_eval 9.0.8 compiled in) for thresholds 1 to 3 (it refuses 0);
- `_trec_eval`, a transcription of trec_eval's rules written here from its definitions, for
  every threshold including 0 (`-l0`). trec_eval reads a retrieved document's relevance from the
  qrels: its grade when judged >= 0, otherwise "unjudged" (not in the qrels, or judged below
  0), which is never relevant; R counts the judgments with grade >= max(threshold, 0). The
  transcription is itself checked against pytrec_eval wherever pytrec_eval can be asked.

Scores compared with pytrec_eval are exact in float32 (pytrec_eval, like trec_eval <= 9.0.8,
reads scores as float32); the threshold-0 cases also carry near-ties that only doubles
separate (memgauge and trec_eval 10 rank on doubles).

Set MEMGAUGE_TEST_SEED to replay a failure; the seed is in every failure message.
"""

from __future__ import annotations

import math
import os
import secrets
from collections.abc import Iterator
from fractions import Fraction

import numpy as np
import pytest

from memgauge.metrics import MetricConfig, evaluate, evaluate_ranked

pytrec_eval = pytest.importorskip("pytrec_eval")

Qrels = dict[str, dict[str, int]]
Run = dict[str, dict[str, float]]
CUTOFFS = (1, 3, 5, 10, 20)


@pytest.fixture
def seed() -> int:
    return int(os.environ.get("MEMGAUGE_TEST_SEED") or secrets.randbits(32))


def _batch(
    rng: np.random.Generator,
    n_queries: int,
    max_grade: int,
    *,
    negative: bool = False,
    near_ties: bool = False,
    infinite: bool = False,
) -> tuple[Qrels, Run]:
    """Random qrels and a run over a pool of ids whose string order differs from their number
    order (d1 < d10 < d2); scores with many exact ties; some queries judged with nothing
    returned, some returned with nothing judged."""
    qrels: Qrels = {}
    run: Run = {}
    for i in range(n_queries):
        q = f"q{i}"
        pool = [f"d{j}" for j in rng.choice(30, size=int(rng.integers(1, 25)), replace=False)]
        n_judged = int(rng.integers(0, min(len(pool), 12) + 1))
        if n_judged or rng.random() < 0.9:
            judged = rng.choice(pool, size=n_judged, replace=False)
            # mostly low grades, some spread up to max_grade
            low = rng.integers(0, 4, size=n_judged)
            high = rng.integers(0, max_grade + 1, size=n_judged)
            grades = np.where(rng.random(n_judged) < 0.6, np.minimum(low, max_grade), high)
            if negative:
                grades = np.where(rng.random(n_judged) < 0.1, -rng.integers(1, 3, n_judged), grades)
            qrels[q] = {str(d): int(g) for d, g in zip(judged, grades, strict=True)}
        if rng.random() < 0.08:
            continue  # absent from the run
        returned = rng.choice(pool, size=int(rng.integers(0, len(pool) + 1)), replace=False)
        scores = rng.integers(0, 6, size=len(returned)) / 4  # exact in float32: ties are ties
        if near_ties:
            # distinct as doubles, equal as float32
            scores = scores + np.where(rng.random(len(returned)) < 0.3, 1e-12, 0.0)
        if infinite:  # trec_eval's atof, pytrec_eval and ir_measures take inf and -inf
            draw = rng.random(len(returned))
            scores = np.where(draw < 0.15, np.inf, np.where(draw > 0.85, -np.inf, scores))
        run[q] = {str(d): float(s) for d, s in zip(returned, scores, strict=True)}
    return qrels, run


def _trec_eval(judged: dict[str, int], scores: dict[str, float], level: int, k: int) -> dict:
    """One query, trec_eval's definitions (any level >= 0, linear gain)."""
    ranking = sorted(scores, key=lambda d: (scores[d], d), reverse=True)  # score, docid desc
    unjudged = -1
    rels = [g if (g := judged.get(d, unjudged)) >= 0 else unjudged for d in ranking]
    hit = [g != unjudged and g >= level for g in rels]
    n_rel = sum(1 for g in judged.values() if g >= 0 and g >= level)

    def ratio(a: float, b: float) -> float:
        return a / b if b else 0.0

    def ap(depth: int) -> float:
        found, total = 0, 0.0
        for i, h in enumerate(hit[:depth]):
            if h:
                found += 1
                total += found / (i + 1)
        return ratio(total, n_rel)

    def rr(depth: int) -> float:
        return next((1.0 / (i + 1) for i, h in enumerate(hit[:depth]) if h), 0.0)

    ideal = sorted((g for g in judged.values() if g > 0), reverse=True)

    def ndcg(depth: int | None) -> float:  # no cutoff: the ideal ranks every judgment
        dcg = sum(max(g, 0) / math.log2(i + 2) for i, g in enumerate(rels[:depth]))
        return ratio(dcg, sum(g / math.log2(i + 2) for i, g in enumerate(ideal[:depth])))

    everything = len(ranking)
    return {
        f"P@{k}": sum(hit[:k]) / k,
        f"Recall@{k}": ratio(sum(hit[:k]), n_rel),
        f"Hit@{k}": float(any(hit[:k])),
        f"RR@{k}": rr(k),
        f"AP@{k}": ap(k),
        f"nDCG@{k}": ndcg(k),
        "RR": rr(everything),
        "AP": ap(everything),
        "nDCG": ndcg(None),
        "R-prec": ratio(sum(hit[:n_rel]), n_rel),
    }


def _measures(k: int) -> list[str]:
    at_k = [f"P@{k}", f"Recall@{k}", f"Hit@{k}", f"RR@{k}", f"AP@{k}", f"nDCG@{k}"]
    return [*at_k, "RR", "AP", "nDCG", "R-prec"]


def _mismatches(
    qrels: Qrels, run: Run, level: int, k: int, *, ranked: bool = False
) -> Iterator[str]:
    cfg = MetricConfig(rel_threshold=level, gain="linear")
    if ranked:  # the already-ranked entry point, fed the run in trec_eval order
        lists = {q: sorted(s, key=lambda d: (s[d], d), reverse=True) for q, s in run.items()}
        ev = evaluate_ranked(qrels, lists, _measures(k), cfg)
    else:
        ev = evaluate(qrels, run, _measures(k), cfg)
    for i, q in enumerate(ev.query_ids):
        want = _trec_eval(qrels[q], run.get(q, {}), level, k)
        for m, value in want.items():
            got = float(ev.per_query[m][i])
            if not math.isclose(got, value, rel_tol=1e-12, abs_tol=1e-12):
                yield f"{q} {m} level={level}: memgauge {got} trec_eval {value}"


def _check(seed: int, qrels: Qrels, run: Run, level: int, k: int, *, ranked: bool = False) -> None:
    bad = list(_mismatches(qrels, run, level, k, ranked=ranked))
    assert not bad, f"seed {seed} (MEMGAUGE_TEST_SEED={seed} to replay): {bad[:5]}"


def test_threshold_zero_is_trec_eval_l0(seed: int) -> None:
    """-l0: judged grade-0 documents relevant, unjudged never, R from judgments only."""
    rng = np.random.default_rng(seed)
    for k in CUTOFFS:
        qrels, run = _batch(rng, 600, 3, negative=True, near_ties=True)
        _check(seed, qrels, run, 0, k)
        _check(seed, qrels, run, 0, k, ranked=True)


def test_transcription_and_memgauge_equal_pytrec_eval_at_thresholds_1_to_3(seed: int) -> None:
    rng = np.random.default_rng(seed)
    for k in CUTOFFS:
        qrels, run = _batch(rng, 400, 5)
        qrels = {q: j for q, j in qrels.items() if j}  # trec_eval skips unjudged queries
        for level in (1, 2, 3):
            names = {
                f"P_{k}": f"P@{k}",
                f"recall_{k}": f"Recall@{k}",
                f"success_{k}": f"Hit@{k}",
                f"map_cut_{k}": f"AP@{k}",
                f"ndcg_cut_{k}": f"nDCG@{k}",
                "map": "AP",
                "ndcg": "nDCG",
                "Rprec": "R-prec",
                "recip_rank": "RR",
            }
            oracle = pytrec_eval.RelevanceEvaluator(qrels, set(names), relevance_level=level)
            got = oracle.evaluate(run)
            for q, values in got.items():
                mine = _trec_eval(qrels[q], run[q], level, k)
                for trec_name, value in values.items():
                    assert math.isclose(mine[names[trec_name]], value, abs_tol=1e-12), (
                        f"seed {seed}: transcription {q} {trec_name} level {level}"
                    )
            _check(seed, qrels, run, level, k)


def test_infinite_scores_rank_as_trec_eval_ranks_them(seed: int) -> None:
    # inf and -inf above and below every number, tied among themselves (then doc id desc).
    # Against the transcription only: pytrec_eval hung once (minutes, in evaluate) on a
    # random run with infinities, and a test must not hang on a seed
    rng = np.random.default_rng(seed)
    for level, k in ((1, 1), (1, 5), (2, 10), (0, 3)):
        qrels, run = _batch(rng, 300, 3, negative=level == 0, infinite=True)
        qrels = {q: j for q, j in qrels.items() if j}
        assert any(math.isinf(s) for docs in run.values() for s in docs.values())
        _check(seed, qrels, run, level, k)


def test_grades_up_to_a_million_with_linear_gain(seed: int) -> None:
    rng = np.random.default_rng(seed)
    for level in (0, 1, 3, 500_000):
        qrels, run = _batch(rng, 500, 10**6, negative=level == 0)
        _check(seed, qrels, run, level, 10)
        _check(seed, qrels, run, level, 10, ranked=True)
    # and trec_eval itself on a few (its `ndcg` without a cutoff is quadratic in the top grade)
    qrels, run = _batch(rng, 30, 10**6)
    qrels = {q: j for q, j in qrels.items() if j}
    got = pytrec_eval.RelevanceEvaluator(
        qrels, {"ndcg_cut_10", "map_cut_10", "recall_10"}, relevance_level=2
    ).evaluate(run)
    ours = evaluate(qrels, run, ["nDCG@10", "AP@10", "Recall@10"], MetricConfig(2, "linear"))
    for i, q in enumerate(ours.query_ids):
        if q in got:
            for trec_name, m in (("ndcg_cut_10", "nDCG@10"), ("map_cut_10", "AP@10")):
                assert math.isclose(ours.per_query[m][i], got[q][trec_name], abs_tol=1e-12), seed


def _exp_ndcg(judged: dict[str, int], ranking: list[str], k: int) -> float:
    """Exp-gain nDCG@k in exact rationals (gains (2^g - 1) / 2^top), so no sum can overflow."""
    top = max(judged.values(), default=0)
    gain = [Fraction(2 ** max(judged.get(d, 0), 0) - 1, 2**top) for d in ranking[:k]]
    ideal = [Fraction(2**g - 1, 2**top) for g in sorted(judged.values(), reverse=True)[:k]]
    dcg = math.fsum(float(g) / math.log2(i + 2) for i, g in enumerate(gain))
    idcg = math.fsum(float(g) / math.log2(i + 2) for i, g in enumerate(ideal))
    return dcg / idcg if idcg else 0.0


def test_exp_gain_is_finite_up_to_grade_1023(seed: int) -> None:
    rng = np.random.default_rng(seed)
    qrels: Qrels = {}
    ranked: dict[str, list[str]] = {}
    for i in range(300):
        ids = [f"d{j}" for j in range(int(rng.integers(1, 15)))]
        top = int(rng.choice([3, 900, 961, 1023]))
        qrels[f"q{i}"] = {d: int(rng.integers(max(top - 40, 0), top + 1)) for d in ids}
        ranked[f"q{i}"] = [str(d) for d in rng.permutation([*ids, "u1", "u2"])]
    ev = evaluate_ranked(qrels, ranked, ["nDCG@10"])
    for i, q in enumerate(ev.query_ids):
        want = _exp_ndcg(qrels[q], ranked[q], 10)
        assert math.isclose(ev.per_query["nDCG@10"][i], want, rel_tol=1e-12), (seed, q)
