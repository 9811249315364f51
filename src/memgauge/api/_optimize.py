"""`memgauge optimize` as functions: tune a suite subject (seed 004's loop; each candidate a
recorded run), list the studies, read one, and diff two of its iterations."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from concurrent.futures import Executor as PoolExecutor
from pathlib import Path
from typing import Any, Literal

from memgauge.api._store import Where, open_store, read_store
from memgauge.errors import UsageError, argument, check_path
from memgauge.optimize import MemoryHistory, diff_iterations, find_study, run_optimization
from memgauge.optimize import space as spaces
from memgauge.optimize.config import resolve_config
from memgauge.optimize.study import StudyProgress
from memgauge.runs.optspec import SearchDim, parse_space_flag
from memgauge.runs.recording import InMemoryRecorder
from memgauge.runs.suite import Suite, load_suite

__all__ = [
    "optimization",
    "optimization_best_suite",
    "optimization_diff",
    "optimizations",
    "optimize",
]


def _space(space: Sequence[str] | Mapping[str, str | SearchDim] | None) -> dict[str, SearchDim]:
    if not space:
        return {}
    if isinstance(space, Mapping):
        return {
            k: v if isinstance(v, SearchDim) else parse_space_flag(f"{k}={v}")[1]
            for k, v in space.items()
        }
    return dict(parse_space_flag(s) for s in space)


def optimize(
    suite: str | Path | None = None,
    *,
    store: Where | Literal[False] = None,
    resume: str | None = None,
    space: Sequence[str] | Mapping[str, str | SearchDim] | None = None,
    progress: StudyProgress | None = None,
    workers: int = 1,
    executor: str | PoolExecutor | None = None,
    **overrides: Any,
) -> dict[str, Any]:
    """Tune a suite subject for one task's objective (seed 004's optimization loop); each
    candidate is a recorded run. Returns the study as `memgauge optimize --json` prints it.

    `overrides` are the optimization block's fields (`subject`, `objective`, `strategy`,
    `max_iterations`, `target_score`, `improvement_threshold`, `holdout`, `seed`,
    `candidates`, `patience`, `max_seconds`, `max_cost`, `require_significance`, ...), and
    override the suite's block; `space` (`["k_rrf=int:10..120"]` or `{"k_rrf":
    "int:10..120"}`) replaces its search space. `resume`: continue that study (its id or
    prefix) without scoring any finished candidate again. `store=False` keeps everything in
    memory. `workers`, `executor`: each candidate's run in shards, as in `evaluate`, on one
    pool for the whole study (a resume may use other ones: the scores do not depend on them).
    """
    given = {**overrides, "space": _space(space)}
    if suite is not None:
        check_path("suite", suite)
    path = Path(suite) if suite is not None else None
    if resume is None and path is not None:
        # Optuna there, the suite and its block sound: checked before a store is made
        spaces.load_optuna()
        resolve_config(load_suite(path.resolve()), given)
    if store is False:
        if resume is not None:
            raise UsageError("a study kept in memory cannot be resumed; give a store")
        return run_optimization(
            path,
            MemoryHistory(),
            overrides=given,
            progress=progress,
            recorder=InMemoryRecorder(),
            workers=workers,
            executor=executor,
        )
    with open_store(store) as opened:
        return run_optimization(
            path,
            opened,
            overrides=given,
            resume=resume,
            progress=progress,
            workers=workers,
            executor=executor,
        )


def optimizations(*, store: Where = None, limit: int = 50) -> list[dict[str, Any]]:
    """The latest optimizations in the store, newest first."""
    with read_store(store) as opened:
        return opened.list_studies(limit)


def optimization(study_id: str, *, store: Where = None) -> dict[str, Any]:
    """One optimization (its id or prefix) with every iteration, its best and its holdout."""
    from memgauge.optimize import study_json

    with read_store(store) as opened:
        return study_json(opened, find_study(opened, study_id))


def optimization_best_suite(
    study_id: str, *, store: Where = None, write_best: str | Path | None = None
) -> dict[str, Any]:
    """The suite the best candidate of an optimization ran, as a suite file writes it: the
    tuned subject with the best's configuration, and the objective's task on the tuning split
    (its `only:`), so `memgauge run` of it gives the study's best score with the same n.
    Relative paths in it are the suite's, as the study read them. `write_best`, the file it
    is for, is refused when it is the optimized suite or the store's own file."""
    from memgauge.optimize import study_json

    with read_store(store) as opened:
        found = find_study(opened, study_id)
        if write_best is not None:
            suite_path = (opened.get_study(found) or {}).get("suite_path")
            _refuse_inputs(Path(write_best), suite_path, opened.path)
        study = study_json(opened, found)
        best = study.get("best") or {}
        run_id = best.get("run_id")
        if not run_id or best.get("score") is None:
            raise UsageError(
                f"optimization {study['id']} has no scored best to write (status "
                f"{study['status']}); see `memgauge optimize show {study['id']}`"
            )
        ran = opened.get_run(run_id)
    assert ran is not None
    suite = Suite.model_validate(ran.suite).model_dump(mode="json", exclude_defaults=True)
    suite.pop("optimization", None)
    for task in suite.get("tasks") or []:
        task.pop("optimization", None)
    suite["name"] = study["suite"]
    return suite


def _refuse_inputs(into: Path, suite_path: str | None, store_file: Path | None) -> None:
    """UsageError when `into` names the study's suite or the store's file (writing the best
    there would replace what the study read, or every run and study, with a YAML file), or a
    file in another directory than the suite's: its relative paths (datasets, a python:
    target's module) are the suite's, so `memgauge run` of it elsewhere would not find them."""
    for what, kept in (("the suite it optimized", suite_path), ("the results store", store_file)):
        if kept is not None and into.resolve() == Path(kept).resolve():
            raise UsageError(
                f"{argument('write_best', into)}: is {what} ({kept}); give another file, "
                "e.g. best.yaml beside the suite"
            )
    if suite_path is None or not Path(suite_path).is_file():
        return  # a suite moved since the study last read it may be anywhere: not checked
    beside = Path(suite_path).resolve().parent
    if into.resolve().parent != beside:
        raise UsageError(
            f"{argument('write_best', into)}: write it beside the suite it optimized, in "
            f"{beside} (e.g. {beside / 'best.yaml'}): its relative paths are the suite's"
        )


def optimization_diff(study_id: str, a: str, b: str, *, store: Where = None) -> dict[str, Any]:
    """What changed between two iterations (`STEP` or `STEP.CANDIDATE`) of an optimization:
    the params that differ, and a unified diff per text."""
    with read_store(store) as opened:
        return diff_iterations(opened, find_study(opened, study_id), a, b)
