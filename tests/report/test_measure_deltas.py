"""`runs compare A B`'s table of the aggregates' measures: which numbers it holds beside the
paired rows of the evaluators, and how it says their direction."""

from __future__ import annotations

from rich.console import Console

from memgauge.data.records import (
    AggregateResult,
    EvaluatorSummary,
    MeasureValue,
    RunSummary,
    TargetCheck,
)
from memgauge.report.shapes import deltas_table
from memgauge.report.shapes_terminal import print_shape
from memgauge.runs.suite_compare import measure_deltas


def _summary(subject: str, recall: float, hallucinated: float) -> RunSummary:
    def measure(name: str, value: float, **more: object) -> MeasureValue:
        return MeasureValue.model_validate(
            {"subject": subject, "task": "t", "name": name, "value": value, "n_scored": 5} | more
        )

    row = EvaluatorSummary(
        subject=subject, task="t", evaluator="nDCG@10", mean=0.5, n_scored=5, n_failed=0
    )
    return RunSummary(
        evaluators=[row],
        aggregates=[
            AggregateResult(
                aggregate="audit",
                task="t",
                measures=[
                    measure("nDCG@10", 0.5, source="ir"),  # the evaluator's row says it
                    measure("recall_accuracy", recall),
                    measure("hallucinated_memory_rate", hallucinated, higher_is_better=False),
                    measure("per_category", 0.1, primary=False),
                    measure("targeted_breakdown", 0.2, primary=False),
                ],
            )
        ],
        targets=[
            TargetCheck(
                subject=subject,
                task="t",
                measure="targeted_breakdown",
                op=">=",
                target=0,
                value=0.2,
                met=True,
                source="the suite",
            )
        ],
    )


def test_the_rows_are_the_measures_beyond_the_evaluators_with_b_minus_a() -> None:
    rows = measure_deltas(_summary("mem", 0.6, 0.2), _summary("mem", 0.8, 0.4))
    by = {r["measure"]: r for r in rows}
    # the evaluator's own number is compared item by item, not here
    assert set(by) == {
        "recall_accuracy",
        "hallucinated_memory_rate",
        "per_category",
        "targeted_breakdown",
    }
    assert by["recall_accuracy"]["delta"] == 0.8 - 0.6
    assert (by["recall_accuracy"]["a"]["value"], by["recall_accuracy"]["b"]["value"]) == (0.6, 0.8)
    # the gate decides on primary and targeted measures; a breakdown is information
    assert {m for m, r in by.items() if r["headline"]} == {
        "recall_accuracy",
        "hallucinated_memory_rate",
        "targeted_breakdown",
    }


def test_two_single_subject_runs_pair_up_and_a_missing_side_is_none() -> None:
    a = _summary("lexical", 0.6, 0.2)
    b = _summary("hybrid", 0.8, 0.4)
    b.aggregates[0].measures.pop(1)  # B has no recall_accuracy
    by = {r["measure"]: r for r in measure_deltas(a, b)}
    assert by["hallucinated_memory_rate"]["subject"] == "lexical / hybrid"
    assert by["recall_accuracy"]["b"] is None
    assert by["recall_accuracy"]["delta"] is None


def test_the_table_says_which_measure_is_better_lower() -> None:
    rows = measure_deltas(_summary("mem", 0.6, 0.2), _summary("mem", 0.8, 0.4))
    out = Console(width=200, record=True)
    print_shape(out, deltas_table(rows, "A1", "B1"))
    text = out.export_text()
    assert "hallucinated_memory_rate: lower is better" in text
    assert "recall_accuracy: lower is better" not in text
    assert "0.800 (n=5)" in text
    assert "+0.200" in text
