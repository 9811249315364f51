"""Several systems compared with significance tests, for a paper's table: TREC run files
against one qrels file (`memgauge metrics QRELS RUN RUN ...`), or suite runs in the store
(`memgauge runs compare`). The tests, pairs and corrections are `stats.compare_systems`'."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from memgauge.api._measures import score_trec_run
from memgauge.data.records import RunSummary
from memgauge.errors import UsageError, check_path
from memgauge.metrics import Measure, MetricConfig
from memgauge.metrics.ir import Evaluation
from memgauge.runs.suite_compare import compare_suite_systems, system_measures
from memgauge.stats import SystemsComparison, compare_systems
from memgauge.store.suite_runs import SuiteRunStore

__all__ = ["compare_stored_runs", "compare_trec_runs", "run_names"]


def run_names(paths: Sequence[Path]) -> list[str]:
    """Each run file's name, or the path as given where two files share a name."""
    names = [p.name for p in paths]
    return [str(p) if names.count(p.name) > 1 else p.name for p in paths]


def _aligned(evaluations: Sequence[Evaluation], measure: str) -> np.ndarray:
    """A (runs, queries) matrix of `measure` over the union of the runs' query ids (in the
    order first met), NaN where a run has no value for a query."""
    ids: dict[str, int] = {}
    for ev in evaluations:
        for q in ev.query_ids:
            ids.setdefault(q, len(ids))
    out = np.full((len(evaluations), len(ids)), np.nan)
    for row, ev in enumerate(evaluations):
        cols = np.fromiter((ids[q] for q in ev.query_ids), dtype=np.int64, count=len(ev.query_ids))
        out[row, cols] = ev.per_query[measure]
    return out


def compare_trec_runs(
    qrels: str | Path,
    runs: Sequence[str | Path],
    measures: Sequence[Measure],
    config: MetricConfig,
    *,
    depth: int | None = None,
    **options: Any,
) -> tuple[list[Evaluation], SystemsComparison]:
    """Score each run in `runs` against `qrels` and compare them query by query (queries pair
    by id); `options` go to `stats.compare_systems` (test, correction, family, pairing, alpha,
    seed, n_permutations); `depth` keeps each query's top N documents (trec_eval's -M). The
    systems are named by `run_names`."""
    check_path("qrels", qrels)
    if isinstance(runs, str | os.PathLike) or not isinstance(runs, Sequence):
        raise TypeError(f"runs takes a list of paths, got {type(runs).__name__} {runs!r}")
    for run in runs:
        check_path("runs", run)
    files = [Path(run) for run in runs]
    if len({run.resolve() for run in files}) < len(files):
        raise UsageError(f"a run file is given twice: {' '.join(map(str, files))}")
    evaluations = [score_trec_run(qrels, run, measures, config, depth=depth) for run in files]
    names = list(evaluations[0].per_query) if evaluations else []
    try:
        cmp = compare_systems(
            run_names(files), {m: _aligned(evaluations, m) for m in names}, **options
        )
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    return evaluations, cmp


def compare_stored_runs(
    store: SuiteRunStore, given: Sequence[str], **options: Any
) -> tuple[list[str], SystemsComparison, list[dict[str, Any]]]:
    """The suite runs `given` (ids or their first characters) compared: one run's subjects,
    or several runs (`runs.suite_compare.compare_suite_systems`); `options` go there. Returns
    the resolved run ids, the comparison, and each system's numbers the evaluators' rows do
    not show (`runs.suite_compare.system_measures`)."""
    from memgauge.api._store import resolve_run_ids

    ids = resolve_run_ids(store, given)
    runs = {i: store.item_records(i, detail=False) for i in ids}
    # each system's mean as its run reports it, where it scored what the run did
    reported = {i: _summary(store, i) for i in ids}
    try:
        cmp = compare_suite_systems(runs, reported=reported, **options)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    return ids, cmp, system_measures(runs, reported, baseline=options.get("baseline"))


def _summary(store: SuiteRunStore, run_id: str) -> RunSummary | None:
    run = store.get_run(run_id)
    return run.summary if run is not None else None
