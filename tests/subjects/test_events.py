"""Write events derived by diffing dumps."""

from __future__ import annotations

import pytest

from memgauge.data.models import Memory
from memgauge.subjects.events import Capabilities, WriteEvent, diff_dumps


def test_diff_dumps_finds_adds_updates_and_deletes_in_a_stable_order() -> None:
    before = [
        Memory(id="a", text="likes tea"),
        Memory(id="b", text="lives in Paris"),
        Memory(id="c", text="has a dog"),
    ]
    after = [
        Memory(id="b", text="lives in Lyon"),
        Memory(id="c", text="has a dog"),
        Memory(id="e", text="works at ACME"),
        Memory(id="d", text="prefers short answers"),
    ]
    assert diff_dumps(before, after) == [
        WriteEvent("DELETE", "a", previous_text="likes tea", source="diffed"),
        WriteEvent(
            "UPDATE", "b", text="lives in Lyon", previous_text="lives in Paris", source="diffed"
        ),
        WriteEvent("ADD", "d", text="prefers short answers", source="diffed"),
        WriteEvent("ADD", "e", text="works at ACME", source="diffed"),
    ]
    assert diff_dumps(before, before) == []  # nothing changed: no events (NOOPs are invisible)


def test_capabilities_default_to_nothing_claimed() -> None:
    caps = Capabilities()
    assert not any(vars(caps).values())
    assert Capabilities(scores=True, dump=True).dump


def test_adapters_declare_what_they_can_do(monkeypatch: pytest.MonkeyPatch) -> None:
    from pathlib import Path

    from memgauge.subjects.events import capabilities_of
    from memgauge.subjects.python_import import PythonSubject
    from memgauge.subjects.reference import ReferenceMemory

    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parents[1] / "data" / "subjects"))
    ref = capabilities_of(ReferenceMemory.in_memory())
    assert ref == Capabilities(scores=True, dump=True, session_context=True, namespaces=True)
    py = capabilities_of(PythonSubject("keyword_memory:KeywordMemory"))
    assert py == Capabilities(dump=True, answers=True)  # it also answers, from its memory
    assert capabilities_of(object()) == Capabilities()
