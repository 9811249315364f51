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
from typing import Any

from pydantic_core import to_json

from memgauge.data.records import RunSummary

__all__ = ["PER_QUERY", "headline", "query_rows"]

#: the key of a system's per-query detail in an aggregate's `detail["systems"]`
PER_QUERY = "per_query"


def _system(system: Any) -> Any:
    if isinstance(system, Mapping) and PER_QUERY in system:
        return {k: v for k, v in system.items() if k != PER_QUERY}
    return system


def headline(summary: RunSummary) -> RunSummary:
    """`summary` without its aggregates' per-query detail (the same object when it has none)."""
    changed = False
    aggregates = []
    for agg in summary.aggregates:
        systems = agg.detail.get("systems")
        if isinstance(systems, list) and any(
            isinstance(s, Mapping) and PER_QUERY in s for s in systems
        ):
            agg = agg.model_copy(
                update={"detail": {**agg.detail, "systems": [_system(s) for s in systems]}}
            )
            changed = True
        aggregates.append(agg)
    return summary.model_copy(update={"aggregates": aggregates}) if changed else summary


def query_rows(summary: RunSummary) -> dict[tuple[str, str, str], str]:
    """Each query's detail in the summary's ir aggregates as JSON, by (task, subject, query
    id); the first record of a key kept, as a reader of the whole summary finds it. The JSON is
    what the summary's own (`model_dump_json`: NaN and infinities as null) holds for it."""
    out: dict[tuple[str, str, str], str] = {}
    for agg in summary.aggregates:
        if agg.aggregate != "ir":
            continue
        for system in agg.detail.get("systems") or ():
            if not isinstance(system, Mapping):
                continue
            for q in system.get(PER_QUERY) or ():
                if not isinstance(q, Mapping):
                    continue
                key = (str(agg.task), str(system.get("name")), str(q.get("query_id")))
                if key not in out:
                    out[key] = to_json(q, inf_nan_mode="null").decode()
    return out
