"""The pairwise judge: is the output better than a baseline? Asked in both orders, because
judges favour a position; when the two orders disagree, the answer is a tie.

Value 1 (output better), 0.5 (tie or inconsistent), 0 (baseline better); passes when the
output is not worse. The baseline is the item's expected value, or the metadata key named by
`baseline`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from pydantic import ConfigDict, Field, field_validator

from memgauge._util.model import Model
from memgauge.llm.types import Message
from memgauge.scorers.base import EvalContext
from memgauge.scorers.judges.base import JudgeBase, Verdict
from memgauge.scorers.judges.templates import PAIRWISE

__all__ = ["PairwiseJudge", "PairwiseVerdict"]


class PairwiseVerdict(Model):
    """Which of A and B is better."""

    model_config = ConfigDict(extra="ignore")

    reasoning: str = Field(default="", description="why")
    winner: Literal["A", "B", "tie"] = Field(description='"A", "B" or "tie"')

    @field_validator("winner", mode="before")
    @classmethod
    def _norm(cls, v: Any) -> Any:
        if isinstance(v, str):
            s = v.strip().strip(".").removeprefix("Response ").strip()
            return "tie" if s.lower() == "tie" else s.upper()
        return v


@dataclass(frozen=True, kw_only=True)
class PairwiseJudge(JudgeBase):
    """Output against a baseline, both orders.

    Args:
        prompt: the question the judge answers about the two responses.
        baseline: where the baseline is: `expected` (the item's expected value) or the name
            of an item metadata key.
    """

    name: ClassVar[str] = "pairwise"
    short_arg: ClassVar[str] = "prompt"

    prompt: str = "Which response answers the input more accurately and helpfully?"
    baseline: str = "expected"

    async def averdict(
        self, ctx: EvalContext, *, extra: Sequence[Message] = (), repeat: int | None = None
    ) -> Verdict | tuple[str, dict[str, Any]]:
        """See `JudgeBase.averdict`."""
        base = ctx.expected if self.baseline == "expected" else ctx.metadata.get(self.baseline)
        if base is None:
            return f"no baseline: the item has no {self.baseline!r}", {"judge": self.name}
        template = PAIRWISE.specialize(instructions=self.prompt)
        common = {"input": ctx.input}
        (o1, d1), (o2, d2) = await asyncio.gather(
            *(
                self.ask(template, {**common, **order}, PairwiseVerdict, extra=extra, repeat=repeat)
                for order in (
                    {"first": ctx.output, "second": base},
                    {"first": base, "second": ctx.output},
                )
            )
        )
        detail = {
            **d1,
            "route": [d1["route"], d2["route"]],
            "requests": d1["requests"] + d2["requests"],
            "cached": d1["cached"] and d2["cached"],
        }
        if o1.value is None or o2.value is None:
            if o1.retryable or o2.retryable:
                detail["retryable"] = True
            kinds = {o.error_kind for o in (o1, o2) if o.error_kind}
            if kinds:
                detail["llm_error_kind"] = sorted(kinds)[0]
            return (o1.error or o2.error or "no verdict"), detail
        # map each order's winner to output / baseline
        first = {"A": "output", "B": "baseline", "tie": "tie"}[o1.value.winner]
        second = {"A": "baseline", "B": "output", "tie": "tie"}[o2.value.winner]
        outcome = first if first == second else "tie"
        detail.update(
            {"orders": [first, second], "consistent": first == second, "outcome": outcome}
        )
        value = {"output": 1.0, "tie": 0.5, "baseline": 0.0}[outcome]
        reason = f"{outcome} (output first: {first}; baseline first: {second})" + (
            "" if first == second else "; the orders disagree: position bias, called a tie"
        )
        return Verdict(value, value >= 0.5, reason, detail)
