"""IR measures against trec_eval (pytrec-eval-terrier) on randomised runs with ties, to 1e-9."""

from __future__ import annotations

import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memgauge.metrics import MetricConfig, evaluate, order_run

pytrec_eval = pytest.importorskip("pytrec_eval")

DOCS = [f"d{i}" for i in range(12)]


@st.composite
def cases(draw: st.DrawFn) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]:
    n_q = draw(st.integers(1, 4))
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for q in range(n_q):
        qid = f"q{q}"
        judged = draw(st.lists(st.sampled_from(DOCS), min_size=1, max_size=8, unique=True))
        qrels[qid] = {d: draw(st.integers(0, 3)) for d in judged}
        returned = draw(st.lists(st.sampled_from(DOCS), min_size=1, max_size=12, unique=True))
        # few distinct scores: many ties, which exercise trec_eval's doc-id tie order
        run[qid] = {d: float(draw(st.integers(0, 3))) for d in returned}
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
