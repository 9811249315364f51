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
from typing import TYPE_CHECKING, Any

from pydantic import Field, create_model

from memgauge._util.registry import SpecArgs, SpecProblem, args_model_of, takes
from memgauge.data.environment import embeddings_cache
from memgauge.embed import CachedEmbedder, load_embedder
from memgauge.embed.protocol import Embedder
from memgauge.subjects.fusion import fusion_problems
from memgauge.subjects.reference import ReferenceMemory, ReferenceMemoryConfig

if TYPE_CHECKING:
    from memgauge.subjects.over_memory import memory_agent, memory_extractor

__all__ = ["memory_agent", "memory_extractor", "reference_memory"]

#: the kinds over another memory, in `memgauge.subjects.over_memory`: found here by their entry
#: points, loaded when asked for (their modules bring the LLM agents, extractors and prompt
#: templates, which a run of the reference memory does not use)
_OVER_MEMORY = ("memory_agent", "memory_extractor")


def __getattr__(name: str) -> Any:
    if name in _OVER_MEMORY:
        from memgauge.subjects import over_memory

        return getattr(over_memory, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


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
