"""The rubric judge (seeds 000 and 004): a 0-100 score with issues and strengths, optionally
over weighted criteria whose weighted mean is computed here, not by the model.

    {rubric: "Did the answer use recalled decisions rather than invent them? Score 0-100."}
    {rubric: {preset: merge-quality}}    # completeness 50 / coherence 30 / conciseness 20
    {rubric: {preset: memory-quality}}   # specificity 50 / actionability 30 / accuracy 20
    {rubric: {preset: summary-quality}}  # key facts 60 / accuracy 25 / conciseness 15
    {rubric: {prompt: "...", criteria: {accuracy: 2, tone: 1}, threshold: 0.8}}
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, ClassVar

from pydantic import ConfigDict, Field

from memgauge._util.model import Model
from memgauge.errors import UsageError
from memgauge.llm.types import Message
from memgauge.scorers.base import EvalContext
from memgauge.scorers.judges.base import JudgeBase, Verdict
from memgauge.scorers.judges.templates import (
    MEMORY_QUALITY,
    MEMORY_QUALITY_CRITERIA,
    MERGE_CRITERIA,
    MERGE_QUALITY,
    RUBRIC,
    SUMMARY_CRITERIA,
    SUMMARY_QUALITY,
    PromptTemplate,
)

__all__ = ["RubricJudge", "RubricVerdict"]

PRESETS: dict[str, tuple[str, Mapping[str, float]]] = {
    "merge-quality": (MERGE_QUALITY, MERGE_CRITERIA),
    "memory-quality": (MEMORY_QUALITY, MEMORY_QUALITY_CRITERIA),
    "summary-quality": (SUMMARY_QUALITY, SUMMARY_CRITERIA),
}


# strict: `true` or "80" is not a score (pydantic's lax mode would take them as 1.0 and 80.0)
Score100 = Annotated[float, Field(ge=0, le=100, strict=True)]


class RubricVerdict(Model):
    """What the rubric judge must return (extra keys a model adds are ignored)."""

    model_config = ConfigDict(extra="ignore")

    score: Score100 = Field(description="overall score, 0-100")
    issues: list[str] = Field(default_factory=list, description="what is wrong")
    strengths: list[str] = Field(default_factory=list, description="what is right")
    criteria: dict[str, Score100] | None = Field(
        default=None, description="per-criterion scores, 0-100, when criteria are given"
    )


@dataclass(frozen=True, kw_only=True)
class RubricJudge(JudgeBase):
    """Score 0-100 against instructions (`prompt`) and optional weighted `criteria`.

    Attributes:
        prompt: what the judge checks.
        criteria: criterion -> weight; each gets a 0-100 score and the value is their
            weighted mean.
        preset: seed 000's `merge-quality` (completeness 50, coherence 30, conciseness 20),
            `memory-quality` (specificity 50, actionability 30, accuracy 20: specific,
            actionable memories high, vague ones low) or `summary-quality` (key facts 60,
            accuracy 25, conciseness 15: does the compacted memory keep the key facts).
        threshold: pass when value >= threshold (seed 000's 70%); None for no pass/fail.
    """

    name: ClassVar[str] = "rubric"
    short_arg: ClassVar[str] = "prompt"

    prompt: str | None = None
    criteria: Mapping[str, float] | None = None
    preset: str | None = None
    threshold: float | None = 0.7

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.preset is not None and self.preset not in PRESETS:
            raise UsageError(f"rubric: unknown preset {self.preset!r}; known: {', '.join(PRESETS)}")
        crit = self._criteria()
        if crit and (any(w < 0 for w in crit.values()) or sum(crit.values()) <= 0):
            raise UsageError("rubric: criteria weights must be >= 0 with a positive sum")

    def _criteria(self) -> Mapping[str, float]:
        if self.criteria is not None:
            return self.criteria
        return PRESETS[self.preset][1] if self.preset else {}

    def _instructions(self) -> str:
        if self.prompt:
            return self.prompt
        if self.preset:
            return PRESETS[self.preset][0]
        return "Does the output correctly and completely do what the input asks?"

    @property
    def template(self) -> PromptTemplate:
        """The rubric template with this judge's instructions and criteria written in: its
        hash identifies the exact prompt. `{{output}}`, `{{input}}`, `{{expected}}` in the
        instructions are filled per item."""
        cached = self.__dict__.get("_template")
        if cached is None:
            crit = self._criteria()
            total = sum(crit.values())
            lines = "".join(f"- {k} ({100 * w / total:.0f}%)\n" for k, w in crit.items())
            cached = RUBRIC.specialize(
                instructions=self._instructions(),
                criteria=f"Score each criterion 0-100:\n{lines}\n" if crit else "",
                criteria_json=(
                    ', with "criteria": {' + ", ".join(f'"{k}": <0-100>' for k in crit) + "}"
                    if crit
                    else ""
                ),
            )
            self.__dict__["_template"] = cached
        return cached

    def values(self, ctx: EvalContext) -> dict[str, Any]:
        """The template's placeholder values for `ctx`."""
        return {"input": ctx.input, "expected": ctx.expected, "output": ctx.output}

    async def averdict(
        self, ctx: EvalContext, *, extra: Sequence[Message] = (), repeat: int | None = None
    ) -> Verdict | tuple[str, dict[str, Any]]:
        """See `JudgeBase.averdict`."""
        out, detail = await self.ask(
            self.template, self.values(ctx), RubricVerdict, extra=extra, repeat=repeat
        )
        v = out.value
        if v is None:
            return out.error or "no verdict", detail
        crit = self._criteria()
        if crit:
            got = v.criteria or {}
            missing = [k for k in crit if k not in got]
            bad = [k for k in crit if k in got and not 0 <= got[k] <= 100]
            if missing or bad:
                why = f"missing criteria {missing}" if missing else f"criteria out of 0-100: {bad}"
                return f"{why} in the judge's reply", detail
            value = sum(w * got[k] for k, w in crit.items()) / sum(crit.values()) / 100
            detail["criteria"] = {k: got[k] for k in crit}
            detail["judge_overall"] = v.score
        else:
            value = v.score / 100
        detail["issues"], detail["strengths"] = v.issues, v.strengths
        reason = (
            f"{value * 100:.0f}/100. Issues: {'; '.join(v.issues) or 'none'} | "
            f"Strengths: {'; '.join(v.strengths) or 'none'}"
        )
        if out.route == "agent/text":  # an agent's free answer: its own words are the reason
            reason = f"{value * 100:.0f}/100. {' '.join(out.raw.split())[:300]}"
        passed = None if self.threshold is None else value >= self.threshold
        return Verdict(value, passed, reason, detail)
