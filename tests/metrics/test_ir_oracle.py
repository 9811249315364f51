"""IR measures against trec_eval (pytrec-eval-terrier) on randomised runs with ties, to 1e-9."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memgauge.metrics import MetricConfig, evaluate, order_run
from memgauge.metrics.arrays import from_arrays
from memgauge.metrics.ir import evaluate_judged

pytrec_eval = pytest.importorskip("pytrec_eval")

DOCS = [f"d{i}" for i in range(12)]
# built once, not in each draw: building and validating a strategy cost Hypothesis more than
# drawing from it (about half of each example's time)
N_QUERIES = st.integers(1, 4)
JUDGED = st.lists(st.sampled_from(DOCS), min_size=1, max_size=8, unique=True)
RETURNED = st.lists(st.sampled_from(DOCS), min_size=1, max_size=12, unique=True)
GRADE = st.integers(0, 3)


@st.composite
def cases(draw: st.DrawFn) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]:
    n_q = draw(N_QUERIES)
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for q in range(n_q):
        qid = f"q{q}"
        judged = draw(JUDGED)
        qrels[qid] = {d: draw(GRADE) for d in judged}
        returned = draw(RETURNED)
        # few distinct scores: many ties, which exercise trec_eval's doc-id tie order
        run[qid] = {d: float(draw(GRADE)) for d in returned}
    return qrels, run


def _oracle(
    qrels: dict[str, dict[str, int]], run: dict[str, dict[str, float]], level: int, k: int
) -> dict[str, dict[str, float]]:
    ev = pytrec_eval.RelevanceEvaluator(
        qrels,
        {f"P_{k}", f"recall_{k}", f"map_cut_{k}", "Rprec", f"ndcg_cut_{k}"},
        relevance_level=level,
    )
    out = ev.evaluate(run)
    # RR@k: trec_eval's recip_rank on the run truncated to k in trec_eval order
    cut = {q: {d: run[q][d] for d in order_run(run[q])[:k]} for q in run}
    rr = pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank"}, relevance_level=level).evaluate(cut)
    for q in out:
        out[q]["recip_rank"] = rr[q]["recip_rank"]
    return out


@settings(max_examples=700, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=cases(), level=st.sampled_from([1, 2]), k=st.sampled_from([1, 3, 5, 10]))
def test_linear_gain_matches_trec_eval(
    case: tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]], level: int, k: int
) -> None:
    qrels, run = case
    ours = evaluate(
        qrels,
        run,
        [f"P@{k}", f"Recall@{k}", f"AP@{k}", "R-prec", f"nDCG@{k}", f"RR@{k}"],
        MetricConfig(rel_threshold=level, gain="linear"),
    )
    oracle = _oracle(qrels, run, level, k)
    names = {
        f"P@{k}": f"P_{k}",
        f"Recall@{k}": f"recall_{k}",
        f"AP@{k}": f"map_cut_{k}",
        "R-prec": "Rprec",
        f"nDCG@{k}": f"ndcg_cut_{k}",
        f"RR@{k}": "recip_rank",
    }
    for i, q in enumerate(ours.query_ids):
        for ours_name, trec_name in names.items():
            expected = oracle[q][trec_name]
            got = ours.per_query[ours_name][i]
            assert math.isclose(got, expected, abs_tol=1e-9), (q, ours_name, got, expected)


@settings(max_examples=500, deadline=None)
@given(case=cases(), k=st.sampled_from([1, 5, 10]))
def test_exp_gain_matches_trec_eval_on_mapped_grades(
    case: tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]], k: int
) -> None:
    # trec_eval uses the grade itself as gain, so grades 2^g - 1 give exponential-gain nDCG.
    qrels, run = case
    mapped = {q: {d: 2**g - 1 for d, g in docs.items()} for q, docs in qrels.items()}
    oracle = pytrec_eval.RelevanceEvaluator(mapped, {f"ndcg_cut_{k}"}).evaluate(run)
    ours = evaluate(qrels, run, [f"nDCG@{k}"], MetricConfig(gain="exp"))
    for i, q in enumerate(ours.query_ids):
        assert math.isclose(
            ours.per_query[f"nDCG@{k}"][i], oracle[q][f"ndcg_cut_{k}"], abs_tol=1e-9
        )


def test_judged_queries_missing_from_run_are_zero_and_counted() -> None:
    qrels = {"q1": {"a": 2}, "q2": {"b": 2}}
    ev = evaluate(qrels, {"q1": {"a": 1.0}, "q9": {"a": 1.0}}, ["RR@10", "nDCG@10"])
    assert ev.per_query["RR@10"].tolist() == [1.0, 0.0]
    assert ev.counts.missing_from_run == ["q2"]
    assert ev.counts.run_only == ["q9"]
    assert ev.aggregate()["RR@10"] == 0.5


def test_skip_conventions_exclude_from_means_but_count() -> None:
    qrels = {"q1": {"a": 2}, "q2": {"b": 2}, "q3": {"c": 1}}
    run = {"q1": {"a": 1.0}, "q3": {"c": 1.0}}
    ev = evaluate(qrels, run, ["RR@10"], MetricConfig(no_relevant="skip", missing_from_run="skip"))
    values = ev.per_query["RR@10"]
    assert values[0] == 1.0
    assert math.isnan(values[1])
    assert math.isnan(values[2])
    assert ev.aggregate()["RR@10"] == 1.0
    assert ev.counts.no_relevant == ["q3"]
    assert ev.counts.missing_from_run == ["q2"]
    assert ev.counts.as_dict()["n_scored"] == 1


def test_no_scored_query_aggregates_to_none_not_zero() -> None:
    ev = evaluate({"q1": {"a": 1}}, {}, ["RR@10"], MetricConfig(missing_from_run="skip"))
    assert ev.aggregate()["RR@10"] is None


@settings(max_examples=300, deadline=None)
@given(
    n=st.integers(1, 6),
    depth=st.integers(0, 8),
    judged=st.integers(0, 6),
    seed=st.integers(0, 2**32 - 1),
)
def test_array_entry_point_equals_the_dict_path(n: int, depth: int, judged: int, seed: int) -> None:
    """from_arrays (integer ids, padding = -1) scores exactly like the dict path."""
    rng = np.random.default_rng(seed)
    run_ids = np.full((n, max(depth, 1)), -1)
    run_scores = np.zeros((n, max(depth, 1)))
    qrel_ids = np.full((n, max(judged, 1)), -1)
    qrel_grades = np.zeros((n, max(judged, 1)), dtype=np.int64)
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for i in range(n):
        k = int(rng.integers(0, depth + 1))
        ids = rng.choice(12, size=k, replace=False)
        scores = rng.integers(0, 4, size=k) / 2  # many ties
        run_ids[i, :k], run_scores[i, :k] = ids, scores
        j = int(rng.integers(0, judged + 1))
        jids = rng.choice(12, size=j, replace=False)
        grades = rng.integers(0, 4, size=j)
        qrel_ids[i, :j], qrel_grades[i, :j] = jids, grades
        qrels[str(i)] = {f"{d:02d}": int(g) for d, g in zip(jids, grades, strict=True)}
        if k:
            run[str(i)] = {f"{d:02d}": float(s) for d, s in zip(ids, scores, strict=True)}
    measures = ["nDCG@5", "RR@5", "Recall@5", "P@3", "AP", "R-prec", "Hit@3"]
    # zero-padded ids: integer order equals string order, so tie-breaking agrees
    names = [str(i) for i in range(n)]
    arrays = evaluate_judged(
        from_arrays(run_ids, run_scores, qrel_ids, qrel_grades, query_ids=names), measures
    )
    dicts = evaluate(qrels, run, measures)
    order_rows = np.lexsort(
        (-np.where(run_ids >= 0, run_ids, -1), -np.where(run_ids >= 0, run_scores, -np.inf)), axis=1
    )
    pre = evaluate_judged(
        from_arrays(
            np.take_along_axis(run_ids, order_rows, axis=1),
            np.take_along_axis(run_scores, order_rows, axis=1),
            qrel_ids,
            qrel_grades,
            query_ids=names,
            ranked=True,
        ),
        measures,
    )
    order = [dicts.query_ids.index(q) for q in arrays.query_ids]
    for m in measures:
        np.testing.assert_allclose(arrays.per_query[m], dicts.per_query[m][order], atol=1e-12)
        np.testing.assert_allclose(pre.per_query[m], arrays.per_query[m], atol=1e-12)


def test_array_entry_point_with_many_judgments_per_query() -> None:
    """More than 64 judged documents per row takes the binary-search lookup."""
    rng = np.random.default_rng(7)
    n, depth, judged = 5, 40, 90
    run_ids = np.stack([rng.choice(200, depth, replace=False) for _ in range(n)])
    run_scores = rng.integers(0, 5, size=(n, depth)) / 4
    qrel_ids = np.stack([rng.choice(200, judged, replace=False) for _ in range(n)])
    qrel_grades = rng.integers(0, 4, size=(n, judged))
    qrel_ids[0, -3:] = -1  # padding
    qrels = {
        str(i): {
            f"{d:03d}": int(g) for d, g in zip(qrel_ids[i], qrel_grades[i], strict=True) if d >= 0
        }
        for i in range(n)
    }
    run = {
        str(i): {f"{d:03d}": float(s) for d, s in zip(run_ids[i], run_scores[i], strict=True)}
        for i in range(n)
    }
    measures = ["nDCG@20", "AP", "P@10", "R-prec"]
    got = evaluate_judged(
        from_arrays(
            run_ids, run_scores, qrel_ids, qrel_grades, query_ids=[str(i) for i in range(n)]
        ),
        measures,
    )
    want = evaluate(qrels, run, measures)
    for m in measures:
        np.testing.assert_allclose(got.per_query[m], want.per_query[m], atol=1e-12)
