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

import contextlib
import importlib
from collections.abc import Callable, Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from memgauge.data.models import Memory, Turn
from memgauge.errors import LLMError, SubjectError, UsageError
from memgauge.llm._loop import run_sync
from memgauge.llm.context import llm_context
from memgauge.llm.structured import acomplete_structured
from memgauge.llm.types import Message

__all__ = ["EXTRACT_PROMPT", "LLMExtractor", "MemoryExtractor", "load_extractor"]

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


class MemoryUpdate(BaseModel):
    """The LLM extractor's reply."""

    model_config = ConfigDict(extra="ignore")

    memory: list[str] = Field(description="The whole memory after the conversation.")


def _conversation(turns: list[Turn]) -> str:
    return "\n".join(f"{t.role}: {t.content}" for t in turns)


class LLMExtractor:
    """The built-in extractor: one structured LLM call per conversation."""

    def __init__(self, model: str | None = None, *, base_url: str | None = None) -> None:
        self.model, self.base_url = model, base_url

    @property
    def name(self) -> str:
        """`llm-extractor:<model>`."""
        return f"llm-extractor:{self.model or 'default'}"

    def extract(self, conversation: list[Turn], existing_memory: list[str]) -> list[str]:
        """The memory after `conversation`; SubjectError when the model gives no usable reply."""
        prompt = EXTRACT_PROMPT.format(
            existing="\n".join(f"- {m}" for m in existing_memory) or "(empty)",
            conversation=_conversation(conversation),
        )
        client = llm_context().client(model=self.model, base_url=self.base_url)
        out = run_sync(
            acomplete_structured(client, [Message("user", prompt)], MemoryUpdate, model=self.model)
        )
        if out.value is None:
            raise SubjectError(f"the extractor gave no usable memory: {out.error}")
        return out.value.memory


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


class _Function:
    def __init__(self, fn: Callable[..., Any], name: str) -> None:
        self.fn, self.name = fn, name

    def extract(self, conversation: list[Turn], existing_memory: list[str]) -> Any:
        return self.fn(conversation, existing_memory)


def load_extractor(spec: Mapping[str, Any], build_subject: Callable[[dict[str, Any]], Any]) -> Any:
    """An extractor from its spec (see the module docstring)."""
    if len(spec) != 1:
        raise UsageError(f"an extractor is {{kind: {{args}}}}, got {dict(spec)!r}")
    ((kind, raw),) = spec.items()
    args = dict(raw or {})
    if kind == "llm":
        return LLMExtractor(**args)
    if kind == "memory":
        if len(args) != 1:
            raise UsageError(
                "memory extractor: give one subject spec, e.g. {memory: {mem0: {...}}}"
            )
        return MemoryExtractor(build_subject(args))
    if kind == "python":
        target = str(args.get("target", ""))
        module, _, attr = target.partition(":")
        if not module or not attr:
            raise UsageError(
                f"python extractor: target must be package.module:factory, got {target!r}"
            )
        try:
            obj = getattr(importlib.import_module(module), attr)
        except (ImportError, AttributeError) as exc:
            raise UsageError(f"python extractor {target}: {exc}") from None
        kwargs = args.get("kwargs") or {}
        made = obj(**kwargs) if isinstance(obj, type) or kwargs else obj
        if callable(getattr(made, "extract", None)):
            if not hasattr(made, "name"):
                with contextlib.suppress(AttributeError, TypeError):
                    made.name = target
            return made
        if callable(made):
            return _Function(made, target)
        raise UsageError(f"python extractor {target}: needs extract(conversation, existing_memory)")
    raise UsageError(f"unknown extractor kind {kind!r}: use python, llm or memory")


def extract_safely(extractor: Any, conversation: list[Turn], existing: list[str]) -> Any:
    """The extractor's output, or the exception it raised (failures are data)."""
    try:
        return extractor.extract(conversation, existing)
    except (SubjectError, LLMError) as exc:
        return exc
    except Exception as exc:
        return SubjectError(f"{type(exc).__name__}: {exc}")
