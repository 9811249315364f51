"""Pydantic models for every dataset memgauge reads: retrieval corpora and conversations.

Every model forbids unknown fields, so a typo in a file is reported instead of ignored. Numbers
are JSON numbers: finite (`FiniteFloat`; no NaN or infinity), and neither strings nor booleans
(pydantic's lax mode would read `"1_0"` as 10 and `true` as 1).
"""

from __future__ import annotations

import unicodedata
from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import (
    AliasChoices,
    ConfigDict,
    Field,
    StrictInt,
    field_validator,
    model_validator,
)

from memgauge._util.listing import counted
from memgauge._util.model import Model

__all__ = [
    "ACTIONS",
    "ACTION_ALIASES",
    "IMPORTANCE_WEIGHTS",
    "SEED_CATEGORIES",
    "TIERS",
    "CausalChain",
    "Conversation",
    "ConversationDataset",
    "DatasetProtocol",
    "EquivalenceClass",
    "EvalQuery",
    "Fact",
    "FiniteFloat",
    "JudgedOutput",
    "Judgment",
    "JudgmentSource",
    "Memory",
    "RetrievalDataset",
    "SessionContext",
    "SyntheticOrigin",
    "TaskItem",
    "Tier",
    "Turn",
    "fact_key",
    "normalize_action",
]

Tier = Literal["constitutional", "critical", "important", "normal", "temporary"]
TIERS: tuple[Tier, ...] = ("constitutional", "critical", "important", "normal", "temporary")
#: Seed 002 section 3.3: weights of importance-weighted recall.
IMPORTANCE_WEIGHTS: dict[str, float] = {
    "constitutional": 4.0,
    "critical": 3.0,
    "important": 2.0,
    "normal": 1.0,
    "temporary": 0.5,
}
#: Seed 002 section 2.2: the query taxonomy. Importers add their own (LoCoMo's `multi-hop`, ...).
SEED_CATEGORIES: tuple[str, ...] = (
    "trigger-match",
    "semantic-search",
    "causal-query",
    "cross-folder",
    "intent-specific",
    "cold-start",
    "multi-concept",
    "edge-case",
)
JudgmentSource = Literal["manual", "implicit", "bootstrapped", "validated"]

NonEmptyStr = Annotated[str, Field(min_length=1)]
#: A number read from a file: finite, and a JSON number (an int is fine), not a string or a bool.
FiniteFloat = Annotated[float, Field(strict=True, allow_inf_nan=False)]


class _Model(Model):
    model_config = ConfigDict(
        extra="forbid", frozen=True, str_strip_whitespace=False, allow_inf_nan=False
    )


class Memory(_Model):
    """One stored memory: the unit a memory system searches over."""

    id: NonEmptyStr = Field(description="Unique memory id.")
    text: str = Field(description="The memory's content as the system stores it.")
    tier: Tier = Field(default="normal", description="Importance tier (seed 002 section 3.3).")
    folder: str | None = Field(default=None, description="Spec folder or topic, used for ILS.")
    session: str | None = Field(default=None, description="Session the memory came from.")
    corpus: str | None = Field(
        default=None,
        description="Corpus it belongs to (e.g. one LoCoMo conversation); None = every corpus.",
    )
    created_at: datetime | None = Field(default=None, description="When the memory was made.")
    metadata: dict[str, Any] = Field(default_factory=dict, description="Anything else.")


class SessionContext(_Model):
    """Seed 002 `sessionContext`: the working state a personalised search may use."""

    session_id: NonEmptyStr = Field(description="The session the query was asked in.")
    working_memory_ids: list[str] = Field(
        default_factory=list, description="Memories already in the session's working memory."
    )
    turn_number: StrictInt = Field(
        default=0, ge=0, description="Turn of the session, 0 = cold start."
    )


class EvalQuery(_Model):
    """Seed 002 `EvalQuery`: one evaluation query (its judgments live beside it)."""

    id: NonEmptyStr = Field(description="Unique query id.")
    text: str = Field(description="The query text as the agent would send it.")
    intent: str | None = Field(default=None, description="Classified intent, e.g. find_decision.")
    category: str | None = Field(
        default=None, description="Category; the seed's taxonomy is in SEED_CATEGORIES."
    )
    session_context: SessionContext | None = Field(
        default=None, description="Optional session context for personalised evaluation."
    )
    harvested_at: datetime | None = Field(
        default=None, description="When the query was harvested from logs; None if synthetic."
    )
    corpus: str | None = Field(
        default=None,
        description="Search only this corpus's memories (plus shared ones); None = all.",
    )
    metadata: dict[str, Any] = Field(default_factory=dict, description="Anything else.")


class Judgment(_Model):
    """A graded relevance judgment: 0 not, 1 marginal, 2 relevant, 3 highly relevant."""

    query_id: NonEmptyStr = Field(description="The judged query.")
    memory_id: NonEmptyStr = Field(description="The judged memory.")
    grade: StrictInt = Field(ge=0, le=3, description="Relevance grade 0-3.")
    source: JudgmentSource = Field(default="manual", description="Where the judgment came from.")
    annotator: str | None = Field(default=None, description="Who or what judged.")
    confidence: FiniteFloat = Field(default=1.0, ge=0.0, le=1.0, description="Confidence, 0-1.")
    source_channels: list[NonEmptyStr] = Field(
        default_factory=list,
        validation_alias=AliasChoices("source_channels", "sourceChannels"),
        description="Seed 002 `sourceChannels`: the retrieval channels that produced this "
        "memory when it was judged (`vector`, `fts5`, `bm25`, `graph`, or a system's own "
        "names such as `lexical`, `dense`); `sourceChannels` is read as well. Empty: unknown.",
    )


class EquivalenceClass(_Model):
    """Memories that are interchangeably relevant: any one in top-K counts as a hit."""

    id: NonEmptyStr = Field(description="Unique class id.")
    memory_ids: list[str] = Field(min_length=2, description="Members (two or more).")


class CausalChain(_Model):
    """A decision lineage: the memories a causal query should surface together."""

    id: NonEmptyStr = Field(description="Unique chain id.")
    memory_ids: list[str] = Field(min_length=2, description="Chain nodes, cause first.")
    query_ids: list[str] = Field(
        default_factory=list, description="Queries this chain answers; empty = any judged query."
    )


class DatasetProtocol(_Model):
    """The benchmark protocol a dataset was imported under, and the conventions of that
    benchmark's own scripts that `memgauge evaluate` then follows (set by importers)."""

    name: NonEmptyStr = Field(
        description="e.g. longmemeval-paper or longmemeval-all-turns; reports print it."
    )
    granularity: Literal["turn", "session"] | None = Field(
        default=None, description="What one memory is: a turn or a whole session."
    )
    recall_all_no_relevant: Literal[0, 1] = Field(
        default=0,
        description="recall_all of a query with no relevant memory: 0 (memgauge) or 1 "
        "(LongMemEval, where all() of nothing is true).",
    )
    turn_ids: Literal["longmemeval"] | None = Field(
        default=None,
        description="How a turn's id names its session, for the session_* measures: "
        "`longmemeval` = the id up to its last `_` (LongMemEval's strip_turn_id). None: the "
        "dataset has no session_* measures.",
    )


class SyntheticOrigin(_Model):
    """How a synthetic dataset was made (`memgauge synth`): every report of a run on it says
    so, in `label()`'s words."""

    generator: NonEmptyStr = Field(description="The model that wrote the queries and judgments.")
    critic: str | None = Field(
        default=None, description="The model that filtered them; None: no critic pass."
    )
    created_at: datetime = Field(description="When the dataset was generated (UTC).")
    n_memories: StrictInt = Field(ge=0, description="Memories the queries were written from.")
    source: str | None = Field(default=None, description="Where the memories were read.")
    prompt_version: str | None = Field(default=None, description="The prompts' version.")
    prompt_hashes: dict[str, str] = Field(
        default_factory=dict, description="Prompt name -> sha256 prefix of its template."
    )

    def label(self) -> str:
        """`synthetic data: generated by MODEL on DATE from N memories`."""
        return (
            f"synthetic data: generated by {self.generator} on "
            f"{self.created_at.date().isoformat()} from {counted(self.n_memories, 'memory', 'memories')}"
        )


class RetrievalDataset(_Model):
    """Memories, queries and graded judgments, with optional equivalence classes and chains."""

    schema_version: Literal[1] = Field(default=1, description="Format version.")
    name: str = Field(default="dataset", description="A short name for reports.")
    memories: list[Memory] = Field(default_factory=list, description="The corpus.")
    queries: list[EvalQuery] = Field(default_factory=list, description="The queries.")
    judgments: list[Judgment] = Field(default_factory=list, description="Graded judgments.")
    equivalence_classes: list[EquivalenceClass] = Field(
        default_factory=list, description="Interchangeable memories."
    )
    causal_chains: list[CausalChain] = Field(default_factory=list, description="Causal chains.")
    protocol: DatasetProtocol | None = Field(
        default=None,
        description="The benchmark protocol it was imported under (e.g. LongMemEval's paper "
        "protocol), and the conventions that come with it; None for memgauge's own.",
    )
    synthetic: SyntheticOrigin | None = Field(
        default=None,
        description="Set when the queries and judgments were generated by a model "
        "(`memgauge synth`), not written or harvested from people; reports say so.",
    )

    def source_channels(self) -> dict[str, dict[str, list[str]]]:
        """Seed 002's channel attribution: `{query_id: {memory_id: channels}}` of the judgments
        that name their channels (several judgments of one pair: their channels, merged)."""
        out: dict[str, dict[str, list[str]]] = {}
        for j in self.judgments:
            if j.source_channels:
                per = out.setdefault(j.query_id, {})
                per[j.memory_id] = sorted({*per.get(j.memory_id, ()), *j.source_channels})
        return out

    def qrels(self) -> dict[str, dict[str, int]]:
        """Judgments as `{query_id: {memory_id: grade}}`; the highest grade wins on repeats."""
        out: dict[str, dict[str, int]] = {}
        for j in self.judgments:
            per = out.setdefault(j.query_id, {})
            per[j.memory_id] = max(j.grade, per.get(j.memory_id, 0))
        return out


# --- conversations (memaudit format, seed 003) -------------------------------------------


class Turn(_Model):
    """One conversation turn."""

    role: Literal["user", "assistant", "system"] = Field(description="Who spoke.")
    content: str = Field(description="What was said.")
    timestamp: str | None = Field(default=None, description="ISO 8601 time, when known.")


class Fact(_Model):
    """A ground-truth fact stated in a conversation."""

    id: NonEmptyStr = Field(description="Unique fact id within the dataset.")
    content: str = Field(description="The fact in plain words.")
    timestamp: str | None = Field(default=None, description="When it was stated.")
    supersedes: str | None = Field(default=None, description="Id of the fact this one replaces.")
    category: Literal["personal", "preference", "event", "relationship"] | None = Field(
        default=None, description="memaudit's fact category."
    )


class Conversation(_Model):
    """A conversation with its turns and the facts it establishes."""

    id: NonEmptyStr = Field(description="Unique conversation id.")
    turns: list[Turn] = Field(description="The turns, in order.")
    facts: list[Fact] = Field(default_factory=list, description="Facts it establishes.")


class ConversationDataset(_Model):
    """memaudit's `MemoryDataset`: conversations with facts."""

    id: NonEmptyStr = Field(description="Dataset id.")
    conversations: list[Conversation] = Field(description="The conversations.")

    @model_validator(mode="after")
    def _unique_ids(self) -> ConversationDataset:
        seen: set[str] = set()
        for conv in self.conversations:
            if conv.id in seen:
                raise ValueError(f"duplicate conversation id {conv.id!r}")
            seen.add(conv.id)
        return self


# --- task items (expected-output and script tasks, seed 004) ------------------------------


class TaskItem(_Model):
    """One item of an expected-output or script task: what the subject is asked, and what a
    right answer looks like."""

    id: NonEmptyStr = Field(description="Unique item id within the task.")
    input: str = Field(description="The question or instruction given to the subject.")
    expected: Any = Field(
        default=None, description="The reference answer (a list means: any of these)."
    )
    history: list[Turn] | None = Field(
        default=None, description="Conversation given to an agent before the question."
    )
    category: str | None = Field(default=None, description="Category, for breakdowns.")
    corpus: str | None = Field(
        default=None,
        description="The memories' corpus it is asked against (e.g. one LoCoMo conversation).",
    )
    metadata: dict[str, Any] = Field(default_factory=dict, description="Anything else.")


_PASS = {"pass", "yes", "correct", "true", "1"}
_FAIL = {"fail", "no", "wrong", "false", "0"}


class JudgedOutput(Model):
    """A frozen output to judge again: one line of a labels file (`memgauge judge calibrate`,
    with a human `label`) or of a run export (`memgauge judge rejudge`, extra keys ignored)."""

    model_config = ConfigDict(extra="ignore", frozen=True, allow_inf_nan=False)

    id: NonEmptyStr = Field(description="Item id (a run export's subject/task/item_id also works).")
    input: Any = Field(default=None, description="What the subject was asked.")
    output: Any = Field(description="What the subject answered: the thing being judged.")
    expected: Any = Field(default=None, description="The reference answer, if any.")
    label: str | None = Field(
        default=None,
        description="A person's verdict: pass or fail (yes/no, correct/wrong, true/false, 1/0).",
    )
    metadata: dict[str, Any] = Field(default_factory=dict, description="Item metadata.")

    @model_validator(mode="before")
    @classmethod
    def _export_ids(cls, data: Any) -> Any:
        if isinstance(data, dict) and "id" not in data and "item_id" in data:
            parts = [str(data[k]) for k in ("subject", "task") if data.get(k)]
            data = {**data, "id": "/".join([*parts, str(data["item_id"])])}
        return data

    @field_validator("label", mode="before")
    @classmethod
    def _pass_fail(cls, v: Any) -> Any:
        if v is None:
            return None
        low = str(v).strip().lower()
        if low in _PASS:
            return "pass"
        if low in _FAIL:
            return "fail"
        raise ValueError(
            f"label {v!r} is not a verdict: use pass or fail (or yes/no, correct/wrong, true/false, 1/0)"
        )


def fact_key(content: str) -> str:
    """What two expected facts that are one fact share: the text, case, spacing and Unicode
    form aside (`ü` as one character, NFC, or as `u` and a combining mark, NFD)."""
    return _spaced(unicodedata.normalize("NFC", content))


def _spaced(content: str) -> str:
    return " ".join(content.split()).casefold()


def blank(text: str) -> str | None:
    """Why `text` holds nothing to read: "" when it is empty or only whitespace, the invisible
    characters it is made of (zero-width and other format characters, U+200B, U+FEFF, U+2060,
    which `str.strip` keeps) when any; None when it holds something."""
    if any(not ch.isspace() and unicodedata.category(ch) != "Cf" for ch in text):
        return None
    invisible = sorted({f"U+{ord(ch):04X}" for ch in text if unicodedata.category(ch) == "Cf"})
    return f" (only invisible characters: {', '.join(invisible)})" if invisible else ""


class ExpectedFact(_Model):
    """An atomic fact a correct extraction contains."""

    content: NonEmptyStr = Field(description="The fact, e.g. 'No subscription model'.")
    category: str | None = Field(default=None, description="Its category, e.g. constraint.")
    replaces: str | None = Field(
        default=None,
        description="The existing-memory fact it replaces (conflict resolution): that one must "
        "be gone from the output.",
    )

    @field_validator("content")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        why = blank(value)
        if why is not None:  # no extractor can produce it: each would be charged a miss
            raise ValueError(f"the expected fact is blank{why}: give its text, or remove it")
        return value


class ExtractionCase(_Model):
    """One fact-extraction case (seed 001): a memory, a conversation, and what the memory
    should hold afterwards."""

    id: NonEmptyStr = Field(description="Unique case id.")
    scenario: str | None = Field(default=None, description="What it tests, e.g. conflict.")
    existing_memory: list[str] = Field(
        default_factory=list, description="Facts already in memory before the conversation."
    )
    conversation: list[Turn] = Field(min_length=1, description="The conversation to extract from.")
    expected_facts: list[ExpectedFact] = Field(
        default_factory=list,
        description="Facts the conversation adds or changes (empty: the memory must not change).",
    )
    expected_output: Any = Field(
        default=None, description="The whole expected memory afterwards, for reference."
    )
    metadata: dict[str, Any] = Field(default_factory=dict, description="Anything else.")

    @field_validator("conversation")
    @classmethod
    def _turns_said_something(cls, turns: list[Turn]) -> list[Turn]:
        # a blank turn gives an extractor nothing to extract, as a blank fact gives it nothing
        # to produce: refused the same way
        for i, turn in enumerate(turns, 1):
            why = blank(turn.content)
            if why is not None:
                raise ValueError(
                    f"turn {i} ({turn.role}) is blank{why}: give what was said, or remove the turn"
                )
        return turns

    @model_validator(mode="after")
    def _replaces_existing(self) -> ExtractionCase:
        for f in self.expected_facts:
            if f.replaces is not None and f.replaces not in self.existing_memory:
                raise ValueError(
                    f"expected fact {f.content!r} replaces {f.replaces!r}, which is not in "
                    "existing_memory: copy the existing fact exactly"
                )
        return self

    @model_validator(mode="after")
    def _each_fact_once(self) -> ExtractionCase:
        # one expected fact twice would charge an extractor that keeps it once a missed fact
        seen: dict[str, str] = {}
        for f in self.expected_facts:
            key = fact_key(f.content)
            if key in seen:
                form = (
                    " (the same text in another Unicode form: one writes an accent as a "
                    "combining mark)"
                    if _spaced(f.content) != _spaced(seen[key])
                    else ""
                )
                raise ValueError(
                    f"expected fact {f.content!r} repeats {seen[key]!r}{form}: list each fact once"
                )
            seen[key] = f.content
        return self


class StoredMemory(_Model):
    """A memory already stored, as a merge decision sees it."""

    id: NonEmptyStr = Field(description="Its id.")
    content: str = Field(description="Its text.")


#: Seed 000's memory operations, and the other names deciders use for them (mem0's ADD / NONE).
ACTIONS: tuple[str, ...] = ("CREATE", "UPDATE", "NOOP", "DELETE")
ACTION_ALIASES = {"ADD": "CREATE", "NONE": "NOOP", "NO_OP": "NOOP", "NO-OP": "NOOP", "SKIP": "NOOP"}


def normalize_action(action: Any) -> str:
    """`add` -> CREATE, `none` -> NOOP, others upper-cased."""
    a = str(action or "").strip().upper()
    return ACTION_ALIASES.get(a, a)


class ExpectedOperation(_Model):
    """The right decision for an incoming memory."""

    action: str | list[str] = Field(
        description="CREATE, UPDATE, NOOP or DELETE (mem0's ADD / UPDATE / NONE / DELETE also "
        "accepted); a list when any of them is right."
    )
    id: str | None = Field(default=None, description="The memory an UPDATE / DELETE must target.")
    merged: str | None = Field(default=None, description="A good merged text, for reference.")
    tags: list[NonEmptyStr] | None = Field(
        default=None,
        description="Tags the stored memory must carry: a CREATE or UPDATE without tags then "
        "fails seed 000's required-fields check (id, content, tags).",
    )

    @field_validator("action")
    @classmethod
    def _known_actions(cls, value: str | list[str]) -> str | list[str]:
        # an expected MERGE would make every decider fail the case: no decider can emit it
        given = [value] if isinstance(value, str) else value
        if not given:
            raise ValueError("give at least one action")
        for a in given:
            if normalize_action(a) not in ACTIONS:
                raise ValueError(
                    f"{a!r} is not an action: use CREATE, UPDATE, NOOP or DELETE (mem0's ADD "
                    "and NONE are read as CREATE and NOOP)"
                )
        return value


class OperationCase(_Model):
    """One memory-operation case (seed 000): existing memories, an incoming one, the decision."""

    id: NonEmptyStr = Field(description="Unique case id.")
    scenario: str | None = Field(default=None, description="e.g. exact duplicate, paraphrase.")
    quality: Literal["known-good", "known-bad"] | None = Field(
        default=None, description="Seed 000's fixture kind."
    )
    existing: list[StoredMemory] = Field(default_factory=list, description="Stored memories.")
    incoming: StoredMemory | dict[str, Any] = Field(description="The new memory: {content}.")
    expect_similar: bool | None = Field(
        default=None, description="Whether the incoming memory is about the same thing."
    )
    expected: ExpectedOperation = Field(description="The right decision.")

    @field_validator("incoming")
    @classmethod
    def _incoming_has_content(cls, value: StoredMemory | dict[str, Any]) -> Any:
        content = value.get("content") if isinstance(value, dict) else value.content
        if not isinstance(content, str):
            raise ValueError("the incoming memory needs its text: {content: ...}")
        why = blank(content)
        if why is not None:  # nothing to decide on: a decider would be charged for it
            raise ValueError(
                f"the incoming memory's content is blank{why}: give the text to decide on"
            )
        return value

    @model_validator(mode="after")
    def _targets_exist(self) -> OperationCase:
        ids = [m.id for m in self.existing]
        dupes = sorted({i for i in ids if ids.count(i) > 1})
        if dupes:
            raise ValueError(f"existing memory id {dupes[0]!r} appears twice")
        if self.expected.id is not None and self.existing and self.expected.id not in ids:
            raise ValueError(
                f"expected.id {self.expected.id!r} is not an existing memory ({', '.join(ids)})"
            )
        return self
