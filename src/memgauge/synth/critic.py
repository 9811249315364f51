"""The critic pass: a model (the generator's or another) reads each item beside the memories it
was written from and keeps it, or rejects it as ungrounded or ambiguous, with its reason."""

from __future__ import annotations

import json
from collections.abc import Sequence

from memgauge.data.models import Memory
from memgauge.llm.types import LLMClient, Message
from memgauge.synth.generate import CallTally, Draft, memory_lines
from memgauge.synth.prompts import CRITIC_SYSTEM, CRITIC_USER
from memgauge.synth.records import CriticReply, Reason, Rejection

__all__ = ["acritique"]


def _rejection(draft: Draft, reason: Reason, detail: str) -> Rejection:
    return Rejection(
        reason=reason,
        stage="critic",
        group=draft.group,
        category=draft.category,
        query=draft.query,
        memory_ids=draft.memory_ids,
        detail=detail,
    )


async def acritique(
    client: LLMClient,
    draft: Draft,
    memories: Sequence[Memory],
    tally: CallTally,
    *,
    model: str | None = None,
) -> str | Rejection:
    """The critic's reason to keep `draft`, or the rejection: `critic_reject` with the
    critic's words, `bad_json` for a verdict that cannot be read, `failed_call`."""
    judgments = json.dumps(draft.grades, sort_keys=True)
    messages = (
        Message("system", CRITIC_SYSTEM),
        Message(
            "user",
            CRITIC_USER.format(
                memories=memory_lines(memories),
                category=draft.category,
                query=draft.query,
                judgments=judgments,
                answer=draft.expected_answer or "(none)",
            ),
        ),
    )
    got = await tally.ask(client, messages, CriticReply, name="synth_critic", model=model)
    if got.error_kind is not None:
        return _rejection(draft, "failed_call", got.error or got.error_kind)
    if got.value is None:
        return _rejection(draft, "bad_json", f"{got.error}; reply: {got.raw[:200]!r}")
    verdict = got.value
    if verdict.verdict == "reject":
        return _rejection(draft, "critic_reject", f"{verdict.problem}: {verdict.reason}".strip())
    return verdict.reason
