"""Per query, what a memory put into the context and what it cost: the cost aggregate's rows.

A query's context is the text of the hits its search returned at the task's `k`, in rank
order (a retrieval item's recorded hits; the dataset's text of a memory where the record left
it out, see `runs.work.hit_record`), or, for a memory answering an expected-output task, the
hits' texts it answered with. Its tokens are the sum of the hits' tokens in one encoding.

An LLM-backed subject's own calls while it answered (every attempt) are its item's
`llm_usage` (`llm.tally`): tokens as the provider reported them, per model.

Under a token budget (seed 002 Layer 4's pressure simulation) the context is filled in rank
order until the next hit would not fit: that hit and every later one are cut. A relevant
memory cut is a context error: found by the search, lost to the budget.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from memgauge.aggregates.hits import hits_of
from memgauge.data.records import ItemRecord
from memgauge.metrics.tokens import Encoding, pressure_level, token_counts

__all__ = ["QueryCost", "SubjectCosts", "costs_of"]


@dataclass
class QueryCost:
    """One query's context and cost.

    Attributes:
        item_id: the item (query) id.
        hit_tokens: tokens of each hit, in rank order (None: the item's output is no context,
            an agent's answer).
        latency_ms: the search's latency at the aggregate's stage (None: not recorded).
        accuracy: the accuracy evaluator's verdict (None: no verdict).
        relevant: per hit, whether it is judged relevant (None: the query has no judgments).
        llm_usage: the subject's own LLM calls, model -> counter -> total (None: none seen).
    """

    item_id: str
    hit_tokens: list[int] | None
    latency_ms: float | None
    accuracy: float | None
    relevant: list[bool] | None
    llm_usage: dict[str, dict[str, int]] | None = None

    @property
    def tokens(self) -> int | None:
        """The context's tokens (None: no context)."""
        return None if self.hit_tokens is None else sum(self.hit_tokens)

    @property
    def llm_tokens(self) -> int | None:
        """Prompt and completion tokens of the subject's own LLM calls (None: none seen)."""
        if not self.llm_usage:
            return None
        return sum(
            row.get("prompt_tokens", 0) + row.get("completion_tokens", 0)
            for row in self.llm_usage.values()
        )

    def kept(self, budget: int) -> int:
        """How many hits fit in `budget` tokens, filled in rank order."""
        cumulative = np.cumsum(np.asarray(self.hit_tokens or [], dtype=np.int64))
        return int(np.count_nonzero(cumulative <= budget))

    def row(self, budget: int | None) -> dict[str, object]:
        """The query as the aggregate's detail shows it."""
        out: dict[str, object] = {
            "id": self.item_id,
            "context_tokens": self.tokens,
            "hits": None if self.hit_tokens is None else len(self.hit_tokens),
            "latency_ms": self.latency_ms,
            "accuracy": self.accuracy,
        }
        if self.llm_usage:
            out["llm_tokens"] = self.llm_tokens
        if budget is not None and self.hit_tokens is not None and self.tokens is not None:
            kept = self.kept(budget)
            ratio = self.tokens / budget
            out |= {
                "token_usage_ratio": ratio,
                "pressure_level": pressure_level(ratio),
                "hits_cut": len(self.hit_tokens) - kept,
                "relevant_cut": None if self.relevant is None else sum(self.relevant[kept:]),
            }
        return out


@dataclass
class SubjectCosts:
    """One subject's answered queries, and how many failed."""

    queries: list[QueryCost] = field(default_factory=list)
    n_failed: int = 0

    @property
    def with_context(self) -> list[QueryCost]:
        """The queries whose output is a context (hits)."""
        return [q for q in self.queries if q.hit_tokens is not None]


def _texts(record: ItemRecord, known: Mapping[str, str]) -> list[tuple[str, str]] | None:
    """(memory id, text) of each hit the item's context holds; None when it has none."""
    hits = hits_of(record.output)
    if hits is not None:
        out = []
        for h in hits:
            hid = str(h["id"])
            text = h["text"] if "text" in h else known.get(hid)
            out.append((hid, text if isinstance(text, str) else ""))
        return out
    retrieved = record.extra.get("retrieved")
    if isinstance(record.output, str) and isinstance(retrieved, list):
        # a memory answering with its hits' texts, one per line (`runs.work._texts`)
        return [("", record.output)]
    return None


def _latency(stages: Mapping[str, float], stage: str) -> float | None:
    """The latency at `stage`; `total` of a subject that times its stages only (an agent's
    search and LLM call) is their sum."""
    if stage in stages:
        return float(stages[stage])
    if stage == "total" and stages:
        return float(sum(stages.values()))
    return None


def costs_of(
    records: Sequence[ItemRecord],
    *,
    encoding: Encoding,
    known: Mapping[str, str],
    qrels: Mapping[str, Mapping[str, int]] | None,
    rel_threshold: int,
    accuracy: str | None,
    stage: str,
) -> SubjectCosts:
    """The queries of one subject's records (queued items, never asked, are left out)."""
    out = SubjectCosts()
    pending: list[tuple[ItemRecord, list[tuple[str, str]] | None]] = []
    for r in records:
        if r.status == "queued":
            continue
        if r.status != "completed":
            out.n_failed += 1
            continue
        pending.append((r, _texts(r, known)))
    counts = token_counts([t for _r, texts in pending for _id, t in texts or ()], encoding).tolist()
    at = 0
    for r, texts in pending:
        hit_tokens = None
        if texts is not None:
            hit_tokens = counts[at : at + len(texts)]  # Python ints (`tolist`)
            at += len(texts)
        usage = r.extra.get("llm_usage")
        verdict = r.verdict(accuracy) if accuracy is not None else None
        judged = qrels.get(r.item_id) if qrels is not None else None
        out.queries.append(
            QueryCost(
                item_id=r.item_id,
                hit_tokens=hit_tokens,
                latency_ms=_latency(r.latency_ms, stage),
                accuracy=verdict.value if verdict is not None and verdict.error is None else None,
                relevant=None
                if judged is None or texts is None
                else [judged.get(hid, 0) >= rel_threshold for hid, _t in texts],
                llm_usage=usage if isinstance(usage, dict) and usage else None,
            )
        )
    return out
