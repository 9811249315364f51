"""Offline embedding on LoCoMo turns, every backend interleaved in one run: the NumPy
all-MiniLM-L6-v2 (one BLAS thread), ONNX Runtime as it was before issue 31 (two intra-op threads
that spin, fixed batches of 32 sorted texts), ONNX Runtime's default now (one thread, spinning
off, batches bucketed by token length), and the two steps between, and `minilm:int8` (int8
matrix products, one text a run); then one query at a time
(LoCoMo's questions), and one dense search over 10,000 vectors with BLAS's default threads and
with one. sentence-transformers is added when it is installed.

    python benchmarks/bench_embed.py [--locomo ../shared/datasets/locomo10.json] [--n 1000]
        [--queries 200] [--reps 3] [--both-cores]

`--both-cores` instead: ONNX Runtime's default session embedding `--n` turns on one thread
while the other core idles, against two threads embedding `--n` turns each at once (what a
cold run's warm-up does on two cores), taking turns, texts per CPU-second each.

Throughput: texts per CPU-second (process_time) and per wall second, and the cores a pass used
(CPU / wall). Single query: CPU and wall ms per `embed([question])`, p50 and p95. Each figure is
the best and the median of `--reps` passes; within a pass the embedders take turns, so a change
of load touches all of them. /proc/loadavg is printed before and after each pass.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from collections.abc import Callable
from contextlib import nullcontext
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from memgauge.embed.minilm_numpy import MiniLMEmbedder, one_blas_thread  # noqa: E402


def _load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def _old_onnx() -> Any:
    """ONNX Runtime with the session options memgauge used before issue 31."""
    import onnxruntime as ort

    from memgauge.data.environment import memgauge_home
    from memgauge.embed.minilm_onnx import MiniLMOnnxEmbedder, cached_model

    embedder = MiniLMOnnxEmbedder(threads=2, batch_tokens=None, verify=False)
    options = ort.SessionOptions()
    options.intra_op_num_threads = 2
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    path = str(cached_model(embedder, memgauge_home()))
    embedder._session = ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])
    return embedder


def _embedders() -> dict[str, Any]:
    out: dict[str, Any] = {"NumPy, one BLAS thread": MiniLMEmbedder()}
    try:
        from memgauge.embed.minilm_onnx import MiniLMOnnxEmbedder
    except ImportError:
        print("ONNX Runtime: onnx/onnxruntime not installed")
        return out
    out["ORT before: 2 threads spinning, batches of 32"] = _old_onnx()
    out["ORT 1 thread, batches of 32"] = MiniLMOnnxEmbedder(
        threads=1, batch_tokens=None, verify=False
    )
    out["ORT 2 threads, spinning off, bucketed"] = MiniLMOnnxEmbedder(threads=2, verify=False)
    out["ORT default now: 1 thread, spinning off, bucketed"] = MiniLMOnnxEmbedder(verify=False)
    from memgauge.embed.minilm_onnx import MiniLMInt8Embedder

    out["ORT int8 (minilm:int8, opt-in): 1 thread, one text a run"] = MiniLMInt8Embedder(
        verify=False
    )
    try:
        from sentence_transformers import SentenceTransformer
    except ImportError:
        print("sentence-transformers: not installed in this environment")
    else:
        st = SentenceTransformer(str(out["NumPy, one BLAS thread"].model_dir), device="cpu")

        class _ST:
            def embed(self, texts: list[str]) -> Any:
                return st.encode(texts, batch_size=32)

        out["sentence-transformers (torch)"] = _ST()
    return out


def _timed(f: Callable[[], Any]) -> tuple[float, float, Any]:
    c0, w0 = time.process_time(), time.perf_counter()
    got = f()
    return time.process_time() - c0, time.perf_counter() - w0, got


def _best_median(values: list[float], *, high: bool = True) -> str:
    best = max(values) if high else min(values)
    return f"{best:.{0 if high else 2}f} / {statistics.median(values):.{0 if high else 2}f}"


def _both_cores(texts: list[str], reps: int) -> None:
    """One thread embedding alone, then two at once on two halves, `reps` times in turn."""
    import threading

    from memgauge.embed.minilm_onnx import MiniLMOnnxEmbedder

    onnx = MiniLMOnnxEmbedder(workers=1)
    onnx.embed(texts[:64])
    halves = (texts, texts[::-1])

    def run(part: list[str]) -> None:
        for i in range(0, len(part), 64):  # the warm-up's calls are batches of this order
            onnx.embed(part[i : i + 64])

    rates: dict[str, list[float]] = {"one thread, the other core idle": [], "two at once": []}
    for rep in range(reps):
        print(f"pass {rep + 1}: load before {_load()}", flush=True)
        cpu, _, _ = _timed(lambda: run(texts))
        rates["one thread, the other core idle"].append(len(texts) / cpu)

        def both() -> None:
            threads = [threading.Thread(target=run, args=(h,)) for h in halves]
            for t in threads:
                t.start()
            for t in threads:
                t.join()

        cpu, _, _ = _timed(both)
        rates["two at once"].append(2 * len(texts) / cpu)
    print("\n| ONNX Runtime, one intra-op thread | texts per CPU-second (best / median) |")
    print("|---|---:|")
    for name, values in rates.items():
        print(f"| {name} | {_best_median(values)} |")
    print(f"load after {_load()}")


_PEAK_N = 1536


def _multiply_adds(tokens: list[int]) -> float:
    """The forward pass's multiply-adds for texts of these token counts: per layer the four
    384 x 384 and the two 384 x 1536 matrix products on every token, and attention's two
    products (scores and context) on every pair of tokens of a text."""
    hidden, ff, layers = 384, 1536, 6
    per_token = 4 * hidden * hidden + 2 * hidden * ff
    return float(sum(layers * (per_token * n + 2 * n * n * hidden) for n in tokens))


def _gemm_rate(reps: int) -> float:
    """Multiply-adds per CPU-second of the best float32 matrix product at hand on one core: the
    ceiling a float32 forward pass works under."""
    a = np.random.default_rng(1).standard_normal((_PEAK_N, _PEAK_N)).astype(np.float32)
    best = 0.0
    with one_blas_thread():
        a @ a
        for _ in range(reps):
            cpu, _, _ = _timed(lambda: [a @ a for _ in range(10)])
            best = max(best, 10 * _PEAK_N**3 / cpu)
    return best


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--locomo", default=str(ROOT.parent / "shared" / "datasets" / "locomo10.json"))
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--both-cores", action="store_true")
    args = ap.parse_args()
    if not Path(args.locomo).is_file():
        sys.exit(f"{args.locomo}: no such file; pass --locomo PATH/locomo10.json")
    data = json.loads(Path(args.locomo).read_text())
    texts = [
        t["text"]
        for c in data
        for k, v in c["conversation"].items()
        if k.startswith("session_") and isinstance(v, list)
        for t in v
    ][: args.n]
    if args.both_cores:
        _both_cores(texts, args.reps)
        return
    questions = [q["question"] for c in data for q in c["qa"]][: args.queries]
    embedders = _embedders()
    numpy_path = embedders["NumPy, one BLAS thread"]
    tokens = [len(e.ids) for e in numpy_path.tokenizer.encode_batch(texts)]
    print(
        f"{len(texts)} LoCoMo turns (mean {np.mean([len(t.split()) for t in texts]):.0f} words,"
        f" {np.mean(tokens):.0f} tokens), {len(questions)} questions; {os.cpu_count()} cores"
    )
    base = numpy_path.embed(texts)
    for e in embedders.values():  # warm: sessions, scipy's import, the tokenizer
        e.embed(texts[:64])
    per_cpu: dict[str, list[float]] = {k: [] for k in embedders}
    per_wall: dict[str, list[float]] = {k: [] for k in embedders}
    cores: dict[str, list[float]] = {k: [] for k in embedders}
    q_cpu: dict[str, list[float]] = {k: [] for k in embedders}
    q_cpu95: dict[str, list[float]] = {k: [] for k in embedders}
    q_wall: dict[str, list[float]] = {k: [] for k in embedders}
    q_wall95: dict[str, list[float]] = {k: [] for k in embedders}
    diff: dict[str, float] = {}
    cosine: dict[str, float] = {}  # the least cosine with the NumPy path's vector (unit rows)
    for rep in range(args.reps):
        print(f"pass {rep + 1}: load before {_load()}", end="", flush=True)
        for name, e in embedders.items():
            cpu, wall, got = _timed(lambda e=e: e.embed(texts))
            per_cpu[name].append(len(texts) / cpu)
            per_wall[name].append(len(texts) / wall)
            cores[name].append(cpu / wall)
            diff[name] = max(diff.get(name, 0.0), float(np.abs(np.asarray(got) - base).max()))
            least = float((np.asarray(got) * base).sum(axis=1).min())
            cosine[name] = min(cosine.get(name, 1.0), least)
        for name, e in embedders.items():
            cpus, walls = [], []
            for q in questions:
                cpu, wall, _ = _timed(lambda e=e, q=q: e.embed([q]))
                cpus.append(cpu * 1000)
                walls.append(wall * 1000)
            q_cpu[name].append(float(np.percentile(cpus, 50)))
            q_cpu95[name].append(float(np.percentile(cpus, 95)))
            q_wall[name].append(float(np.percentile(walls, 50)))
            q_wall95[name].append(float(np.percentile(walls, 95)))
        print(f", after {_load()}")

    ref = statistics.median(per_cpu["NumPy, one BLAS thread"])
    work = _multiply_adds(tokens) / len(texts)  # per text, on average
    print(
        "\n| embedder | texts per CPU-second (best / median) | x NumPy (median) |"
        " texts per wall second | cores used | max diff from NumPy | least cosine with NumPy |"
        " G multiply-adds per CPU-second (median) |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for name in embedders:
        print(
            f"| {name} | {_best_median(per_cpu[name])} |"
            f" {statistics.median(per_cpu[name]) / ref:.2f} | {_best_median(per_wall[name])} |"
            f" {statistics.median(cores[name]):.2f} | {diff[name]:.1e} | {cosine[name]:.4f} |"
            f" {statistics.median(per_cpu[name]) * work / 1e9:.1f} |"
        )
    print(
        f"\nOne core's float32 matrix product (NumPy's BLAS, one thread, {_PEAK_N} x {_PEAK_N}):"
        f" {_gemm_rate(args.reps) / 1e9:.1f} G multiply-adds per CPU-second (best of {args.reps})"
    )
    print(
        "\n| one query, `embed([question])` | CPU ms p50 (best / median) | CPU ms p95 |"
        " wall ms p50 | wall ms p95 |"
    )
    print("|---|---:|---:|---:|---:|")
    for name in embedders:
        print(
            f"| {name} | {_best_median(q_cpu[name], high=False)} |"
            f" {_best_median(q_cpu95[name], high=False)} |"
            f" {_best_median(q_wall[name], high=False)} |"
            f" {_best_median(q_wall95[name], high=False)} |"
        )

    matrix = np.random.default_rng(0).standard_normal((10_000, 384)).astype(np.float32)
    q = matrix[0]
    print("\n| dense search, 10,000 x 384 mat-vec | CPU ms (best / median) | wall ms |")
    print("|---|---:|---:|")
    for name, ctx in (("BLAS default threads", nullcontext), ("one BLAS thread", one_blas_thread)):
        cpu_ms, wall_ms = [], []
        for _ in range(args.reps):
            c0, w0 = time.process_time(), time.perf_counter()
            for _ in range(200):
                with ctx():
                    matrix @ q
            cpu_ms.append((time.process_time() - c0) / 200 * 1000)
            wall_ms.append((time.perf_counter() - w0) / 200 * 1000)
        print(
            f"| {name} | {min(cpu_ms):.3f} / {statistics.median(cpu_ms):.3f} |"
            f" {min(wall_ms):.3f} / {statistics.median(wall_ms):.3f} |"
        )
    print(f"load after {_load()}")


if __name__ == "__main__":
    main()
