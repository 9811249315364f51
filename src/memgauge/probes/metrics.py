"""Audit metrics (seed 003) from a run's probe results, each with its count and a Wilson 95%
interval; a probe type with no probes is None ("n/a (0 probes)"), never 0.

- recall accuracy: correct recall probes / scored recall probes;
- hallucinated-memory rate: hallucination probes answered as if known / scored ones (lower is
  better);
- conflict-resolution accuracy: conflict probes answered with the newest value / scored;
- temporal accuracy: temporal probes answered correctly / scored.

Probes that could not be asked or judged (a failure) are counted in `n_failed` and left out
of the rates.

On a LoCoMo file the audit also gives LoCoMo's own numbers (`locomo_qa_summary`): the mean
`locomo-qa` score per category and over every scored question, as LoCoMo's
`evaluation.py` and `evaluation_stats.py` compute them (per-category sums over counts).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from memgauge.data.importers.locomo import LOCOMO_CATEGORIES
from memgauge.stats.proportion import wilson_ci

__all__ = ["LOCOMO_QA_LABEL", "METRICS", "audit_metrics", "locomo_qa_summary", "wilson"]

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


#: How reports name the LoCoMo summary, so nobody takes it for memgauge's own verdicts.
LOCOMO_QA_LABEL = (
    "LoCoMo's own scoring (task_eval/evaluation.py: token F1 by category, multi-answer F1 for "
    "multi-hop, the text before ';' for open-domain, the 'not mentioned' phrase rule for "
    "adversarial)"
)


def locomo_qa_summary(results: Sequence[Mapping[str, Any]]) -> dict[str, Any] | None:
    """LoCoMo's per-category and overall means of the `locomo_qa` value of each row.

    `results`: rows with `locomo_qa` (a score, None = not scored) and `locomo_category`
    (1-5). None when no row carries a LoCoMo category (not a LoCoMo audit).
    """
    rows = [r for r in results if r.get("locomo_category") in LOCOMO_CATEGORIES]
    if not rows:
        return None

    def mean_of(group: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
        values = [float(r["locomo_qa"]) for r in group if r.get("locomo_qa") is not None]
        return {
            "mean": sum(values) / len(values) if values else None,
            "n_scored": len(values),
            "n_failed": len(group) - len(values),
        }

    by_category = {
        f"{cat} {name}": mean_of([r for r in rows if r["locomo_category"] == cat])
        for cat, name in LOCOMO_CATEGORIES.items()
        if any(r["locomo_category"] == cat for r in rows)
    }
    return {"label": LOCOMO_QA_LABEL, "overall": mean_of(rows), "by_category": by_category}
