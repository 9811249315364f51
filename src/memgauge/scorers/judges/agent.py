"""An agent as a judge (seed 004's `judgeAgentId`): any agent subject (a chat model, an HTTP or
MCP agent, a `python:` agent, a memory-backed agent...) reads the judge's prompt and answers it.

The prompt's messages (the judge's instructions, then the item) are sent as one question, since
an agent takes text, not a chat. Its answer is read as the judge's JSON when it holds one
(directly, fenced or inside prose); a rubric judge also takes seed 004's free form, "Score
0-100 ... and one-sentence reasoning": the first number after the word "score", or an `N/100`,
with the whole answer as the reason. Anything else, and an agent that raises, is a judge failure
(recorded, never a score). An agent is not asked to repair its answer: it may not be a model.
"""

from __future__ import annotations

import asyncio
import re
import threading
from collections.abc import Mapping, Sequence
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from memgauge.errors import UsageError
from memgauge.llm.structured import Structured, extract_json
from memgauge.llm.types import Message
from memgauge.subjects.registry import build_subject, check_subject

__all__ = ["JudgeAgent", "agent_problems"]

V = TypeVar("V", bound=BaseModel)

_SCORE = re.compile(
    r"\bscore\b\D{0,20}?(\d{1,3}(?:\.\d+)?)|(\d{1,3}(?:\.\d+)?)\s*/\s*100", re.IGNORECASE
)


def agent_problems(spec: Any) -> list[str]:
    """What is wrong with a judge's `agent` spec (a subject spec mapping)."""
    if not isinstance(spec, Mapping):
        return [
            f"agent: {spec!r} is not a subject spec; give {{kind: {{args}}}} or the name of a "
            "subject of the suite"
        ]
    return [p.message for p in check_subject(dict(spec))]


class JudgeAgent:
    """An agent subject, built on first use and shared by the judge's calls."""

    def __init__(self, spec: Mapping[str, Any]) -> None:
        problems = agent_problems(spec)
        if problems:
            raise UsageError("; ".join(problems))
        self.spec = dict(spec)
        self._agent: Any = None
        self._build = threading.Lock()
        self._serial: threading.Lock | None = None

    def _instance(self) -> Any:
        with self._build:
            if self._agent is None:
                agent = build_subject(self.spec)
                if not callable(getattr(agent, "answer", None)):
                    raise UsageError(
                        f"agent {self.spec!r} is a memory system, not an agent: wrap it as "
                        "{memory-agent: {memory: ..., model: ...}}"
                    )
                caps = getattr(agent, "capabilities", None)
                if not getattr(caps, "concurrent", False):
                    self._serial = threading.Lock()  # one call at a time, as a run would give it
                self._agent = agent
            return self._agent

    @property
    def name(self) -> str:
        """The agent's label, as the verdict's `model`."""
        agent = self._agent
        label = getattr(agent, "name", None) if agent is not None else None
        return str(label or next(iter(self.spec), "agent"))

    def _answer(self, question: str) -> str:
        agent = self._instance()
        if self._serial is None:
            return str(agent.answer(question).text)
        with self._serial:
            return str(agent.answer(question).text)

    async def ask(self, messages: Sequence[Message], model_cls: type[V]) -> Structured[V]:
        """The agent's answer to the judge's prompt, read as `model_cls`."""
        question = "\n\n".join(m.content for m in messages)
        try:
            text = await asyncio.to_thread(self._answer, question)
        except UsageError:
            raise
        except Exception as exc:  # the agent's own failure is the verdict's, not the run's
            return Structured(None, "agent", error=f"the judge agent failed: {exc}")
        value, how, error = _read(text, model_cls)
        return Structured(value, f"agent/{how}", raw=text, error=error)


def _read(text: str, model_cls: type[V]) -> tuple[V | None, str, str | None]:
    try:
        data, how = extract_json(text)
        return model_cls.model_validate(data), how, None
    except ValueError as exc:  # no JSON, or JSON of another shape (ValidationError)
        json_error = (
            f"JSON does not match the schema: {exc.errors()[0]['msg']}"
            if isinstance(exc, ValidationError)
            else str(exc)
        )
    if "score" in model_cls.model_fields:
        m = _SCORE.search(text)
        if m is not None:
            try:
                value = model_cls.model_validate({"score": float(m.group(1) or m.group(2))})
            except ValidationError as exc:
                return None, "text", f"the agent's score is not 0-100: {exc.errors()[0]['msg']}"
            return value, "text", None
    return None, "", f"no verdict in the agent's answer ({json_error})"
