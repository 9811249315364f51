"""The agent metrics' RR@K (the cold-start ratio, the personalization lift) read from the ir
aggregate's own values of that measure when the run computed it, and computed alone otherwise:
one value either way."""

from __future__ import annotations

from typing import Any

import pytest
from tests.helpers import ScriptedSystem

from memgauge import api
from memgauge.aggregates import agent_summary
from memgauge.data.models import EvalQuery, Judgment, Memory, RetrievalDataset
from memgauge.report import retrieval_result


def _dataset() -> RetrievalDataset:
    memories = [Memory(id=f"m{i}", text=f"memory {i}", tier="normal") for i in range(1, 8)]
    queries = [
        EvalQuery(id="q1", text="one", category="cold-start"),
        EvalQuery(id="q2", text="two", category="cold-start"),
        EvalQuery(id="q3", text="three", category="temporal"),
        EvalQuery(id="q4", text="four", category="temporal"),  # nothing relevant: RR 0
        EvalQuery(id="q5", text="five", category="temporal"),
    ]
    judgments = [
        Judgment(query_id="q1", memory_id="m1", grade=3),
        Judgment(query_id="q2", memory_id="m2", grade=2),
        Judgment(query_id="q3", memory_id="m4", grade=3),
        Judgment(query_id="q4", memory_id="m5", grade=1),
        Judgment(query_id="q5", memory_id="m7", grade=2),
    ]
    return RetrievalDataset(name="rr", memories=memories, queries=queries, judgments=judgments)


# RR@5: q1 1, q2 1/2, q3 1/3, q4 0, q5 0 (m7 at rank 6, past the cutoff; a duplicate before it)
ANSWERS = {
    "one": ["m1", "m2"],
    "two": ["m3", "m2"],
    "three": ["m6", "m5", "m4"],
    "four": ["m5"],
    "five": ["m1", "m2", "m2", "m3", "m4", "m5", "m7"],
}


def _cold_ratio(measures: tuple[str, ...], monkeypatch: pytest.MonkeyPatch) -> tuple[Any, int]:
    calls = []
    alone = agent_summary.evaluate_ranked

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls.append(args[2])
        return alone(*args, **kwargs)

    monkeypatch.setattr(agent_summary, "evaluate_ranked", counted)
    report = api.evaluate(
        _dataset(),
        {"a": ScriptedSystem("a", ANSWERS)},  # type: ignore[dict-item]
        measures=measures,
        k=10,
        resamples=200,
        store=False,
    )
    system = retrieval_result(report.run).systems[0]
    return system.agent_metrics["cold_start_mrr_ratio@5"], len(calls)


def test_the_agent_metrics_read_rr_from_the_measure_the_run_computed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    shared, computed_again = _cold_ratio(("RR@5", "nDCG@10"), monkeypatch)
    alone, computed_alone = _cold_ratio(("nDCG@10",), monkeypatch)
    assert computed_again == 0  # RR@5 was among the run's measures
    assert computed_alone == 1  # it was not: the agent metrics compute it
    # cold: (1 + 1/2) / 2, warm: (1/3 + 0 + 0) / 3
    assert shared.value == pytest.approx(0.75 / (1 / 9))
    assert shared.model_dump() == alone.model_dump()


def test_rr_is_computed_alone_where_the_run_scores_no_relevant_otherwise(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls = []
    alone = agent_summary.evaluate_ranked
    monkeypatch.setattr(
        agent_summary, "evaluate_ranked", lambda *a, **k: calls.append(1) or alone(*a, **k)
    )
    report = api.evaluate(
        _dataset(),
        {"a": ScriptedSystem("a", ANSWERS)},  # type: ignore[dict-item]
        measures=("RR@5",),
        k=10,
        resamples=200,
        store=False,
        no_relevant="skip",
    )
    system = retrieval_result(report.run).systems[0]
    assert calls == [1]  # the run's RR@5 is NaN where nothing is relevant; the metric's is 0
    assert system.agent_metrics["cold_start_mrr_ratio@5"].value == pytest.approx(0.75 / (1 / 9))
