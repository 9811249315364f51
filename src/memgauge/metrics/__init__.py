"""Retrieval measures: IR metrics (vectorised, trec_eval-compatible) and agent-memory metrics.

The names below load on first use, as in `memgauge.api`: a module that needs only the
conventions' defaults (`metrics.conventions`) or a measure's name does not load NumPy."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from memgauge.metrics.arrays import evaluate_arrays
    from memgauge.metrics.conventions import conventions_text
    from memgauge.metrics.ir import (
        CONVENTIONS,
        MAX_EXP_GRADE,
        Counts,
        Evaluation,
        MetricConfig,
        evaluate,
        evaluate_judged,
        evaluate_ranked,
    )
    from memgauge.metrics.measures import MEASURE_NAMES, Measure, parse_measure
    from memgauge.metrics.ranking import MAX_GRADE, Judged, from_ranked, from_run, order_run

__all__ = [
    "CONVENTIONS",
    "MAX_EXP_GRADE",
    "MAX_GRADE",
    "MEASURE_NAMES",
    "Counts",
    "Evaluation",
    "Judged",
    "Measure",
    "MetricConfig",
    "conventions_text",
    "evaluate",
    "evaluate_arrays",
    "evaluate_judged",
    "evaluate_ranked",
    "from_ranked",
    "from_run",
    "order_run",
    "parse_measure",
]

#: name -> the module that defines it
_LAZY: dict[str, str] = {
    "evaluate_arrays": "memgauge.metrics.arrays",
    "conventions_text": "memgauge.metrics.conventions",
    "CONVENTIONS": "memgauge.metrics.ir",
    "MAX_EXP_GRADE": "memgauge.metrics.ir",
    "Counts": "memgauge.metrics.ir",
    "Evaluation": "memgauge.metrics.ir",
    "MetricConfig": "memgauge.metrics.ir",
    "evaluate": "memgauge.metrics.ir",
    "evaluate_judged": "memgauge.metrics.ir",
    "evaluate_ranked": "memgauge.metrics.ir",
    "MEASURE_NAMES": "memgauge.metrics.measures",
    "Measure": "memgauge.metrics.measures",
    "parse_measure": "memgauge.metrics.measures",
    "MAX_GRADE": "memgauge.metrics.ranking",
    "Judged": "memgauge.metrics.ranking",
    "from_ranked": "memgauge.metrics.ranking",
    "from_run": "memgauge.metrics.ranking",
    "order_run": "memgauge.metrics.ranking",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'memgauge.metrics' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
