"""The agent metrics' fusion reorder rate reads each hit's recorded channel ranks as they
are (a mapping), not a copy of each; a recorded form that is not a dict is made one, as
before, and the hits are left as they were."""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

import pytest

from memgauge.aggregates.agent_summary import agent_metrics_for
from memgauge.aggregates.hits import Found
from memgauge.data.models import EvalQuery, Judgment, Memory, RetrievalDataset
from memgauge.metrics import agent


def test_fusion_reorder_rate_of_recorded_channel_ranks(monkeypatch: pytest.MonkeyPatch) -> None:
    memories = [Memory(id=f"m{i}", text=f"memory {i}") for i in range(1, 6)]
    queries = [EvalQuery(id="q1", text="one"), EvalQuery(id="q2", text="two")]
    judgments = [
        Judgment(query_id="q1", memory_id="m1", grade=3),
        Judgment(query_id="q2", memory_id="m2", grade=3),
    ]
    dataset = RetrievalDataset(name="f", memories=memories, queries=queries, judgments=judgments)
    hits: dict[str, list[dict[str, Any]]] = {
        "q1": [
            {"id": "m1", "channel_ranks": {"lexical": 2, "dense": 1}},  # rank 1: in place
            {"id": "m2", "channel_ranks": MappingProxyType({"dense": 1})},  # rank 2: moved
            {"id": "m3", "channel_ranks": {"lexical": 3}},  # rank 3: in place
            {"id": "m4", "channel_ranks": None},  # no ranks: not counted
            {"id": "m5"},
        ],
        "q2": [
            {"id": "m2", "channel_ranks": {}},  # empty: not counted
            {"id": "m1", "channel_ranks": {"lexical": 1}},  # rank 2: moved
        ],
    }
    recorded = repr(hits)
    seen: dict[str, Any] = {}
    rate = agent.fusion_reorder_rate

    def spy(ranks: Any, k: int) -> Any:
        seen.update(ranks)
        return rate(ranks, k)

    monkeypatch.setattr(agent, "fusion_reorder_rate", spy)
    results = {q: Found(h, {}) for q, h in hits.items()}
    qrels = {"q1": {"m1": 3}, "q2": {"m2": 3}}
    got = agent_metrics_for(dataset, qrels, queries, results, {}, 5, 2)
    fusion = got.metrics["fusion_reorder_rate@5"]
    assert (fusion.value, fusion.n) == (2 / 4, 4)
    assert repr(hits) == recorded
    # a recorded dict is read as it is; the rest as before
    assert seen["q1"][0] is hits["q1"][0]["channel_ranks"]
    assert seen["q2"][1] is hits["q2"][1]["channel_ranks"]
    assert seen["q1"][1:] == [{"dense": 1}, {"lexical": 3}, {}, {}]
    # past the cutoff nothing is read: a rank form that could not be read is never reached
    results["q2"].hits.append({"id": "m3", "channel_ranks": 7})
    got = agent_metrics_for(dataset, qrels, queries, results, {}, 2, 2)
    assert got.metrics["fusion_reorder_rate@2"].value == 2 / 3
