"""The relevance judge (seed 000's "is this memory actually relevant to the query?"), graded
0-3 as qrels are: 3 answers the query, 2 partly, 1 on topic only, 0 unrelated.

As an evaluator it scores an item whose input is the query and whose output is a memory's text:
value = grade / 3, passed when the grade reaches `min_grade` (2). `bootstrap_judgments` grades
the memories nobody judged (a pool's unjudged entries) and returns them as `Judgment`s with
source `bootstrapped` and the judge's model as annotator, so that they are stored and reported
apart from human judgments; a memory the judge could not grade gets no judgment (never a 0).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from pydantic import ConfigDict, Field

from memgauge._util.model import Model
from memgauge.data.models import Judgment
from memgauge.llm._loop import run_sync
from memgauge.llm.context import llm_context
from memgauge.llm.types import Message
from memgauge.scorers.base import EvalContext
from memgauge.scorers.judges.base import JudgeBase, Verdict
from memgauge.scorers.judges.templates import RELEVANCE

__all__ = ["RelevanceJudge", "RelevanceVerdict", "bootstrap_judgments"]


class RelevanceVerdict(Model):
    """The judge's grade and why."""

    model_config = ConfigDict(extra="ignore")

    reasoning: str = Field(default="", description="why")
    # strict: `true` or "2" is not a grade
    grade: int = Field(ge=0, le=3, strict=True, description="0-3")


@dataclass(frozen=True, kw_only=True)
class RelevanceJudge(JudgeBase):
    """Does this memory (the output) answer this query (the input)? Graded 0-3.

    Attributes:
        min_grade: the grade that passes (2: relevant).
    """

    name: ClassVar[str] = "relevance"

    min_grade: int = 2

    async def averdict(
        self, ctx: EvalContext, *, extra: Sequence[Message] = (), repeat: int | None = None
    ) -> Verdict | tuple[str, dict[str, Any]]:
        """See `JudgeBase.averdict`."""
        values = {"input": ctx.input, "output": ctx.output}
        out, detail = await self.ask(
            RELEVANCE, values, RelevanceVerdict, extra=extra, repeat=repeat
        )
        v = out.value
        if v is None:
            return out.error or "no verdict", detail
        detail["grade"] = v.grade
        reason = f"grade {v.grade}/3: {v.reasoning}".rstrip(": ")
        return Verdict(v.grade / 3, v.grade >= self.min_grade, reason, detail)


def bootstrap_judgments(
    pairs: Iterable[tuple[str, str, str, str]], judge: RelevanceJudge | None = None
) -> tuple[list[Judgment], list[tuple[str, str, str]]]:
    """Grade unjudged (query id, query text, memory id, memory text) pairs.

    Returns the judgments (source `bootstrapped`, annotator `relevance:<model>`) and the pairs
    the judge could not grade, as (query id, memory id, why).
    """
    judge = judge or RelevanceJudge()
    todo = list(pairs)

    async def grade_all() -> list[Verdict | tuple[str, dict[str, Any]]]:
        return await asyncio.gather(
            *(judge.averdict(EvalContext(output=text, input=query)) for _q, query, _m, text in todo)
        )

    judged, failed = [], []
    with llm_context().hold():  # called on its own, it closes the pools it opened
        verdicts = run_sync(grade_all())
    for (qid, _query, mid, _text), verdict in zip(todo, verdicts, strict=True):
        if not isinstance(verdict, Verdict):
            failed.append((qid, mid, verdict[0]))
            continue
        model = verdict.detail.get("model") or "default"
        judged.append(
            Judgment(
                query_id=qid,
                memory_id=mid,
                grade=int(verdict.detail["grade"]),
                source="bootstrapped",
                annotator=f"relevance:{model}",
            )
        )
    return judged, failed
