"""Pages across runs: two runs compared (paired deltas, changed verdicts, what changed in the
subjects' specs), a suite's trends with the gate's rolling baseline, A/B tests and shadow runs.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from markupsafe import Markup

from memgauge.data.records import RunRecord
from memgauge.online.ab_report import ab_report, sprt_path
from memgauge.online.shadow import summarize_shadow
from memgauge.report.fmt import series_cells
from memgauge.report.shadow import shadow_cells
from memgauge.runs.run_comparison import (
    MAX_CHANGED,
    ChangedVerdict,
    Comparison,
    compared,
)
from memgauge.runs.suite_compare import Measures, reported_means, unpaired_notes
from memgauge.store.run_pages import VerdictPair
from memgauge.track.gate import GateConfig, evaluate_gate
from memgauge.track.history import metric_series
from memgauge.track.regressions import kinds_of
from memgauge.view import charts
from memgauge.view.compared import compared_measures

__all__ = [
    "MAX_CHANGED",
    "ChangedVerdict",
    "SpecChange",
    "ab_page",
    "compare_page",
    "comparison_on_request",
    "seed_of",
    "shadow_page",
    "spec_changes",
    "trend_page",
]


@dataclass(frozen=True)
class SpecChange:
    """One setting that differs between two runs' specs: `a -> b`, or a text diff."""

    where: str
    a: str | None
    b: str | None
    diff: list[str]


def _paths(value: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(value, Mapping) and value:
        out: dict[str, Any] = {}
        for k, v in value.items():
            out.update(_paths(v, f"{prefix}.{k}" if prefix else str(k)))
        return out
    return {prefix: value}


def _text(value: Any) -> str | None:
    if value is None:
        return None
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True, default=str)


def spec_changes(a: Mapping[str, Any], b: Mapping[str, Any]) -> list[SpecChange]:
    """Every leaf setting that differs between spec trees `a` and `b` (subject specs, task
    specs), with a line diff where either side is a text of several lines or a long one."""
    pa, pb = _paths(a), _paths(b)
    out = []
    for key in sorted(pa.keys() | pb.keys()):
        va, vb = pa.get(key), pb.get(key)
        if va == vb:
            continue
        ta, tb = _text(va), _text(vb)
        diff: list[str] = []
        if any(t is not None and ("\n" in t or len(t) > 80) for t in (ta, tb)):
            diff = list(
                difflib.unified_diff(
                    (ta or "").splitlines(), (tb or "").splitlines(), "A", "B", lineterm="", n=2
                )
            )
        out.append(SpecChange(key, ta, tb, diff))
    return out


def seed_of(run: RunRecord) -> int:
    """The seed run `run`'s comparisons draw with (its own, as on the command line)."""
    return int(run.settings.get("seed", 0))


def comparison_on_request(
    measures_a: Measures, measures_b: Measures, pairs: Sequence[VerdictPair], seed: int
) -> Comparison:
    """The comparison of two runs from their values per measure (`RunReader.measure_values`)
    and their paired verdicts, at least every pair that differs (`RunReader.verdict_pairs`):
    what a run's recording keeps (`run_comparison.payload`), its statistics kept per process
    (`view.compared`)."""
    return compared(compared_measures(measures_a, measures_b, seed=seed), pairs)


def compare_page(
    run_a: RunRecord,
    run_b: RunRecord,
    comparison: Comparison,
    subjects_a: Mapping[str, Any],
    subjects_b: Mapping[str, Any],
) -> dict[str, Any]:
    """Run B against run A: per (subject, task, evaluator) the paired delta with its CI, the
    randomization test's p and Holm's mark; the verdicts that changed (`comparison`: kept
    when B was recorded, or `comparison_on_request`); the spec changes."""
    tasks_a = {t.get("name"): t for t in run_a.suite.get("tasks", [])}
    tasks_b = {t.get("name"): t for t in run_b.suite.get("tasks", [])}
    # each run's mean as it reports it, where a row pairs every item that run scored
    rows = reported_means(comparison.rows, run_a.summary, run_b.summary)
    return {
        "a": run_a,
        "b": run_b,
        "rows": rows,
        "unpaired": unpaired_notes(rows),  # why a row has no delta, as `runs compare` says
        "changed": comparison.changed,
        "n_changed": comparison.n_changed,
        "subject_changes": spec_changes(subjects_a, subjects_b),
        "task_changes": spec_changes(tasks_a, tasks_b),
    }


def _key(subject: str, task: str, name: str) -> str:
    return f"{subject} / {task} / {name}"


def trend_page(
    runs: Sequence[RunRecord], selected: str | None, excluded: Collection[str] = ()
) -> dict[str, Any]:
    """A suite's completed runs, oldest first: per measure its values with CIs and, at each
    run, the gate's rolling baseline (the mean of the window of runs before it, those in
    `excluded`, failed gates, left out); the chart of the selected measure (default: the
    first)."""
    cfg = GateConfig()
    series: dict[str, dict[str, list[Any]]] = {}
    for i, run in enumerate(runs):
        result = evaluate_gate(run, runs[:i], cfg, kinds_of(run), excluded)
        for c in result.checks:
            key = _key(c.subject, c.task, c.evaluator)
            s = series.setdefault(
                key,
                {
                    "value": [None] * len(runs),
                    "low": [None] * len(runs),
                    "high": [None] * len(runs),
                    "baseline": [None] * len(runs),
                },
            )
            s["value"][i] = c.current
            s["low"][i] = c.ci[0] if c.ci else None
            s["high"][i] = c.ci[1] if c.ci else None
            s["baseline"][i] = c.baseline
    keys = sorted(series)
    chosen = selected if selected in series else (keys[0] if keys else None)
    # each run by its time to the second, and runs of one second by their ids' ends too
    times = [r.created_at[:19].replace("T", " ") for r in runs]
    labels = [
        f"{t} {r.run_id[-8:]}" if times.count(t) > 1 else t
        for t, r in zip(times, runs, strict=True)
    ]
    chart = Markup("")
    if chosen is not None:
        s = series[chosen]
        chart = charts.line_chart(
            chosen,
            labels,
            [
                charts.Line("value (band: 95% CI)", s["value"], s["low"], s["high"]),
                charts.Line(
                    f"gate baseline (mean of the previous {cfg.window} runs)",
                    s["baseline"],
                    dashed=True,
                    color=charts.PALETTE[1],
                ),
            ],
        )
    # the latest value and baseline as `memgauge history` prints them (an n/a with its count)
    cells = {
        _key(m.subject, m.task, m.measure): series_cells(m, cfg.window)
        for m in metric_series(runs, excluded)
    }
    latest = {k: cells[k][0] for k in keys}
    baselines = {k: cells[k][1] for k in keys}
    return {
        "runs": runs,
        "measures": keys,
        "selected": chosen,
        "chart": chart,
        "series": series.get(chosen or "", {}),
        "latest": latest,
        "baselines": baselines,
        "window": cfg.window,
    }


def ab_page(test: Mapping[str, Any], pairs: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """One A/B test: its report (decision, CI, P(T>C)) and the SPRT's path against its bounds."""
    report = ab_report(test, pairs)
    path = sprt_path(test["config"], pairs)
    if all(v is None for v in path):
        # nothing to draw before the SPRT starts: the report's text says how far it is
        return {"report": report, "chart": None, "n_pairs": len(pairs)}
    chart = charts.line_chart(
        "SPRT log likelihood ratio after each pair",
        [str(i + 1) for i in range(len(path))],
        [charts.Line("log LR", path)],
        rules=[
            (f"treatment better ({report['sprt']['upper']:.2f})", report["sprt"]["upper"]),
            (f"no difference ({report['sprt']['lower']:.2f})", report["sprt"]["lower"]),
        ],
    )
    return {"report": report, "chart": chart, "n_pairs": len(pairs)}


def shadow_page(
    name: str, rows: Sequence[Mapping[str, Any]], errors: int, dropped: int
) -> dict[str, Any]:
    """One shadow experiment summed up (classes, rank correlation, overlap, top-1 changes,
    latencies) in `memgauge shadow summary`'s rows, with its latest comparisons."""
    summary = {**summarize_shadow(rows), "n_errors": errors, "n_dropped": dropped}
    return {
        "name": name,
        "summary": summary,
        "table": shadow_cells(summary),
        "errors": errors,
        "rows": list(rows)[-50:],
    }
