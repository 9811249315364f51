"""Write events and capabilities: what a memory system did to its store, and what it can do.

A write event says what happened to one memory (ADD, UPDATE, DELETE, NOOP, INVALIDATE,
EXTRACT) and how memgauge knows: `returned` by the system (mem0's add() results), `traced`
from its calls, or `diffed` from dumps taken before and after an operation (a diff cannot see
NOOPs or extractions, and sees an UPDATE only when an id survives with new text).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

__all__ = [
    "Capabilities",
    "EventKind",
    "EventSource",
    "WriteEvent",
    "capabilities_of",
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


def capabilities_of(system: object) -> Capabilities:
    """The subject's declared capabilities (`capabilities` attribute), or none claimed."""
    caps = getattr(system, "capabilities", None)
    return caps if isinstance(caps, Capabilities) else Capabilities()
