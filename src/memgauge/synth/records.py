"""What `memgauge synth` reads from the model and what it reports: the reply envelopes (loose,
so one bad item never costs its neighbours), every rejection by reason, and the report written
beside the dataset."""

from __future__ import annotations

from collections import Counter
from datetime import datetime
from typing import Any, Literal, get_args

from pydantic import ConfigDict, Field, model_validator

from memgauge._util.model import Model

__all__ = [
    "REASONS",
    "CriticReply",
    "GenerationReply",
    "Reason",
    "Rejection",
    "SynthReport",
]

Reason = Literal[
    "failed_call",
    "bad_json",
    "missing_fields",
    "missing_item",
    "unknown_category",
    "unknown_memory_id",
    "grade_out_of_range",
    "inconsistent_judgments",
    "no_relevant_memory",
    "duplicate",
    "critic_reject",
]
#: every reason an item is not in the dataset, in the order the pipeline meets them
REASONS: tuple[str, ...] = get_args(Reason)


class GenerationReply(Model):
    """The generator's reply: only its envelope is required here; each item is checked on its
    own (`synth.generate.check_item`) and rejected with its reason."""

    model_config = ConfigDict(extra="allow")

    items: list[Any] = Field(description="One object per category asked.")

    @model_validator(mode="before")
    @classmethod
    def _bare_list(cls, data: Any) -> Any:
        # models often answer with the list alone: the items all the same
        return {"items": data} if isinstance(data, list) else data


class CriticReply(Model):
    """The critic's verdict on one item."""

    model_config = ConfigDict(extra="allow")

    verdict: Literal["keep", "reject"] = Field(description="keep or reject.")
    problem: str = Field(default="none", description="none, ungrounded or ambiguous.")
    reason: str = Field(default="", description="One sentence.")


class Rejection(Model):
    """One item (or one call's worth of items) that is not in the dataset, and why."""

    model_config = ConfigDict(extra="forbid")

    reason: Reason = Field(description="Why it was rejected.")
    stage: Literal["generate", "dedupe", "critic"] = Field(description="Where.")
    group: int = Field(description="The group of memories it was written from.")
    category: str | None = Field(default=None, description="The item's category, if known.")
    query: str | None = Field(default=None, description="The query, if one was read.")
    memory_ids: list[str] = Field(default_factory=list, description="The group's memories.")
    detail: str = Field(default="", description="What exactly was wrong.")


class SynthReport(Model):
    """How a synthetic dataset was made: counts, provenance, and every rejection."""

    model_config = ConfigDict(extra="forbid")

    schema_version: Literal[1] = 1
    source: str = Field(description="Where the memories were read.")
    n_memories: int = Field(description="Memories read.")
    n_groups: int = Field(description="Groups of memories a query set was asked for.")
    categories: list[str] = Field(description="Categories asked, one query each per group.")
    model: str = Field(description="The generator model.")
    critic_model: str | None = Field(description="The critic model (None: no critic pass).")
    prompt_version: str = Field(description="Version of the prompts.")
    prompt_hashes: dict[str, str] = Field(description="Prompt -> template hash.")
    embedder: str = Field(description="The embedder of the grouping and the dedupe.")
    dedupe_threshold: float = Field(description="Cosine at or above which a query is a dup.")
    created_at: datetime = Field(description="UTC.")
    n_calls: int = Field(default=0, description="LLM calls made (cached ones included).")
    n_failed_calls: int = Field(default=0, description="LLM calls that failed for good.")
    n_requests: int = Field(default=0, description="HTTP requests (0 for cached answers).")
    n_kept: int = Field(default=0, description="Items in the dataset.")
    kept_by_category: dict[str, int] = Field(default_factory=dict, description="Per category.")
    rejections: list[Rejection] = Field(default_factory=list, description="Every rejection.")

    @property
    def n_rejected(self) -> int:
        """Rejections, all reasons."""
        return len(self.rejections)

    def by_reason(self) -> dict[str, int]:
        """Rejections per reason (every reason listed, 0 included: no gap is silent)."""
        got: Counter[str] = Counter(r.reason for r in self.rejections)
        return {reason: got.get(reason, 0) for reason in REASONS}

    def as_dict(self) -> dict[str, Any]:
        """The report as JSON data, with the counts by reason."""
        return {
            **self.model_dump(mode="json"),
            "n_rejected": self.n_rejected,
            "rejected_by_reason": self.by_reason(),
        }
