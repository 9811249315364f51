"""How far to trust an LLM judge: calibration against people's labels, and its noise when it
judges the same outputs again."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from memgauge.data.models import JudgedOutput
from memgauge.data.parsing import ParseError, load_yaml
from memgauge.errors import UsageError, argument
from memgauge.llm._loop import run_sync
from memgauge.llm.context import llm_context
from memgauge.scorers import evaluator_from_spec
from memgauge.scorers.judges import JudgeBase
from memgauge.scorers.judges.reliability import (
    CalibrationReport,
    RejudgeReport,
    acalibrate,
    arejudge,
)

__all__ = ["calibrate_judge", "judge_from_spec", "rejudge"]


def judge_from_spec(text: str, flag: str = "--judge") -> JudgeBase:
    """The LLM judge a spec written in YAML (`'{qa-judge: strict}'`, `rubric`) names; a
    UsageError, naming `flag` in a command (`text` from Python), for text that is no spec or
    a spec of no LLM judge."""
    if not isinstance(text, str):
        raise TypeError(f"text takes a judge spec's YAML text, got {type(text).__name__}")
    named = argument("text", flag=flag)
    example = argument("text", "'{qa-judge: strict}'", flag=flag)
    try:
        spec: Any = load_yaml(text)[0]
    except ParseError as exc:
        raise UsageError(f"{named}: not a spec ({exc.message}); e.g. {example}") from None
    if spec is None:  # empty or blank text (or YAML's null): the registry's "got None"
        given = argument("text", repr(text), flag=flag)
        raise UsageError(f"{given}: give a judge, e.g. {example}")
    built = evaluator_from_spec(spec)
    if not isinstance(built, JudgeBase):
        raise UsageError(
            f"{named}: {text!r} is not an LLM judge (rubric, qa-judge, facts, pairwise, panel)"
        )
    return built


def calibrate_judge(judge: JudgeBase, rows: Sequence[JudgedOutput]) -> CalibrationReport:
    """Judge outputs people labelled pass / fail and compare: confusion matrix, accuracy with
    its Wilson interval, Cohen's kappa; items the judge could not judge are counted apart.
    The LLM clients are closed at the end."""
    with llm_context().hold():
        return run_sync(acalibrate(judge, rows))


def rejudge(judge: JudgeBase, rows: Sequence[JudgedOutput], k: int) -> RejudgeReport:
    """Judge frozen outputs `k` times each and split the spread into judge noise and real
    differences between items. The LLM clients are closed at the end."""
    with llm_context().hold():
        return run_sync(arejudge(judge, rows, k))
