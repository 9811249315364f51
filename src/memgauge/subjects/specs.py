"""Subjects from specs `{kind: {args}}`: the one place a spec becomes a live subject.

Every kind is an entry of `SUBJECTS` (entry-point group `memgauge.subjects`; memgauge's own
are declared there like a plug-in's), with an argument model that refuses unknown keys:

- `reference`: the built-in memory (`ReferenceMemoryConfig`'s fields; `embedder:` names the
  embedder, MiniLM by default);
- `python`: `target: pkg.mod:factory` called with `kwargs:` (checked against the factory's
  signature unless it takes `**kwargs`); `http` (`base_url:` and `HttpSubject`'s options),
  `mcp` (`command:` and `McpSubject`'s), `subprocess` (`command:`, `timeout:`, `cwd:`, `env:`),
  `mem0` (`Mem0Subject`'s; needs the `mem0` extra);
- agents for audits: `chat` (`model:`, an LLM shown the whole history), `memory-agent`
  (`memory:` a subject spec, `model:`, `k:`), `extractive` (no LLM; `min_coverage:`);
- the write path: `llm-extractor`, `memory-extractor` (`memory:` a subject spec),
  `llm-decider`, `heuristic-decider`, and `recorded` (outputs recorded in production).

Every spec may also carry the run keys of `RunOptions` (`concurrent:`, `agent:`), which
configure how the run calls the subject, not the subject itself. The registry and
`build_subject` are `memgauge.subjects.registry`, which imports none of these kinds: it loads
them by name, so a kind (an agent that reads learnings) may build subjects in turn.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from pydantic import Field, create_model

from memgauge._util.home import embeddings_cache
from memgauge._util.registry import SpecArgs, SpecProblem, args_model_of, takes
from memgauge.embed import CachedEmbedder, load_embedder
from memgauge.embed.protocol import Embedder
from memgauge.subjects.agents import MemoryAgent
from memgauge.subjects.extractors import MemoryExtractor
from memgauge.subjects.fusion import fusion_problems
from memgauge.subjects.reference import ReferenceMemory, ReferenceMemoryConfig
from memgauge.subjects.registry import build_subject, check_subject

__all__ = ["memory_agent", "memory_extractor", "reference_memory"]


@cache
def _embedder(spec: str) -> Embedder:
    # One embedder (and one cache) per spec for the whole run: loading weights is the slow part.
    return CachedEmbedder(load_embedder(spec), embeddings_cache())


class _FusionChecked(SpecArgs):
    """The reference memory's fusion settings checked together (a normalization given with a
    rank fusion, RBC's phi with another method, ...), each problem under its own key."""

    def more_problems(self) -> list[SpecProblem]:
        given = dict(self)  # the fields come from ReferenceMemoryConfig, beside this base
        found = fusion_problems(
            given["fusion"],
            given["normalization"],
            k_rrf=given["k_rrf"],
            rbc_phi=given["rbc_phi"],
            weights={"lexical": given["lexical_weight"], "dense": given["dense_weight"]},
        )
        return [SpecProblem((name,), message) for name, message in found]


_ReferenceArgs: type[SpecArgs] = create_model(
    "ReferenceArgs",
    __base__=(args_model_of(ReferenceMemoryConfig), _FusionChecked),  # type: ignore[arg-type]
    embedder=(
        str,
        Field(default="minilm", description="The embedder: minilm, openai:<model>, st:<model>."),
    ),
)


@takes(_ReferenceArgs)
def reference_memory(embedder: str = "minilm", **config: Any) -> ReferenceMemory:
    """The built-in memory: SQLite FTS5 bm25, dense vectors and their fusion (RRF, or CombSUM,
    CombMNZ, weighted sum, ISR, log-ISR or RBC as ranx defines them)."""
    settings = ReferenceMemoryConfig(**config)
    return ReferenceMemory(
        settings, embedder=_embedder(embedder) if settings.mode != "lexical" else None
    )


class _WithMemory(SpecArgs):
    """A component over a memory subject given as a spec of its own."""

    memory: dict[str, Any] = Field(description="The memory: a subject spec {kind: {args}}.")

    def more_problems(self) -> list[SpecProblem]:
        return [p.under("memory") for p in check_subject(self.memory)]


def _over_memory(cls: type) -> type[SpecArgs]:
    """`cls`'s argument model, its `memory` a subject spec instead of a live subject."""
    base = args_model_of(cls)
    fields = {
        name: (f.annotation, f)
        for name, f in (base.model_fields.items() if base is not None else ())
        if name != "memory"
    }
    model: type[SpecArgs] = create_model(  # type: ignore[call-overload]
        f"{cls.__name__}Args", __base__=_WithMemory, **fields
    )
    return model


@takes(_over_memory(MemoryAgent))
def memory_agent(memory: dict[str, Any], **options: Any) -> MemoryAgent:
    """A memory subject searched for the question, and a reader model over the hits."""
    return MemoryAgent(build_subject(memory), **options)


@takes(_over_memory(MemoryExtractor))
def memory_extractor(memory: dict[str, Any]) -> MemoryExtractor:
    """A memory system's own extraction (its write events), scored as an extractor."""
    return MemoryExtractor(build_subject(memory))
