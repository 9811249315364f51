"""The fact-enumeration judge (seed 001): the model lists facts, the code computes the scores.

The model lists the conversation's facts, the extracted output's new facts, the missed facts
and the hallucinated facts; then

    tp = |extracted| - |hallucinated|,  fp = |hallucinated|,  fn = |missed|
    precision = tp / (tp + fp)  (1 when nothing was extracted)
    recall    = tp / (tp + fn)  (1 when there was nothing to extract)
    F1        = 2 P R / (P + R)  (0 when P + R = 0)

Lists that contradict each other (more hallucinated than extracted facts, more missed than
conversation facts) are a judge failure, not a score. The conversation is the item's input;
existing memory comes from the item's `existing_memory` metadata.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from pydantic import ConfigDict, Field

from memgauge._util.model import Model
from memgauge.llm.types import Message
from memgauge.scorers.base import EvalContext
from memgauge.scorers.judges.base import JudgeBase, Verdict
from memgauge.scorers.judges.templates import FACTS

__all__ = ["FactsJudge", "FactsVerdict", "fact_scores"]


class FactsVerdict(Model):
    """The four lists of seed 001."""

    model_config = ConfigDict(extra="ignore")

    conversation_facts: list[str] = Field(description="facts the user stated or agreed to")
    extracted_facts: list[str] = Field(description="new facts in the extracted output")
    missed_facts: list[str] = Field(description="conversation facts not extracted")
    hallucinated_facts: list[str] = Field(description="extracted facts not in the conversation")


def fact_scores(v: FactsVerdict) -> dict[str, float | int]:
    """Precision, recall and F1 from the lists (seed 001's formulas)."""
    tp = len(v.extracted_facts) - len(v.hallucinated_facts)
    fp, fn = len(v.hallucinated_facts), len(v.missed_facts)
    precision = tp / (tp + fp) if tp + fp > 0 else 1.0
    recall = tp / (tp + fn) if tp + fn > 0 else 1.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0
    return {"tp": tp, "fp": fp, "fn": fn, "precision": precision, "recall": recall, "f1": f1}


@dataclass(frozen=True, kw_only=True)
class FactsJudge(JudgeBase):
    """Precision, recall or F1 of extracted facts, enumerated by the judge.

    Attributes:
        metric: which of the three is the value (all three are in the detail).
        threshold: pass when value >= threshold (seed 001's targets: precision > 0.95).
    """

    name: ClassVar[str] = "facts"
    short_arg: ClassVar[str] = "metric"

    metric: Literal["f1", "precision", "recall"] = "f1"
    threshold: float | None = None

    async def averdict(
        self, ctx: EvalContext, *, extra: Sequence[Message] = (), repeat: int | None = None
    ) -> Verdict | tuple[str, dict[str, Any]]:
        """See `JudgeBase.averdict`."""
        values = {
            "input": ctx.input,
            "existing": ctx.metadata.get("existing_memory") or "(empty)",
            "output": ctx.output,
        }
        out, detail = await self.ask(FACTS, values, FactsVerdict, extra=extra, repeat=repeat)
        v = out.value
        if v is None:
            return out.error or "no verdict", detail
        if len(v.hallucinated_facts) > len(v.extracted_facts) or len(v.missed_facts) > len(
            v.conversation_facts
        ):
            return "the judge's fact lists contradict each other", {**detail, **v.model_dump()}
        scores = fact_scores(v)
        detail.update(v.model_dump())
        detail.update(scores)
        value = float(scores[self.metric])
        reason = (
            f"P {scores['precision']:.2f} R {scores['recall']:.2f} F1 {scores['f1']:.2f}; "
            f"missed {len(v.missed_facts)}, hallucinated {len(v.hallucinated_facts)}"
        )
        passed = None if self.threshold is None else value >= self.threshold
        return Verdict(value, passed, reason, detail)
