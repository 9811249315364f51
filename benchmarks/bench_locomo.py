"""The reference memory on LoCoMo: ingest speed, lexical search latency, and evidence recall of
lexical, dense and hybrid search on the 1,540 answerable questions.

    python benchmarks/bench_locomo.py [--locomo ../shared/datasets/locomo10.json] [--no-dense]

Dense search embeds 5,882 turns and 1,986 questions with the offline all-MiniLM-L6-v2 (NumPy)
once; vectors are cached under MEMGAUGE_HOME/embeddings, so later runs are fast.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np

from memgauge import api
from memgauge.data.environment import memgauge_home
from memgauge.data.importers import import_locomo
from memgauge.embed import CachedEmbedder, MiniLMEmbedder
from memgauge.report import retrieval_result
from memgauge.subjects.reference import ReferenceMemory

ROOT = Path(__file__).resolve().parents[1]
PAPER_R25 = 76.7  # LoCoMo paper, retrieval over dialog turns, top-25


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--locomo", default=str(ROOT.parent / "shared" / "datasets" / "locomo10.json"))
    ap.add_argument("--no-dense", action="store_true")
    args = ap.parse_args()
    ds, report = import_locomo(args.locomo)
    print(
        f"LoCoMo: {len(ds.memories)} turns, {report.counts['answerable_judged']} judged answerable questions"
    )

    # ingest (lexical): every turn into one index, best of 3
    best = float("inf")
    for _ in range(3):
        mem = ReferenceMemory.in_memory("lexical")
        t = time.perf_counter()
        mem.ingest(ds.memories)
        best = min(best, time.perf_counter() - t)
    print(f"lexical ingest of {len(ds.memories)} turns: {best:.2f} s")

    judged = {j.query_id for j in ds.judgments}
    questions = [q.text for q in ds.queries if q.id in judged]
    lat = []
    for text in questions:
        t = time.perf_counter()
        mem.search(text, 25)
        lat.append((time.perf_counter() - t) * 1000)
    a = np.asarray(lat)
    print(
        f"lexical search, k=25 over all {len(ds.memories)} turns, {len(a)} questions: "
        f"p50 {np.percentile(a, 50):.2f} ms, p95 {np.percentile(a, 95):.2f} ms, "
        f"p99 {np.percentile(a, 99):.2f} ms"
    )

    # the one run engine (what `memgauge evaluate` runs), every query recorded in memory
    systems: dict[str, object] = {"lexical": ReferenceMemory.in_memory()}
    if not args.no_dense:
        t = time.perf_counter()
        emb = CachedEmbedder(MiniLMEmbedder(), memgauge_home() / "embeddings")
        emb.embed([m.text for m in ds.memories] + [q.text for q in ds.queries])
        print(
            f"embedding turns + questions (cache misses {emb.misses}): {time.perf_counter() - t:.1f} s"
        )
        systems["dense"] = ReferenceMemory.in_memory("dense", emb)
        systems["hybrid"] = ReferenceMemory.in_memory("hybrid", emb)
    t = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        # as `memgauge evaluate` does: every query recorded in a SQLite store as it finishes
        report = api.evaluate(
            ds,
            systems,
            measures=("Recall@5", "Recall@10", "Recall@25"),
            k=25,
            resamples=1000,
            store=Path(tmp) / "results.db",
        )
    result = retrieval_result(report.run)
    print(
        f"evaluation through the run engine (per-conversation corpora, as the paper; every "
        f"query recorded in SQLite): {time.perf_counter() - t:.1f} s"
    )
    print("\n| search | R@5 | R@10 | R@25 | n |")
    print("|---|---:|---:|---:|---:|")
    for s in result.systems:
        cells = [
            f"{100 * (s.metrics[m].value or 0):.1f}" for m in ("Recall@5", "Recall@10", "Recall@25")
        ]
        n = s.metrics["Recall@25"].n_scored
        print(f"| {s.name} | {' | '.join(cells)} | {n} |")
    print(f"| LoCoMo paper, dialog turns | | | {PAPER_R25} | |")


if __name__ == "__main__":
    main()
