"""The subject kinds built over another memory subject given as a spec of its own:
`memory-agent` (a reader model over a memory's hits) and `memory-extractor` (a memory's own
extraction scored as an extractor). Their entry points name `memgauge.subjects.specs`, which
loads this module when one of them is asked for."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from pydantic import Field, create_model

from memgauge._util.registry import SpecArgs, SpecProblem, args_model_of, takes
from memgauge.subjects.agents import MemoryAgent
from memgauge.subjects.extractors import MemoryExtractor
from memgauge.subjects.protocol import close_subject
from memgauge.subjects.registry import build_subject, check_subject

__all__ = ["memory_agent", "memory_extractor"]

T = TypeVar("T")


class _WithMemory(SpecArgs):
    """A component over a memory subject given as a spec of its own."""

    memory: dict[str, Any] = Field(description="The memory: a subject spec {kind: {args}}.")

    def more_problems(self) -> list[SpecProblem]:
        return [p.under("memory") for p in check_subject(self.memory)]


def _over_memory(cls: type) -> type[SpecArgs]:
    """`cls`'s argument model, its `memory` a subject spec instead of a live subject."""
    base = args_model_of(cls)
    fields = {
        name: (f.annotation, f)
        for name, f in (base.model_fields.items() if base is not None else ())
        if name != "memory"
    }
    model: type[SpecArgs] = create_model(  # type: ignore[call-overload]
        f"{cls.__name__}Args", __base__=_WithMemory, **fields
    )
    return model


@takes(_over_memory(MemoryAgent))
def memory_agent(memory: dict[str, Any], **options: Any) -> MemoryAgent:
    """A memory subject searched for the question, and a reader model over the hits."""
    return _over(memory, lambda built: MemoryAgent(built, **options))


@takes(_over_memory(MemoryExtractor))
def memory_extractor(memory: dict[str, Any]) -> MemoryExtractor:
    """A memory system's own extraction (its write events), scored as an extractor."""
    return _over(memory, MemoryExtractor)


def _over(memory: dict[str, Any], make: Callable[[Any], T]) -> T:
    """`make` over the memory `memory` specifies, which is closed when `make` refuses it (an
    agent's LLM settings that cannot work): built first, it held its process, connection or
    client open until the garbage collector found it."""
    built = build_subject(memory)
    try:
        return make(built)
    except BaseException:
        close_subject(built)
        raise
