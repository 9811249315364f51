"""A suite's run-level numbers over time: one series per (subject, task, measure), oldest run
first, with the rolling baseline the gate compares the latest run against."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

from memgauge.data.records import RunRecord
from memgauge.track.gate import baseline_of, metric_key

__all__ = ["MetricSeries", "metric_series"]


@dataclass(frozen=True)
class MetricSeries:
    """One number across runs.

    Attributes:
        subject: the subject measured.
        task: the task.
        measure: the measure (an evaluator's mean, an IR metric, a rate).
        values: per run, oldest first; None where the run did not measure it (or scored n/a).
        counted: per run, whether a baseline counts it (False: it failed the gate and was not
            accepted); None: every run counts.
    """

    subject: str
    task: str
    measure: str
    values: list[float | None]
    counted: list[bool] | None = None
    #: per run, what its value is over (0 where the run did not measure it)
    n_scored: list[int] | None = None

    def baseline(self, window: int) -> float | None:
        """As the gate's: the mean over the last `window` runs before the latest that count
        (a failed gate does not), of those that measured it (None when none did)."""
        return baseline_of(self.baseline_values(window))

    def baseline_values(self, window: int) -> list[float]:
        """The values `baseline(window)` is the mean of."""
        counted = self.counted or [True] * len(self.values)
        past = [v for v, c in zip(self.values[:-1], counted[:-1], strict=True) if c][-window:]
        return [v for v in past if v is not None]

    @property
    def latest_n(self) -> int:
        """What the latest run's value is over."""
        return self.n_scored[-1] if self.n_scored else 0


def metric_series(runs: Sequence[RunRecord], excluded: Collection[str] = ()) -> list[MetricSeries]:
    """Every number any of `runs` (oldest first) measured, in the order they first appear;
    `excluded`: the ids of runs that failed the gate (not accepted), which no baseline counts."""
    per_run = [{metric_key(m): m for m in r.summary.measures()} if r.summary else {} for r in runs]
    counted = [r.run_id not in excluded for r in runs]
    keys = list(dict.fromkeys(key for measured in per_run for key in measured))
    out = []
    for key in keys:
        found = [measured.get(key) for measured in per_run]
        values = [m.value if m else None for m in found]
        out.append(MetricSeries(*key, values, counted, [m.n_scored if m else 0 for m in found]))
    return out
