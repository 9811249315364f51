"""From production logs to evaluation: re-search detection (seed 002 section 5) and the
golden set exported as a retrieval dataset for an offline evaluation.

A re-search is a query followed, in the same session and within `window_s` seconds, by
another whose embedding (the offline MiniLM model) has cosine >= `threshold` with it: the
first one did not find what the agent wanted. It is recorded as `re_search` feedback on the
first query.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path

from memgauge._util.files import atomic_write_text
from memgauge.data.jsonio import write_jsonl
from memgauge.data.models import Memory
from memgauge.embed import Embedder
from memgauge.store.querylog import add_re_searches, golden_set, session_queries
from memgauge.store.url import StoreURL

__all__ = ["detect_re_searches", "export_golden_set"]


def detect_re_searches(
    db: str | Path | StoreURL,
    embedder: Embedder,
    *,
    threshold: float = 0.8,
    window_s: float = 300.0,
) -> int:
    """Find and record re-searches; returns how many new ones."""
    rows = session_queries(db)
    if len(rows) < 2:
        return 0
    vecs = embedder.embed([text for _s, _q, text, _c in rows])
    found = []
    for i in range(len(rows) - 1):
        (s1, q1, _t1, c1), (s2, q2, _t2, c2) = rows[i], rows[i + 1]
        if s1 != s2:
            continue
        gap = (datetime.fromisoformat(c2) - datetime.fromisoformat(c1)).total_seconds()
        sim = float(vecs[i] @ vecs[i + 1])
        if 0 <= gap <= window_s and sim >= threshold:
            found.append((s1, q1, q2, round(sim, 4)))
    return add_re_searches(db, found)


def export_golden_set(
    db: str | Path | StoreURL, out_dir: str | Path, memories: Sequence[Memory] | None = None
) -> dict[str, int]:
    """Write the harvested queries and their best judgments as `queries.jsonl` and
    `judgments.jsonl` in `out_dir`, and, given the memory system's memories (its dump), a
    `memories.jsonl`: a retrieval dataset `memgauge evaluate` runs as it is.

    With memories, judgments of memories the system no longer holds (deleted since the query
    was logged) are left out and counted as `judgments_dropped`; without, add a
    `memories.jsonl` before evaluating. Returns the counts written."""
    queries, judgments = golden_set(db)
    dropped = 0
    if memories is not None:
        ids = {m.id for m in memories}
        kept = [j for j in judgments if j["memory_id"] in ids]
        dropped = len(judgments) - len(kept)
        judgments = kept
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    atomic_write_text(out / "queries.jsonl", "".join(json.dumps(q) + "\n" for q in queries))
    atomic_write_text(out / "judgments.jsonl", "".join(json.dumps(j) + "\n" for j in judgments))
    counts = {"queries": len(queries), "judgments": len(judgments)}
    if memories is not None:
        write_jsonl(out / "memories.jsonl", memories)
        counts.update(memories=len(memories), judgments_dropped=dropped)
    return counts
