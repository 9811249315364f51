"""Messages reached from Python name the keyword the caller gave, not the command's flag
(`argument`): `pool_depth=N`, not `--pool-depth N`, a flag of a command never run."""

from __future__ import annotations

import pytest

import memgauge
from memgauge.aggregates.ir import IRAggregate
from memgauge.aggregates.ir_values import ir_values
from memgauge.data.demo import demo_dataset
from memgauge.data.models import EvalQuery, Memory, RetrievalDataset
from memgauge.errors import UsageError


def test_a_pool_judge_without_a_depth_names_pool_depth() -> None:
    with pytest.raises(UsageError) as refused:
        IRAggregate(pool_judge="relevance")
    assert str(refused.value) == "a pool judge needs a pool depth (pool_depth=N)"


def test_searching_short_of_longmemevals_cutoff_says_search_deeper_than_k() -> None:
    turns = ["s1_1", "s1_2", "s2_1", "s3_1"]
    dataset = RetrievalDataset(
        name="t",
        memories=[Memory(id=t, text=t) for t in turns],
        queries=[EvalQuery(id="q", text="x")],
        judgments=[{"query_id": "q", "memory_id": "s3_1", "grade": 3}],
    )
    *_, notes = ir_values(
        dataset,
        {"q": {"s3_1": 3}},
        {"q": ["s1_1"]},
        dataset.queries,
        ["session_recall_any@2"],
        rel_threshold=2,
        gain="exp",
        k=1,
    )
    (note,) = notes
    assert "search deeper than k=1 for its exact values" in note, note


def test_a_memory_searched_as_it_stands_from_python_names_ingest_false() -> None:
    report = memgauge.evaluate(demo_dataset(), ["lexical"], store=False, ingest=False)
    (failure,) = report.items[0].failures
    assert failure.message.startswith("searched as it stands (ingest=False,"), failure.message
    assert failure.message.endswith("evaluate it in a run without ingest=False")
    assert "--" not in failure.message
