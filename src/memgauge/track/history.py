"""A suite's run-level numbers over time: one series per (subject, task, measure), oldest run
first, with the rolling baseline the gate compares the latest run against."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from memgauge.data.records import RunRecord
from memgauge.track.gate import metric_key

__all__ = ["MetricSeries", "metric_series"]


@dataclass(frozen=True)
class MetricSeries:
    """One number across runs.

    Attributes:
        subject: the subject measured.
        task: the task.
        measure: the measure (an evaluator's mean, an IR metric, a rate).
        values: per run, oldest first; None where the run did not measure it (or scored n/a).
    """

    subject: str
    task: str
    measure: str
    values: list[float | None]

    def baseline(self, window: int) -> float | None:
        """As the gate's: the mean over the last `window` runs before the latest, of those
        that measured it (None when none did)."""
        prior = [v for v in self.values[:-1][-window:] if v is not None]
        return sum(prior) / len(prior) if prior else None


def metric_series(runs: Sequence[RunRecord]) -> list[MetricSeries]:
    """Every number any of `runs` (oldest first) measured, in the order they first appear."""
    per_run = [
        {metric_key(m): m.value for m in r.summary.measures()} if r.summary else {} for r in runs
    ]
    keys = list(dict.fromkeys(key for measured in per_run for key in measured))
    return [MetricSeries(*key, [measured.get(key) for measured in per_run]) for key in keys]
