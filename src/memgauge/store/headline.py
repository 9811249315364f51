"""A run's headline: its summary without the per-query detail, stored beside it.

A retrieval run's summary holds, in its `ir` aggregate, every query's values, hits and
channels (`systems[*].per_query`): 99% of a 10,000-query run's summary, and what makes it
seconds to parse. The run page, the gate's rolling baseline and a suite's trends read only the
run-level numbers and the breakdowns, so the store keeps this small copy beside the summary
(`suite_runs.headline_json`, revision 0016) and they read it instead; the report and the export
read the summary whole. One item's page reads its query's record alone: each query's detail is
kept as a row of `suite_run_queries` (revision 0022), written with the summary (`query_rows`).
"""

from __future__ import annotations

from collections.abc import Mapping

from pydantic_core import to_json

from memgauge.data.facts import Facts, IrView
from memgauge.data.records import AggregateResult, RunSummary

__all__ = ["PER_QUERY", "headline", "query_rows"]

#: a system's per-query records, in an ir aggregate's facts (and a form 1 or 2 result's detail)
PER_QUERY = "per_query"


#: what a headline leaves out of an aggregate's facts: each system's per-query records
WITHOUT_QUERIES = {"systems": {"__all__": {PER_QUERY}}}


def _without_queries(agg: AggregateResult) -> AggregateResult:
    if agg.facts is None:
        return _detail_without_queries(agg)
    # the facts as stored (JSON), less their systems' per-query records where they have any
    kept = agg.facts.model_dump(mode="json", exclude=WITHOUT_QUERIES)
    return agg.model_copy(update={"facts": Facts.model_validate(kept)})


def _detail_without_queries(agg: AggregateResult) -> AggregateResult:
    # a result stored before facts (form 1 or 2) kept its systems' queries in its free detail
    # (the ir and the cost aggregates'), and may draw its shapes from it: kept in that form
    systems = agg.detail.get("systems")
    if not isinstance(systems, list) or not any(
        isinstance(s, Mapping) and PER_QUERY in s for s in systems
    ):
        return agg
    rows = [
        {k: v for k, v in s.items() if k != PER_QUERY} if isinstance(s, Mapping) else s
        for s in systems
    ]
    return agg.model_copy(update={"detail": {**agg.detail, "systems": rows}})


def headline(summary: RunSummary) -> RunSummary:
    """`summary` without its aggregates' per-query records (the same object when none has
    facts or detail to leave them out of)."""
    aggregates = [_without_queries(a) for a in summary.aggregates]
    changed = any(a is not b for a, b in zip(aggregates, summary.aggregates, strict=True))
    return summary.model_copy(update={"aggregates": aggregates}) if changed else summary


def query_rows(summary: RunSummary) -> dict[tuple[str, str, str], str]:
    """Each query's record in the summary's ir aggregates as JSON, by (task, subject, query
    id); the first record of a key kept, as a reader of the whole summary finds it. The JSON is
    what the summary's own (`model_dump_json`: NaN and infinities as null) holds for it."""
    out: dict[tuple[str, str, str], str] = {}
    for agg in summary.aggregates:
        view = agg.facts_as(IrView) if agg.aggregate == "ir" else None
        for system in view.systems if view is not None else ():
            for q in system.per_query:
                key = (agg.task, system.name, q.query_id)
                if key not in out:
                    out[key] = to_json(q, inf_nan_mode="null").decode()
    return out
