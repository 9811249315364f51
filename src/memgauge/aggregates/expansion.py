"""Seed 002's query-expansion impact (section 3.2), for systems that report each search's
ranking before expansion (`SearchResult.pre_expansion`, kept as `extra["pre_expansion"]`).

Over the queries that have both rankings, every IR measure is computed on the ranking before
expansion (a) and after (b), and compared as two systems are: the delta b - a with its paired
bootstrap CI, the paired randomization test, Holm across measures. Beside it, the seed's
"results found only after expansion": per query, the share of the returned memories that the
pre-expansion ranking did not hold, |post \\ pre| / |post| (mean over queries with hits), and
how many relevant memories (grade >= threshold) only the expanded search returned.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from memgauge.aggregates.ir_compare import metric_rows
from memgauge.aggregates.ir_values import ir_values
from memgauge.aggregates.retrieval_result import ExpansionImpact
from memgauge.data.models import EvalQuery, RetrievalDataset
from memgauge.data.records import ItemRecord
from memgauge.metrics.conventions import Gain, NoRelevant

__all__ = ["expansion_impact", "pre_expansion_of"]


def pre_expansion_of(record: ItemRecord) -> list[str] | None:
    """The ids a search ranked before query expansion, when its system reported them."""
    found = record.extra.get("pre_expansion")
    return [str(x) for x in found] if isinstance(found, list) else None


def expansion_impact(
    dataset: RetrievalDataset,
    qrels: dict[str, dict[str, int]],
    queries: Sequence[EvalQuery],
    post: Mapping[str, Sequence[str]],
    pre: Mapping[str, Sequence[str]],
    measures: Sequence[str],
    *,
    rel_threshold: int,
    gain: Gain,
    no_relevant: NoRelevant,
    k: int,
    stats: Mapping[str, Any],
) -> ExpansionImpact | None:
    """Before against after expansion on the queries with both rankings; None when no search
    reported a pre-expansion ranking. `stats`: `metric_rows`' options (test, seed, alpha,
    resamples)."""
    both = [q for q in queries if q.id in pre and q.id in post]
    if not both:
        return None
    settings: dict[str, Any] = {
        "rel_threshold": rel_threshold,
        "gain": gain,
        "k": k,
        "no_relevant": no_relevant,
    }
    _, before, _, _ = ir_values(
        dataset, qrels, {q.id: list(pre[q.id]) for q in both}, both, measures, **settings
    )
    _, after, _, _ = ir_values(
        dataset, qrels, {q.id: list(post[q.id]) for q in both}, both, measures, **settings
    )
    new_share: list[float] = []
    new_relevant = 0
    for q in both:
        got, had = list(post[q.id]), set(pre[q.id])
        if got:
            new_share.append(sum(d not in had for d in got) / len(got))
        judged = qrels.get(q.id, {})
        new_relevant += sum(1 for d in set(got) - had if d in judged and judged[d] >= rel_threshold)
    return ExpansionImpact(
        n_queries=len(both),
        metrics=metric_rows(before, after, **stats),
        new_hit_share=sum(new_share) / len(new_share) if new_share else None,
        new_relevant=new_relevant,
    )
