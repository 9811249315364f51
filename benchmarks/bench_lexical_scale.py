"""The lexical search alone at 1k, 10k and 100k memories beside its peers, interleaved in one
run: memgauge's NumPy scoring of FTS5's postings (`MemoryIndex.search_lexical`, what the
reference memory's lexical channel calls), bm25s with PyStemmer and tantivy (peers,
benchmark-only: `pip install 'memgauge[bench]'`).

    python benchmarks/bench_lexical_scale.py [--locomo ../shared/datasets/locomo10.json]
        [--sizes 1000 10000 100000] [--queries 300] [--reps 3] [--corpus zipf dense locomo]

Corpora (`--corpus`):

- zipf: synthetic memories, each a LoCoMo turn's length of words drawn from a Zipf law
  (s = 1.07) over a vocabulary that grows with the corpus as text does (Heaps' law): LoCoMo's
  words by their frequency in LoCoMo, then pronounceable made-up words. Each question is 2-5
  content words of one memory (its judged answer) and 1-2 words drawn from the law.
- dense: the same with the vocabulary fixed at LoCoMo's 5,000 most frequent words, so that
  a question's words match many more memories as the corpus grows.
- locomo: LoCoMo's turns repeated with a numbered suffix (`bench_lexical.scaled_texts`) and its
  own questions (so every term's postings grow with the corpus: the hardest case for postings).

Peers, configured to score as FTS5's bm25() does and to tokenize alike: bm25s with
method="robertson", k1 = 1.2, b = 0.75, English stopwords and PyStemmer's English (Snowball)
stemmer, its NumPy backend (numba is not installed); tantivy with its `en_stem` tokenizer
(lower-case, Snowball English) and its BM25 (k1 = 1.2, b = 0.75), the query's words OR-ed,
in one segment. memgauge stems with FTS5's Porter tokenizer and drops stopwords from the
query (`query_words`). Each system is timed on its whole search: the question's text in, the
top k = 25 out (tantivy's stored ids are read after the timer, for recall).

Per size: each round times every system on every question (system after system; `--reps`
rounds); each figure is the min / median over the rounds of the round's p50 (CPU:
process_time; wall: perf_counter). Recall@10 over the judged questions (zipf: its source
memory; locomo: its evidence turns) and, for memgauge, on how many questions its top-k list
equals FTS5's own `bm25()` ordering. The load average is printed before and after.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
# `MEMGAUGE_SRC=/path/to/other/src`: measure another checkout's code (the "before" figures)
sys.path.insert(0, os.environ.get("MEMGAUGE_SRC") or str(ROOT / "src"))
# imported first: bench_lexical puts this checkout's src first on the path, which must not
# decide which memgauge is measured
import memgauge  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_lexical import scaled_texts  # noqa: E402
from memgauge.data.importers import import_locomo  # noqa: E402
from memgauge.store.connection import connect  # noqa: E402
from memgauge.store.memory_index import IndexedMemory, MemoryIndex, query_words  # noqa: E402

K = 25
RECALL_AT = 10
DENSE_VOCAB = 5_000


@dataclass
class Corpus:
    texts: list[str]
    queries: list[str]
    relevant: list[set[int]]  # per question, the positions of its judged memories


def _pseudo(i: int) -> str:
    """The i-th made-up word: consonant-vowel syllables (stemmers treat them as words)."""
    cons, vows = "bdfgklmnprstvz", "aeiou"
    out = []
    i += 70  # at least three syllables
    while i:
        i, r = divmod(i, len(cons) * len(vows))
        out.append(cons[r // len(vows)] + vows[r % len(vows)])
    return "".join(out) + "n"


def zipf_corpus(
    base: Sequence[str], n: int, n_queries: int, vocab_size: int = 0, seed: int = 0
) -> Corpus:
    """`vocab_size` 0: the vocabulary grows with the corpus (Heaps' law); else it is fixed."""
    rng = np.random.default_rng(seed)
    words: dict[str, int] = {}
    for t in base:
        for w in t.split():
            w = w.strip(".,!?;:\"'()").lower()
            if w.isalpha():
                words[w] = words.get(w, 0) + 1
    ranked = sorted(words, key=lambda w: -words[w])
    lengths = np.array([len(t.split()) for t in base])
    size = rng.choice(lengths, size=n)
    tokens = int(size.sum())
    vocab_size = vocab_size or int(40 * tokens**0.6)  # Heaps' law, English-like constants
    vocab = ranked[:vocab_size] + [_pseudo(i) for i in range(max(0, vocab_size - len(ranked)))]
    vocab_a = np.array(vocab, dtype=object)
    p = 1.0 / np.arange(1, vocab_size + 1) ** 1.07
    p /= p.sum()
    drawn = rng.choice(vocab_size, size=tokens, p=p)
    bounds = np.concatenate([[0], np.cumsum(size)])
    texts = [" ".join(vocab_a[drawn[bounds[i] : bounds[i + 1]]]) for i in range(n)]
    queries, relevant = [], []
    while len(queries) < n_queries:
        d = int(rng.integers(n))
        content = query_words(texts[d])
        if len(content) < 2:
            continue
        pick = rng.choice(
            len(content), size=min(len(content), int(rng.integers(2, 6))), replace=False
        )
        noise = vocab_a[rng.choice(vocab_size, size=int(rng.integers(1, 3)), p=p)]
        q = [content[int(j)] for j in pick] + list(noise)
        rng.shuffle(q)
        queries.append(" ".join(q).capitalize() + "?")
        relevant.append({d})
    return Corpus(texts, queries, relevant)


def locomo_corpus(path: str, n: int, n_queries: int) -> Corpus:
    ds, _ = import_locomo(path)
    texts = scaled_texts([m.text for m in ds.memories], n)
    pos = {m.id: i for i, m in enumerate(ds.memories)}
    evidence: dict[str, set[int]] = {}
    for j in ds.judgments:
        if j.grade > 0 and j.memory_id in pos and pos[j.memory_id] < n:
            evidence.setdefault(j.query_id, set()).add(pos[j.memory_id])
    asked = [q for q in ds.queries if q.id in evidence][:n_queries]
    return Corpus(texts, [q.text for q in asked], [evidence[q.id] for q in asked])


class Memgauge:
    name = "memgauge NumPy over FTS5's postings"

    def __init__(self, texts: Sequence[str], tmp: Path) -> None:
        self.conn = connect(tmp / "m.db", check_same_thread=False)
        self.index = MemoryIndex(self.conn, "all")
        rows = [
            IndexedMemory(f"m{i}", t, "normal", None, None, None, None, {})
            for i, t in enumerate(texts)
        ]
        for s in range(0, len(rows), 512):  # what a run's fill_memory does
            self.index.upsert(rows[s : s + 512], None)

    def search(self, q: str) -> Any:
        return self.index.search_lexical(q, K)

    def ids(self, found: Any) -> list[int]:
        return [int(i[1:]) for i, _ in found]

    def fts5(self, q: str) -> list[int]:
        return self.ids(self.index.search_lexical_fts(q, K))


class Bm25s:
    name = "bm25s + PyStemmer (NumPy backend)"
    backend = "numpy"

    def __init__(self, texts: Sequence[str], tmp: Path) -> None:
        import bm25s
        import Stemmer

        self.bm25s = bm25s
        self.stemmer = Stemmer.Stemmer("english")
        self.retriever = bm25s.BM25(method="robertson", k1=1.2, b=0.75, backend=self.backend)
        self.retriever.index(self._tok(list(texts)), show_progress=False)
        self.n = len(texts)

    def _tok(self, texts: list[str]) -> Any:
        return self.bm25s.tokenize(texts, stopwords="en", stemmer=self.stemmer, show_progress=False)

    def search(self, q: str) -> Any:
        return self.retriever.retrieve(self._tok([q]), k=min(K, self.n), show_progress=False)

    def ids(self, found: Any) -> list[int]:
        docs, scores = found
        return [int(d) for d, s in zip(docs[0], scores[0], strict=True) if s > 0]


class Bm25sNumba(Bm25s):
    name = "bm25s + PyStemmer (numba backend)"
    backend = "numba"


class Tantivy:
    name = "tantivy (en_stem)"

    def __init__(self, texts: Sequence[str], tmp: Path) -> None:
        import tantivy

        builder = tantivy.SchemaBuilder()
        builder.add_text_field("text", stored=False, tokenizer_name="en_stem")
        builder.add_integer_field("pos", stored=True)
        self.index = tantivy.Index(builder.build(), path=str(tmp))
        writer = self.index.writer(heap_size=200_000_000, num_threads=1)
        for i, t in enumerate(texts):
            writer.add_document(tantivy.Document(text=t, pos=i))
        writer.commit()
        writer.wait_merging_threads()
        self.index.reload()
        self.searcher = self.index.searcher()

    def search(self, q: str) -> Any:
        words = query_words(q)  # the same words (parsed safely: no operators)
        if not words:
            return []
        query = self.index.parse_query(" ".join(words), ["text"])
        return self.searcher.search(query, K).hits

    def ids(self, found: Any) -> list[int]:
        return [int(self.searcher.doc(addr)["pos"][0]) for _, addr in found]


def _peers() -> list[type[Any]]:
    try:
        import numba  # noqa: F401
    except ImportError:
        return [Memgauge, Bm25s, Tantivy]
    return [Memgauge, Bm25s, Bm25sNumba, Tantivy]


PEERS = _peers()


def _load() -> str:
    return Path("/proc/loadavg").read_text().strip() if Path("/proc/loadavg").exists() else "?"


def _pass(search: Callable[[str], object], queries: Sequence[str]) -> tuple[float, float]:
    wall, cpu = [], []
    for q in queries:
        w0, c0 = time.perf_counter(), time.process_time()
        search(q)
        cpu.append((time.process_time() - c0) * 1000)
        wall.append((time.perf_counter() - w0) * 1000)
    return float(np.percentile(wall, 50)), float(np.percentile(cpu, 50))


def _fmt(values: Sequence[float]) -> str:
    return f"{min(values):.3f} / {statistics.median(values):.3f}"


def run(kind: str, corpus: Corpus, reps: int) -> None:
    n = len(corpus.texts)
    with tempfile.TemporaryDirectory() as tmp:
        systems: list[Any] = []
        build: dict[str, float] = {}
        for cls in PEERS:
            d = Path(tmp) / cls.__name__
            d.mkdir()
            c0 = time.process_time()
            systems.append(cls(corpus.texts, d))
            build[cls.name] = time.process_time() - c0
        for s in systems:  # warm: caches, word caches, first reads
            for q in corpus.queries:
                s.search(q)
        got: dict[str, list[tuple[float, float]]] = {s.name: [] for s in systems}
        load_before = _load()
        for _ in range(reps):
            for s in systems:
                got[s.name].append(_pass(s.search, corpus.queries))
        load_after = _load()
        ours = systems[0]
        same = sum(ours.ids(ours.search(q)) == ours.fts5(q) for q in corpus.queries)
        print(
            f"\n{kind}, {n:,} memories, {len(corpus.queries)} questions, k = {K}; load before"
            f" {load_before}, after {load_after}; memgauge's top-{K} equal to FTS5 bm25()'s on"
            f" {same} of {len(corpus.queries)}"
        )
        print(
            f"| system | build CPU s | p50 CPU ms (min / median) | p50 wall ms (min / median) |"
            f" R@{RECALL_AT} |"
        )
        print("|---|---|---|---|---|")
        for s in systems:
            hits = [
                bool(set(s.ids(s.search(q))[:RECALL_AT]) & rel)
                for q, rel in zip(corpus.queries, corpus.relevant, strict=True)
            ]
            cpu = [r[1] for r in got[s.name]]
            wall = [r[0] for r in got[s.name]]
            print(
                f"| {s.name} | {build[s.name]:.1f} | {_fmt(cpu)} | {_fmt(wall)} |"
                f" {100 * float(np.mean(hits)):.1f} |"
            )
        ours.conn.close()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--locomo", default=str(ROOT.parent / "shared" / "datasets" / "locomo10.json"))
    ap.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000, 100_000])
    ap.add_argument("--queries", type=int, default=300)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--corpus", nargs="+", default=["zipf", "dense", "locomo"])
    args = ap.parse_args()
    ds, _ = import_locomo(args.locomo)
    base = [m.text.split(": ", 1)[-1] for m in ds.memories]
    print(f"python {sys.version.split()[0]}, numpy {np.__version__}, cpus {os.cpu_count()}")
    print(f"memgauge from {Path(memgauge.__file__).parent}")
    for n in args.sizes:
        for kind in args.corpus:
            if kind == "zipf":
                corpus = zipf_corpus(base, n, args.queries)
            elif kind == "dense":
                corpus = zipf_corpus(base, n, args.queries, vocab_size=DENSE_VOCAB)
            else:
                corpus = locomo_corpus(args.locomo, n, args.queries)
            run(kind, corpus, args.reps)


if __name__ == "__main__":
    main()
