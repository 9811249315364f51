"""A run's summary, always recomputed from its stored item records: counts, per evaluator means,
every task's aggregates, and the targets beside them, decided by the one rule.

Targets come from three places: the seeds' targets written beside their aggregates (enforced
unless `seed_targets=False`, i.e. `--no-targets`; seed 002's agent-memory targets are only
shown), a suite task's `targets:`, and `--fail-under` (checked against the names the run has: a
typo is a usage error).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from memgauge.aggregates import Target
from memgauge.aggregates.mean import combined_over_repeats, summarize_items
from memgauge.aggregates.targets import By, Requirement, check_targets, parse_target
from memgauge.data.records import AggregateResult, ItemRecord, RunSummary
from memgauge.metrics.conventions import conventions_text
from memgauge.runs.plan import PlannedTask
from memgauge.runs.suite import Suite

__all__ = ["requirements_of", "show_over_repeats", "subjects_of", "summarize_run"]


def subjects_of(task: PlannedTask, suite: Suite) -> list[str]:
    """The subjects that run `task`, in suite order."""
    return list(task.spec.subjects or suite.subjects)


def requirements_of(
    plan: Sequence[PlannedTask], suite: Suite, *, seed_targets: bool = True
) -> list[Requirement]:
    """The targets a run is held to: each aggregate's own and each task's `targets:`."""
    out: list[Requirement] = []
    for task in plan:
        view = task.view(subjects_of(task, suite), suite.seed)
        for agg in task.aggregates:
            for t in agg.targets(view):
                enforced = t.enforced and seed_targets
                target = Target(t.measure, t.op, t.value, t.source, enforced)
                out.append(Requirement(t.measure, target, task=task.spec.name))
        for name, raw in (task.spec.targets or {}).items():
            where = f"tasks.{task.spec.name}.targets.{name}"
            op, value = parse_target(raw, where=where, measure=name)
            target = Target(name, op, value, f"suite task {task.spec.name!r}")
            out.append(Requirement(name, target, task=task.spec.name))
    return out


def summarize_run(
    items: Sequence[ItemRecord],
    plan: Sequence[PlannedTask],
    suite: Suite,
    *,
    fail_under: Iterable[Requirement] = (),
    by: By = "point",
    seed_targets: bool = True,
    setup_seconds: Mapping[tuple[str, str], float] | None = None,
    llm_usage: Mapping[str, Any] | None = None,
) -> RunSummary:
    """The summary of a run whose records are `items`."""
    labels = {t.spec.name: [label for label, _e, _w in t.evaluators] for t in plan}
    # a task asked N times: its repeat-aware aggregates are given every repeat, the others
    # (and the evaluators' rows) the first, which is what a run without repeats records
    every: dict[str, dict[str, list[ItemRecord]]] = {}
    by_task: dict[str, dict[str, list[ItemRecord]]] = {}
    for it in sorted(items, key=lambda r: (r.task, r.subject, r.seq)):
        every.setdefault(it.task, {}).setdefault(it.subject, []).append(it)
        if it.repeat == 0:
            by_task.setdefault(it.task, {}).setdefault(it.subject, []).append(it)
    first = [it for it in items if it.repeat == 0]
    aggregates = []
    for task in plan:
        subjects = subjects_of(task, suite)
        view = task.view(
            subjects,
            suite.seed,
            setup_seconds={s: (setup_seconds or {}).get((s, task.spec.name)) for s in subjects},
            specs={s: suite.subjects.get(s, {}) for s in subjects},
        )
        done: list[AggregateResult] = []
        for agg in task.aggregates:
            given = every if getattr(agg, "repeat_aware", False) else by_task
            task_items = given.get(task.spec.name, {})
            # an aggregate that summarizes the others (the ranking of systems) reads their
            # results, so one number has one value in every table
            after = getattr(agg, "after", None)
            done.append(
                after(view, task_items, done) if callable(after) else agg.compute(view, task_items)
            )
        aggregates += done
    # the aggregates first: an evaluator row that shows an aggregate's interval (see
    # `_align_evaluators`) need not bootstrap its own
    measured = {(m.subject, m.task, m.name): m for agg in aggregates for m in agg.measures}
    counts, tasks, evaluators = summarize_items(first, labels, seed=suite.seed, measured=measured)
    if len(first) < len(items):
        counts = Counter(it.status for it in items)  # every repeat ran, and counts
    summary = RunSummary(
        n_items=sum(counts.values()),
        n_completed=counts["completed"],
        n_failed=counts["failed"],
        n_unscored=sum(1 for it in items if it.unscored),
        n_queued=counts["queued"],
        failure_rate=counts["failed"] / sum(counts.values()) if sum(counts.values()) else None,
        tasks=tasks,
        evaluators=evaluators,
        aggregates=aggregates,
        llm_usage=dict(llm_usage or {}),
    )
    _align_evaluators(summary)
    show_over_repeats(summary, summary.aggregates, every, suite.seed)
    _state_conventions(summary, plan)
    measures = summary.measures()
    summary.targets = check_targets(
        measures, requirements_of(plan, suite, seed_targets=seed_targets), by=by
    )
    summary.targets += check_targets(measures, fail_under, by=by)
    return summary


def _state_conventions(summary: RunSummary, plan: Sequence[PlannedTask]) -> None:
    """Each retrieval evaluator's conventions (threshold, gain, queries with nothing relevant)
    beside its rows, so a suite's table never shows an IR number without them."""
    found: dict[tuple[str, str], str] = {}
    for task in plan:
        for label, evaluator, _weight in task.evaluators:
            threshold, gain = (
                getattr(evaluator, "rel_threshold", None),
                getattr(evaluator, "gain", None),
            )
            if isinstance(threshold, int) and isinstance(gain, str):
                no_relevant = getattr(evaluator, "no_relevant", None)
                measure = getattr(evaluator, "measure", None)
                found[(task.spec.name, label)] = conventions_text(
                    threshold,
                    gain,
                    no_relevant=no_relevant if isinstance(no_relevant, str) else None,
                    measures=[measure] if isinstance(measure, str) else (),
                )
    for e in summary.evaluators:
        e.conventions = found.get((e.task, e.evaluator))


def show_over_repeats(
    summary: RunSummary,
    aggregates: Sequence[AggregateResult],
    every: Mapping[str, Mapping[str, Sequence[ItemRecord]]],
    seed: int,
) -> None:
    """An evaluator of a task asked N times shows its mean over every repeat with the CI that
    resamples items (the repeats aggregate's measure of its name, in `aggregates`), so that the
    evaluator's row, the gate and the targets read one number; and the task's combined score
    beside it is over every repeat too (`every`: task -> subject -> its item-repeats). The
    finished run's summary and the interim one of a run still going (`api.interim_summary`)
    both show their rows by this rule."""
    found = {
        (m.subject, m.task, m.name): m
        for agg in aggregates
        if agg.aggregate == "repeats"
        for m in agg.measures
    }
    for e in summary.evaluators:
        m = found.get((e.subject, e.task, e.evaluator))
        if m is not None and not e.n_fallback:
            e.mean, e.ci_low, e.ci_high = m.value, m.ci_low, m.ci_high
            # items, not item-repeats: scored when a repeat was, failed when none was
            e.n_scored, e.n_failed = m.n_scored, m.n_failed
            rate = found.get((e.subject, e.task, f"{e.evaluator}.pass@1"))
            if rate is not None and e.pass_rate is not None:
                e.pass_rate = rate.value
    for t in summary.tasks:
        rows = every.get(t.task, {}).get(t.subject, [])
        if any(r.repeat for r in rows):
            t.score = {**t.score, **combined_over_repeats(rows, seed)}


def _align_evaluators(summary: RunSummary) -> None:
    """An evaluator whose label an aggregate also measures (a retrieval evaluator `nDCG@10`
    beside the IR aggregate) shows the aggregate's value and CI, so that one number has one
    value and one interval: the row's own mean (its items' scores, summed in item-id order)
    can differ from the aggregate's in the last bit, and then print differently (0.3375 is
    0.338 in `evaluate`'s table, 0.33749999999999997 would be 0.337 in `runs show`'s)."""
    found = {(m.subject, m.task, m.name): m for agg in summary.aggregates for m in agg.measures}
    for e in summary.evaluators:
        m = found.get((e.subject, e.task, e.evaluator))
        if m is not None and m.is_mean(e.mean, e.n_scored):
            e.mean, e.ci_low, e.ci_high = m.value, m.ci_low, m.ci_high
