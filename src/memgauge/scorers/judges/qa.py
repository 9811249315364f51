"""The QA correctness judge with named presets.

- `longmemeval`: LongMemEval's yes/no grading, with its per-question-type criteria chosen from
  the item's `question_type` metadata (temporal reasoning tolerates off-by-one day counts;
  knowledge update accepts the old value alongside the new one given as current; preference
  uses the expected answer as a rubric) and the abstention prompt for items marked
  `abstention: true` or whose id ends in `_abs`;
- `mem0-locomo`: Mem0's CORRECT / WRONG grading of LoCoMo answers. **Lenient** by design (same
  topic counts, any date format counts): its scores are not comparable with strict ones, and
  every verdict says `lenient: true`;
- `strict`: the correct answer, and nothing contradicting it.

The prompts are our own words for those criteria.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from pydantic import ConfigDict, Field, field_validator

from memgauge._util.model import Model
from memgauge.errors import UsageError
from memgauge.llm.types import Message
from memgauge.scorers.base import EvalContext
from memgauge.scorers.judges.base import JudgeBase, Verdict
from memgauge.scorers.judges.templates import QA_PRESETS, PromptTemplate

__all__ = ["QAJudge", "QAVerdict"]

_POSITIVE = {"yes", "correct"}
_NEGATIVE = {"no", "wrong"}
PRESET_NAMES = ("longmemeval", "mem0-locomo", "strict")


class QAVerdict(Model):
    """A yes/no (or CORRECT/WRONG) verdict with its reasoning."""

    model_config = ConfigDict(extra="ignore")

    reasoning: str = Field(default="", description="why")
    label: str = Field(description='"yes"/"no" (or "CORRECT"/"WRONG")')

    @field_validator("label")
    @classmethod
    def _known(cls, v: str) -> str:
        low = v.strip().strip(".").lower()
        if low not in _POSITIVE | _NEGATIVE:
            raise ValueError('label must be "yes", "no", "CORRECT" or "WRONG"')
        return low


@dataclass(frozen=True, kw_only=True)
class QAJudge(JudgeBase):
    """Is the answer correct? 1 (yes) or 0 (no), by a named preset's criteria.

    Args:
        preset: the criteria: `longmemeval` (per question type), `mem0-locomo` (lenient) or
            `strict` (see the module docstring).
    """

    name: ClassVar[str] = "qa-judge"
    short_arg: ClassVar[str] = "preset"

    preset: str = "longmemeval"

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.preset not in PRESET_NAMES:
            raise UsageError(
                f"qa-judge: unknown preset {self.preset!r}; known: {', '.join(PRESET_NAMES)}"
            )

    def template_for(self, ctx: EvalContext) -> PromptTemplate:
        """The preset's prompt for this item (LongMemEval's depends on the question type)."""
        if self.preset != "longmemeval":
            return QA_PRESETS[self.preset]
        meta = ctx.metadata
        if meta.get("abstention") or str(meta.get("item_id", "")).endswith("_abs"):
            return QA_PRESETS["longmemeval/abstention"]
        qtype = str(meta.get("question_type") or "")
        return QA_PRESETS.get(f"longmemeval/{qtype}", QA_PRESETS["longmemeval"])

    async def averdict(
        self, ctx: EvalContext, *, extra: Sequence[Message] = (), repeat: int | None = None
    ) -> Verdict | tuple[str, dict[str, Any]]:
        """See `JudgeBase.averdict`."""
        expected = ctx.expected
        if isinstance(expected, list | tuple):
            expected = " / ".join(str(e) for e in expected)
        values = {"input": ctx.input, "expected": expected, "output": ctx.output}
        out, detail = await self.ask(
            self.template_for(ctx), values, QAVerdict, extra=extra, repeat=repeat
        )
        detail["preset"] = self.preset
        if self.preset == "mem0-locomo":
            detail["lenient"] = True
        v = out.value
        if v is None:
            return out.error or "no verdict", detail
        correct = v.label in _POSITIVE
        detail["label"] = v.label
        return Verdict(1.0 if correct else 0.0, correct, v.reasoning or v.label, detail)
