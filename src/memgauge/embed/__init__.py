"""Embedders: offline all-MiniLM-L6-v2 (NumPy), OpenAI-compatible endpoints, sentence-transformers."""

from __future__ import annotations

from collections.abc import Sequence

from memgauge._types import FloatArray
from memgauge.embed.cache import CachedEmbedder
from memgauge.embed.minilm import MiniLMEmbedder
from memgauge.embed.openai import OpenAIEmbedder
from memgauge.embed.protocol import Embedder
from memgauge.errors import UnavailableError, UsageError

__all__ = [
    "CachedEmbedder",
    "Embedder",
    "MiniLMEmbedder",
    "OpenAIEmbedder",
    "SentenceTransformerEmbedder",
    "load_embedder",
]


class SentenceTransformerEmbedder:
    """Any sentence-transformers model, when the user has the library (and torch) installed."""

    def __init__(self, model: str) -> None:
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError:
            raise UnavailableError(
                "sentence-transformers is not installed; `pip install memgauge[sentence-transformers]`"
                " or use the built-in `minilm` embedder"
            ) from None
        self._model = SentenceTransformer(model)
        self._name = f"st:{model}"

    @property
    def name(self) -> str:
        """`st:<model>`."""
        return self._name

    @property
    def dim(self) -> int:
        """The model's output dimension."""
        return int(self._model.get_sentence_embedding_dimension() or 0)

    def embed(self, texts: Sequence[str]) -> FloatArray:
        """Normalised embeddings."""
        import numpy as np

        return np.asarray(
            self._model.encode(list(texts), normalize_embeddings=True), dtype=np.float64
        )


def load_embedder(spec: str | None = None) -> Embedder:
    """`minilm` (default), `openai:<model>` or `st:<model name or path>`."""
    spec = spec or "minilm"
    if spec == "minilm":
        return MiniLMEmbedder()
    if spec.startswith("openai:"):
        return OpenAIEmbedder(spec.split(":", 1)[1] or None)
    if spec.startswith("st:"):
        return SentenceTransformerEmbedder(spec.split(":", 1)[1])
    raise UsageError(f"unknown embedder {spec!r}; use minilm, openai:<model> or st:<model>")
