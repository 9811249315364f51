"""Retrieval measures: IR metrics (vectorised, trec_eval-compatible) and agent-memory metrics."""

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
