"""Embedders: offline all-MiniLM-L6-v2 (NumPy), OpenAI-compatible endpoints, sentence-transformers."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from memgauge._util.registry import Registry, RegistryError
from memgauge.embed.cache import CachedEmbedder
from memgauge.embed.minilm_numpy import MiniLMEmbedder
from memgauge.embed.openai import OpenAIEmbedder
from memgauge.embed.protocol import Embedder
from memgauge.embed.st import SentenceTransformerEmbedder
from memgauge.errors import UsageError

__all__ = [
    "EMBEDDERS",
    "CachedEmbedder",
    "Embedder",
    "MiniLMEmbedder",
    "OpenAIEmbedder",
    "SentenceTransformerEmbedder",
    "load_embedder",
]


#: every embedder: memgauge's own and plug-ins' (entry-point group `memgauge.embedders`)
EMBEDDERS: Registry[Embedder] = Registry("embedder", "memgauge.embedders")


def load_embedder(spec: str | Mapping[str, Any] | None = None) -> Embedder:
    """An embedder from its spec: `NAME` or `NAME:ARG` (the argument fills the embedder's first
    parameter: `minilm` (default), `openai:<model>`, `st:<model name or path>`), or
    `{name: {args}}`; UsageError naming what is wrong."""
    spec = spec or "minilm"
    if isinstance(spec, str):
        name, _, arg = spec.partition(":")
        spec = {name: arg} if arg else name
    try:
        return EMBEDDERS.build(spec)
    except RegistryError as exc:
        raise UsageError(f"{exc}; e.g. minilm, openai:<model> or st:<model>") from None
