"""Lexical search over all LoCoMo turns in one corpus: FTS5 scoring every matched row (before),
the NumPy scoring of FTS5's postings (now), and bm25s (a peer, benchmark-only), same texts,
same questions, k = 25; then ingest and search at 1k, 10k and 100k memories, lexical and dense.

    python benchmarks/bench_lexical.py [--locomo ../shared/datasets/locomo10.json] [--reps 3]

Per query: wall and CPU time (perf_counter / process_time around each search), p50 and p99 over
the questions; each figure is the min and the median over `--reps` passes. Recall@5/10/25 over
LoCoMo's evidence turns (a question counts as found when any evidence turn is in the top k).
bm25s tokenizes its own way (English stopwords, no stemmer), which is why its recall differs.
The scaling rows use LoCoMo's turns repeated with a numbered suffix (so texts stay distinct),
ingest and the first search timed apart, and, for dense, unit random vectors through the reference memory's own dense search with a stub
embedder (what is measured is the search, not the model).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from memgauge.data.importers import import_locomo  # noqa: E402
from memgauge.data.models import Memory  # noqa: E402
from memgauge.store.connection import connect  # noqa: E402
from memgauge.store.memory_index import IndexedMemory, MemoryIndex  # noqa: E402
from memgauge.subjects.reference import ReferenceMemory, ReferenceMemoryConfig  # noqa: E402

K = 25


def _rows(texts: Sequence[str]) -> list[IndexedMemory]:
    return [
        IndexedMemory(f"m{i}", t, "normal", None, None, None, None, {}) for i, t in enumerate(texts)
    ]


def _time(search: Callable[[str], object], queries: Sequence[str]) -> tuple[float, ...]:
    wall, cpu = [], []
    for q in queries:
        w0, c0 = time.perf_counter(), time.process_time()
        search(q)
        cpu.append((time.process_time() - c0) * 1000)
        wall.append((time.perf_counter() - w0) * 1000)
    return (
        float(np.percentile(wall, 50)),
        float(np.percentile(wall, 99)),
        float(np.percentile(cpu, 50)),
    )


def _fmt(runs: list[tuple[float, ...]], i: int) -> str:
    values = [r[i] for r in runs]
    return f"{min(values):.3f} / {statistics.median(values):.3f}"


def locomo(path: str, reps: int) -> None:
    ds, _ = import_locomo(path)
    texts = [m.text for m in ds.memories]
    ids = [m.id for m in ds.memories]
    queries = [q.text for q in ds.queries]
    relevant: dict[str, set[str]] = {}
    for j in ds.judgments:
        if j.grade > 0:
            relevant.setdefault(j.query_id, set()).add(j.memory_id)
    with tempfile.TemporaryDirectory() as tmp:
        conn = connect(Path(tmp) / "m.db", check_same_thread=False)
        index = MemoryIndex(conn, "all")
        index.upsert(
            [
                IndexedMemory(i, t, "normal", None, None, None, None, {})
                for i, t in zip(ids, texts, strict=True)
            ],
            None,
        )
        import bm25s

        retriever = bm25s.BM25()
        retriever.index(
            bm25s.tokenize(texts, stopwords="en", show_progress=False), show_progress=False
        )

        def peer(q: str) -> list[str]:
            docs, _ = retriever.retrieve(
                bm25s.tokenize([q], stopwords="en", show_progress=False),
                k=K,
                show_progress=False,
            )
            return [ids[int(d)] for d in docs[0]]

        systems: dict[str, Callable[[str], list[str]]] = {
            "FTS5 bm25() on every match (before)": lambda q: [
                i for i, _ in index.search_lexical_fts(q, K)
            ],
            "NumPy over FTS5's postings (now)": lambda q: [
                i for i, _ in index.search_lexical(q, K)
            ],
            "bm25s 0.3 (peer)": peer,
        }
        for f in systems.values():  # warm: the postings snapshot, the word cache, bm25s
            for q in queries:
                f(q)
        print(f"LoCoMo: {len(texts)} turns in one corpus, {len(queries)} questions, k = {K}")
        print(f"load before: {os.getloadavg()}")
        print(
            "| search | p50 wall ms (min / median) | p99 wall ms | p50 CPU ms | R@5 | R@10 | R@25 |"
        )
        print("|---|---|---|---|---|---|---|")
        for name, f in systems.items():
            runs = [_time(f, queries) for _ in range(reps)]
            found = {q.id: f(q.text) for q in ds.queries if q.id in relevant}
            recall = [
                100 * float(np.mean([bool(set(found[q][:k]) & relevant[q]) for q in found]))
                for k in (5, 10, 25)
            ]
            print(
                f"| {name} | {_fmt(runs, 0)} | {_fmt(runs, 1)} | {_fmt(runs, 2)} |"
                f" {recall[0]:.1f} | {recall[1]:.1f} | {recall[2]:.1f} |"
            )
        print(f"load after: {os.getloadavg()}")
        conn.close()


class _StubEmbedder:
    """Unit random vectors (seeded by the text's hash): the dense search's cost, not a model's."""

    name = "stub"
    dim = 384

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        for i, t in enumerate(texts):
            v = np.random.default_rng(abs(hash(t)) % 2**32).standard_normal(self.dim)
            out[i] = v / np.linalg.norm(v)
        return out


def scaled_texts(base: Sequence[str], n: int) -> list[str]:
    """`n` memories from LoCoMo's turns, repeated with a numbered suffix (texts stay distinct)."""
    return [f"{base[i % len(base)]} #{i // len(base)}" for i in range(n)]


def scaling(path: str, reps: int) -> None:
    ds, _ = import_locomo(path)
    base = [m.text for m in ds.memories]
    queries = [q.text for q in ds.queries][:300]
    print(
        "\n| memories | channel | ingest s | first search ms |"
        " search p50 wall ms (min / median) | p50 CPU ms |"
    )
    print("|---|---|---|---|---|---|")
    for n in (1_000, 10_000, 100_000):
        texts = scaled_texts(base, n)
        memories = [Memory(id=f"m{i}", text=t) for i, t in enumerate(texts)]
        for mode in ("lexical", "dense"):
            with tempfile.TemporaryDirectory() as tmp:
                cfg = ReferenceMemoryConfig(mode=mode, path=str(Path(tmp) / "r.db"))
                mem = ReferenceMemory(cfg, embedder=_StubEmbedder() if mode == "dense" else None)
                t0 = time.perf_counter()
                mem.ingest(memories)
                mem.flush()
                t1 = time.perf_counter()
                mem.search("warm up", K)  # loads the vectors (dense); lexical is kept as written
                first = (time.perf_counter() - t1) * 1000
                ingest = t1 - t0
                runs = [_time(lambda q, m=mem: m.search(q, K), queries) for _ in range(reps)]
                print(
                    f"| {n:,} | {mode} | {ingest:.1f} | {first:.1f} | {_fmt(runs, 0)} |"
                    f" {_fmt(runs, 2)} |"
                )
                mem.close()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--locomo", default=str(ROOT.parent / "shared" / "datasets" / "locomo10.json"))
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--no-scaling", action="store_true")
    args = ap.parse_args()
    locomo(args.locomo, args.reps)
    if not args.no_scaling:
        scaling(args.locomo, args.reps)


if __name__ == "__main__":
    main()
