"""What every LLM judge shares: where its model is, how one structured call becomes a `Score`,
and what happens when the judge cannot answer.

A judge that cannot answer (the call failed after its retries, or the reply was not valid JSON
even after one repair) gives `Score.failure(reason)`: the run records it, counts it in
`n_failed`, and never averages it in. Seed 000's "neutral 0.5 on judge failure" exists only
as the explicit `on_failure: neutral`; such a value is flagged `fallback` and reported apart
from real scores.

Every verdict's `detail` records the judge, model, prompt template (name, version, hash), the
structured-output route, the HTTP requests made and whether the cache answered; a failure whose
call may succeed when asked again (a 429, 5xx, timeout, dropped connection...: see
`RETRYABLE_KINDS`) also records `retryable: true`, which `--resume ID --retry-failed` reads.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Literal, TypeVar

from pydantic import BaseModel

from memgauge.errors import UsageError
from memgauge.llm._loop import run_sync
from memgauge.llm.context import llm_context
from memgauge.llm.structured import Structured, acomplete_structured
from memgauge.llm.types import LLMClient, Message
from memgauge.scorers.base import EvalContext, Score
from memgauge.scorers.judges.agent import JudgeAgent
from memgauge.scorers.judges.templates import PromptTemplate
from memgauge.subjects.learnings import Learnings, LearningsSection, section_hash

__all__ = ["JudgeBase", "Verdict"]

V = TypeVar("V", bound=BaseModel)


@dataclass(frozen=True)
class Verdict:
    """A judge's parsed answer before it becomes a Score (panels look at these)."""

    value: float
    passed: bool | None
    reason: str
    detail: dict[str, Any]


@dataclass(frozen=True, kw_only=True)
class JudgeBase:
    """Fields every judge accepts in its spec.

    Attributes:
        model: model id (default: MEMGAUGE_MODEL).
        provider: `openai` (any compatible endpoint) or `anthropic`.
        base_url: endpoint (default: OPENAI_BASE_URL).
        temperature: sampling temperature.
        max_tokens: completion budget.
        on_failure: `fail` (record a failure: the default) or `neutral` (seed 000's 0.5,
            flagged as a fallback and reported apart).
        repeat: repeat index, so re-judging k times makes k distinct cached calls.
        learnings: past evaluation failures added to the judge's system prompt
            (`{query, k, budget}`; seed 000's eval-to-learning).
        agent: an agent subject that judges instead of a model (seed 004's `judgeAgentId`):
            its spec `{kind: {args}}`, or in a suite the name of one of its subjects.
    """

    name: ClassVar[str]
    uses_llm: ClassVar[bool] = True

    model: str | None = None
    provider: str | None = None
    base_url: str | None = None
    temperature: float = 0.0
    max_tokens: int | None = None
    on_failure: Literal["fail", "neutral"] = "fail"
    repeat: int = 0
    learnings: Learnings | None = None
    agent: str | dict[str, Any] | None = None

    def __post_init__(self) -> None:
        if self.on_failure not in ("fail", "neutral"):
            raise UsageError(
                f"{self.name}: on_failure is 'fail' or 'neutral', got {self.on_failure!r}"
            )
        if isinstance(self.agent, dict):
            # a subject name stays a name until the suite resolves it (`resolve_agents`)
            object.__setattr__(self, "_agent", JudgeAgent(self.agent))

    def client(self) -> LLMClient:
        """The shared client of this judge's endpoint and model (looked up once per LLM
        configuration: reading the environment on every call costs more than the call)."""
        ctx = llm_context()
        memo = self.__dict__.get("_client_memo")
        if memo is not None and memo[0] == ctx.generation:
            found: LLMClient = memo[1]
            return found
        client = ctx.client(model=self.model, provider=self.provider, base_url=self.base_url)
        self.__dict__["_client_memo"] = (ctx.generation, client)
        return client

    def prepare(self) -> None:
        """Build this judge's client before any item: UnavailableError (with the install
        line) when its provider's package is missing, UsageError naming the setting when its
        configuration cannot work (no model, an endpoint that is no URL, an unknown
        provider, a timeout that is no number): every call would fail, one by one. A judge
        that asks an agent needs none."""
        if self.agent is None:
            self.client()

    def evaluate(self, ctx: EvalContext) -> Score:
        """Score one item (from any thread)."""
        return run_sync(self.aevaluate(ctx))

    async def aevaluate(self, ctx: EvalContext) -> Score:
        """Score one item on the running loop."""
        verdict = await self.averdict(ctx)
        if isinstance(verdict, Verdict):
            return Score(verdict.value, verdict.passed, verdict.reason, detail=verdict.detail)
        return self.failed(*verdict)

    async def averdict(
        self, ctx: EvalContext, *, extra: Sequence[Message] = (), repeat: int | None = None
    ) -> Verdict | tuple[str, dict[str, Any]]:
        """The verdict, or (reason, detail) when the judge could not give one."""
        raise NotImplementedError

    async def ask(
        self,
        template: PromptTemplate,
        values: dict[str, Any],
        model_cls: type[V],
        *,
        extra: Sequence[Message] = (),
        repeat: int | None = None,
    ) -> tuple[Structured[V], dict[str, Any]]:
        """One structured call; the outcome and the detail every verdict records."""
        section = self._learned()
        messages = _with_section((*template.render(values), *extra), section)
        if self.agent is not None:
            out_agent, detail_agent = await self._ask_agent(template, messages, model_cls)
            if section:
                detail_agent["learnings_hash"] = section_hash(section)
            return out_agent, detail_agent
        client = self.client()
        out = await acomplete_structured(
            client,
            messages,
            model_cls,
            name=self.name.replace("-", "_"),
            model=self.model,
            temperature=self.temperature,
            max_tokens=self.max_tokens,
            repeat=self.repeat if repeat is None else repeat,
        )
        detail: dict[str, Any] = {
            "judge": self.name,
            "model": self.model or client.model,
            **template.record(),
            "route": out.route,
            "raw_reply": out.raw,
            "requests": out.requests,
            "cached": bool(out.responses) and all(r.cached for r in out.responses),
        }
        adapted = sorted({a for r in out.responses for a in r.adapted})
        if adapted:
            # the model rejected a parameter the spec sets (a reasoning model's temperature):
            # the verdict says it was asked without it
            detail["adapted"] = adapted
        if section:
            detail["learnings_hash"] = section_hash(section)
        if out.error_kind is not None:
            # an unreachable endpoint ("connection" after every retry) exits 3, not 4
            detail["llm_error_kind"] = out.error_kind
        if out.retryable:
            # the store re-queues such an item on `--resume ID --retry-failed`
            detail["retryable"] = True
        return out, detail

    def _learned(self) -> str:
        """The learnings section, fetched once per judge."""
        memo = self.__dict__.get("_learnings_memo")
        if memo is None:
            memo = self.__dict__.setdefault("_learnings_memo", LearningsSection(self.learnings))
        text: str = memo.text()
        return text

    async def _ask_agent(
        self, template: PromptTemplate, messages: Sequence[Message], model_cls: type[V]
    ) -> tuple[Structured[V], dict[str, Any]]:
        agent: JudgeAgent | None = self.__dict__.get("_agent")
        if agent is None:
            out: Structured[V] = Structured(
                None,
                "agent",
                error=f"no subject called {self.agent!r} to judge with: name a subject of the "
                "suite or give an agent spec {kind: {args}}",
            )
            return out, {"judge": self.name, "agent": self.agent, **template.record()}
        out = await agent.ask(messages, model_cls)
        detail: dict[str, Any] = {
            "judge": self.name,
            "model": f"agent {agent.name}",
            "agent": agent.spec,
            **template.record(),
            "route": out.route,
            "raw_reply": out.raw,
            "requests": 0,
            "cached": False,
        }
        return out, detail

    def failed(self, reason: str, detail: dict[str, Any]) -> Score:
        """A judge that could not answer: a failure, or the opt-in neutral fallback."""
        if self.on_failure == "neutral":
            return Score(
                0.5,
                None,
                f"judge failed; neutral 0.5 stand-in (on_failure: neutral): {reason}",
                detail={**detail, "fallback": True, "judge_error": reason},
            )
        return Score.failure(f"judge failed: {reason}", **detail)


def _with_section(messages: Sequence[Message], section: str) -> tuple[Message, ...]:
    """The messages with the learnings section at the end of the system message (one added
    first when there is none)."""
    if not section:
        return tuple(messages)
    if messages and messages[0].role == "system":
        first = Message("system", f"{messages[0].content}\n\n{section}")
        return (first, *messages[1:])
    return (Message("system", section), *messages)
