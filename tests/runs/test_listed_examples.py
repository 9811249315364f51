"""`listed_examples`: the one reading of the entries a subject's summary lists (failures, wrong
answers, probes) as an examples list, shared by the aggregates that show them."""

from __future__ import annotations

from memgauge.aggregates.audit import AuditAggregate
from memgauge.aggregates.base import failure_examples, listed_examples
from memgauge.data.shapes import Examples

SUBJECTS = {
    "a": {
        "failures": [{"id": 9, "error": "boom"}, {"id": "z", "error": None}],
        "probes": [
            {
                "id": "p1",
                "type": "recall",
                "question": "q?",
                "expected": "e",
                "answer": None,
                "reason": "r",
                "correct": None,
            },
            {
                "id": "p2",
                "type": "conflict",
                "question": "q2",
                "expected": "e2",
                "answer": "x",
                "reason": "rr",
                "correct": True,
            },
        ],
    },
    "b": {"failures": None},
}


def test_entries_in_subject_order_failed_unless_told() -> None:
    [shown] = listed_examples("T", SUBJECTS, "failures", lambda f: str(f["error"]))
    assert shown.title == "T"
    assert [(e.id, e.subject, e.text, e.ok) for e in shown.items] == [
        ("9", "a", "boom", False),
        ("z", "a", "None", False),
    ]
    assert listed_examples("T", {"b": {}}, "failures", str) == []


def test_failures_and_probes_read_through_it() -> None:
    [failed] = failure_examples(SUBJECTS)
    assert [(e.text, e.ok) for e in failed.items] == [("boom", False), ("failed", False)]
    probes = AuditAggregate.shapes_from({"subjects": {"a": SUBJECTS["a"]}})[-1]
    assert isinstance(probes, Examples)
    assert [(e.text, e.ok) for e in probes.items] == [
        ("recall: q? · expected e · answered  · r", None),
        ("conflict: q2 · expected e2 · answered x · rr", True),
    ]
