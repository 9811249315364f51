"""A run warms its dense lanes: every text a hybrid memory will embed (its memories and its
questions, corpus by corpus) is embedded ahead, in large batches, while the lanes before it
search; the lane then finds each vector cached, and the ranking is the one it finds without."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from memgauge import api
from memgauge.data.models import EvalQuery, Judgment, Memory, RetrievalDataset
from memgauge.embed.cache import CachedEmbedder
from memgauge.runs.engine import RunReport
from memgauge.subjects.reference import ReferenceMemory


class _Counting:
    """Vectors from the text alone; records each call's texts and thread."""

    name = "counting"
    dim = 8

    def __init__(self) -> None:
        self.calls: list[tuple[str, list[str]]] = []
        self.warmed = threading.Event()

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.calls.append((threading.current_thread().name, list(texts)))
        if threading.current_thread().name == "memgauge-warm":
            self.warmed.set()
        out = np.zeros((len(texts), self.dim), dtype=np.float64)
        for i, t in enumerate(texts):
            out[i, sum(map(ord, t)) % self.dim] = 1.0
            out[i, len(t) % self.dim] += 0.5
        return out / np.linalg.norm(out, axis=1, keepdims=True)


def _dataset(corpora: int = 3, per: int = 40) -> RetrievalDataset:
    memories = [
        Memory(id=f"m{c}-{i}", text=f"note {i} of {c} on topic {i % 5}", corpus=f"c{c}")
        for c in range(corpora)
        for i in range(per)
    ]
    queries = [
        EvalQuery(id=f"q{c}-{j}", text=f"topic {j} in {c}?", corpus=f"c{c}")
        for c in range(corpora)
        for j in range(6)
    ]
    judgments = [
        Judgment(query_id=q.id, memory_id=f"m{q.corpus[1:]}-{j}", grade=2)
        for q in queries
        for j in range(2)
    ]
    return RetrievalDataset(memories=memories, queries=queries, judgments=judgments)


class _AfterTheWarmUp(ReferenceMemory):
    """A lexical lane whose first search waits (a minute at most) for the warm-up's first
    call: the warm-up is ahead of the hybrid lane whatever the threads' scheduling."""

    embedder_seen: _Counting

    def search(self, query: str, k: int, **kwargs: Any) -> Any:
        self.embedder_seen.warmed.wait(60)
        return super().search(query, k, **kwargs)


def _hits(report: RunReport, subject: str) -> dict[str, object]:
    return {r.item_id: r.output for r in report.items if r.subject == subject}


def test_a_run_embeds_each_text_once_ahead_in_batches_and_ranks_as_without(
    tmp_path: Path,
) -> None:
    ds = _dataset()
    inner = _Counting()
    first = _AfterTheWarmUp.in_memory("lexical")
    assert isinstance(first, _AfterTheWarmUp)
    first.embedder_seen = inner
    warmed = api.evaluate(
        ds,
        {
            "lexical": first,
            "hybrid": ReferenceMemory.in_memory("hybrid", CachedEmbedder(inner, tmp_path / "c")),
        },
        measures=("Recall@5",),
        resamples=100,
        store=False,
    )
    texts = [t for _thread, call in inner.calls for t in call]
    distinct = {m.text for m in ds.memories} | {q.text for q in ds.queries}
    assert sorted(texts) == sorted(distinct)  # each text embedded once
    # ahead, in the warm-up's one call (it fits one chunk), not one call per corpus and one
    # per question
    assert [thread for thread, _call in inner.calls] == ["memgauge-warm"]

    # the same run with the embedder itself (no cache: nothing to warm) ranks alike
    plain = _Counting()
    cold = api.evaluate(
        ds,
        {
            "lexical": ReferenceMemory.in_memory("lexical"),
            "hybrid": ReferenceMemory.in_memory("hybrid", plain),
        },
        measures=("Recall@5",),
        resamples=100,
        store=False,
    )
    assert len(plain.calls) == 3 + len(ds.queries)  # one per corpus and one per question
    assert _hits(warmed, "hybrid") == _hits(cold, "hybrid")
    assert len(_hits(warmed, "hybrid")) == len(ds.queries)
    scores = {r.item_id: [(s.evaluator, s.value) for s in r.scores] for r in warmed.items}
    assert scores == {r.item_id: [(s.evaluator, s.value) for s in r.scores] for r in cold.items}
