"""The optimizer model's own spend (text targets' proposer), beside the candidates' runs.

A study's cost budget (`maxCost`, `--max-cost`) counts both: the candidates' runs (their
`suite_run_usage`) and the optimizer model's calls, which no run owns. The latter are metered by
the proposer in its own call scope, recorded on the study (`usage`, per model with
`cost_usd`) at every update, carried over by a resume, and stop being metered when the study
ends (`close_proposers`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from memgauge.data.records import USAGE_COUNTERS
from memgauge.llm.context import llm_context
from memgauge.llm.usage import priced

__all__ = ["close_proposers", "optimizer_usage", "usage_cost"]


def _metered(proposers: Iterable[Any]) -> list[Any]:
    """The distinct proposers that meter their calls (one serves prompts and instructions)."""
    found = {id(p): p for p in proposers if callable(getattr(p, "priced_usage", None))}
    return list(found.values())


def optimizer_usage(
    prior: Mapping[str, Mapping[str, Any]], proposers: Iterable[Any]
) -> dict[str, dict[str, Any]]:
    """Usage per model: `prior` (recorded by earlier processes of a resumed study) plus the
    proposers' in this process, priced at the meter's prices ({} when nothing was called)."""
    rows: dict[str, dict[str, int]] = {}
    for source in [prior, *(p.priced_usage() for p in _metered(proposers))]:
        for model, row in source.items():
            into = rows.setdefault(model, dict.fromkeys(USAGE_COUNTERS, 0))
            for k in USAGE_COUNTERS:
                into[k] += int(row.get(k) or 0)
    return priced(rows, llm_context().meter.prices) if rows else {}


def usage_cost(usage: Mapping[str, Mapping[str, Any]]) -> float:
    """USD of priced usage rows (models without a price count nothing)."""
    return float(sum(r["cost_usd"] for r in usage.values() if r.get("cost_usd") is not None))


def close_proposers(proposers: Iterable[Any]) -> None:
    """Stop every proposer's metering (its listener on the process-wide meter)."""
    for p in _metered(proposers):
        close = getattr(p, "close", None)
        if callable(close):
            close()
