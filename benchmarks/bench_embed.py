"""Offline embedding throughput: memgauge's NumPy all-MiniLM-L6-v2 on LoCoMo turns (and
sentence-transformers in the same process when it is installed).

    python benchmarks/bench_embed.py [--n 1000]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from memgauge.embed import MiniLMEmbedder

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=1000)
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
    emb = MiniLMEmbedder()
    emb.embed(texts[:32])
    t = time.perf_counter()
    ours = emb.embed(texts)
    dt = time.perf_counter() - t
    print(f"{len(texts)} LoCoMo turns (mean {words:.0f} words)")
    print("| embedder | sentences/s |")
    print("|---|---:|")
    print(f"| memgauge MiniLM (NumPy, no torch) | {len(texts) / dt:.0f} |")
    try:
        from sentence_transformers import SentenceTransformer
    except ImportError:
        print("| sentence-transformers | not installed in this environment |")
        return
    st = SentenceTransformer(str(emb.model_dir), device="cpu")
    st.encode(texts[:32])
    t = time.perf_counter()
    theirs = st.encode(texts, normalize_embeddings=True, batch_size=32)
    dt = time.perf_counter() - t
    print(f"| sentence-transformers (torch) | {len(texts) / dt:.0f} |")
    print(f"max |difference| {np.abs(ours - theirs).max():.1e}")


if __name__ == "__main__":
    main()
