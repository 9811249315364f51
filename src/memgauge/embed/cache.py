"""A disk cache of embeddings keyed by (embedder name, sha256 of text).

Layout: `<cache_dir>/<sha256(embedder name)[:16]>/<first 2 hex of text hash>.npz` shards, each
mapping text hashes to float32 vectors. A shard is rewritten through a temporary file and an
atomic rename, so two processes writing at once never leave a torn file (the later write wins;
a lost entry is recomputed next time, never wrong).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from memgauge._types import AnyArray, FloatArray
from memgauge._util.files import atomic_writer
from memgauge.embed.protocol import Embedder

__all__ = ["CachedEmbedder"]


def _text_key(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class CachedEmbedder:
    """Wraps an Embedder; only texts not seen before reach it."""

    def __init__(self, inner: Embedder, cache_dir: str | Path) -> None:
        self.inner = inner
        name_key = hashlib.sha256(inner.name.encode("utf-8")).hexdigest()[:16]
        self.root = Path(cache_dir) / name_key
        self.hits = 0
        self.misses = 0
        # shards already read by this process: a search loop embeds one query at a time
        self._memo: dict[str, dict[str, AnyArray]] = {}

    @property
    def name(self) -> str:
        """The inner embedder's name."""
        return self.inner.name

    @property
    def dim(self) -> int:
        """The inner embedder's dimension."""
        return self.inner.dim

    def _load(self, shard: str) -> dict[str, AnyArray]:
        if shard not in self._memo:
            self._memo[shard] = self._read(shard)
        return self._memo[shard]

    def _read(self, shard: str) -> dict[str, AnyArray]:
        path = self.root / f"{shard}.npz"
        if not path.is_file():
            return {}
        try:
            with np.load(path) as data:
                return {k: data[k] for k in data.files}
        except (OSError, ValueError):
            return {}  # a damaged shard is a cache miss, never an error

    def _save(self, shard: str, entries: dict[str, AnyArray]) -> None:
        with atomic_writer(self.root / f"{shard}.npz") as fh:
            np.savez(fh, allow_pickle=False, **entries)

    def embed(self, texts: Sequence[str]) -> FloatArray:
        """Cached vectors where present; the rest computed in one call and stored."""
        keys = [_text_key(t) for t in texts]
        rows: list[AnyArray | None] = [None] * len(texts)
        shards: dict[str, dict[str, AnyArray]] = {}
        missing: list[int] = []
        for i, key in enumerate(keys):
            if key[:2] not in shards:
                shards[key[:2]] = self._load(key[:2])
            shard = shards[key[:2]]
            if key in shard:
                rows[i] = shard[key]
            else:
                missing.append(i)
        self.hits += len(texts) - len(missing)
        self.misses += len(missing)
        if missing:
            unique = list(dict.fromkeys(keys[i] for i in missing))
            first = {keys[i]: i for i in reversed(missing)}
            vectors = self.inner.embed([texts[first[k]] for k in unique])
            computed = dict(zip(unique, vectors, strict=True))
            for i in missing:
                rows[i] = computed[keys[i]]
            touched: set[str] = set()
            for key, vec in computed.items():
                shards[key[:2]][key] = np.asarray(vec, dtype=np.float32)
                touched.add(key[:2])
            for name in touched:
                # merge with what is on disk now: another process may have added entries
                merged = {**self._read(name), **shards[name]}
                self._save(name, merged)
                self._memo[name] = merged
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float64)
        return np.vstack([np.asarray(r, dtype=np.float64) for r in rows])
