"""What an item's record keeps of the subject beyond its answer, for aggregates that ask it
(`search_depth()`: the attribution aggregate): what an agent said of the hits it answered from
(`used`, and `context`: those its context rule kept; a memory answering with its hits records
them as `retrieved` whatever the aggregates), the question searched again to that depth, so a
memory the answer missed has the rank where it would have been, and, when that search does not
find an item's evidence memories, which of them the subject stores at all.

An agent's hits are kept apart from a memory's `retrieved`, which says the item's output is a
context (the cost aggregate counts its tokens); an agent's output is an answer.

The search is made apart from the answer (the answer's own search, its `k` and its latency stay
what they are without it), and only for a subject that searches. It is the evaluation's own
question, not the subject's answer: if it fails, the item keeps its answer and the record says
why there is no ranking.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from memgauge.aggregates import Aggregate
from memgauge.aggregates.attribution_cause import evidence_of

__all__ = ["answer_extra", "deeper"]


def answer_extra(metadata: Mapping[str, Any]) -> dict[str, Any]:
    """What an agent said of its hits (its answer's metadata `retrieved`: the ids it answered
    from, kept as `used`; `context`: those its context rule kept), as the item's record keeps
    it."""
    out = {}
    for said, kept in (("retrieved", "used"), ("context", "context")):
        value = metadata.get(said)
        if isinstance(value, list | tuple):
            out[kept] = [str(v) for v in value]
    return out


def _depth(aggregates: Sequence[Aggregate]) -> int | None:
    depths = [int(rule()) for a in aggregates if callable(rule := getattr(a, "search_depth", None))]
    return max(depths) if depths else None


def _store(subject: Any) -> Any:
    # a memory-backed agent remembers what it was given; what it can find is its memory's
    return getattr(subject, "memory", None) or subject


def deeper(
    subject: Any,
    aggregates: Sequence[Aggregate],
    question: Any,
    metadata: Mapping[str, Any],
    answer: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Nothing when no aggregate asks; else what an agent said of its hits (`answer`: its
    answer's metadata), the `ranking` (`{"id", "text"}` per hit, best first) of `question` at
    the depth the aggregates ask (and that `depth`), and `stored` (the evidence ids the subject's store holds) when
    that ranking has none of them (no ranking for a subject that does not search)."""
    depth = _depth(aggregates)
    if depth is None:
        return {}
    said = answer_extra(answer or {})
    search = getattr(subject, "search", None)
    if not callable(search) or not isinstance(question, str):
        return said
    try:
        hits = search(question, depth).hits
        out: dict[str, Any] = {
            **said,
            "ranking": [{"id": h.id, "text": h.text} for h in hits],
            "depth": depth,
        }
        evidence = evidence_of(metadata)
        found = {h.id for h in hits}
        dump = getattr(_store(subject), "dump", None)
        if evidence and not found & set(evidence) and callable(dump):
            held = {m.id for m in dump()}
            out["stored"] = [e for e in evidence if e in held]
    except Exception as exc:  # the evaluation's own question: the answer stands without it
        return {**said, "ranking_error": f"{type(exc).__name__}: {exc}"}
    return out
