"""The field types of LoCoMo and LongMemEval records, checked before an importer walks them.

The importers read these files leniently (missing dates, malformed evidence ids and unknown
keys are normalised or counted, as the public files need), but a field of the wrong type (a
session that is a string, a turn that is a number, a category that is a list) would end in an
AttributeError or TypeError deep inside the walk. These loose models accept every key the real
files have and refuse only wrong types, so each problem is reported with its place
(`[3].qa[0].category`) and the import stops with exit 2 before anything is written.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import (
    BaseModel,
    ConfigDict,
    StrictBool,
    StrictInt,
    StrictStr,
    ValidationError,
    model_validator,
)

from memgauge.data.jsonio import problems_from_validation
from memgauge.errors import Problem

__all__ = ["LocomoSample", "LongMemEvalQuestion", "shape_problems"]

_SESSION = re.compile(r"session_[0-9]+$")
Id = StrictStr | StrictInt


class _Loose(BaseModel):
    # the public files carry keys memgauge does not use (observation, img_url, ...)
    model_config = ConfigDict(extra="allow", allow_inf_nan=False)


class _LocomoTurn(_Loose):
    dia_id: StrictStr | None = None
    speaker: StrictStr | None = None
    text: StrictStr | None = None
    blip_caption: StrictStr | None = None


class _LocomoQA(_Loose):
    question: StrictStr | None = None
    category: StrictInt | None = None
    evidence: list[StrictStr] | None = None


class LocomoSample(_Loose):
    """One LoCoMo sample: `conversation` holds `session_<n>` turn lists (and their dates)."""

    sample_id: Id | None = None
    conversation: dict[str, list[_LocomoTurn]]
    qa: list[_LocomoQA] | None = None
    observation: dict[str, dict[str, list[Any]]] | None = None

    @model_validator(mode="before")
    @classmethod
    def _sessions_only(cls, data: Any) -> Any:
        # `conversation` mixes session lists with speaker names and dates: check the sessions
        if isinstance(data, dict) and isinstance(data.get("conversation"), dict):
            conv = data["conversation"]
            dates = {k: v for k, v in conv.items() if k.endswith("_date_time")}
            bad = [k for k, v in dates.items() if v is not None and not isinstance(v, str)]
            if bad:
                raise ValueError(f"conversation.{bad[0]} is a date written as text")
            sessions = {k: v for k, v in conv.items() if _SESSION.match(k)}
            return {**data, "conversation": sessions}
        return data


class _LongMemEvalTurn(_Loose):
    role: StrictStr | None = None
    content: StrictStr | None = None
    has_answer: StrictBool | None = None


class LongMemEvalQuestion(_Loose):
    """One LongMemEval question with its haystack."""

    question_id: Id
    question_type: StrictStr
    question: StrictStr
    haystack_session_ids: list[Id]
    haystack_sessions: list[list[_LongMemEvalTurn]]
    haystack_dates: list[StrictStr | None] | None = None
    answer_session_ids: list[Id] | None = None
    question_date: StrictStr | None = None


def shape_problems(value: Any, model: type[BaseModel], file: str, where: str) -> list[Problem]:
    """Every wrong-typed field of `value` against `model`, each named under `where`."""
    try:
        model.model_validate(value)
    except ValidationError as exc:
        return problems_from_validation(exc, file, None, where)
    return []
