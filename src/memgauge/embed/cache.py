"""A disk cache of embeddings keyed by (embedder name, sha256 of text).

Layout: `<cache_dir>/<sha256(embedder name)[:16]>/<first 2 hex of text hash>.npz` shards, each
mapping text hashes to float32 vectors: two arrays, `keys` (the hashes, ASCII) and `vectors` (one
row each). A shard is rewritten through a temporary file and an atomic rename, so two processes
writing at once never leave a torn file (the later write wins; a lost entry is recomputed next
time, never wrong).

Shards written before held one array per hash (named by it); they are still read, and rewritten
in two arrays the next time an entry is added. Two arrays cost a fraction to write and read: a
zip member per entry made the cache's writes and reads about 0.5 CPU-s each on LoCoMo's 7,405
texts (BENCHMARKS.md, "A cold LoCoMo run").
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from memgauge._types import AnyArray, FloatArray
from memgauge._util.files import atomic_writer
from memgauge.embed.protocol import Embedder

__all__ = ["CachedEmbedder"]


#: a shard's two arrays; no text hash (64 hex digits) has either name
_KEYS = "keys"
_VECTORS = "vectors"


def _text_key(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class CachedEmbedder:
    """Wraps an Embedder; only texts not seen before reach it, each once, also when several
    threads embed at once (one waits for a text another is embedding)."""

    def __init__(self, inner: Embedder, cache_dir: str | Path) -> None:
        self.inner = inner
        name_key = hashlib.sha256(inner.name.encode("utf-8")).hexdigest()[:16]
        self.root = Path(cache_dir) / name_key
        self.hits = 0
        self.misses = 0
        # shards already read by this process: a search loop embeds one query at a time
        self._memo: dict[str, dict[str, AnyArray]] = {}
        self._lock = threading.Lock()
        # text key -> set when the thread embedding it is done (with it or without)
        self._flight: dict[str, threading.Event] = {}

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
                names = set(data.files)
                entries: dict[str, AnyArray] = {}
                if {_KEYS, _VECTORS} <= names:
                    keys = data[_KEYS].astype(str).tolist()
                    vectors = data[_VECTORS]
                    if vectors.ndim != 2 or len(keys) != vectors.shape[0]:
                        return {}  # damaged
                    entries = dict(zip(keys, vectors, strict=True))
                    names -= {_KEYS, _VECTORS}
                # an entry per member: the format before (or added by a version still on it)
                entries.update((k, data[k]) for k in names)
                return entries
        except (OSError, ValueError, UnicodeDecodeError):
            return {}  # a damaged shard is a cache miss, never an error

    def _save(self, shard: str, entries: dict[str, AnyArray]) -> None:
        keys = np.array(list(entries), dtype="S64")
        if entries:
            vectors = np.vstack([np.asarray(v, dtype=np.float32) for v in entries.values()])
        else:
            vectors = np.zeros((0, self.dim), dtype=np.float32)
        with atomic_writer(self.root / f"{shard}.npz") as fh:
            np.savez(fh, allow_pickle=False, **{_KEYS: keys, _VECTORS: vectors})

    def embed(self, texts: Sequence[str]) -> FloatArray:
        """Cached vectors where present; the rest computed in one call and stored."""
        keys = [_text_key(t) for t in texts]
        found, mine = self._vectors(dict(zip(keys, texts, strict=True)), write=True)
        missed = sum(1 for k in keys if k in mine)
        with self._lock:
            self.misses += missed
            self.hits += len(texts) - missed
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float64)
        return np.vstack([np.asarray(found[k], dtype=np.float64) for k in keys])

    def warm(
        self, texts: Sequence[str], *, chunk: int = 1024, stop: threading.Event | None = None
    ) -> None:
        """Embed what is not cached yet ahead of need, `chunk` texts at a time in the order
        given (callers waiting for a text already being embedded wait for it rather than embed
        it again), until `stop` is set; the shards are written once, at the end."""
        wanted = dict(zip((_text_key(t) for t in texts), texts, strict=True))
        order = list(wanted.items())
        computed: dict[str, AnyArray] = {}
        try:
            for start in range(0, len(order), chunk):
                if stop is not None and stop.is_set():
                    break
                _found, mine = self._vectors(dict(order[start : start + chunk]), write=False)
                computed.update(mine)
        finally:
            with self._lock:
                self._write(computed)

    def _vectors(
        self, wanted: dict[str, str], *, write: bool
    ) -> tuple[dict[str, AnyArray], dict[str, AnyArray]]:
        """Every wanted key's vector, and those this call computed. A key another thread is
        computing is waited for; if that thread failed, it is computed here."""
        found: dict[str, AnyArray] = {}
        mine: dict[str, AnyArray] = {}
        while len(found) < len(wanted):
            claimed: list[str] = []
            waits: list[threading.Event] = []
            done = threading.Event()
            with self._lock:
                for key in wanted:
                    if key in found:
                        continue
                    vec = self._load(key[:2]).get(key)
                    if vec is not None:
                        found[key] = vec
                    elif key in self._flight:
                        waits.append(self._flight[key])
                    else:
                        claimed.append(key)
                        self._flight[key] = done
            try:
                if claimed:
                    vectors = self.inner.embed([wanted[k] for k in claimed])
                    computed = dict(zip(claimed, vectors, strict=True))
                    with self._lock:
                        for key, vec in computed.items():
                            self._load(key[:2])[key] = np.asarray(vec, dtype=np.float32)
                        if write:
                            self._write(computed)
                    found.update(computed)
                    mine.update(computed)
            finally:
                with self._lock:
                    for key in claimed:
                        del self._flight[key]
                done.set()
            for event in waits:
                event.wait()
        return found, mine

    def _write(self, computed: dict[str, AnyArray]) -> None:
        """Write the shards `computed` touched (the caller holds the lock)."""
        for name in {key[:2] for key in computed}:
            # merge with what is on disk now: another process may have added entries
            merged = {**self._read(name), **self._load(name)}
            self._save(name, merged)
            self._memo[name] = merged
