"""Formatting shared by every renderer: numbers, CIs, p-values, the conventions of IR numbers.

One rule for all outputs: a value that could not be computed prints as `n/a` with the count it
would have been computed over, never as 0.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from memgauge._util.listing import counted

if TYPE_CHECKING:  # the terminal's tables format with this module: it loads no model
    from memgauge.data.records import MeasureValue, RunSummary, TargetCheck
    from memgauge.track.history import MetricSeries

__all__ = [
    "conventions_lines",
    "fallbacks_text",
    "fmt_baseline",
    "fmt_ci",
    "fmt_num",
    "fmt_p",
    "fmt_pct",
    "fmt_scored",
    "fmt_target_value",
    "na_text",
    "series_cells",
]


def fmt_num(v: float | None, digits: int = 3) -> str:
    """`0.612`, or `n/a`."""
    return "n/a" if v is None else f"{v:.{digits}f}"


def na_text(n_scored: int, n_failed: int = 0) -> str:
    """A value that could not be computed, with its count: `n/a (0 scored)`,
    `n/a (3 scored, 2 failed)`."""
    return f"n/a ({n_scored} scored{f', {n_failed} failed' if n_failed else ''})"


def fmt_target_value(t: TargetCheck, measures: Iterable[MeasureValue]) -> str:
    """A target's measured value as its line prints it: `0.4213`, or an n/a with the count of
    its measure among the run's `measures` (`n/a (0 scored, 2 failed)`)."""
    if t.value is not None:
        return f"{t.value:.4g}"
    key = (t.subject, t.task, t.measure)
    m = next((m for m in measures if (m.subject, m.task, m.name) == key), None)
    return "n/a" if m is None else na_text(m.n_scored, m.n_failed)


def fmt_scored(v: float | None, n_scored: int, digits: int = 3) -> str:
    """A run's number: `0.612`, or an n/a with its count (`n/a (0 scored)`)."""
    return na_text(n_scored) if v is None else fmt_num(v, digits)


def fmt_baseline(v: float | None, n_runs: int) -> str:
    """A rolling baseline: `0.612`, or an n/a with the earlier runs it is the mean of
    (`n/a (0 earlier runs)`: none measured it)."""
    return f"n/a ({counted(n_runs, 'earlier run')})" if v is None else fmt_num(v)


def series_cells(m: MetricSeries, window: int) -> tuple[str, str]:
    """A measure's latest value and its rolling baseline, as `memgauge history` and the
    viewer's trend print them: each an n/a with its count where there is none."""
    return (
        fmt_scored(m.values[-1], m.latest_n),
        fmt_baseline(m.baseline(window), len(m.baseline_values(window))),
    )


def fallbacks_text(n: int | None) -> str:
    """` (3 fallbacks)` beside a number that counts opt-in stand-ins (`on_failure: neutral`);
    empty without."""
    return f" ({n} fallback{'' if n == 1 else 's'})" if n else ""


def fmt_signed(v: float | None, digits: int = 3) -> str:
    """A difference with its sign: `+0.012`, `-0.040`, or n/a; one that rounds to zero is
    `+0.000`, never `-0.000` (which reads as a loss)."""
    return "n/a" if v is None else f"{v:+z.{digits}f}"


def fmt_pct(x: float | None) -> str:
    """`12.5%`, or n/a."""
    return "n/a" if x is None else f"{100 * x:.1f}%"


def fmt_p(p: float | None) -> str:
    """A p-value: `<0.001`, `0.034`, or `n/a`."""
    if p is None:
        return "n/a"
    return "<0.001" if p < 0.001 else f"{p:.3f}"


def fmt_ci(low: float | None, high: float | None, digits: int = 3) -> str:
    """`[0.553, 0.671]`, or empty when either bound is missing."""
    if low is None or high is None:
        return ""
    return f"[{low:.{digits}f}, {high:.{digits}f}]"


def conventions_lines(summary: Mapping[str, Any] | RunSummary) -> list[str]:
    """The conventions of every IR number of a run, from its own settings: each retrieval
    evaluator's (`task recall / nDCG@10: relevant: grade >= 2, gain: exp, ...`) and each IR
    aggregate's. Shown once per task and evaluator, whatever the number of subjects."""
    # loaded here: the terminal's tables format with this module and load no model
    from memgauge.aggregates.ir_facts import IrFacts
    from memgauge.data.records import RunSummary

    if isinstance(summary, Mapping):
        summary = RunSummary.model_validate(summary)
    lines: dict[str, None] = {}
    for e in summary.evaluators:
        if e.conventions:
            lines[f"task {e.task} / {e.evaluator}: {e.conventions}"] = None
    for agg in summary.aggregates:
        facts = agg.facts_as(IrFacts) if agg.aggregate == "ir" else None
        if facts is not None:
            lines[f"task {agg.task} / IR measures: {facts.settings.conventions}"] = None
    return list(lines)
