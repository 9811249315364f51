"""Semantic similarity: cosine of sentence embeddings (offline all-MiniLM-L6-v2 by default),
passing at or above a threshold."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from memgauge.embed import Embedder, load_embedder
from memgauge.errors import MemgaugeError
from memgauge.scorers.base import EvalContext, Score, expected_texts, output_text, quoted

__all__ = ["SemanticSimilarity"]


@dataclass(frozen=True)
class SemanticSimilarity:
    """Cosine similarity of output and expected; `passed` when >= threshold.

    The embedder is built by `prepare()` (a run calls it first: a missing model is exit 3
    with its install line) or on first use; an embedding that fails on one item is that
    item's recorded failure, never a score.

    Args:
        threshold: the least cosine that passes.
        embedder: the embedder of the cosine (`minilm`, offline, by default; `openai:MODEL`,
            `st:MODEL`).
    """

    threshold: float = 0.8
    embedder: str = "minilm"
    name: ClassVar[str] = "semantic"
    _model: list[Embedder] = field(default_factory=list, init=False, repr=False, compare=False)

    def prepare(self) -> None:
        """Build the embedder: UnavailableError (with the install line) when it is missing."""
        self._embedder()

    def _embedder(self) -> Embedder:
        if not self._model:
            self._model.append(load_embedder(self.embedder))
        return self._model[0]

    def evaluate(self, ctx: EvalContext) -> Score:
        if ctx.expected is None:
            return Score.failure("semantic: the item has no expected text")
        golds, out = expected_texts(ctx), output_text(ctx)
        try:
            vecs = self._embedder().embed([out, *golds])
        except MemgaugeError as exc:
            return Score.failure(f"semantic: {exc}")
        sims = vecs[1:] @ vecs[0]
        best = int(np.argmax(sims))
        value = float(np.clip(sims[best], -1.0, 1.0))
        return Score(
            value=value,
            passed=value >= self.threshold,
            reason=f"cosine {value:.3f} {'>=' if value >= self.threshold else '<'} "
            f"{self.threshold} against {quoted(golds[best])}",
        )
