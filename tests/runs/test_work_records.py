"""The engine's item and verdict records (`runs.work`) are copies of a record with every field
set: each gets its own containers, and its fields set are what `model_construct` of every field
gives."""

from __future__ import annotations

from pathlib import Path

from memgauge.data.models import Memory
from memgauge.data.records import ItemRecord, ScoreRecord
from memgauge.runs.kinds.base import PlannedItem, PlannedTask
from memgauge.runs.suite import TaskSpec
from memgauge.runs.work import _record, _score_record, answer_item, score_item
from memgauge.scorers import Score
from memgauge.scorers.retrieval import RetrievalMeasure
from memgauge.subjects.reference import ReferenceMemory, ReferenceMemoryConfig


def _task() -> PlannedTask:
    spec = TaskSpec.model_validate(
        {
            "name": "t",
            "kind": "retrieval",
            "dataset": "d",
            "k": 3,
            "evaluators": [{"retrieval": "RR@3"}],
        }
    )
    items = [
        PlannedItem(id=f"q{i}", input=f"where is the cat {i}", expected={"m1": 3}, category="c")
        for i in range(2)
    ]
    evaluators = [
        ("RR@3", RetrievalMeasure("RR@3"), 1.0),
        ("nDCG@3", RetrievalMeasure("nDCG@3"), 1.0),
    ]
    return PlannedTask(spec, items, evaluators, memories=None, dataset_sha256=None)


def test_item_records_share_no_container_and_set_every_field() -> None:
    task = _task()
    a, b = (_record(task, "s", it, attempts=1, output=[]) for it in task.items)
    for field in ("input", "latency_ms", "extra", "scores", "failures"):
        assert getattr(a, field) is not getattr(b, field), field
    a.extra["x"] = 1
    a.scores.append(ScoreRecord(evaluator="e", value=1.0))
    assert b.extra == {}
    assert b.scores == []
    assert _record(task, "s", task.items[0]).extra == {}
    built = ItemRecord.model_construct(
        subject="s",
        task="t",
        item_id="q1",
        seq=0,
        status="queued",
        category="c",
        input={},
        expected=None,
        output=[],
        latency_ms={},
        extra={},
        scores=[],
        score=None,
        failures=[],
        attempts=1,
        started_at=None,
        finished_at=None,
        duration_ms=None,
        repeat=0,
    )
    assert b == built
    assert b.model_fields_set == built.model_fields_set == set(ItemRecord.model_fields)
    assert list(vars(b)) == list(vars(built))


def test_a_verdict_record_has_its_own_detail_and_every_field_set() -> None:
    detail = {"raw_reply": "yes", "fallback": True, "k": [1]}
    score = Score(value=1, passed=1, reason="fine", detail=detail)  # type: ignore[arg-type]
    made = _score_record("judge", score, str.upper)
    assert made == ScoreRecord(
        evaluator="judge",
        value=1.0,
        passed=True,
        reason="FINE",
        fallback=True,
        detail={"fallback": True, "k": [1]},
        raw_reply="yes",
    )
    assert detail == {"raw_reply": "yes", "fallback": True, "k": [1]}  # the Score's untouched
    plain = _score_record("RR", Score(value=0.5), str.upper)
    other = _score_record("RR", Score(value=0.25), str.upper)
    assert plain.detail is not other.detail
    plain.detail["x"] = 1
    assert other.detail == {}
    assert _score_record("RR", Score(value=0.5), str).detail == {}
    assert plain.model_fields_set == set(ScoreRecord.model_fields)
    assert (plain.fallback, plain.raw_reply, plain.passed, plain.error) == (False, None, None, None)


def test_answered_and_scored_records_of_a_real_memory(tmp_path: Path) -> None:
    task = _task()
    memory = ReferenceMemory(ReferenceMemoryConfig(mode="lexical", path=tmp_path / "m.db"))
    memory.reset()
    memory.ingest([Memory(id="m1", text="the cat is on the mat"), Memory(id="m2", text="a dog")])
    rows = []
    for item in task.items:
        answered, t0 = answer_item(memory, "ref", False, task, item)
        rows.append(score_item(task, item, answered, t0))
    first, second = rows
    assert [s.evaluator for s in first.scores] == ["RR@3", "nDCG@3"]
    assert [s.value for s in first.scores] == [1.0, 1.0]
    assert first.score == 1.0
    assert first.scores[0].reason == "RR@3 = 1.000"
    assert first.extra is not second.extra
    assert first.scores is not second.scores
    assert first.model_fields_set == set(ItemRecord.model_fields)
