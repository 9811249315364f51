"""Fact extractors under test (seed 001): something that, given the existing memory and a
conversation, returns the memory as it should stand afterwards.

Specs: `{python: {target: pkg.mod:factory, kwargs: {...}}}` (an object with
`extract(conversation, existing_memory)`, or such a function), `{llm: {model: ...}}` (the
built-in LLM extractor, prompted to add what the user stated or agreed to, replace what they
changed, and ignore chit-chat, questions, maybes and suggestions they did not accept), and
`{memory: {kind: {args}}}` (any memory subject that can dump: reset, ingest the existing
memory and the user's turns, dump; mem0 with inference on extracts as it ingests).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from pydantic import ConfigDict, Field

from memgauge._util.model import Model
from memgauge.data.models import Memory, Turn
from memgauge.errors import UsageError
from memgauge.subjects.prompted import PromptedLLM

__all__ = ["EXTRACT_PROMPT", "LLMExtractor", "MemoryExtractor"]

EXTRACT_PROMPT = """You keep a memory of facts about the user's business and preferences.

EXISTING MEMORY:
{existing}

CONVERSATION:
{conversation}

Return the complete memory after this conversation, one fact per entry as "category: fact".
Add facts the user stated or explicitly agreed to. Replace a fact the user changed (drop the
old one). Leave the memory unchanged for chit-chat, questions, "maybe" and suggestions the user
did not accept. Never add facts the user did not state.
Reply with only {{"memory": ["category: fact", ...]}}."""


class MemoryUpdate(Model):
    """The LLM extractor's reply."""

    model_config = ConfigDict(extra="ignore")

    memory: list[str] = Field(description="The whole memory after the conversation.")


def _conversation(turns: list[Turn]) -> str:
    return "\n".join(f"{t.role}: {t.content}" for t in turns)


@dataclass(eq=False)
class LLMExtractor(PromptedLLM):
    """The built-in extractor: one structured LLM call per conversation. `prompt`: the
    template of the one call, with {existing} and {conversation} (literal braces doubled);
    `memgauge optimize` rewrites it (a `prompts` target).

    Args:
        prompt: the template of the one call, with {existing} and {conversation}.
    """

    role: ClassVar[str] = "extractor"
    replies: ClassVar[str] = "memory"

    prompt: str = EXTRACT_PROMPT

    def extract(self, conversation: list[Turn], existing_memory: list[str]) -> list[str]:
        """The memory after `conversation`; SubjectError when the model gives no usable reply."""
        existing = "\n".join(f"- {m}" for m in existing_memory) or "(empty)"
        return self.ask(
            MemoryUpdate, existing=existing, conversation=_conversation(conversation)
        ).memory


class MemoryExtractor:
    """A memory subject as an extractor: what it holds after ingesting the conversation."""

    def __init__(self, memory: Any) -> None:
        if not callable(getattr(memory, "dump", None)):
            raise UsageError("a memory subject used as an extractor must support dump()")
        self.memory = memory

    @property
    def name(self) -> str:
        """`memory:<subject>`."""
        return f"memory:{getattr(self.memory, 'name', 'memory')}"

    def extract(self, conversation: list[Turn], existing_memory: list[str]) -> list[str]:
        """Reset, ingest the existing memory and the user's turns, flush, dump."""
        self.memory.reset()
        existing = [Memory(id=f"existing-{i}", text=m) for i, m in enumerate(existing_memory)]
        turns = [
            Memory(id=f"turn-{i}", text=t.content, metadata={"role": t.role})
            for i, t in enumerate(conversation)
            if t.role == "user"
        ]
        self.memory.ingest(existing + turns)
        flush = getattr(self.memory, "flush", None)
        if callable(flush):
            flush()
        return [m.text for m in self.memory.dump()]
