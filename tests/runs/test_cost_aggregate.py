"""The cost aggregate on a dataset worked out by hand (cl100k_base token counts from tiktoken's
published ids: "hello world" 2, "tiktoken is great!" 6, "rer" 1,
"antidisestablishmentarianism" 6; see tests/metrics/test_tokens.py)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from memgauge.aggregates import AGGREGATES, TaskView
from memgauge.aggregates.cost import CostAggregate
from memgauge.aggregates.cost_shapes import CostFacts
from memgauge.data.models import RetrievalDataset
from memgauge.data.records import (
    AggregateResult,
    Failure,
    ItemRecord,
    MeasureValue,
    ScoreRecord,
)
from memgauge.errors import UsageError

DATASET = RetrievalDataset.model_validate(
    {
        "memories": [
            {"id": "m1", "text": "hello world"},
            {"id": "m2", "text": "tiktoken is great!"},
            {"id": "m3", "text": "rer"},
            {"id": "m4", "text": "antidisestablishmentarianism"},
        ],
        "queries": [{"id": f"q{i}", "text": f"query {i}"} for i in range(1, 5)],
        "judgments": [
            {"query_id": "q1", "memory_id": "m2", "grade": 3},
            {"query_id": "q2", "memory_id": "m3", "grade": 1},  # below the threshold
            {"query_id": "q3", "memory_id": "m2", "grade": 2},
        ],
    }
)
TASK = TaskView(
    name="retrieval",
    kind="retrieval",
    subjects=["a"],
    evaluators=[("Recall@10", "retrieval")],
    dataset=DATASET,
)


def _item(qid: str, hits: list[dict[str, Any]], ms: float, recall: float) -> ItemRecord:
    return ItemRecord(
        subject="a",
        task="retrieval",
        item_id=qid,
        status="completed",
        output={"hits": hits},
        latency_ms={"total": ms},
        scores=[ScoreRecord(evaluator="Recall@10", value=recall)],
    )


ITEMS = [
    # 2 + 6 = 8 tokens (texts left out: the dataset's)
    _item("q1", [{"id": "m1"}, {"id": "m2"}], 10.0, 1.0),
    _item("q2", [{"id": "m3"}], 20.0, 0.5),  # 1 token
    # 6 + 2 + 2: the subject returned m2 with a text of its own ("hello world")
    _item("q3", [{"id": "m4"}, {"id": "m1"}, {"id": "m2", "text": "hello world"}], 30.0, 0.0),
    ItemRecord(
        subject="a",
        task="retrieval",
        item_id="q4",
        status="failed",
        failures=[Failure(stage="subject", kind="TimeoutError", message="too slow")],
    ),
]


def _values(agg: CostAggregate) -> dict[str, MeasureValue]:
    result = agg.compute(TASK, {"a": ITEMS})
    return {m.name: m for m in result.measures}


def test_tokens_latency_and_accuracy_per_1k_tokens_by_hand() -> None:
    got = _values(CostAggregate(encoding="cl100k_base"))
    tokens, latency = (8, 1, 10), (10.0, 20.0, 30.0)
    assert got["context_tokens.mean"].value == pytest.approx(sum(tokens) / 3)
    assert got["context_tokens.p50"].value == 8.0
    # NumPy's linear quantile of [1, 8, 10] at 0.95: position 1.9, 8 + 0.9 * 2
    assert got["context_tokens.p95"].value == pytest.approx(9.8)
    assert got["latency_ms.mean"].value == pytest.approx(sum(latency) / 3)
    assert got["latency_ms.p50"].value == 20.0
    assert got["latency_ms.p95"].value == pytest.approx(29.0)
    # 1000 * mean(1, 0.5, 0) / mean(8, 1, 10) = 1000 * 0.5 / (19 / 3)
    assert got["Recall@10_per_1k_tokens"].value == pytest.approx(1500 / 19)
    for m in got.values():
        assert (m.n_scored, m.n_failed, m.primary, m.source) == (3, 1, False, "cost")
        assert m.ci_low is not None
        assert m.ci_high is not None
        assert m.ci_low <= m.value <= m.ci_high  # type: ignore[operator]
    assert not got["context_tokens.p50"].higher_is_better
    assert got["Recall@10_per_1k_tokens"].higher_is_better
    assert "token_usage_ratio.mean" not in got  # no budget, no budget measures


def test_context_errors_under_a_token_budget_by_hand() -> None:
    """Budget 8: q1 fills it exactly (2 + 6, ratio 1.0, high), q2 uses 1/8 (low), q3 keeps
    6 + 2 and loses its third hit, m2, relevant to q3 (ratio 10/8, over)."""
    agg = CostAggregate(encoding="cl100k_base", budget=8)
    got = _values(agg)
    assert got["token_usage_ratio.mean"].value == pytest.approx((1.0 + 0.125 + 1.25) / 3)
    assert got["token_usage_ratio.p95"].value == pytest.approx(1.0 + 0.9 * 0.25)
    assert got["context_overflow_rate"].value == pytest.approx(1 / 3)
    assert got["budget_cut_relevant.mean"].value == pytest.approx(1 / 3)  # cuts 0, 0, 1
    assert got["budget_cut_relevant_rate"].value == pytest.approx(1 / 2)  # of 1 + 0 + 1 found
    facts = agg.compute(TASK, {"a": ITEMS}).facts_as(CostFacts)
    assert facts is not None
    (system,) = facts.systems
    rows = {r.id: r for r in system.per_query}
    assert [rows[q].pressure_level for q in ("q1", "q2", "q3")] == ["high", "low", "over"]
    assert [rows[q].hits_cut for q in ("q1", "q2", "q3")] == [0, 0, 1]
    assert rows["q3"].relevant_cut == 1
    assert system.pressure == {"low": 1, "moderate": 0, "high": 1, "over": 1}
    assert (system.n_queries, system.n_failed) == (3, 1)


def test_the_judgments_are_read_for_a_budget_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    """Which hits are relevant is read by the budget's cuts alone: without a budget the
    dataset's judgments are not gathered, the measures the same."""
    before = {n: (m.value, m.ci_low, m.ci_high) for n, m in _values(CostAggregate()).items()}

    def unread(self: RetrievalDataset) -> dict[str, dict[str, int]]:
        raise AssertionError("the judgments were read")

    monkeypatch.setattr(RetrievalDataset, "qrels", unread)
    got = _values(CostAggregate())
    assert {n: (m.value, m.ci_low, m.ci_high) for n, m in got.items()} == before
    with pytest.raises(AssertionError, match="the judgments were read"):
        _values(CostAggregate(budget=8))


def test_no_context_is_na_with_its_count_never_zero() -> None:
    """Subject b's every search failed: n/a with its count beside a's values; with no subject
    returning a context, the task gets no context measures at all."""
    both = replace(TASK, subjects=["a", "b"])
    got = {
        (m.subject, m.name): m
        for m in CostAggregate().compute(both, {"a": ITEMS, "b": [ITEMS[-1]]}).measures
    }
    b = got[("b", "context_tokens.mean")]
    assert (b.value, b.n_scored, b.n_failed) == (None, 0, 1)
    assert b.note == "no query returned a context (every search failed, or none was asked)"
    assert got[("a", "context_tokens.mean")].value is not None
    alone = CostAggregate().compute(TASK, {"a": [ITEMS[-1]]}).measures
    assert {m.name for m in alone} == {"latency_ms.mean", "latency_ms.p50", "latency_ms.p95"}
    assert all(m.value is None and m.n_failed == 1 for m in alone)


def test_it_is_registered_and_its_spec_is_checked() -> None:
    built = AGGREGATES.build({"cost": {"encoding": "cl100k_base", "budget": 2000}})
    assert isinstance(built, CostAggregate)
    assert (built.encoding, built.budget) == ("cl100k_base", 2000)
    with pytest.raises(UsageError, match="budget 0"):
        CostAggregate(budget=0)
    with pytest.raises(UsageError, match="'exact' is none of its evaluators"):
        CostAggregate(accuracy="exact").compute(TASK, {"a": ITEMS})
    (problem,) = AGGREGATES.problems({"cost": {"encoding": "p50k_base"}})
    assert "encoding" in str(problem)
    assert "context_tokens.p50" in built.measure_names(TASK)
    assert "budget_cut_relevant_rate" in built.measure_names(TASK)


def test_accuracy_against_tokens_and_latency_is_drawn_per_subject_by_hand() -> None:
    from memgauge.data.shapes import Curve, Table

    result = CostAggregate(encoding="cl100k_base").compute(TASK, {"a": ITEMS})
    table, tokens, latency, measures = result.shapes
    assert isinstance(table, Table)
    assert table.key == "cost-accuracy"
    [row] = table.rows
    assert row[0].text == "a"
    # mean recall of the three answered queries (1, 0.5, 0; the failed one is no 0)
    assert (row[1].value, row[1].n) == (pytest.approx(0.5), 3)
    assert (row[2].value, row[3].value) == (8.0, 20.0)  # median tokens (8, 1, 10), ms
    for curve, x in ((tokens, 8.0), (latency, 20.0)):
        assert isinstance(curve, Curve)
        assert curve.style == "scatter"
        [series] = curve.series
        assert series.name == "a"
        assert series.points == [(x, pytest.approx(0.5))]
        assert series.n == [3]
        assert series.y_ci is not None
        assert series.x_ci is not None
        (y_ci,), (x_ci,) = series.y_ci, series.x_ci
        assert y_ci is not None
        assert x_ci is not None
        assert y_ci[0] <= 0.5 <= y_ci[1]
        assert x_ci[0] <= x <= x_ci[1]
    assert tokens.x == "context tokens per query (median, cl100k_base)"
    assert latency.x == "latency per query (ms, median, stage total)"
    assert tokens.y == "Recall@10"
    # every cost measure is still shown, as before the charts
    assert isinstance(measures, Table)
    assert [r[0].text for r in measures.rows][:2] == ["context_tokens.mean", "context_tokens.p50"]
    # a result read back is drawn as it was computed; what programs read is typed
    again = AggregateResult.model_validate_json(result.model_dump_json())
    assert again.shapes == result.shapes
    assert again.facts_as(CostFacts) == result.facts_as(CostFacts)


def test_no_accuracy_no_dot() -> None:
    no_eval = replace(TASK, evaluators=[])
    result = CostAggregate(encoding="cl100k_base").compute(no_eval, {"a": ITEMS})
    assert [s.type for s in result.shapes] == ["table"]  # the measures only
    facts = result.facts_as(CostFacts)
    assert facts is not None
    assert (facts.encoding, facts.accuracy) == ("cl100k_base", None)
