"""Audit metrics (seed 003) from a run's probe results, each with its count and a Wilson 95%
interval; a probe type with no probes is None ("n/a (0 probes)"), never 0.

- recall accuracy: correct recall probes / scored recall probes;
- hallucinated-memory rate: hallucination probes answered as if known / scored ones (lower is
  better);
- conflict-resolution accuracy: conflict probes answered with the newest value / scored;
- temporal accuracy: temporal probes answered correctly / scored.

Probes that could not be asked or judged (a failure) are counted in `n_failed` and left out
of the rates.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from memgauge.stats.proportion import wilson_ci

__all__ = ["METRICS", "audit_metrics", "wilson"]

# metric name -> (probe type, whether the rate counts failures of the behaviour)
METRICS: dict[str, tuple[str, bool]] = {
    "recall_accuracy": ("recall", False),
    "hallucinated_memory_rate": ("hallucination", True),
    "conflict_resolution_accuracy": ("conflict", False),
    "temporal_accuracy": ("temporal", False),
}


wilson = wilson_ci  # the 95% Wilson interval, as the metrics report it


def audit_metrics(results: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """`results`: one row per probe with `type` and `correct` (True / False, None = failed).

    Returns `{"metrics": {name: value or None}, "counts": {name: {...}}}`.
    """
    metrics: dict[str, float | None] = {}
    counts: dict[str, dict[str, Any]] = {}
    for name, (ptype, inverted) in METRICS.items():
        rows = [r for r in results if r["type"] == ptype]
        scored = [bool(r["correct"]) for r in rows if r["correct"] is not None]
        k = sum(1 for c in scored if c != inverted)  # inverted: count the wrong ones
        n = len(scored)
        value = k / n if n else None
        metrics[name] = value
        counts[name] = {
            "probe_type": ptype,
            "n_probes": len(rows),
            "n_scored": n,
            "n_failed": len(rows) - n,
            "count": k,
            "value": value,
            "ci95": list(ci) if (ci := wilson(k, n)) else None,
        }
    return {"metrics": metrics, "counts": counts}
