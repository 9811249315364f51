"""One generation call per group of memories, and the check of each item it returns: a good
item becomes a `Draft`, anything else a `Rejection` with its reason (a failed call, a reply that
is not JSON, a missing field, an id the group does not have, a grade outside 0-3, a category
asked for and not answered)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from pydantic import BaseModel

from memgauge.data.models import Memory
from memgauge.llm.structured import Structured, acomplete_structured
from memgauge.llm.types import LLMClient, Message
from memgauge.synth.prompts import CATEGORY_HELP, GENERATE_SYSTEM, GENERATE_USER
from memgauge.synth.records import GenerationReply, Reason, Rejection

__all__ = ["CallTally", "Draft", "agenerate", "check_item", "memory_lines"]

#: the one category whose query may have no relevant memory (seed 002: "empty results")
_MAY_BE_EMPTY = "edge-case"

R = TypeVar("R", bound=BaseModel)


@dataclass
class Draft:
    """An item that passed the checks, before the dedupe and the critic."""

    group: int
    category: str
    query: str
    grades: dict[str, int]
    expected_answer: str | None
    hard_negatives: list[str]
    memory_ids: list[str]


@dataclass
class CallTally:
    """LLM calls made and how many failed for good; HTTP requests behind them."""

    calls: int = 0
    failed: int = 0
    requests: int = 0
    errors: list[str] = field(default_factory=list)

    async def ask(
        self,
        client: LLMClient,
        messages: Sequence[Message],
        reply: type[R],
        *,
        name: str,
        model: str | None,
    ) -> Structured[R]:
        """One structured call of the pipeline, counted here; a call that failed for good
        keeps its error."""
        got = await acomplete_structured(client, messages, reply, name=name, model=model)
        self.calls += 1
        self.requests += got.requests
        if got.error_kind is not None:
            self.failed += 1
            self.errors.append(got.error or got.error_kind)
        return got


def memory_lines(memories: Sequence[Memory]) -> str:
    """`[id] text` per memory, as the prompts show them."""
    return "\n".join(f"[{m.id}] {m.text}" for m in memories)


def _reject(reason: Reason, group: int, ids: list[str], detail: str, raw: Any = None) -> Rejection:
    item = raw if isinstance(raw, dict) else {}
    category, query = item.get("category"), item.get("query")
    return Rejection(
        reason=reason,
        stage="generate",
        group=group,
        category=category if isinstance(category, str) else None,
        query=query if isinstance(query, str) else None,
        memory_ids=ids,
        detail=detail,
    )


def _grade(value: Any) -> int | None:
    # a JSON integer (2.0 is read as 2); never a bool or a string
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return None


def check_item(
    raw: Any, group: int, memories: Sequence[Memory], categories: Sequence[str]
) -> Draft | Rejection:
    """The item `raw` (one element of the reply's `items`) as a Draft, or why it is not one."""
    ids = [m.id for m in memories]
    known = set(ids)
    if not isinstance(raw, dict):
        return _reject("missing_fields", group, ids, f"an item is a JSON object, got {raw!r:.80}")
    missing = [
        k
        for k in ("category", "query", "judgments")
        if k not in raw or raw[k] is None or raw[k] == ""
    ]
    if missing or not isinstance(raw["query"], str) or not isinstance(raw["judgments"], list):
        what = ", ".join(missing) or "query (a string) or judgments (a list)"
        return _reject("missing_fields", group, ids, f"missing or malformed: {what}", raw)
    if raw["category"] not in categories:
        return _reject(
            "unknown_category", group, ids, f"category {raw['category']!r} was not asked", raw
        )
    grades: dict[str, int] = {}
    for j in raw["judgments"]:
        if not isinstance(j, dict) or "memory_id" not in j or "grade" not in j:
            return _reject(
                "missing_fields", group, ids, "a judgment needs memory_id and grade", raw
            )
        mid, grade = str(j["memory_id"]), _grade(j["grade"])
        if mid not in known:
            return _reject("unknown_memory_id", group, ids, f"judged memory {mid!r}", raw)
        if grade is None or not 0 <= grade <= 3:
            return _reject(
                "grade_out_of_range", group, ids, f"grade {j['grade']!r} of {mid!r}", raw
            )
        if mid in grades and grades[mid] != grade:
            return _reject(
                "inconsistent_judgments", group, ids, f"{mid!r} graded twice, differently", raw
            )
        grades[mid] = grade
    negatives = raw.get("hard_negatives") or []
    if not isinstance(negatives, list):
        return _reject("missing_fields", group, ids, "hard_negatives is a list of ids", raw)
    for mid in map(str, negatives):
        if mid not in known:
            return _reject("unknown_memory_id", group, ids, f"hard negative {mid!r}", raw)
        if grades.get(mid, 0) > 0:
            return _reject(
                "inconsistent_judgments",
                group,
                ids,
                f"hard negative {mid!r} is graded {grades[mid]}, not 0",
                raw,
            )
    if raw["category"] != _MAY_BE_EMPTY and not any(g > 0 for g in grades.values()):
        return _reject("no_relevant_memory", group, ids, "no memory graded 1-3", raw)
    answer = raw.get("expected_answer")
    return Draft(
        group=group,
        category=raw["category"],
        query=raw["query"].strip(),
        grades=grades,
        expected_answer=answer.strip() if isinstance(answer, str) and answer.strip() else None,
        hard_negatives=list(dict.fromkeys(map(str, negatives))),
        memory_ids=ids,
    )


async def agenerate(
    client: LLMClient,
    group: int,
    memories: Sequence[Memory],
    categories: Sequence[str],
    tally: CallTally,
    *,
    model: str | None = None,
) -> list[Draft | Rejection]:
    """Ask for one item per category about `memories`; every item checked, every category
    not answered a `missing_item` rejection, a failed call or a reply that is no JSON one
    rejection for the group."""
    ids = [m.id for m in memories]
    asked = "\n".join(f"- {c}: {CATEGORY_HELP.get(c, c)}" for c in categories)
    messages = (
        Message("system", GENERATE_SYSTEM),
        Message("user", GENERATE_USER.format(memories=memory_lines(memories), categories=asked)),
    )
    got = await tally.ask(client, messages, GenerationReply, name="synth_items", model=model)
    if got.error_kind is not None:
        return [_reject("failed_call", group, ids, got.error or got.error_kind)]
    if got.value is None:
        return [_reject("bad_json", group, ids, f"{got.error}; reply: {got.raw[:200]!r}")]
    out: list[Draft | Rejection] = [
        check_item(raw, group, memories, categories) for raw in got.value.items
    ]
    answered = {r.get("category") for r in got.value.items if isinstance(r, dict)}
    out += [
        Rejection(
            reason="missing_item",
            stage="generate",
            group=group,
            category=c,
            memory_ids=ids,
            detail=f"the reply has no item of category {c}",
        )
        for c in categories
        if c not in answered
    ]
    return out
