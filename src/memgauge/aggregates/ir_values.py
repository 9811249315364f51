"""The IR values of one system's rankings, as the dataset's protocol says to compute them.

A dataset imported under a benchmark's protocol (`DatasetProtocol`, e.g. LongMemEval's paper
protocol) brings that benchmark's conventions: LongMemEval's recall_all of a query with no
relevant memory is 1.0, and its session_* measures are computed from turn rankings
(`memgauge.metrics.longmemeval`). Other datasets are scored by `evaluate_ranked` alone.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from memgauge._util.listing import counted
from memgauge.data.models import EvalQuery, Memory, RetrievalDataset
from memgauge.errors import argument
from memgauge.metrics import Counts, MetricConfig, evaluate_ranked, parse_measure
from memgauge.metrics.conventions import DEFAULT_NO_RELEVANT, Gain, NoRelevant
from memgauge.metrics.longmemeval import turn2session, vacuous_recall_all
from memgauge.metrics.measures import SESSION_MEASURES

__all__ = ["corpora", "ir_values", "protocol_label"]


def protocol_label(dataset: RetrievalDataset) -> str | None:
    """`longmemeval-paper (turn)`: the benchmark protocol a dataset was imported under."""
    p = dataset.protocol
    if p is None:
        return None
    return p.name + (f" ({p.granularity})" if p.granularity else "")


def corpora(memories: Sequence[Memory], queries: Sequence[EvalQuery]) -> dict[str, list[str]]:
    """Each query's corpus as memory ids: its corpus's memories plus the shared ones (every
    memory for a query without a corpus), as the runner searches them."""
    by_corpus: dict[str | None, list[str]] = {}
    for m in memories:
        by_corpus.setdefault(m.corpus, []).append(m.id)
    everything = [m.id for m in memories]
    shared = by_corpus.get(None, [])
    out: dict[str, list[str]] = {}
    for q in queries:
        out[q.id] = everything if q.corpus is None else by_corpus.get(q.corpus, []) + shared
    return out


def ir_values(
    dataset: RetrievalDataset,
    qrels: dict[str, dict[str, int]],
    ranked: dict[str, list[str]],
    queries: Sequence[EvalQuery],
    measures: Sequence[str],
    *,
    rel_threshold: int,
    gain: Gain,
    k: int,
    no_relevant: NoRelevant = DEFAULT_NO_RELEVANT,
) -> tuple[list[str], dict[str, np.ndarray[Any, Any]], Counts, list[str]]:
    """Every measure per query (sorted query ids), the accounting, and notes: the dataset's
    protocol decides LongMemEval's conventions, and session_* measures are computed from the
    turn rankings (`memgauge.metrics.longmemeval`)."""
    parsed = [parse_measure(m) for m in measures]
    session = [m for m in parsed if m.name in SESSION_MEASURES]
    metric_config = MetricConfig(rel_threshold=rel_threshold, gain=gain, no_relevant=no_relevant)
    judged = {q.id: qrels[q.id] for q in queries}
    ev = evaluate_ranked(judged, ranked, [m for m in parsed if m not in session], metric_config)
    notes: list[str] = []
    protocol = dataset.protocol
    if protocol is not None and protocol.recall_all_no_relevant == 1:
        ev = vacuous_recall_all(ev)
        if ev.counts.no_relevant:
            notes.append(
                f"{protocol.name}: recall_all of the {counted(len(ev.counts.no_relevant), 'query', 'queries')} with "
                "no relevant memory is 1.0, as LongMemEval scores it (recall_any and ndcg_any 0)"
            )
    values = dict(ev.per_query)
    if session:
        sev = turn2session(
            judged,
            ranked,
            corpora(dataset.memories, queries),
            session,
            rel_threshold=rel_threshold,
        )
        values.update(sev.per_query)
        if sev.short:
            whose = counted(len(sev.short), "query's", "queries'")
            notes.append(
                f"session measures: {whose} hits ran out before LongMemEval's "
                f"grown cutoff (it ranks the whole corpus); search deeper than {argument('k', k)} for "
                "its exact values"
            )
    ordered = {str(m): values[str(m)] for m in dict.fromkeys(parsed)}
    return list(ev.query_ids), ordered, ev.counts, notes
