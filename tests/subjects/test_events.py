"""Write events derived by diffing dumps."""

from __future__ import annotations

import pytest

from memgauge.subjects.events import Capabilities


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
