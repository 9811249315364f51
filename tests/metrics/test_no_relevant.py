"""`no_relevant`: zero (default), one (seed 002's vacuous Recall, on every measure that is 0/0
for such a query) and skip, in the metric engine, the per-item evaluator and the metrics CLI."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from memgauge.cli.main import main
from memgauge.metrics import MetricConfig, evaluate_ranked, parse_measure
from memgauge.scorers import EvalContext
from memgauge.scorers.retrieval import RetrievalMeasure

MEASURES = [
    "P@2",
    "Recall@2",
    "RR@2",
    "AP@2",
    "R-prec",
    "nDCG@2",
    "Hit@2",
    "recall_any@2",
    "recall_all@2",
    "ndcg_any@2",
]
# q1 has a relevant memory; q0 has judgments at grade 0 only; qm has a grade-1 judgment, below
# the threshold 2, so its nDCG has an ideal gain and is computed, not vacuous
QRELS = {"q1": {"a": 3, "b": 0}, "q0": {"a": 0, "b": 0}, "qm": {"a": 1}}
RANKED = {"q1": ["b", "a"], "q0": ["a", "b"], "qm": ["a", "z"]}


def _values(mode: str) -> dict[str, dict[str, float]]:
    ev = evaluate_ranked(QRELS, RANKED, MEASURES, MetricConfig(no_relevant=mode))  # type: ignore[arg-type]
    return {
        qid: {m: float(v[i]) for m, v in ev.per_query.items()} for i, qid in enumerate(ev.query_ids)
    }


def test_zero_is_the_default_and_scores_every_measure_of_such_a_query_0() -> None:
    assert MetricConfig().no_relevant == "zero"
    got = _values("zero")
    assert all(v == 0.0 for v in got["q0"].values())
    # the computed nDCG of a query whose only judgment is below the threshold stays computed
    assert got["qm"]["nDCG@2"] == 1.0
    assert got["qm"]["Recall@2"] == 0.0


def test_one_gives_1_where_the_measure_is_0_over_0_and_keeps_the_rest() -> None:
    got = _values("one")
    vacuous = {"Recall@2", "AP@2", "R-prec", "nDCG@2", "recall_all@2", "ndcg_any@2"}
    for m in MEASURES:
        # seed 002: Recall 1.0 ("perfect recall vacuously"); MRR 0; P@k: nothing relevant shown
        assert got["q0"][m] == (1.0 if m in vacuous else 0.0), m
    # qm: R = 0 but an ideal gain exists (grade 1): nDCG is its computed value, Recall vacuous
    assert got["qm"]["nDCG@2"] == 1.0
    assert got["qm"]["Recall@2"] == 1.0
    assert got["qm"]["RR@2"] == 0.0
    # a query with relevant memories is scored exactly as under zero
    assert got["q1"] == _values("zero")["q1"]


def test_one_ndcg_of_a_query_with_only_sub_threshold_grades_is_computed_not_one() -> None:
    qrels = {"q": {"a": 1, "b": 1}}
    ev = evaluate_ranked(qrels, {"q": ["z", "b"]}, ["nDCG@2"], MetricConfig(no_relevant="one"))
    value = float(ev.per_query["nDCG@2"][0])
    assert 0.0 < value < 1.0  # (1/log2 3) / (1 + 1/log2 3)
    assert value == pytest.approx((1 / math.log2(3)) / (1 + 1 / math.log2(3)))


def test_one_leaves_a_query_absent_from_the_run_to_its_own_convention() -> None:
    ev = evaluate_ranked({"q0": {"a": 0}}, {}, ["Recall@2"], MetricConfig(no_relevant="one"))
    assert ev.per_query["Recall@2"].tolist() == [0.0]  # missing_from_run="zero"


def test_skip_leaves_such_queries_out_of_every_mean() -> None:
    ev = evaluate_ranked(QRELS, RANKED, MEASURES, MetricConfig(no_relevant="skip"))
    agg = ev.aggregate()
    for m in MEASURES:
        assert agg[m] == pytest.approx(float(ev.per_query[m][ev.query_ids.index("q1")]))
    assert ev.counts.as_dict()["n_scored"] == 1
    assert sorted(ev.counts.no_relevant) == ["q0", "qm"]


def test_an_unknown_mode_is_refused() -> None:
    with pytest.raises(ValueError, match="no_relevant"):
        MetricConfig(no_relevant="half")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("mode", "measure", "value", "error"),
    [
        ("zero", "Recall@5", 0.0, False),
        ("one", "Recall@5", 1.0, False),
        ("one", "RR@5", 0.0, False),
        ("one", "nDCG@5", 1 / math.log2(3), False),  # b's grade 1 is an ideal gain
        ("skip", "Recall@5", None, False),
        ("fail", "Recall@5", None, True),
    ],
)
def test_the_per_item_evaluator_follows_the_same_modes(
    mode: str, measure: str, value: float | None, error: bool
) -> None:
    scorer = RetrievalMeasure(measure=measure, no_relevant=mode)  # type: ignore[arg-type]
    score = scorer.evaluate(EvalContext(output=["a", "b"], expected={"a": 0, "b": 1}))
    assert score.value == (None if value is None else pytest.approx(value))
    assert (score.error is not None) is error
    if mode == "skip":
        assert score.detail.get("skipped") is True


def test_the_per_item_evaluator_has_the_engines_defaults() -> None:
    scorer, cfg = RetrievalMeasure(), MetricConfig()
    assert (scorer.rel_threshold, scorer.gain, scorer.no_relevant) == (
        cfg.rel_threshold,
        cfg.gain,
        cfg.no_relevant,
    )


@pytest.mark.parametrize("mode", ["zero", "one", "skip"])
def test_the_per_item_evaluator_gives_the_engines_value_of_every_query(mode: str) -> None:
    """Item by item, the evaluator (a suite's rows) equals the metric engine (`evaluate`, the
    ir aggregate) on every measure, for the query with nothing judged relevant too (qm's nDCG
    gains from its grade-1 judgment under `zero`: not a flat 0)."""
    engine = _values(mode)
    for qid, grades in QRELS.items():
        for m in MEASURES:
            scorer = RetrievalMeasure(measure=m, no_relevant=mode)  # type: ignore[arg-type]
            got = scorer.evaluate(EvalContext(output=RANKED[qid], expected=grades)).value
            want = engine[qid][m]
            assert (None if math.isnan(want) else want) == (
                None if got is None else pytest.approx(got, abs=1e-12)
            ), (qid, m)


def test_metrics_cli_one_mode(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 a 2\nq2 0 b 0\n")
    run = tmp_path / "run.txt"
    run.write_text("q1 Q0 a 1 2.0 t\nq2 Q0 b 1 2.0 t\n")
    out = {}
    for mode in ("zero", "one", "skip"):
        code = main(
            [
                *("metrics", str(qrels), str(run), "-m", "Recall@5", "-m", "RR@5"),
                "--no-relevant",
                mode,
                "--json",
            ]
        )
        assert code in (0, None)
        out[mode] = json.loads(capsys.readouterr().out)
    assert out["zero"]["aggregate"] == {"Recall@5": 0.5, "RR@5": 0.5}
    assert out["one"]["aggregate"] == {"Recall@5": 1.0, "RR@5": 0.5}
    assert out["skip"]["aggregate"] == {"Recall@5": 1.0, "RR@5": 1.0}
    assert out["one"]["config"]["no_relevant"] == "one"


@pytest.mark.parametrize("measure", [*MEASURES, "nDCG@10", "P@5", "IPrec@0.5"])
def test_the_per_item_evaluators_reason_names_the_measure_as_it_names_itself(
    measure: str,
) -> None:
    """The reason of a scored item is the parsed measure's name and the value to three places
    (the name written once per evaluator, not once per item), for a query with a relevant
    memory and for one without."""
    scorer = RetrievalMeasure(measure=measure)
    for qid, prefix in (("q1", ""), ("qm", "no judged memory is relevant: ")):
        score = scorer.evaluate(EvalContext(output=RANKED[qid], expected=QRELS[qid]))
        assert score.value is not None
        assert score.reason == f"{prefix}{parse_measure(measure)} = {score.value:.3f}"


def test_the_measures_of_one_item_share_what_they_derive_per_threshold() -> None:
    """Every measure of an item, at two thresholds and in every mode, scored on one context (as
    the engine scores an item) gives what it gives on a fresh context, and the item's ids,
    grades and ranking are derived once per threshold: one entry each in the shared space."""
    for qid, grades in QRELS.items():
        ctx = EvalContext(output=RANKED[qid], expected=grades)
        for threshold in (1, 2):
            for mode in ("zero", "one", "skip", "fail"):
                for m in MEASURES:
                    scorer = RetrievalMeasure(m, rel_threshold=threshold, no_relevant=mode)  # type: ignore[arg-type]
                    fresh = scorer.evaluate(EvalContext(output=RANKED[qid], expected=grades))
                    assert scorer.evaluate(ctx) == fresh, (qid, threshold, mode, m)
        assert set(ctx.shared) == {"retrieval@1", "retrieval@2"}
    bad = EvalContext(output="not a list", expected={"a": 1})
    for _ in range(2):  # the reason it cannot be scored is kept for the next measure too
        score = RetrievalMeasure().evaluate(bad)
        assert score.error == "retrieval: output is not a ranked list of ids or hits"
    unjudged = EvalContext(output=["a"], expected=3)
    assert RetrievalMeasure().evaluate(unjudged).error == (
        "retrieval: expected is {id: grade} or a list of relevant ids"
    )
