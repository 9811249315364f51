"""all-MiniLM-L6-v2, the offline embedder (`minilm`, `minilm:onnx`, `minilm:numpy`,
`minilm:int8`): the choice
of backend. The NumPy forward pass is `memgauge.embed.minilm_numpy`; the ONNX Runtime one,
which reuses its tokenizer and batching, is `memgauge.embed.minilm_onnx`. This module sits above
both, so neither needs to import it."""

from __future__ import annotations

import os

from memgauge.embed import minilm_onnx
from memgauge.embed.minilm_numpy import MiniLMEmbedder
from memgauge.errors import UsageError

__all__ = ["BACKENDS", "minilm"]

#: the backends `minilm:BACKEND` names; `auto` is ONNX Runtime where it is installed; `int8`
#: (ONNX Runtime with int8 matrix products) only when named
BACKENDS = ("auto", "onnx", "numpy", "int8")


def minilm(
    backend: str = "auto", model_dir: str | None = None, *, batch_size: int = 32
) -> MiniLMEmbedder:
    """The all-MiniLM-L6-v2 embedder: `minilm` picks the fastest backend installed (ONNX
    Runtime when onnx and onnxruntime are, else NumPy; the environment variable MEMGAUGE_MINILM
    = onnx, numpy or int8 decides for `auto`), `minilm:onnx` and `minilm:numpy` name one. Both
    give the same vectors to 1e-6; each has its own embedding-cache key. `minilm:int8` is ONNX
    Runtime with int8 matrix products: 1.7-1.8x as fast, its vectors close but not equal
    (`minilm_onnx.MiniLMInt8Embedder`)."""
    if backend not in BACKENDS:
        raise UsageError(f"minilm:{backend}: the backend is one of {', '.join(BACKENDS)}")
    if backend == "auto":
        given = os.environ.get("MEMGAUGE_MINILM", "auto")
        chosen = given.strip().lower() or "auto"
        if chosen not in BACKENDS:
            raise UsageError(f"MEMGAUGE_MINILM={given}: use onnx, numpy, int8 or auto")
        backend = chosen
    if backend == "auto":
        # looked up on the module: the one answer to "is ONNX Runtime here" (tests replace it)
        backend = "onnx" if minilm_onnx.onnx_available() else "numpy"
    if backend == "onnx":
        return minilm_onnx.MiniLMOnnxEmbedder(model_dir, batch_size=batch_size)
    if backend == "int8":
        return minilm_onnx.MiniLMInt8Embedder(model_dir, batch_size=batch_size)
    return MiniLMEmbedder(model_dir, batch_size=batch_size)
