"""The deliberation panel (seed 004): N judges, R rounds, a final mean or vote.

Round 1: every judge gives its verdict alone. Each later round: every judge sees its own and
the others' previous verdicts (score, pass/fail, reasoning) and gives a final one. The panel's
value is the mean of the last round's values (`decision: mean`) or the share of judges that
passed the item (`decision: vote`, passing on a strict majority). Judges that could not answer
in the last round are left out and counted; if none answered, the panel fails.

Every item's detail keeps all votes and `panel_passed` (the last round's pass/fail votes), from
which the run summary computes percent agreement and Fleiss' kappa over the items.

    {panel: {judges: [{rubric: {prompt: "...", model: a}}, {rubric: {prompt: "...", model: b}},
                      {qa-judge: {preset: strict}}], rounds: 2, decision: vote}}
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

from memgauge.errors import UsageError
from memgauge.llm.types import Message
from memgauge.scorers.base import EvalContext, evaluator_from_spec
from memgauge.scorers.judges.base import JudgeBase, Verdict
from memgauge.scorers.judges.templates import PEERS

__all__ = ["PanelJudge"]


def _summary(i: int, v: Verdict | tuple[str, dict[str, Any]], model: str | None) -> str:
    who = f"Judge {i + 1}" + (f" ({model})" if model else "")
    if not isinstance(v, Verdict):
        return f"{who}: could not give a verdict."
    passed = "" if v.passed is None else f", {'pass' if v.passed else 'fail'}"
    return f"{who}: score {v.value * 100:.0f}/100{passed}. {v.reason}"


@dataclass(frozen=True, kw_only=True)
class PanelJudge(JudgeBase):
    """Several judges deliberating over rounds.

    Attributes:
        judges: judge specs (rubric, qa-judge, facts...), e.g. different models or prompts.
        rounds: deliberation rounds (1 = independent votes).
        decision: `mean` of the last round's values, or `vote` (share passing).
    """

    name: ClassVar[str] = "panel"
    short_arg: ClassVar[str] = "judges"

    judges: Sequence[Any] = field(default_factory=list)
    rounds: int = 2
    decision: Literal["mean", "vote"] = "mean"

    def __post_init__(self) -> None:
        super().__post_init__()
        if len(self.judges) < 2:
            raise UsageError("panel: give at least two judges (judges: [spec, spec, ...])")
        if self.rounds < 1:
            raise UsageError("panel: rounds must be at least 1")
        if self.decision not in ("mean", "vote"):
            raise UsageError("panel: decision is 'mean' or 'vote'")
        members = []
        for spec in self.judges:
            judge = evaluator_from_spec(spec)
            if not isinstance(judge, JudgeBase) or isinstance(judge, PanelJudge):
                raise UsageError(
                    f"panel: {spec!r} is not an LLM judge (rubric, qa-judge, facts...)"
                )
            members.append(judge)
        object.__setattr__(self, "_members", tuple(members))

    def prepare(self) -> None:
        """Prepare every member (see `JudgeBase.prepare`)."""
        for member in self.members:
            member.prepare()

    @property
    def members(self) -> tuple[JudgeBase, ...]:
        """The built judges."""
        members: tuple[JudgeBase, ...] = self.__dict__["_members"]
        return members

    async def averdict(
        self, ctx: EvalContext, *, extra: Sequence[Message] = (), repeat: int | None = None
    ) -> Verdict | tuple[str, dict[str, Any]]:
        """See `JudgeBase.averdict`."""
        members = self.members
        rep = self.repeat if repeat is None else repeat
        current: list[Verdict | tuple[str, dict[str, Any]]] = list(
            await asyncio.gather(*(m.averdict(ctx, repeat=rep) for m in members))
        )
        votes = [_vote(1, i, v) for i, v in enumerate(current)]
        for r in range(2, self.rounds + 1):
            texts = [_summary(i, v, members[i].model) for i, v in enumerate(current)]

            current = list(
                await asyncio.gather(
                    *(
                        m.averdict(ctx, extra=_follow_up(texts, i), repeat=rep)
                        for i, m in enumerate(members)
                    )
                )
            )
            votes += [_vote(r, i, v) for i, v in enumerate(current)]
        final = [v for v in current if isinstance(v, Verdict)]
        detail: dict[str, Any] = {
            "judge": self.name,
            "rounds": self.rounds,
            "decision": self.decision,
            "votes": votes,
            "n_answered": len(final),
            "template_hash": [_template_hash(v) for v in current],
            "requests": sum(_detail(v).get("requests", 0) for v in current),
        }
        if not final:
            if any(_detail(v).get("retryable") for v in current):
                detail["retryable"] = True  # a member may answer when asked again
            kinds = {_detail(v).get("llm_error_kind") for v in current} - {None}
            if kinds == {"connection"}:
                detail["llm_error_kind"] = "connection"  # no member could be reached
            return "no judge on the panel could give a verdict", detail
        passed_votes = [bool(v.passed) for v in final if v.passed is not None]
        if len(passed_votes) == len(final):
            detail["panel_passed"] = passed_votes
        if self.decision == "vote":
            if len(passed_votes) != len(final):
                return "decision: vote needs judges that pass or fail (set a threshold)", detail
            value = sum(passed_votes) / len(passed_votes)
            passed: bool | None = value > 0.5
        else:
            value = sum(v.value for v in final) / len(final)
            passed = sum(passed_votes) > len(passed_votes) / 2 if passed_votes else None
        reason = f"panel of {len(members)}, {self.rounds} round(s), {self.decision}: " + " | ".join(
            f"{v.value * 100:.0f}" for v in final
        )
        return Verdict(value, passed, reason, detail)


def _follow_up(texts: Sequence[str], i: int) -> tuple[Message, ...]:
    """Judge i's message for the next round: its own and the others' previous verdicts."""
    others = "\n".join(t for j, t in enumerate(texts) if j != i)
    own = texts[i].replace(f"Judge {i + 1}", "You (previous round)", 1)
    return PEERS.render({"peers": f"{own}\n{others}"})


def _detail(v: Verdict | tuple[str, dict[str, Any]]) -> Mapping[str, Any]:
    return v.detail if isinstance(v, Verdict) else v[1]


def _template_hash(v: Verdict | tuple[str, dict[str, Any]]) -> str | None:
    """The template hash a member's verdict was made with."""
    h = _detail(v).get("template_hash")
    return None if h is None else str(h)


def _vote(r: int, i: int, v: Verdict | tuple[str, dict[str, Any]]) -> dict[str, Any]:
    if isinstance(v, Verdict):
        return {"round": r, "judge": i, "value": v.value, "passed": v.passed, "reason": v.reason}
    return {"round": r, "judge": i, "value": None, "error": v[0]}
