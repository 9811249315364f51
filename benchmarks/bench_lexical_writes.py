"""A lexical search right after a write, and the first search of a fresh corpus: the reference
memory's NumPy scoring (its postings kept up to date by each write), FTS5's own bm25() on the
same data, and bm25s with PyStemmer (a peer, benchmark-only: `pip install bm25s PyStemmer`).

    python benchmarks/bench_lexical_writes.py [--locomo ../shared/datasets/locomo10.json]
        [--sizes 10000 100000] [--pairs 60] [--corpora 40] [--reps 3]

Write-then-search, at each size: memories from LoCoMo's turns repeated with a numbered suffix
(`bench_lexical.scaled_texts`), the index warmed by one search; then `--pairs` times: write one
new memory, then search one LoCoMo question (k = 25), the pair timed (CPU: process_time; wall:
perf_counter). Each system has its own copy of the same database file, so that one system's
writes are not another's "write by another connection". bm25s has no incremental index: its
write is a re-index of the whole corpus (tokenized again with the new text), timed on fewer
pairs (`--peer-pairs`). "search, no write" is the same searches without the writes.

Fresh corpus (LongMemEval's shape: one question per haystack): `--corpora` times, the memory is
reset and given a fresh 500-turn window of LoCoMo's turns in batches of 512 (what a run's
`fill_memory` does); then a question not asked before is searched (first search), another new
one (second search) and the first again (the lexical channel alone, as FTS5's is), each timed.

Passes are interleaved (system after system, `--reps` rounds); each figure is the min / median
over the rounds of the per-round p50. The load average is printed before and after.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_lexical import scaled_texts  # noqa: E402
from memgauge.data.importers import import_locomo  # noqa: E402
from memgauge.data.models import Memory  # noqa: E402
from memgauge.store.connection import connect  # noqa: E402
from memgauge.store.memory_index import IndexedMemory, MemoryIndex  # noqa: E402
from memgauge.subjects.reference import ReferenceMemory, ReferenceMemoryConfig  # noqa: E402

K = 25
TURNS = 500

Timed = tuple[float, float]  # (wall ms, CPU ms)


def _timed(f: Callable[[], object]) -> Timed:
    w0, c0 = time.perf_counter(), time.process_time()
    f()
    return (time.perf_counter() - w0) * 1000, (time.process_time() - c0) * 1000


def _p50(xs: Sequence[Timed]) -> Timed:
    return float(np.percentile([x[0] for x in xs], 50)), float(
        np.percentile([x[1] for x in xs], 50)
    )


def _fmt(rounds: Sequence[Timed]) -> str:
    wall = [r[0] for r in rounds]
    cpu = [r[1] for r in rounds]
    return (
        f"{min(wall):.2f} / {statistics.median(wall):.2f} |"
        f" {min(cpu):.2f} / {statistics.median(cpu):.2f}"
    )


def _row(i: int, text: str) -> IndexedMemory:
    return IndexedMemory(f"w{i}", text, "normal", None, None, None, None, {})


def _load() -> str:
    return Path("/proc/loadavg").read_text().strip() if Path("/proc/loadavg").exists() else "?"


class _Bm25s:
    """bm25s over the same texts, stemmed (PyStemmer) with English stopwords."""

    def __init__(self, texts: list[str]) -> None:
        import bm25s
        import Stemmer

        self._bm25s = bm25s
        self._stemmer = Stemmer.Stemmer("english")
        self.texts = list(texts)
        self._index()

    def _tok(self, texts: list[str]) -> object:
        return self._bm25s.tokenize(
            texts, stopwords="en", stemmer=self._stemmer, show_progress=False
        )

    def _index(self) -> None:
        self._retriever = self._bm25s.BM25()
        self._retriever.index(self._tok(self.texts), show_progress=False)

    def write(self, text: str) -> None:
        self.texts.append(text)
        self._index()  # no incremental add: the corpus is indexed again

    def search(self, q: str) -> object:
        k = min(K, len(self.texts))
        return self._retriever.retrieve(self._tok([q]), k=k, show_progress=False)


def write_then_search(
    base: list[str], queries: list[str], n: int, pairs: int, peer_pairs: int, reps: int
) -> None:
    texts = scaled_texts(base, n)
    with tempfile.TemporaryDirectory() as tmp:
        first = Path(tmp) / "base.db"
        conn = connect(first)
        MemoryIndex(conn, "all").upsert(
            [
                IndexedMemory(f"m{i}", t, "normal", None, None, None, None, {})
                for i, t in enumerate(texts)
            ],
            None,
        )
        conn.close()
        indexes: dict[str, MemoryIndex] = {}
        for name in ("numpy", "fts5"):
            shutil.copy(first, Path(tmp) / f"{name}.db")
            indexes[name] = MemoryIndex(
                connect(Path(tmp) / f"{name}.db", check_same_thread=False), "all"
            )
        numpy_ix, fts_ix = indexes["numpy"], indexes["fts5"]
        w0, c0 = time.perf_counter(), time.process_time()
        numpy_ix.search_lexical("warm up", K)  # reads the postings of a table it did not write
        cold = ((time.perf_counter() - w0) * 1000, (time.process_time() - c0) * 1000)
        fts_ix.search_lexical_fts("warm up", K)
        peer = _Bm25s(texts)
        same = sum(
            [i for i, _ in numpy_ix.search_lexical(q, K)]
            == [i for i, _ in fts_ix.search_lexical_fts(q, K)]
            for q in queries
        )
        counter = [0]

        def pair(ix: MemoryIndex, search: Callable[[str, int], object], q: str) -> None:
            counter[0] += 1
            ix.upsert([_row(counter[0], base[counter[0] % len(base)])], None)
            search(q, K)

        def peer_pair(q: str) -> None:
            counter[0] += 1
            peer.write(base[counter[0] % len(base)])
            peer.search(q)

        systems: dict[str, tuple[Callable[[str], object], int]] = {
            "memgauge NumPy, write + search": (
                lambda q: pair(numpy_ix, numpy_ix.search_lexical, q),
                pairs,
            ),
            "FTS5 bm25(), write + search": (
                lambda q: pair(fts_ix, fts_ix.search_lexical_fts, q),
                pairs,
            ),
            "bm25s + PyStemmer, write (re-index) + search": (peer_pair, peer_pairs),
            "memgauge NumPy, search, no write": (
                lambda q: numpy_ix.search_lexical(q, K),
                pairs,
            ),
            "FTS5 bm25(), search, no write": (lambda q: fts_ix.search_lexical_fts(q, K), pairs),
            "bm25s + PyStemmer, search, no write": (peer.search, pairs),
        }
        got: dict[str, list[Timed]] = {name: [] for name in systems}
        for r in range(reps):
            for name, (f, count) in systems.items():
                qs = queries[r * count : (r + 1) * count]
                got[name].append(_p50([_timed(lambda q=q, f=f: f(q)) for q in qs]))
        print(
            f"\n{n:,} memories: first search of a table this process did not write"
            f" {cold[0]:.0f} ms wall / {cold[1]:.0f} ms CPU; top-{K} ids equal to FTS5's on"
            f" {same} of {len(queries)} questions"
        )
        print("| system | p50 wall ms (min / median) | p50 CPU ms (min / median) |")
        print("|---|---|---|")
        for name, rounds in got.items():
            print(f"| {name} | {_fmt(rounds)} |")
        for ix in indexes.values():
            ix._conn.close()


def fresh_corpora(base: list[str], queries: list[str], corpora: int, reps: int) -> None:
    """LongMemEval's shape: a fresh TURNS-turn corpus per question. Per corpus: the first
    search (a question not asked before), a second search (another new question) and the first
    question again."""
    with tempfile.TemporaryDirectory() as tmp:
        mem = {
            name: ReferenceMemory(
                ReferenceMemoryConfig(mode="lexical", path=str(Path(tmp) / f"{name}.db"))
            )
            for name in ("numpy", "fts5")
        }
        parts = ("ingest", "first", "second", "again")
        got: dict[str, dict[str, list[Timed]]] = {
            name: {p: [] for p in parts} for name in ("numpy", "fts5", "bm25s")
        }
        asked = 0
        for r in range(reps):
            for name in ("numpy", "fts5", "bm25s"):
                times: dict[str, list[Timed]] = {p: [] for p in parts}
                for c in range(corpora):
                    start = ((r * corpora + c) * 137) % len(base)
                    window = [base[(start + i) % len(base)] for i in range(TURNS)]
                    q1, q2 = queries[-1 - asked], queries[-2 - asked]  # not asked above
                    asked += 2
                    search: Callable[[str], object]
                    if name == "bm25s":
                        holder: list[_Bm25s] = []
                        times["ingest"].append(
                            _timed(lambda w=window, h=holder: h.append(_Bm25s(w)))
                        )
                        search = holder[0].search
                    else:
                        m = mem[name]
                        memories = [Memory(id=f"t{i}", text=t) for i, t in enumerate(window)]

                        def fill(m: ReferenceMemory = m, memories: list[Memory] = memories) -> None:
                            m.reset()  # what a run's fill_memory does
                            for s in range(0, len(memories), 512):
                                m.ingest(memories[s : s + 512])

                        times["ingest"].append(_timed(fill))
                        index = m._index
                        search = (
                            (lambda q, ix=index: ix.search_lexical(q, K))
                            if name == "numpy"
                            else (lambda q, ix=index: ix.search_lexical_fts(q, K))
                        )
                    for part, q in (("first", q1), ("second", q2), ("again", q1)):
                        times[part].append(_timed(lambda q=q, f=search: f(q)))
                for part in parts:
                    got[name][part].append(_p50(times[part]))
        print(f"\nFresh {TURNS}-turn corpus per question ({corpora} corpora a round, k = {K}):")
        print(
            "| system | ingest wall ms | ingest CPU ms | first search wall ms |"
            " first search CPU ms | second search (new question) wall ms | CPU ms |"
            " first question again wall ms | CPU ms |"
        )
        print("|---|---|---|---|---|---|---|---|---|")
        labels = {
            "numpy": "memgauge NumPy (reference memory, lexical channel)",
            "fts5": "FTS5 bm25() (same memory's table)",
            "bm25s": "bm25s + PyStemmer (index = ingest)",
        }
        for name, timed in got.items():
            cells = " | ".join(_fmt(timed[p]) for p in parts)
            print(f"| {labels[name]} | {cells} |")
        for m in mem.values():
            m.close()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--locomo", default=str(ROOT.parent / "shared" / "datasets" / "locomo10.json"))
    ap.add_argument("--sizes", type=int, nargs="*", default=[10_000, 100_000])
    ap.add_argument("--pairs", type=int, default=60)
    ap.add_argument("--peer-pairs", type=int, default=3)
    ap.add_argument("--corpora", type=int, default=40)
    ap.add_argument("--reps", type=int, default=3)
    args = ap.parse_args()
    ds, _ = import_locomo(args.locomo)
    base = [m.text for m in ds.memories]
    queries = [q.text for q in ds.queries]
    print(f"load before: {_load()}")
    for n in args.sizes:
        write_then_search(base, queries, n, args.pairs, args.peer_pairs, args.reps)
    fresh_corpora(base, queries, args.corpora, args.reps)
    print(f"load after: {_load()}")


if __name__ == "__main__":
    main()
