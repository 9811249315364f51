"""Hybrid search of the reference memory over all LoCoMo turns in one corpus, each fusion method,
and the fusion stage alone against the reference memory's RRF before issue 28 (a dict per
document, Python arithmetic), on the same channel lists.

    python benchmarks/bench_fusion.py [--locomo ../shared/datasets/locomo10.json] [--reps 3]
        [--default-only]

Dense uses bench_lexical's stub embedder (unit random vectors): what is measured is the search,
not the model. Per query: the memory's own stage latencies (`fusion`, `search`: the total without
the query's embedding) and the CPU time of the call; p50 and p99 over the questions, each the
min and the median of `--reps` passes. Run from a checkout of an older memgauge (bench_lexical
puts the checkout's src/ first on the path), the script measures what that version has: its
default fusion only, when it has no `fusion` setting.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_lexical import _StubEmbedder  # noqa: E402
from memgauge.data.importers import import_locomo  # noqa: E402
from memgauge.subjects.reference import ReferenceMemory, ReferenceMemoryConfig  # noqa: E402

K = 25
SETTINGS: list[dict[str, Any]] = [
    {},
    {"fusion": "combsum"},
    {"fusion": "combsum", "normalization": "z-score"},
    {"fusion": "combmnz"},
    {"fusion": "wsum", "lexical_weight": 2.0},
    {"fusion": "isr"},
    {"fusion": "log_isr"},
    {"fusion": "rbc"},
]


def rrf_before(
    rankings: Mapping[str, Sequence[str]], weights: Mapping[str, float], k_rrf: int
) -> list[tuple[str, float, dict[str, int]]]:
    """The reference memory's fusion before issue 28 (the peer of the fusion stage)."""
    scores: dict[str, float] = {}
    ranks: dict[str, dict[str, int]] = {}
    for channel, ids in rankings.items():
        w = weights.get(channel, 1.0)
        for rank, mid in enumerate(ids, 1):
            scores[mid] = scores.get(mid, 0.0) + w / (k_rrf + rank)
            ranks.setdefault(mid, {})[channel] = rank
    fused = sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))
    return [(mid, score, ranks[mid]) for mid, score in fused]


def _p(values: Sequence[float], q: float) -> float:
    return float(np.percentile(values, q))


def _fmt(runs: Sequence[float]) -> str:
    return f"{min(runs):.3f} / {statistics.median(runs):.3f}"


def _search_pass(mem: ReferenceMemory, queries: Sequence[str]) -> dict[str, float]:
    fusion, search, cpu = [], [], []
    for q in queries:
        c0 = time.process_time()
        latency = mem.search(q, K).latency_ms
        cpu.append((time.process_time() - c0) * 1000)
        fusion.append(latency.get("fusion", 0.0))
        search.append(latency["search"])
    return {
        "fusion50": _p(fusion, 50),
        "fusion99": _p(fusion, 99),
        "search50": _p(search, 50),
        "search99": _p(search, 99),
        "cpu50": _p(cpu, 50),
    }


def _interleaved(
    peers: Mapping[str, Callable[[Any], object]], lists: Sequence[Any], rounds: int
) -> dict[str, list[float]]:
    """Per round, the median over `lists` of each peer's best CPU µs of 5 calls; the peers
    take turns on each list, so a change of load falls on all of them alike."""
    out: dict[str, list[float]] = {name: [] for name in peers}
    for _ in range(rounds):
        per: dict[str, list[float]] = {name: [] for name in peers}
        for ch in lists:
            for name, fn in peers.items():
                best = float("inf")
                for _ in range(5):
                    c0 = time.process_time()
                    fn(ch)
                    best = min(best, time.process_time() - c0)
                per[name].append(best * 1e6)
        for name, values in per.items():
            out[name].append(statistics.median(values))
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--locomo", default=str(ROOT.parent / "shared" / "datasets" / "locomo10.json"))
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--default-only", action="store_true", help="the default fusion alone")
    args = ap.parse_args()
    ds, _ = import_locomo(args.locomo)
    queries = [q.text for q in ds.queries]
    has_fusion = "fusion" in {f.name for f in dataclasses.fields(ReferenceMemoryConfig)}
    with tempfile.TemporaryDirectory() as tmp:
        base = ReferenceMemoryConfig(mode="hybrid", path=str(Path(tmp) / "r.db"))
        mem = ReferenceMemory(base, embedder=_StubEmbedder())  # type: ignore[arg-type]
        mem.ingest(ds.memories)
        for q in queries:  # warm: the postings snapshot, the vectors, the word cache
            mem.search(q, K)
        print(f"LoCoMo: {len(ds.memories)} turns in one corpus, {len(queries)} questions, k = {K}")
        print(f"load before: {os.getloadavg()}")
        print(
            "\n| fusion | fusion stage p50 / p99 ms (min / median) | search p50 ms | search p99 ms"
            " | search p50 CPU ms |"
        )
        print("|---|---|---|---|---|")
        for settings in SETTINGS if has_fusion and not args.default_only else [{}]:
            mem.config = dataclasses.replace(base, **settings)
            runs = [_search_pass(mem, queries) for _ in range(args.reps)]
            name = ", ".join(f"{k}={v}" for k, v in settings.items()) or "default (rrf)"
            col = {key: _fmt([r[key] for r in runs]) for key in runs[0]}
            print(
                f"| {name} | {col['fusion50']} / {col['fusion99']} | {col['search50']} |"
                f" {col['search99']} | {col['cpu50']} |"
            )
        # the fusion stage alone on the same channel lists: before and now
        mem.config = base
        depth = max(K, base.candidates)
        q_vecs = [np.asarray(mem.embedder.embed([q])[0]) for q in queries[:300]]  # type: ignore[union-attr]
        lists = [
            {
                "lexical": mem._index.search_lexical(q, depth),
                "dense": mem._dense_search(v, depth),
            }
            for q, v in zip(queries[:300], q_vecs, strict=True)
        ]
        weights = {"lexical": 1.0, "dense": 1.0}
        peers: dict[str, Callable[[dict[str, Any]], object]] = {
            "RRF before (dict per document)": lambda ch: rrf_before(
                {c: [i for i, _ in h] for c, h in ch.items()}, weights, 60
            ),
        }
        if has_fusion:
            from memgauge.subjects.fusion import fuse_checked

            # what the search path runs: the settings were checked when the config was made
            peers["RRF now (fuse_checked)"] = lambda ch: fuse_checked(
                ch, "rrf", None, weights, 60, None
            )
            peers["CombMNZ, min-max, now"] = lambda ch: fuse_checked(
                ch, "combmnz", None, None, 60, None
            )
        print(
            "\n| fusion alone, 300 questions' channel lists, peers in turn | CPU µs per call"
            " (min / median of the rounds) |"
        )
        print("|---|---|")
        for name, runs in _interleaved(peers, lists, args.reps).items():
            print(f"| {name} | {_fmt(runs)} |")
        print(f"\nload after: {os.getloadavg()}")
        mem.close()


if __name__ == "__main__":
    main()
