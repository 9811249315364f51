"""One known pair of an embedding task (seed 004's embedding quality): the cosine of the
system's stored vectors of its two texts, and the reference embedder's. The value is the
system's cosine; the `embedding` aggregate turns the pairs into nearest-neighbour agreement,
pair accuracy and AUC. Vectors that are not two equal-length lists of numbers are a failure."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from memgauge.embed import Embedder, load_embedder
from memgauge.scorers.base import EvalContext, Score

__all__ = ["EmbeddingPairScore"]


def _cos(a: np.ndarray, b: np.ndarray) -> float:
    na, nb = float(np.linalg.norm(a)), float(np.linalg.norm(b))
    return float(a @ b / (na * nb)) if na and nb else 0.0


@dataclass(frozen=True)
class EmbeddingPairScore:
    """Cosine of the pair in the system's space and the reference embedder's.

    Attributes:
        embedder: the reference embedder (`minilm`, `openai:<model>`, `st:<model>`).
    """

    embedder: str = "minilm"
    name: ClassVar[str] = "embedding-pair"
    _model: list[Embedder] = field(default_factory=list, repr=False, compare=False)

    def prepare(self) -> None:
        """Build the reference embedder: UnavailableError (with the install line) when it is
        missing."""
        if not self._model:
            self._model.append(load_embedder(self.embedder))

    def evaluate(self, ctx: EvalContext) -> Score:
        """See the module docstring."""
        pair = ctx.input if isinstance(ctx.input, Mapping) else {}
        out = ctx.output if isinstance(ctx.output, Mapping) else {}
        try:
            a, b = (np.asarray(out[s], dtype=np.float64) for s in ("a", "b"))
        except (KeyError, TypeError, ValueError):
            return Score.failure("the system gave no pair of vectors {a: [...], b: [...]}")
        if (
            a.ndim != 1
            or a.shape != b.shape
            or not np.isfinite(a).all()
            or not np.isfinite(b).all()
        ):
            return Score.failure(f"the system's vectors differ in shape ({a.shape}, {b.shape})")
        self.prepare()
        ref = np.asarray(self._model[0].embed([str(pair["a"]), str(pair["b"])]), dtype=np.float64)
        cos_sys, cos_ref = _cos(a, b), _cos(ref[0], ref[1])
        detail: dict[str, Any] = {
            "a": pair["a"],
            "b": pair["b"],
            "label": ctx.expected,
            "cos_system": cos_sys,
            "cos_reference": cos_ref,
            "reference": {"a": ref[0].tolist(), "b": ref[1].tolist()},
        }
        return Score(
            value=cos_sys,
            passed=None,
            reason=f"{ctx.expected}: cosine {cos_sys:.3f} (reference {cos_ref:.3f})",
            detail=detail,
        )
