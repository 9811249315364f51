"""Retrieval measures: IR metrics (vectorised, trec_eval-compatible) and agent-memory metrics.

The names below load on first use, as in `memgauge.api`: a module that needs only the
conventions' defaults (`metrics.conventions`) or a measure's name does not load NumPy."""

from __future__ import annotations

from typing import TYPE_CHECKING

from memgauge._util.lazy import lazy_names

if TYPE_CHECKING:
    from memgauge.metrics.arrays import evaluate_arrays as evaluate_arrays
    from memgauge.metrics.conventions import conventions_text as conventions_text
    from memgauge.metrics.ir import CONVENTIONS as CONVENTIONS
    from memgauge.metrics.ir import MAX_EXP_GRADE as MAX_EXP_GRADE
    from memgauge.metrics.ir import Counts as Counts
    from memgauge.metrics.ir import Evaluation as Evaluation
    from memgauge.metrics.ir import MetricConfig as MetricConfig
    from memgauge.metrics.ir import evaluate as evaluate
    from memgauge.metrics.ir import evaluate_judged as evaluate_judged
    from memgauge.metrics.ir import evaluate_ranked as evaluate_ranked
    from memgauge.metrics.measures import MEASURE_NAMES as MEASURE_NAMES
    from memgauge.metrics.measures import Measure as Measure
    from memgauge.metrics.measures import is_measure as is_measure
    from memgauge.metrics.measures import parse_measure as parse_measure
    from memgauge.metrics.ranking import MAX_GRADE as MAX_GRADE
    from memgauge.metrics.ranking import Judged as Judged
    from memgauge.metrics.ranking import from_ranked as from_ranked
    from memgauge.metrics.ranking import from_run as from_run
    from memgauge.metrics.ranking import order_run as order_run
else:
    lazy_names(globals())
