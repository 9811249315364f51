"""The embedding side of `memgauge synth`: which memories are shown together (an anchor and its
nearest neighbours, so the ones graded 0 look related: hard negatives), and which queries are
near-duplicates of one kept before them."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from memgauge._types import FloatArray
from memgauge.data.models import Memory
from memgauge.embed.protocol import Embedder

__all__ = ["group_memories", "near_duplicates"]


def _unit(vectors: FloatArray) -> FloatArray:
    arr = np.asarray(vectors, dtype=np.float64)
    norms = np.linalg.norm(arr, axis=1, keepdims=True)
    return arr / np.where(norms == 0, 1.0, norms)


def group_memories(
    memories: Sequence[Memory], embedder: Embedder, *, size: int, max_groups: int
) -> list[list[Memory]]:
    """At most `max_groups` groups of up to `size` memories: anchors spaced evenly over the
    memories, each with its `size - 1` nearest neighbours (cosine, same corpus; ties by
    order). Deterministic for a given embedder."""
    n = len(memories)
    if n == 0:
        return []
    count = min(max_groups, math.ceil(n / size))
    anchors = sorted({(i * n) // count for i in range(count)})
    vectors = _unit(embedder.embed([m.text for m in memories]))
    corpus = np.array([m.corpus or "" for m in memories], dtype=object)
    groups = []
    for a in anchors:
        sims = vectors @ vectors[a]
        sims = np.where(corpus == corpus[a], sims, -np.inf)
        sims[a] = np.inf  # the anchor first
        # a stable sort on the negated cosine: equal cosines keep the memories' order
        order = np.argsort(-sims, kind="stable")[:size]
        groups.append([memories[int(i)] for i in order if np.isfinite(sims[i]) or i == a])
    return groups


def near_duplicates(
    texts: Sequence[str], embedder: Embedder, threshold: float
) -> dict[int, tuple[int, float]]:
    """`{index: (index of the earlier text kept, cosine)}` for each text whose cosine with a
    text kept before it is at least `threshold` (greedy, in order: the first of a cluster
    stays)."""
    if not texts:
        return {}
    vectors = _unit(embedder.embed(list(texts)))
    sims = vectors @ vectors.T
    kept: list[int] = []
    dropped: dict[int, tuple[int, float]] = {}
    for i in range(len(texts)):
        if kept:
            row = sims[i, kept]
            j = int(np.argmax(row))
            if row[j] >= threshold:
                dropped[i] = (kept[j], float(row[j]))
                continue
        kept.append(i)
    return dropped
