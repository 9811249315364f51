"""The summary every task gets: item counts, the weighted combined score, and per evaluator its
mean with a 95% bootstrap CI, `n_scored`, `n_failed` and the pass rate.

Always from the stored records, never from counters kept while running: a resumed run and an
uninterrupted one with the same records get the same numbers (records are sorted; bootstrap CIs
use the suite's seed). `n_failed` of an evaluator counts failed items plus verdicts it could not
give; a verdict skipped by a convention the user chose (`no_relevant: skip`) is neither scored
nor failed, as the ir aggregate counts it. A mean with no scored item is None (n/a), never 0.

A judge that failed and was allowed an opt-in stand-in value (seed 000's neutral 0.5) gives the
number the user opted into: the evaluator's `mean` counts the stand-ins, `n_scored` includes
them and `n_fallback` says how many they are (no CI: a stand-in is not a draw from the judge's
spread); `mean_without_fallback` is the mean of its real verdicts, shown apart. The gate, the
targets and every report read the same `mean`, so one evaluator has one number. The item's
combined score uses the stand-in too: the task's `score` then says how many of its items rest
on one (`n_fallback`). A deliberation panel's evaluator also gets `agreement`:
percent agreement and Fleiss' kappa of the judges' final pass/fail votes.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from operator import attrgetter
from typing import Any

import numpy as np

from memgauge._util.numbers import fmean
from memgauge.data.records import (
    EvaluatorSummary,
    ItemRecord,
    MeasureValue,
    ScoreRecord,
    TaskSummary,
)
from memgauge.stats import bootstrap_ci
from memgauge.stats.agreement import fleiss_kappa, percent_agreement
from memgauge.stats.repeats import cluster_bootstrap_ci

__all__ = ["combined_over_repeats", "mean_ci", "summarize_items"]


def mean_ci(values: list[float], seed: int) -> dict[str, Any]:
    """Mean, percentile bootstrap 95% CI and count; all None (n/a) when there is no value."""
    if not values:
        return {"mean": None, "ci_low": None, "ci_high": None, "n_scored": 0}
    ci = bootstrap_ci(np.asarray(values, dtype=np.float64), seed=seed)
    return {"mean": ci.mean, "ci_low": ci.low, "ci_high": ci.high, "n_scored": len(values)}


def combined_over_repeats(rows: Sequence[ItemRecord], seed: int) -> dict[str, Any]:
    """A subject's combined score on a task asked N times (`repeat: N`), as its evaluators'
    rows show theirs (the repeats aggregate): the mean over items of the mean of their scored
    repeats, with the CI that resamples items with all their repeats; counted in items, failed
    when no repeat was scored (unless every one was skipped by choice)."""
    by_item: dict[str, list[ItemRecord]] = {}
    for r in rows:
        by_item.setdefault(r.source_id, []).append(r)
    clusters = [
        [math.nan if r.score is None else float(r.score) for r in reps] for reps in by_item.values()
    ]
    ci = cluster_bootstrap_ci(clusters, seed=seed)
    skipped = sum(
        1 for reps in by_item.values() if all(r.score is None and _skipped_only(r) for r in reps)
    )
    return {
        "mean": ci.mean,
        "ci_low": ci.low,
        "ci_high": ci.high,
        "n_scored": ci.n,
        "n_failed": len(by_item) - ci.n - skipped,
    }


def shown_ci(measured: MeasureValue | None, values: list[float]) -> dict[str, Any] | None:
    """`mean_ci(values)` as the run's summary shows it when an aggregate measures the same
    (`runs.summary._align_evaluators`: same count, same mean, the aggregate's value and
    interval); None when the evaluator's own interval is shown (it must then be bootstrapped)."""
    if measured is None or measured.value is None or len(values) < 2:
        return None
    arr = np.asarray(values, dtype=np.float64)
    if np.isnan(arr).any():
        return None
    mean = fmean(arr)  # what the bootstrap reports as the mean
    if not measured.is_mean(mean, len(values)):
        return None
    return {
        "mean": measured.value,  # the same number to the last bit (`_align_evaluators`)
        "ci_low": measured.ci_low,
        "ci_high": measured.ci_high,
        "n_scored": len(values),
    }


def summarize_items(
    items: Sequence[ItemRecord],
    evaluators: Mapping[str, Sequence[str]],
    *,
    seed: int = 0,
    measured: Mapping[tuple[str, str, str], MeasureValue] | None = None,
) -> tuple[dict[str, int], list[TaskSummary], list[EvaluatorSummary]]:
    """Counts by status, per (subject, task) summaries and per evaluator summaries.

    Args:
        items: every item record of the run.
        evaluators: task -> its evaluator labels, in suite order (an evaluator that never
            scored still gets a row).
        seed: seed of the bootstrap.
        measured: the aggregates' values by (subject, task, measure): an evaluator that one
            of them measures alike shows its interval (`shown_ci`), not a bootstrap of its
            own (seven bootstraps of 1,536 values on LoCoMo, 0.07 CPU-s).
    """
    by_pair: dict[tuple[str, str], list[ItemRecord]] = {}
    for it in sorted(items, key=attrgetter("subject", "task", "item_id")):
        by_pair.setdefault((it.subject, it.task), []).append(it)
    counts = {"completed": 0, "failed": 0, "queued": 0}
    tasks_out: list[TaskSummary] = []
    evals_out: list[EvaluatorSummary] = []
    for (subject, task), rows in by_pair.items():
        status = [r.status for r in rows]
        n_completed, n_failed = status.count("completed"), status.count("failed")
        n_queued = len(rows) - n_completed - n_failed
        counts["completed"] += n_completed
        counts["failed"] += n_failed
        counts["queued"] += n_queued
        combined = [float(r.score) for r in rows if r.score is not None]
        n_skipped = sum(1 for r in rows if r.score is None and _skipped_only(r))
        tasks_out.append(
            TaskSummary(
                subject=subject,
                task=task,
                n_items=len(rows),
                n_completed=n_completed,
                n_failed=n_failed,
                n_queued=n_queued,
                score={
                    **mean_ci(combined, seed),
                    "n_failed": n_failed + n_completed - len(combined) - n_skipped,
                },
            )
        )
        n_stand_in = sum(1 for r in rows if r.fallback)
        if n_stand_in:  # only then: runs without one keep their summary's shape
            tasks_out[-1].score["n_fallback"] = n_stand_in
        of_label = _verdicts(rows)
        for label in evaluators.get(task, ()):
            values, stand_in, judged, votes, n_unscored = _read(of_label.get(label, []))
            ci = None
            if not stand_in:
                ci = shown_ci((measured or {}).get((subject, task, label)), values)
            ci = ci or mean_ci(values, seed)
            if stand_in:
                # the number the user opted into (on_failure: neutral), counted and flagged
                ci = {
                    "mean": fmean(values + stand_in),
                    "ci_low": None,
                    "ci_high": None,
                    "n_scored": len(values) + len(stand_in),
                }
            entry = EvaluatorSummary(
                subject=subject,
                task=task,
                evaluator=label,
                **ci,
                n_failed=n_failed + n_unscored,
                n_passed=sum(judged),
                pass_rate=sum(judged) / len(judged) if judged else None,
            )
            if stand_in:
                entry.n_fallback = len(stand_in)
                entry.mean_with_fallback = entry.mean
                entry.mean_without_fallback = fmean(values) if values else None
            if votes:
                entry.agreement = _agreement(votes)
            evals_out.append(entry)
    return counts, tasks_out, evals_out


def _verdicts(rows: Sequence[ItemRecord]) -> dict[str, list[ScoreRecord]]:
    """Each evaluator's verdicts over `rows`, in their order, an item's first of a label as
    `ItemRecord.verdict` gives it: one pass, not a scan of every item's verdicts per label
    (LoCoMo's 1,536 items of 7 verdicts, 10,752 scans)."""
    out: dict[str, list[ScoreRecord]] = {}
    for r in rows:
        # reversed: an evaluator given twice keeps its first verdict, as `verdict` finds it
        for label, v in {v.evaluator: v for v in reversed(r.scores)}.items():
            out.setdefault(label, []).append(v)
    return out


def _read(
    got: Sequence[ScoreRecord],
) -> tuple[list[float], list[float], list[bool], list[list[bool]], int]:
    """One evaluator's verdicts, in one pass (LoCoMo: 1,536 for each of 7): its real values,
    its opt-in stand-ins, its pass/fail calls (stand-ins left out), the panels' votes, and how
    many it could not give (an error, or no value that is not a skip the user chose)."""
    values: list[float] = []
    stand_in: list[float] = []
    judged: list[bool] = []
    votes: list[list[bool]] = []
    n_unscored = 0
    for v in got:
        value, fallback, detail = v.value, v.fallback, v.detail
        if value is not None and not v.error:
            (stand_in if fallback else values).append(float(value))
        if v.passed is not None and not fallback:
            judged.append(bool(v.passed))
        if v.error or _unscored(v):
            n_unscored += 1
        if detail and (x := _votes(detail.get("panel_passed"))):
            votes.append(x)
    return values, stand_in, judged, votes, n_unscored


def _unscored(v: ScoreRecord) -> bool:
    """A verdict with no value that is not a skip the user chose (`no_relevant: skip`)."""
    return v.value is None and not v.detail.get("skipped")


def _skipped_only(r: ItemRecord) -> bool:
    """A completed item with no combined score only because a verdict was skipped by choice:
    not scored, and not failed either."""
    return (
        r.status == "completed"
        and any(v.detail.get("skipped") for v in r.scores)
        and not any(v.error or _unscored(v) for v in r.scores)
    )


def _votes(raw: Any) -> list[bool]:
    if not raw:
        return []
    return [bool(x) for x in raw]


def _agreement(votes: list[list[bool]]) -> dict[str, Any]:
    same = [v for v in votes if len(v) == len(votes[0])]
    return {
        "n_items": len(votes),
        "n_judges": len(votes[0]),
        "percent_agreement": percent_agreement(votes),
        "fleiss_kappa": fleiss_kappa(same) if len(same) == len(votes) else None,
    }
