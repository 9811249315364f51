"""`memgauge synth`'s pipeline: group the memories, ask for one query per category of each
group, check every item, drop near-duplicate queries, let a critic drop ungrounded or ambiguous
ones, and build an ordinary retrieval dataset marked synthetic, with a report that counts every
rejection by reason.

A call that fails for good is a recorded rejection; more failed calls than `max_failure_rate`
allows is the generator failing (a `SubjectError`, exit 4), and nothing is built.
"""

from __future__ import annotations

import asyncio
import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from memgauge._util.numbers import MAX_FAILURE_RATE
from memgauge.data.models import (
    SEED_CATEGORIES,
    EvalQuery,
    Judgment,
    Memory,
    RetrievalDataset,
    SyntheticOrigin,
)
from memgauge.embed.protocol import Embedder
from memgauge.errors import SubjectError, UsageError
from memgauge.llm._loop import run_sync
from memgauge.llm.context import llm_context
from memgauge.llm.types import LLMClient
from memgauge.synth.critic import acritique
from memgauge.synth.generate import CallTally, Draft, agenerate
from memgauge.synth.prompts import PROMPT_VERSION, prompt_hashes
from memgauge.synth.records import Rejection, SynthReport
from memgauge.synth.similar import group_memories, near_duplicates

__all__ = ["SynthConfig", "synthesize"]


@dataclass(frozen=True)
class SynthConfig:
    """How to generate.

    Attributes:
        model: the generator (None: `MEMGAUGE_MODEL`).
        critic_model: the critic (None: the generator's model).
        critic: run the critic pass.
        categories: the categories asked, one query each per group (seed 002's eight).
        group_size: memories shown per call.
        max_groups: calls at most (one per group).
        dedupe_threshold: cosine at or above which a query is a near-duplicate of one kept.
        max_failure_rate: failed calls (after retries) allowed, as a share of all calls.
        name: the dataset's name.
    """

    model: str | None = None
    critic_model: str | None = None
    critic: bool = True
    categories: tuple[str, ...] = SEED_CATEGORIES
    group_size: int = 5
    max_groups: int = 25
    dedupe_threshold: float = 0.9
    max_failure_rate: float = MAX_FAILURE_RATE
    name: str = "synthetic"

    def __post_init__(self) -> None:
        if self.critic_model is not None and not self.critic:
            raise UsageError("a critic model and no critic pass: give one or the other")
        unknown = [c for c in self.categories if c not in SEED_CATEGORIES]
        if unknown or not self.categories:
            raise UsageError(
                f"categories: {', '.join(unknown) or 'none given'}; seed 002's are "
                + ", ".join(SEED_CATEGORIES)
            )
        if self.group_size < 1 or self.max_groups < 1:
            raise UsageError("group size and groups are at least 1")
        if not 0 < self.dedupe_threshold <= 1:
            raise UsageError("the dedupe threshold is a cosine in (0, 1]")
        if not 0 <= self.max_failure_rate <= 1:
            raise UsageError("max_failure_rate is between 0 and 1")


def _check_budget(tally: CallTally, rate: float) -> None:
    allowed = math.floor(rate * tally.calls)
    if tally.failed > allowed:
        raise SubjectError(
            f"{tally.failed} of {tally.calls} LLM calls failed, more than max_failure_rate "
            f"{rate:g} allows (at most {allowed}); the first: {tally.errors[0]}; nothing was "
            "written"
        )


def _dedupe(
    drafts: list[Draft], embedder: Embedder, threshold: float
) -> tuple[list[Draft], list[Rejection]]:
    dropped = near_duplicates([d.query for d in drafts], embedder, threshold)
    rejections = [
        Rejection(
            reason="duplicate",
            stage="dedupe",
            group=drafts[i].group,
            category=drafts[i].category,
            query=drafts[i].query,
            memory_ids=drafts[i].memory_ids,
            detail=f"cosine {sim:.3f} with {drafts[j].query!r} (kept)",
        )
        for i, (j, sim) in sorted(dropped.items())
    ]
    return [d for i, d in enumerate(drafts) if i not in dropped], rejections


def _dataset(
    memories: Sequence[Memory],
    kept: list[tuple[Draft, str | None]],
    report: SynthReport,
    origin: SyntheticOrigin,
    name: str,
) -> RetrievalDataset:
    by_id = {m.id: m for m in memories}
    queries, judgments = [], []
    seen: Counter[str] = Counter()
    for draft, critic_reason in kept:
        base = f"syn-{draft.group:03d}-{draft.category}"
        seen[base] += 1
        qid = base if seen[base] == 1 else f"{base}-{seen[base]}"
        corpora = {by_id[m].corpus for m in draft.memory_ids}
        meta: dict[str, object] = {
            "synthetic": True,
            "source_memory_ids": draft.memory_ids,
            "model": report.model,
            "prompt_version": report.prompt_version,
            "prompt_hash": report.prompt_hashes["generate"],
            "hard_negatives": draft.hard_negatives,
        }
        if draft.expected_answer is not None:
            meta["answer"] = draft.expected_answer
        if report.critic_model is not None:
            meta["critic"] = {
                "model": report.critic_model,
                "prompt_hash": report.prompt_hashes["critic"],
                "reason": critic_reason or "",
            }
        queries.append(
            EvalQuery(
                id=qid,
                text=draft.query,
                category=draft.category,
                corpus=next(iter(corpora)) if len(corpora) == 1 else None,
                metadata=meta,
            )
        )
        grades = {**dict.fromkeys(draft.hard_negatives, 0), **draft.grades}
        judgments += [
            Judgment(
                query_id=qid, memory_id=mid, grade=g, source="bootstrapped", annotator=report.model
            )
            for mid, g in grades.items()
        ]
    return RetrievalDataset(
        name=name,
        memories=list(memories),
        queries=queries,
        judgments=judgments,
        synthetic=origin,
    )


async def _gather_generate(
    client: LLMClient,
    groups: list[list[Memory]],
    config: SynthConfig,
    tally: CallTally,
) -> list[Draft | Rejection]:
    done = await asyncio.gather(
        *(
            agenerate(client, g, members, config.categories, tally, model=config.model)
            for g, members in enumerate(groups)
        )
    )
    return [x for per_group in done for x in per_group]


async def _gather_critic(
    client: LLMClient,
    drafts: list[Draft],
    groups: list[list[Memory]],
    tally: CallTally,
    model: str | None,
) -> list[str | Rejection]:
    return list(
        await asyncio.gather(
            *(acritique(client, d, groups[d.group], tally, model=model) for d in drafts)
        )
    )


def synthesize(
    memories: Sequence[Memory],
    embedder: Embedder,
    config: SynthConfig,
    *,
    source: str,
) -> tuple[RetrievalDataset, SynthReport]:
    """The synthetic dataset written from `memories`, and the report of how (see the module).
    The LLM clients are held for the work and closed at its end."""
    if not memories:
        raise UsageError(f"{source}: no memories to write queries from")
    groups = group_memories(
        memories, embedder, size=config.group_size, max_groups=config.max_groups
    )
    tally = CallTally()
    with llm_context().hold() as ctx:
        client = ctx.client(model=config.model)
        model = config.model or client.model
        critic_model = (config.critic_model or model) if config.critic else None
        report = SynthReport(
            source=source,
            n_memories=len(memories),
            n_groups=len(groups),
            categories=list(config.categories),
            model=model,
            critic_model=critic_model,
            prompt_version=PROMPT_VERSION,
            prompt_hashes=prompt_hashes(),
            embedder=embedder.name,
            dedupe_threshold=config.dedupe_threshold,
            created_at=datetime.now(UTC),
        )
        checked = run_sync(_gather_generate(client, groups, config, tally))
        _check_budget(tally, config.max_failure_rate)
        rejections = [x for x in checked if isinstance(x, Rejection)]
        drafts, dups = _dedupe(
            [x for x in checked if isinstance(x, Draft)], embedder, config.dedupe_threshold
        )
        rejections += dups
        kept: list[tuple[Draft, str | None]] = [(d, None) for d in drafts]
        if critic_model is not None and drafts:
            critic = ctx.client(model=critic_model)
            verdicts = run_sync(_gather_critic(critic, drafts, groups, tally, critic_model))
            _check_budget(tally, config.max_failure_rate)
            rejections += [v for v in verdicts if isinstance(v, Rejection)]
            kept = [(d, v) for d, v in zip(drafts, verdicts, strict=True) if isinstance(v, str)]
    report.n_calls, report.n_failed_calls, report.n_requests = (
        tally.calls,
        tally.failed,
        tally.requests,
    )
    report.rejections = rejections
    report.n_kept = len(kept)
    report.kept_by_category = {
        c: n for c in config.categories if (n := sum(d.category == c for d, _ in kept))
    }
    if not kept:
        counts = ", ".join(f"{r} {n}" for r, n in report.by_reason().items() if n)
        raise SubjectError(
            f"the model wrote no usable item from {source} ({counts}); nothing was written"
        )
    origin = SyntheticOrigin(
        generator=model,
        critic=critic_model,
        created_at=report.created_at,
        n_memories=len(memories),
        source=source,
        prompt_version=PROMPT_VERSION,
        prompt_hashes=report.prompt_hashes,
    )
    return _dataset(memories, kept, report, origin, config.name), report
