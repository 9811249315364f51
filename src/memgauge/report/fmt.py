"""Formatting shared by every renderer: numbers, CIs, n/a with counts, significance marks.

One rule for all outputs: a value that could not be computed prints as `n/a` with the count it
would have been computed over, never as 0.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from memgauge.metrics.conventions import NO_RELEVANT_IF_UNSTATED, conventions_text

if TYPE_CHECKING:  # the terminal's tables format with this module: it loads no model
    from memgauge.aggregates.retrieval_result import (
        AgentMetric,
        MetricComparison,
        MetricSummary,
        RetrievalEvalResult,
        SystemResult,
    )
    from memgauge.data.records import RunSummary

__all__ = [
    "Mark",
    "agent_names",
    "category_marks",
    "conventions_lines",
    "fallbacks_text",
    "fmt_agent",
    "fmt_ci",
    "fmt_num",
    "fmt_p",
    "fmt_pct",
    "fmt_summary",
    "mark_of",
    "marks",
    "no_relevant_text",
    "ok_systems",
]


def fmt_num(v: float | None, digits: int = 3) -> str:
    """`0.612`, or `n/a`."""
    return "n/a" if v is None else f"{v:.{digits}f}"


def fallbacks_text(n: int | None) -> str:
    """` (3 fallbacks)` beside a number that counts opt-in stand-ins (`on_failure: neutral`);
    empty without."""
    return f" ({n} fallback{'' if n == 1 else 's'})" if n else ""


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


def fmt_summary(s: MetricSummary | None, with_ci: bool = True, ci_digits: int = 3) -> str:
    """`0.612 [0.553, 0.671]`; `n/a (0 scored)` when nothing was scored."""
    if s is None:
        return "-"
    if s.value is None:
        failed = f", {s.n_failed} failed" if s.n_failed else ""
        return f"n/a ({s.n_scored} scored{failed})"
    ci = fmt_ci(s.ci_low, s.ci_high, ci_digits) if with_ci else ""
    return f"{s.value:.3f} {ci}".rstrip()


_NO_RELEVANT_TEXT = {
    "zero": "a query with no relevant memory scores 0",
    "one": "a query with no relevant memory scores 1.0 where the measure is 0/0 (seed 002's Recall)",
    "skip": "queries with no relevant memory are skipped",
    "fail": "a query with no relevant memory is not scored and counts as failed",
}


def no_relevant_text(mode: str) -> str:
    """The `--no-relevant` convention a report states: `... scores 0 (--no-relevant zero)`."""
    return f"{_NO_RELEVANT_TEXT.get(mode, mode)} (--no-relevant {mode})"


def conventions_lines(summary: Mapping[str, Any] | RunSummary) -> list[str]:
    """The conventions of every IR number of a run, from its own settings: each retrieval
    evaluator's (`task recall / nDCG@10: relevant: grade >= 2, gain: exp, ...`) and each IR
    aggregate's. Shown once per task and evaluator, whatever the number of subjects."""
    if isinstance(summary, Mapping):
        rows = [
            (e["task"], e["evaluator"], e.get("conventions")) for e in summary.get("evaluators", [])
        ]
        details = [(a["task"], a.get("detail")) for a in summary.get("aggregates", [])]
    else:
        rows = [(e.task, e.evaluator, e.conventions) for e in summary.evaluators]
        details = [(a.task, a.detail) for a in summary.aggregates]
    lines: dict[str, None] = {}
    for task, evaluator, conventions in rows:
        if conventions:
            lines[f"task {task} / {evaluator}: {conventions}"] = None
    for task, detail in details:
        settings = (detail or {}).get("settings")
        if isinstance(settings, Mapping) and {"rel_threshold", "gain"} <= set(settings):
            text = conventions_text(
                int(settings["rel_threshold"]),
                str(settings["gain"]),
                no_relevant=str(settings.get("no_relevant", NO_RELEVANT_IF_UNSTATED)),
            )
            lines[f"task {task} / IR measures: {text}"] = None
    return list(lines)


def fmt_agent(a: AgentMetric | None) -> str:
    """`0.857 (n=14)`; `n/a (n=0)`."""
    if a is None:
        return "-"
    return f"{fmt_num(a.value)} (n={a.n})"


@dataclass(frozen=True)
class Mark:
    """How a candidate system compares with the baseline on one measure."""

    delta: float | None
    mark: str
    p_holm: float | None

    @property
    def arrow(self) -> str:
        """'▲' or '▼' for a significant change, '' otherwise."""
        if not self.mark or self.delta is None or self.delta == 0:
            return ""
        return "▲" if self.delta > 0 else "▼"


def marks(result: RetrievalEvalResult) -> dict[tuple[str, str], Mark]:
    """`(candidate, measure) -> Mark` from every comparison against the baseline."""
    out: dict[tuple[str, str], Mark] = {}
    for comp in result.comparisons:
        for mc in comp.metrics:
            out[(comp.candidate, mc.measure)] = mark_of(mc)
    return out


def category_marks(result: RetrievalEvalResult) -> dict[tuple[str, str, str], Mark]:
    """`(candidate, category, measure) -> Mark` from the per-category paired comparisons."""
    out: dict[tuple[str, str, str], Mark] = {}
    for comp in result.comparisons:
        for group, rows in comp.by_category.items():
            for mc in rows:
                out[(comp.candidate, group, mc.measure)] = mark_of(mc)
    return out


def mark_of(mc: MetricComparison) -> Mark:
    """The mark of one paired comparison."""
    return Mark(delta=mc.delta, mark=mc.mark, p_holm=mc.p_holm)


def ok_systems(result: RetrievalEvalResult) -> list[SystemResult]:
    """Systems that ran."""
    return [s for s in result.systems if s.status == "ok"]


def agent_names(result: RetrievalEvalResult) -> list[str]:
    """Agent-metric names in first-seen order across systems."""
    names: dict[str, None] = {}
    for s in ok_systems(result):
        names.update(dict.fromkeys(s.agent_metrics))
    return list(names)
