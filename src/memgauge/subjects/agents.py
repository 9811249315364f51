"""Agents for audits: a chat model given the whole history, a memory-backed agent (any memory
subject plus a reader model), and an extractive baseline that uses no LLM at all.

All three are memory-backed in the run engine's sense (`is_memory`): the run ingests the
conversation's turns into them, then asks each probe. The chat agent reads every turn; the
memory agent reads the top `k` hits of its memory; the extractive baseline answers with the
turn that best matches the question, or says it was never mentioned when nothing matches
well enough. The baseline is labelled as such in every report: it measures the probes and the
scoring, not a model.
"""

from __future__ import annotations

import math
import re
import threading
import time
from collections import Counter
from collections.abc import Sequence
from typing import Any, Generic, TypeVar

from memgauge.data.models import Memory, SessionContext, Turn
from memgauge.llm.context import llm_context
from memgauge.llm.types import ChatRequest, LLMClient, Message
from memgauge.subjects.events import Capabilities
from memgauge.subjects.learnings import Learnings, LearningsSection
from memgauge.subjects.protocol import Answer, SearchResult, close_subject

__all__ = ["ChatAgent", "ExtractiveAgent", "MemoryAgent"]

SYSTEM = (
    "You are an assistant with a memory of earlier conversations with the user. Answer the "
    "question from those conversations only, in one short sentence. If they do not say, answer "
    "that it was never mentioned; do not guess."
)


def _line(m: Memory) -> str:
    when = f"[{m.created_at:%Y-%m-%d %H:%M}] " if m.created_at else ""
    who = m.metadata.get("role") or ""  # LoCoMo texts already start with the speaker
    return f"{when}{who + ': ' if who else ''}{m.text}"


T = TypeVar("T")
#: the extractive agent's index: each turn's bag of terms, each term's IDF, the turns
_Index = tuple[list[Counter[str]], dict[str, float], list[Memory]]


class _Remembers:
    """Keeps what was ingested, in order."""

    is_memory = True

    def __init__(self) -> None:
        self.memories: list[Memory] = []

    def reset(self) -> None:
        self.memories = []

    def ingest(self, memories: Sequence[Memory]) -> None:
        self.memories.extend(memories)

    def flush(self) -> None:
        pass

    def dump(self) -> list[Memory]:
        return list(self.memories)


class _Derives(_Remembers, Generic[T]):
    """Keeps what was ingested and one thing derived from it (`_derive`), built when first
    asked for after a change, under a lock: answers are asked from several threads."""

    def __init__(self) -> None:
        super().__init__()
        self._derived: T | None = None
        self._lock = threading.Lock()

    def reset(self) -> None:
        super().reset()
        self._derived = None

    def ingest(self, memories: Sequence[Memory]) -> None:
        super().ingest(memories)
        self._derived = None

    def derived(self) -> T:
        with self._lock:
            if self._derived is None:
                self._derived = self._derive()
            return self._derived

    def _derive(self) -> T:
        raise NotImplementedError


class ChatAgent(_Derives[str]):
    """An LLM that is shown every ingested turn (oldest first) and the question.

    Args:
        model: the model that answers; default: MEMGAUGE_MODEL.
        base_url: its endpoint; default: the provider's (OPENAI_BASE_URL for `openai`).
        provider: `openai` (any compatible endpoint, the default), `anthropic`, or a
            plug-in's.
        max_history_chars: the transcript is cut to its last this many characters; null or
            0: the whole transcript.
        system: the system prompt.
        learnings: past evaluation failures added to the system prompt (`{query, k,
            budget}`, as every judge takes them)."""

    capabilities = Capabilities(answers=True, concurrent=True)

    def __init__(
        self,
        model: str | None = None,
        *,
        base_url: str | None = None,
        provider: str | None = None,
        max_history_chars: int | None = 400_000,
        system: str = SYSTEM,
        learnings: Learnings | None = None,
    ) -> None:
        super().__init__()
        self.model, self.base_url, self.provider = model, base_url, provider
        self.max_history_chars = max_history_chars
        self.system = system
        self.learnings = LearningsSection(learnings)
        _check_llm(self)

    def _client(self) -> LLMClient:
        return _llm_client(self)

    @property
    def name(self) -> str:
        """`chat:<model>`."""
        return f"chat:{self.model or 'default'}"

    def _derive(self) -> str:
        text = "\n".join(_line(m) for m in self.memories)
        if self.max_history_chars and len(text) > self.max_history_chars:
            text = "...\n" + text[-self.max_history_chars :]
        return text

    def answer(self, question: str, history: list[Turn] | None = None) -> Answer:
        """Ask the model with the whole transcript (plus `history`, if given)."""
        extra = "\n".join(f"{t.role}: {t.content}" for t in history or [])
        convo = self.derived() + ("\n" + extra if extra else "")
        system = self.learnings.apply(self.system)
        return _ask(self._client(), system, f"CONVERSATIONS:\n{convo}", question, self.model)


class MemoryAgent(_Remembers):
    """A memory subject searched for the question, and a reader model over the hits.

    Args:
        model: the reader model; default: MEMGAUGE_MODEL.
        k: how many hits of the memory's search the reader is shown.
        base_url: the reader's endpoint; default: the provider's (OPENAI_BASE_URL for
            `openai`).
        provider: `openai` (any compatible endpoint, the default), `anthropic`, or a
            plug-in's.
        system: the reader's system prompt.
        learnings: past evaluation failures added to the system prompt (`{query, k,
            budget}`, as every judge takes them)."""

    capabilities = Capabilities(answers=True)

    def __init__(
        self,
        memory: Any,
        model: str | None = None,
        *,
        k: int = 10,
        base_url: str | None = None,
        provider: str | None = None,
        system: str = SYSTEM,
        learnings: Learnings | None = None,
    ) -> None:
        super().__init__()
        self.memory, self.model, self.k = memory, model, k
        self.base_url, self.provider, self.system = base_url, provider, system
        self.learnings = LearningsSection(learnings)
        _check_llm(self)

    @property
    def name(self) -> str:
        """`memory-agent:<memory>+<model>`."""
        return f"memory-agent:{getattr(self.memory, 'name', 'memory')}+{self.model or 'default'}"

    def reset(self) -> None:
        super().reset()
        self.memory.reset()

    def ingest(self, memories: Sequence[Memory]) -> None:
        super().ingest(memories)
        self.memory.ingest(memories)

    def flush(self) -> None:
        flush = getattr(self.memory, "flush", None)
        if callable(flush):
            flush()

    def search(self, query: str, k: int, *, session: SessionContext | None = None) -> SearchResult:
        """The memory's own search (so retrieval tasks can score it too)."""
        result: SearchResult = self.memory.search(query, k, session=session)
        return result

    def answer(self, question: str, history: list[Turn] | None = None) -> Answer:
        """Search, then let the reader model answer from the hits."""
        t0 = time.perf_counter()
        result = self.search(question, self.k)
        search_ms = (time.perf_counter() - t0) * 1000
        by_id = {m.id: m for m in self.memories}
        lines = [_line(by_id[h.id]) if h.id in by_id else h.text for h in result.hits]
        system = self.learnings.apply(self.system)
        ans = _ask(
            _llm_client(self),
            system,
            "RETRIEVED MEMORIES:\n" + "\n".join(lines),
            question,
            self.model,
        )
        return Answer(
            ans.text,
            latency_ms={"search": search_ms, **ans.latency_ms},
            metadata={"retrieved": [h.id for h in result.hits]},
        )

    def close(self) -> None:
        close_subject(self.memory)


def _check_llm(agent: ChatAgent | MemoryAgent) -> None:
    """UsageError naming the setting when the agent's LLM configuration (its own, then the
    environment's) cannot work: built before a run is written, a run asks nothing of a model
    it can never reach (every answer would fail, one by one)."""
    from memgauge.llm.config import LLMConfig

    LLMConfig.from_env(model=agent.model, base_url=agent.base_url, provider=agent.provider)


def _llm_client(agent: ChatAgent | MemoryAgent) -> LLMClient:
    """The shared client of the agent's endpoint and model."""
    return llm_context().client(model=agent.model, base_url=agent.base_url, provider=agent.provider)


def _ask(client: LLMClient, system: str, context: str, question: str, model: str | None) -> Answer:
    t0 = time.perf_counter()
    request = ChatRequest(
        messages=(Message("system", system), Message("user", f"{context}\n\nQUESTION: {question}")),
        model=model,
        temperature=0.0,
    )
    response = client.complete(request)
    return Answer(
        response.content.strip(),
        latency_ms={"llm": (time.perf_counter() - t0) * 1000},
        metadata={"cached": response.cached},
    )


_TOKEN = re.compile(r"[a-z0-9]+")
_STOP = frozenset(
    [
        "a",
        "an",
        "the",
        "and",
        "or",
        "of",
        "to",
        "in",
        "on",
        "at",
        "for",
        "with",
        "by",
        "from",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "do",
        "does",
        "did",
        "what",
        "which",
        "who",
        "whom",
        "when",
        "where",
        "why",
        "how",
        "that",
        "this",
        "these",
        "those",
        "it",
        "its",
        "i",
        "you",
        "he",
        "she",
        "they",
        "we",
        "me",
        "my",
        "your",
        "his",
        "her",
        "their",
        "our",
        "user",
        "user's",
        "about",
        "tell",
        "remember",
        "conversations",
        "say",
        "first",
        "happened",
    ]
)


class ExtractiveAgent(_Derives[_Index]):
    """No LLM: answers with the ingested turn that best matches the question (IDF-weighted
    word overlap; near ties go to the later turn), or says it was never mentioned when the best
    match covers less than `min_coverage` of the question's weight. A baseline for offline
    audits, labelled so.

    Args:
        min_coverage: the least share (0 to 1) of the question's IDF weight the best turn must
            cover to be the answer.
        roles: the roles of the turns it may answer with (a turn with no role counts as the
            first); empty, or no turn of them: every turn."""

    capabilities = Capabilities(answers=True, concurrent=True)

    def __init__(self, min_coverage: float = 0.34, roles: Sequence[str] = ("user",)) -> None:
        super().__init__()
        self.min_coverage = min_coverage
        self.roles = tuple(roles)

    @property
    def name(self) -> str:
        """`extractive-baseline (no LLM)`."""
        return "extractive-baseline (no LLM)"

    def _derive(self) -> _Index:
        docs = [
            m
            for m in self.memories
            if not self.roles or m.metadata.get("role", self.roles[0]) in self.roles
        ] or list(self.memories)
        bags = [Counter(_terms(m.text)) for m in docs]
        df: Counter[str] = Counter()
        for b in bags:
            df.update(b.keys())
        n = max(1, len(bags))
        idf = {w: math.log(1 + n / c) for w, c in df.items()}
        return bags, idf, docs

    def answer(self, question: str, history: list[Turn] | None = None) -> Answer:
        """The best-matching turn, or that it was never mentioned."""
        t0 = time.perf_counter()
        bags, idf, docs = self.derived()
        q = set(_terms(question))
        weights = {w: idf.get(w, math.log(1 + len(bags))) for w in q}
        total = sum(weights.values())
        best, best_cov = None, 0.0
        for doc, bag in zip(docs, bags, strict=True):
            cov = sum(weights[w] for w in q if w in bag) / total if total else 0.0
            # ties (within 0.05) go to the later turn: what was said last is the current value
            if cov > 0 and cov >= best_cov - 0.05:
                best, best_cov = doc, max(cov, best_cov)
        ms = {"search": (time.perf_counter() - t0) * 1000}
        # `retrieved`: the one turn it answers from (none when it declines), so a wrong answer
        # can be attributed to the search or to the turn itself (aggregates.attribution)
        if best is None or best_cov < self.min_coverage:
            return Answer(
                "That was never mentioned in our conversations.",
                ms,
                {"coverage": best_cov, "retrieved": []},
            )
        when = f" (said on {best.created_at:%d %B %Y})" if best.created_at else ""
        meta = {"coverage": best_cov, "memory": best.id, "retrieved": [best.id]}
        return Answer(best.text + when, ms, meta)


def _terms(text: str) -> list[str]:
    return [w for w in _TOKEN.findall(text.lower()) if w not in _STOP]
