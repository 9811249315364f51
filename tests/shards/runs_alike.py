"""What the sharded-run tests share: a small LoCoMo-like dataset (conversations as corpora,
questions judged against their own conversation's turns), the directory of the subjects workers
import, and how runs are compared (everything recorded but timings)."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from memgauge.data.models import EvalQuery, Judgment, Memory, RetrievalDataset
from memgauge.data.records import ItemRecord, RunSummary

SUBJECTS = Path(__file__).resolve().parents[1] / "data" / "subjects"
TOPICS = ["hiking", "piano", "garden", "chess", "paris", "bakery", "violin", "kayak", "tokyo"]
WORDS = ["blue", "river", "lamp", "stone", "quiet", "market", "window", "maple", "cloud"]


def locomo_like(n_corpora: int, turns: int, questions: int, seed: int = 7) -> RetrievalDataset:
    """`n_corpora` conversations of `turns` turns each; each question asks about one turn of
    its conversation (grade 3) and a neighbour (grade 1), in LoCoMo's id style (D1:3)."""
    rng = random.Random(seed)
    memories, queries, judgments = [], [], []
    for c in range(n_corpora):
        corpus = f"conv-{c}"
        for t in range(turns):
            words = " ".join(rng.choice(WORDS) for _ in range(6))
            text = f"{rng.choice(TOPICS)} {words} {rng.choice(TOPICS)}"
            memories.append(Memory(id=f"{corpus}:D1:{t}", text=text, corpus=corpus))
        for q in range(questions):
            t = rng.randrange(turns)
            target = memories[-turns + t]
            qid = f"{corpus}-q{q}"
            queries.append(
                EvalQuery(
                    id=qid,
                    text=" ".join(target.text.split()[:4]),
                    corpus=corpus,
                    category=rng.choice(["single-hop", "multi-hop", "temporal"]),
                )
            )
            judgments.append(Judgment(query_id=qid, memory_id=target.id, grade=3))
            other = memories[-turns + (t + 1) % turns]
            judgments.append(Judgment(query_id=qid, memory_id=other.id, grade=1))
    return RetrievalDataset(
        name="locomo-like", memories=memories, queries=queries, judgments=judgments
    )


TIMING = ("latency_ms", "ingest_seconds", "p50", "p95", "duration_ms", "started_at", "finished_at")


def _timed(value: Any) -> bool:
    """A measure of wall-clock time (the cost aggregate's `latency_ms.*`), a shape drawn
    from timings (the ir aggregate's latency table), or a table's row of one (the cost
    aggregate's measures table)."""
    if isinstance(value, list) and value and isinstance(value[0], dict):
        return str(value[0].get("text") or "").startswith("latency_ms.")
    if not isinstance(value, dict):
        return False
    return str(value.get("name") or "").startswith("latency_ms.") or "latency" in str(
        value.get("title") or ""
    )


def untimed(value: Any) -> Any:
    """`value` without its timings (a sharded run's timings differ; nothing else may)."""
    if isinstance(value, dict):
        return {k: untimed(v) for k, v in value.items() if k not in TIMING}
    if isinstance(value, list):
        return [untimed(v) for v in value if not _timed(v)]
    return value


def item_view(items: list[ItemRecord]) -> dict[tuple[str, str, str], Any]:
    """Per item: everything recorded but its timings (and failures' timestamps)."""
    out = {}
    for r in items:
        d = r.model_dump(mode="json", exclude={"started_at", "finished_at", "duration_ms"})
        d["failures"] = [{k: v for k, v in f.items() if k != "at"} for f in d["failures"]]
        out[r.key] = untimed(d)
    return out


def summary_view(summary: RunSummary) -> Any:
    """The summary's numbers (measures, aggregates, targets), timings left out."""
    return untimed(summary.model_dump(mode="json", exclude={"llm_usage"}))
