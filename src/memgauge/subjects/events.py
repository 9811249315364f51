"""Write events and capabilities: what a memory system did to its store, and what it can do.

A write event says what happened to one memory (ADD, UPDATE, DELETE, NOOP, INVALIDATE,
EXTRACT) and how memgauge knows: `returned` by the system (mem0's add() results), `traced`
from its calls, or `diffed` from dumps taken before and after an operation. Diffing works for
any subject that can dump; it cannot see NOOPs or extractions, and it reports an UPDATE only
when an id survives with new text.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Literal

from memgauge.data.models import Memory

__all__ = [
    "Capabilities",
    "EventKind",
    "EventSource",
    "WriteEvent",
    "capabilities_of",
    "diff_dumps",
]

EventKind = Literal["ADD", "UPDATE", "DELETE", "NOOP", "INVALIDATE", "EXTRACT"]
EventSource = Literal["returned", "traced", "diffed"]


@dataclass(frozen=True)
class WriteEvent:
    """One change to one memory."""

    kind: EventKind
    memory_id: str | None
    text: str | None = None
    previous_text: str | None = None
    source: EventSource = "returned"
    detail: dict[str, object] = field(default_factory=dict)


@dataclass(frozen=True)
class Capabilities:
    """What a subject can do; evaluations that need a missing capability say so, not fail."""

    scores: bool = False
    write_events: bool = False
    background_indexing: bool = False
    dump: bool = False
    session_context: bool = False
    namespaces: bool = False
    concurrent: bool = False
    """Calls may come from several threads at once (else a run gives it one thread)."""
    answers: bool = False
    """It is an agent: `answer(question, history=...)` returns text."""


def diff_dumps(before: Iterable[Memory], after: Iterable[Memory]) -> list[WriteEvent]:
    """ADD / UPDATE / DELETE events that turn `before` into `after`, in a stable order
    (deletions, then updates, then additions, each by id)."""
    old = {m.id: m for m in before}
    new = {m.id: m for m in after}
    events = [
        WriteEvent("DELETE", mid, previous_text=old[mid].text, source="diffed")
        for mid in sorted(old.keys() - new.keys())
    ]
    events += [
        WriteEvent("UPDATE", mid, text=new[mid].text, previous_text=old[mid].text, source="diffed")
        for mid in sorted(old.keys() & new.keys())
        if old[mid].text != new[mid].text
    ]
    events += [
        WriteEvent("ADD", mid, text=new[mid].text, source="diffed")
        for mid in sorted(new.keys() - old.keys())
    ]
    return events


def capabilities_of(system: object) -> Capabilities:
    """The subject's declared capabilities (`capabilities` attribute), or none claimed."""
    caps = getattr(system, "capabilities", None)
    return caps if isinstance(caps, Capabilities) else Capabilities()
