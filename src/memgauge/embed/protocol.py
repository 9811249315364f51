"""The `Embedder` protocol: text in, L2-normalised float vectors out."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from memgauge._types import FloatArray

__all__ = ["Embedder"]


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into unit-length vectors (one row per text, float64 or float32)."""

    @property
    def name(self) -> str:
        """A stable identifier of model and settings, used as the embedding-cache key."""
        ...

    @property
    def dim(self) -> int:
        """Vector dimension."""
        ...

    def embed(self, texts: Sequence[str]) -> FloatArray:
        """Embed `texts`; returns an array of shape (len(texts), dim), rows L2-normalised."""
        ...
