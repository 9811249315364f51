"""Offline embedding throughput on LoCoMo turns, every backend in one run: the NumPy
all-MiniLM-L6-v2 as it ran before issue 21 (BLAS's default threads), the NumPy path now (one BLAS
thread for its small products), ONNX Runtime on the graph memgauge builds from the same
safetensors (one and two intra-op threads), and sentence-transformers when it is installed; then
one dense search over 10,000 vectors with BLAS's default threads and with one.

    python benchmarks/bench_embed.py [--n 1000] [--reps 3]

Texts per CPU-second (process_time) and per wall second; min / median of `--reps` passes.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from contextlib import nullcontext
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from memgauge.embed.minilm_numpy import MiniLMEmbedder, one_blas_thread  # noqa: E402


def _measure(f: Callable[[], Any], reps: int) -> tuple[list[float], list[float]]:
    cpu, wall = [], []
    for _ in range(reps):
        c0, w0 = time.process_time(), time.perf_counter()
        f()
        cpu.append(time.process_time() - c0)
        wall.append(time.perf_counter() - w0)
    return cpu, wall


def _row(name: str, n: int, cpu: Sequence[float], wall: Sequence[float]) -> str:
    per_cpu = sorted(n / c for c in cpu)
    per_wall = sorted(n / w for w in wall)
    return (
        f"| {name} | {max(per_cpu):.0f} / {statistics.median(per_cpu):.0f} |"
        f" {max(per_wall):.0f} / {statistics.median(per_wall):.0f} |"
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--reps", type=int, default=3)
    args = ap.parse_args()
    data = json.loads((ROOT.parent / "shared" / "datasets" / "locomo10.json").read_text())
    texts = [
        t["text"]
        for c in data
        for k, v in c["conversation"].items()
        if k.startswith("session_") and isinstance(v, list)
        for t in v
    ][: args.n]
    words = np.mean([len(t.split()) for t in texts])
    print(f"{len(texts)} LoCoMo turns (mean {words:.0f} words); load {os.getloadavg()}")
    print("| embedder | texts per CPU-second (best / median) | texts per second, wall |")
    print("|---|---:|---:|")
    numpy_path = MiniLMEmbedder()
    numpy_path.embed(texts[:32])

    def before() -> Any:
        # the NumPy path as it was: BLAS's default threads (the embedder now limits to one)
        import memgauge.embed.minilm_numpy as mod

        saved = mod.one_blas_thread
        mod.one_blas_thread = nullcontext  # type: ignore[assignment]
        try:
            return numpy_path.embed(texts)
        finally:
            mod.one_blas_thread = saved

    base = before()
    print(_row("NumPy, BLAS default threads (before)", len(texts), *_measure(before, args.reps)))
    print(
        _row(
            "NumPy, one BLAS thread (now)",
            len(texts),
            *_measure(lambda: numpy_path.embed(texts), args.reps),
        )
    )
    try:
        from memgauge.embed.minilm_onnx import MiniLMOnnxEmbedder
    except ImportError:
        print("| ONNX Runtime | onnx/onnxruntime not installed |")
    else:
        for threads in (1, 2):
            onnx_path = MiniLMOnnxEmbedder(threads=threads)
            got = onnx_path.embed(texts)
            row = _row(
                f"ONNX Runtime, {threads} thread{'s' if threads > 1 else ''}",
                len(texts),
                *_measure(lambda e=onnx_path: e.embed(texts), args.reps),
            )
            print(row)
            print(f"  (largest difference from the NumPy path: {np.abs(got - base).max():.1e})")
    try:
        from sentence_transformers import SentenceTransformer
    except ImportError:
        print("| sentence-transformers (torch) | not installed in this environment |")
    else:
        st = SentenceTransformer(str(numpy_path.model_dir), device="cpu")
        st.encode(texts[:32])
        print(
            _row(
                "sentence-transformers (torch)",
                len(texts),
                *_measure(lambda: st.encode(texts, batch_size=32), args.reps),
            )
        )

    matrix = np.random.default_rng(0).standard_normal((10_000, 384)).astype(np.float32)
    q = matrix[0]
    print("\n| dense search, 10,000 x 384 mat-vec | CPU ms (best / median) | wall ms |")
    print("|---|---:|---:|")
    for name, ctx in (("BLAS default threads", nullcontext), ("one BLAS thread", one_blas_thread)):
        cpu, wall = [], []
        for _ in range(args.reps):
            c0, w0 = time.process_time(), time.perf_counter()
            for _ in range(200):
                with ctx():
                    matrix @ q
            cpu.append((time.process_time() - c0) / 200 * 1000)
            wall.append((time.perf_counter() - w0) / 200 * 1000)
        print(
            f"| {name} | {min(cpu):.3f} / {statistics.median(cpu):.3f} |"
            f" {min(wall):.3f} / {statistics.median(wall):.3f} |"
        )
    print(f"load after {os.getloadavg()}")


if __name__ == "__main__":
    main()
