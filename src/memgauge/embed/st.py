"""Any sentence-transformers model as an embedder (`st:<model name or path>`), when the user
has the library (and torch) installed."""

from __future__ import annotations

from collections.abc import Sequence

from memgauge._types import FloatArray
from memgauge.errors import UnavailableError

__all__ = ["SentenceTransformerEmbedder"]


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
