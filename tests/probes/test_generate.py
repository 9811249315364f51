"""Probe generation from memaudit conversations: which probes, what they expect, and
hallucination questions that never collide with what the dataset says."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from memgauge.data.io import load_conversations
from memgauge.data.models import ConversationDataset
from memgauge.probes.generate import NOT_MENTIONED, generate_probes, question_for
from memgauge.probes.metrics import audit_metrics, wilson

SAMPLE = Path(__file__).resolve().parents[2].parent / "shared" / "datasets" / "memaudit-sample.json"


def _ds(convs: list[dict[str, object]]) -> ConversationDataset:
    return ConversationDataset.model_validate({"id": "t", "conversations": convs})


@pytest.mark.parametrize(
    ("fact", "question", "answer"),
    [
        ("User's name is Sarah", "What is the user's name?", "Sarah"),
        (
            "User works with Python and TypeScript",
            "What does the user work with?",
            "Python and TypeScript",
        ),
        (
            "User now mainly uses Rust instead of Python",
            "What does the user mainly use?",
            "Rust",
        ),
        ("User has a dog named Max", "What does the user have?", "a dog named Max"),
        ("User lives in Berlin.", "What does the user live in?", "Berlin"),
        (
            "User moved to Lisbon in 2023",
            "What do you remember about when the user moved to ...?",
            "Lisbon in 2023",
        ),
        (
            "User is a software engineer",
            "What do the conversations say the user is?",
            "a software engineer",
        ),
    ],
)
def test_questions_do_not_give_the_answer_away(fact: str, question: str, answer: str) -> None:
    q, a = question_for(fact)
    assert (q, a) == (question, answer)
    assert a.lower() not in q.lower()


def test_the_sample_gets_every_probe_type_and_no_pet_question() -> None:
    ds = load_conversations(SAMPLE)
    probes = generate_probes(ds)
    kinds = {p.type for p in probes}
    assert kinds == {"recall", "conflict", "temporal", "hallucination"}
    recall_facts = {p.related_facts[0] for p in probes if p.type == "recall"}
    assert "fact-3" not in recall_facts  # superseded by fact-5: not a recall probe
    (conflict,) = [p for p in probes if p.type == "conflict"]
    assert conflict.expected == "Rust"  # not "Rust instead of Python": that holds the old value
    assert conflict.metadata["old_values"] == ["User works with Python and TypeScript"]
    # memaudit's generator asks for the pet's name although the user has a dog named Max
    asked = [p.question for p in probes if p.type == "hallucination"]
    words = set(re.findall(r"[a-z]+", json.dumps(asked).lower()))
    assert not words & {"pet", "pets", "dog", "cat", "animal", "max"}
    assert all(p.expected == NOT_MENTIONED for p in probes if p.type == "hallucination")
    # deterministic for a seed
    assert [p.item() for p in generate_probes(ds)] == [p.item() for p in probes]


def test_hallucination_topics_avoid_every_word_the_dataset_uses() -> None:
    turns = [{"role": "user", "content": "My sister drives a red car and I play the guitar."}]
    probes = generate_probes(_ds([{"id": "c", "turns": turns}]), n_hallucination=50)
    questions = " ".join(p.question for p in probes if p.type == "hallucination").lower()
    for topic in ("sister", "car", "instrument"):
        assert topic not in questions
    assert "blood type" in questions


def test_long_conflict_chains_keep_every_old_value() -> None:
    facts = [
        {"id": "a", "content": "User lives in Paris", "timestamp": "2024-01-01T00:00:00Z"},
        {
            "id": "b",
            "content": "User lives in Rome",
            "timestamp": "2024-02-01T00:00:00Z",
            "supersedes": "a",
        },
        {
            "id": "c",
            "content": "User lives in Oslo",
            "timestamp": "2024-03-01T00:00:00Z",
            "supersedes": "b",
        },
    ]
    probes = generate_probes(_ds([{"id": "c1", "turns": [], "facts": facts}]))
    conflicts = {p.id: p for p in probes if p.type == "conflict"}
    assert conflicts["conflict-c"].expected == "Oslo"
    assert conflicts["conflict-c"].metadata["old_values"] == [
        "User lives in Rome",
        "User lives in Paris",
    ]
    assert [p.expected for p in probes if p.type == "recall"] == ["Oslo"]
    temporal = [p for p in probes if p.type == "temporal"]
    assert {p.expected for p in temporal} == {"User lives in Paris", "User lives in Rome"}


def test_metrics_have_counts_and_wilson_intervals_and_say_na_without_probes() -> None:
    rows = [{"type": "recall", "correct": c} for c in (True, True, False, None)]
    rows += [{"type": "hallucination", "correct": c} for c in (True, False, False)]
    out = audit_metrics(rows)
    assert out["metrics"]["recall_accuracy"] == pytest.approx(2 / 3)
    assert out["counts"]["recall_accuracy"]["n_failed"] == 1
    assert out["metrics"]["hallucinated_memory_rate"] == pytest.approx(2 / 3)
    assert out["metrics"]["conflict_resolution_accuracy"] is None
    assert out["counts"]["temporal_accuracy"]["n_probes"] == 0
    assert out["counts"]["recall_accuracy"]["ci95"] == pytest.approx(list(wilson(2, 3) or ()))


def test_possessives_and_plurals_count_as_topic_words() -> None:
    turns = [{"role": "user", "content": "My dog's name is Rex and my sisters live abroad."}]
    probes = generate_probes(_ds([{"id": "c", "turns": turns}]), n_hallucination=50)
    asked = " ".join(p.question for p in probes if p.type == "hallucination").lower()
    assert "cat" not in asked
    assert "sister" not in asked


def test_facts_with_and_without_a_time_zone_still_order() -> None:
    facts = [
        {"id": "a", "content": "User moved to Oslo", "timestamp": "2024-01-01"},
        {"id": "b", "content": "User adopted a cat", "timestamp": "2024-01-02T10:00:00Z"},
    ]
    probes = generate_probes(_ds([{"id": "c", "turns": [], "facts": facts}]))
    (temporal,) = [p for p in probes if p.type == "temporal"]
    assert temporal.expected == "User moved to Oslo"


def test_facts_that_make_the_same_question_become_one_probe() -> None:
    facts = [
        {"id": "a", "content": "User has a dog named Max"},
        {"id": "b", "content": "User has two kids"},
        {"id": "c", "content": "Loves the sea", "category": "preference"},
    ]
    probes = generate_probes(_ds([{"id": "c1", "turns": [], "facts": facts}]))
    recall = {p.question: p for p in probes if p.type == "recall"}
    assert recall["What does the user have?"].expected == ["a dog named Max", "two kids"]
    neutral = recall["What do you remember about the user's preferences?"]
    assert neutral.expected == "Loves the sea"


@pytest.mark.parametrize("answer", ["", " \n", "\u200b", "\ufeff\u2060 "])
def test_an_empty_answer_is_a_failure_not_a_hallucination(answer: str) -> None:
    # an answer of zero-width characters alone ('\u200b') shows nothing either: it was scored
    # as an answer that invented (blank text is one rule: `data.models.blank`)
    from memgauge.scorers import AuditMatch, EvalContext

    score = AuditMatch(cosine=None).evaluate(
        EvalContext(output=answer, expected="x", metadata={"probe_type": "hallucination"})
    )
    assert score.value is None
    assert "empty answer" in (score.error or "")


def test_a_temporal_reason_shows_the_chosen_event_as_text_not_a_repr() -> None:
    from memgauge.scorers import AuditMatch, EvalContext

    first = "User's dog moved to Oslo\n"
    score = AuditMatch(cosine=None).evaluate(
        EvalContext(
            output="The user's dog moved to Oslo first",
            expected=first,
            metadata={"probe_type": "temporal", "options": [first, "User bought a car in Rome"]},
        )
    )
    assert score.passed is True
    assert score.reason == 'chose "User\'s dog moved to Oslo"'
