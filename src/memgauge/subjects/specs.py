"""Subjects from specs `{kind: {args}}`: the one place a spec becomes a live subject.

Kinds: `reference` (the built-in memory; `embedder:` names the embedder, MiniLM by default),
`python` (`target: pkg.mod:factory`, `kwargs:`), `http` (`base_url:`, options of
`HttpSubject`), `mcp` (`command:`, options of `McpSubject`) and `subprocess` (`command:`,
`timeout:`, `cwd:`) and `mem0` (options of `Mem0Subject`; needs the `mem0` extra). Agents
for audits: `chat` (`model:`, an LLM shown the whole history), `memory-agent` (`memory:` a
subject spec, `model:`, `k:`) and `extractive` (no LLM; `min_coverage:`).
"""

from __future__ import annotations

from functools import cache
from typing import Any

from memgauge._util.home import embeddings_cache
from memgauge._util.kwargs import checked_kwargs
from memgauge.embed import CachedEmbedder, load_embedder
from memgauge.embed.protocol import Embedder
from memgauge.errors import UsageError
from memgauge.subjects.agents import ChatAgent, ExtractiveAgent, MemoryAgent
from memgauge.subjects.deciders import HeuristicDecider, LLMDecider
from memgauge.subjects.extractors import LLMExtractor, MemoryExtractor
from memgauge.subjects.http import HttpSubject
from memgauge.subjects.mcp import McpSubject
from memgauge.subjects.python_import import PythonSubject
from memgauge.subjects.recorded import RecordedSubject
from memgauge.subjects.reference import ReferenceMemory, ReferenceMemoryConfig
from memgauge.subjects.subprocess_jsonl import SubprocessSubject

__all__ = ["SUBJECT_KINDS", "build_subject", "check_spec"]

SUBJECT_KINDS = (
    "reference",
    "python",
    "subprocess",
    "http",
    "mcp",
    "mem0",
    "chat",
    "memory-agent",
    "extractive",
    "llm-extractor",
    "memory-extractor",
    "llm-decider",
    "heuristic-decider",
    "recorded",
)


@cache
def _embedder(spec: str) -> Embedder:
    # One embedder (and one cache) per spec for the whole run: loading weights is the slow part.
    return CachedEmbedder(load_embedder(spec), embeddings_cache())


def _reference_config(args: dict[str, Any]) -> tuple[ReferenceMemoryConfig, str]:
    args = dict(args)
    embedder_spec = str(args.pop("embedder", "minilm"))
    try:
        return ReferenceMemoryConfig(**checked_kwargs(ReferenceMemoryConfig, args)), embedder_spec
    except (TypeError, ValueError) as exc:
        raise UsageError(f"reference memory settings: {exc}") from None


def _build(args: dict[str, Any]) -> ReferenceMemory:
    config, embedder_spec = _reference_config(args)
    embedder = _embedder(embedder_spec) if config.mode != "lexical" else None
    return ReferenceMemory(config, embedder=embedder)


def check_spec(spec: dict[str, Any]) -> None:
    """Check what can be checked of a spec without building its subject (no model loaded,
    no process started): that its settings are a mapping and, for the reference memory, their
    names and types. UsageError otherwise; other kinds' settings are checked when built."""
    ((kind, args),) = spec.items()
    if args is not None and not isinstance(args, dict):
        raise UsageError(f"the {kind} settings are a mapping {{key: value}}, not {args!r}")
    if kind == "reference":
        _reference_config(args or {})


def build_subject(spec: dict[str, Any]) -> Any:
    """Build a subject from `{kind: {args}}`."""
    ((kind, args),) = spec.items()
    if kind == "reference":
        return _build(args)
    if kind == "python":
        if "target" not in args:
            raise UsageError(f"python subject {args}: needs target: package.module:factory")
        return PythonSubject(str(args["target"]), args.get("kwargs") or {})
    if kind == "http":
        if "base_url" not in args:
            raise UsageError(f"http subject {args}: needs base_url")
        extra = {k: v for k, v in args.items() if k != "base_url"}
        try:
            return HttpSubject(str(args["base_url"]), **extra)
        except TypeError as exc:
            raise UsageError(f"http subject {args}: {exc}") from None
    if kind == "mcp":
        if "command" not in args:
            raise UsageError(f"mcp subject {args}: needs command (the server to start)")
        extra = {k: v for k, v in args.items() if k != "command"}
        try:
            return McpSubject(args["command"], **extra)
        except TypeError as exc:
            raise UsageError(f"mcp subject {args}: {exc}") from None
    if kind == "subprocess":
        if "command" not in args:
            raise UsageError(f"subprocess subject {args}: needs command")
        return SubprocessSubject(
            args["command"], timeout=float(args.get("timeout", 60)), cwd=args.get("cwd")
        )
    if kind == "mem0":
        from memgauge.subjects.mem0 import Mem0Subject  # imports mem0 only when asked

        try:
            return Mem0Subject(**args)
        except TypeError as exc:
            raise UsageError(f"mem0 subject {args}: {exc}") from None
    if kind in ("chat", "memory-agent", "extractive"):
        return _agent(kind, dict(args or {}))
    if kind in ("llm-extractor", "memory-extractor", "llm-decider", "heuristic-decider"):
        return _writer(kind, dict(args or {}))
    if kind == "recorded":
        if "path" not in args:
            raise UsageError(f"recorded subject {args}: needs path (JSONL of {{case_id, output}})")
        return RecordedSubject(str(args["path"]))
    raise UsageError(f"unknown subject kind {kind!r}; use one of {', '.join(SUBJECT_KINDS)}")


def _writer(kind: str, args: dict[str, Any]) -> Any:
    """Write-path subjects: fact extractors (seed 001) and merge deciders (seed 000)."""
    try:
        if kind == "llm-extractor":
            return LLMExtractor(**args)
        if kind == "llm-decider":
            return LLMDecider(**args)
        if kind == "heuristic-decider":
            return HeuristicDecider(**args)
        memory = args.get("memory")
        if not isinstance(memory, dict) or len(memory) != 1 or len(args) != 1:
            raise UsageError(
                "memory-extractor needs memory: {kind: {args}}, e.g. {memory: {mem0: {...}}}"
            )
        return MemoryExtractor(build_subject(memory))
    except TypeError as exc:
        raise UsageError(f"{kind} subject {args}: {exc}") from None


def _agent(kind: str, args: dict[str, Any]) -> Any:
    try:
        if kind == "chat":
            return ChatAgent(**args)
        if kind == "extractive":
            return ExtractiveAgent(**args)
        memory = args.pop("memory", None)
        if not isinstance(memory, dict) or len(memory) != 1:
            raise UsageError(
                "memory-agent needs memory: {kind: {args}}, e.g. {reference: {mode: hybrid}}"
            )
        return MemoryAgent(build_subject(memory), **args)
    except TypeError as exc:
        raise UsageError(f"{kind} subject {args}: {exc}") from None
