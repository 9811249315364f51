"""A run's headline: its summary without the per-query detail, stored beside it.

A retrieval run's summary holds, in its `ir` aggregate, every query's values, hits and
channels (`systems[*].per_query`): 99% of a 10,000-query run's summary, and what makes it
seconds to parse. The run page, the gate's rolling baseline and a suite's trends read only the
run-level numbers and the breakdowns, so the store keeps this small copy beside the summary
(`suite_runs.headline_json`, revision 0016) and they read it instead; the report, the export
and one item's page read the summary whole.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from memgauge.data.records import RunSummary

__all__ = ["PER_QUERY", "headline"]

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
