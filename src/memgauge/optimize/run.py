"""Start or resume a study of a suite: resolve its configuration, check a resume, wire the
objective (the suite's runs), the proposers of text and code targets, and the history.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from concurrent.futures import Executor as PoolExecutor
from pathlib import Path
from typing import Any

from memgauge._util.imports import import_roots
from memgauge._util.process import host_name, is_alive
from memgauge.errors import UsageError, named_by
from memgauge.llm.context import llm_context
from memgauge.optimize import space as spaces
from memgauge.optimize.config import StudyConfig, resolve_config
from memgauge.optimize.history import History, study_json
from memgauge.optimize.objective import Objective, SuiteObjective
from memgauge.optimize.proposers import default_proposers
from memgauge.optimize.study import Proposer, StudyProgress, StudyRunner
from memgauge.runs.plan import suite_sha256
from memgauge.runs.pools import open_pool
from memgauge.runs.recording import Recorder
from memgauge.runs.suite import Suite, load_suite

__all__ = ["diff_iterations", "find_study", "run_optimization", "run_study"]


def find_study(history: Any, prefix: str) -> str:
    """The study `prefix` names (its id or first characters); UsageError if none or several."""
    found: list[str] = history.find_study_ids(prefix)
    return named_by(
        prefix,
        found,
        none=f"no optimization {prefix!r} in this store; see `memgauge optimize list`",
        several=f"{prefix!r} matches {len(found)} optimizations; type more of the id",
    )


def run_study(
    config: StudyConfig,
    objective: Objective,
    history: History,
    *,
    resume: str | None = None,
    suite_path: str | None = None,
    proposers: Mapping[str, Proposer] | None = None,
    progress: StudyProgress | None = None,
    record_extra: Mapping[str, Any] | None = None,
) -> tuple[dict[str, Any], StudyRunner]:
    """Run (or resume) a study over any objective; its JSON, and the runner (its timings)."""
    spaces.load_optuna()  # exit 3 with the pip command, before anything is written
    runner = StudyRunner(
        config,
        objective,
        history,
        suite_path=suite_path,
        proposers=proposers,
        progress=progress,
        record_extra=record_extra,
    )
    # the proposers' calls and every candidate's run share the LLM pools; closed at the end
    with llm_context().hold():
        runner.run(resume)
    return study_json(history, runner.study_id), runner


def _check_resume(store: Any, study_id: str, suite: Suite) -> StudyConfig:
    study = store.get_study(study_id)
    assert study is not None
    if study["status"] == "completed":
        raise UsageError(
            f"optimization {study_id} is completed; see `memgauge optimize show {study_id}`"
        )
    if (
        study["status"] == "running"
        and study.get("host") == host_name()
        and study.get("pid")
        and is_alive(int(study["pid"]), study.get("pid_start"))
    ):
        raise UsageError(
            f"optimization {study_id} is being run by process {study['pid']} on this host; "
            "wait for it, or stop it first"
        )
    config = dict(study.get("config") or {})
    if config.pop("suite_sha256", None) != suite_sha256(suite):
        raise UsageError(
            f"--resume {study_id}: the suite changed since the optimization started; resume "
            "with the suite as it was, or start a new optimization"
        )
    for key in ("split_resolved", "split_described"):
        config.pop(key, None)
    return StudyConfig.model_validate(config)


def run_optimization(
    suite_path: Path | None,
    store: Any,
    *,
    overrides: Mapping[str, Any] | None = None,
    resume: str | None = None,
    progress: StudyProgress | None = None,
    recorder: Recorder | None = None,
    workers: int = 1,
    executor: str | PoolExecutor | None = None,
) -> dict[str, Any]:
    """Optimize the subject of the suite at `suite_path` (or resume the study `resume`, whose
    suite path is stored); `store` keeps the history and, unless `recorder` is given, the
    candidates' runs. `workers` > 1 or `executor` (`process`, `dask:local`,
    `dask://HOST:PORT`, an executor object) runs every candidate's shards on one pool opened
    for the study (results equal a serial study's). Returns the study's JSON."""
    spaces.load_optuna()
    study_id = None
    if resume is not None:
        study_id = find_study(store, resume)
        stored = store.get_study(study_id)
        started = Path(stored["suite_path"]) if stored.get("suite_path") else None
        # a SUITE given is where the suite is now (moved with its data); its content is checked
        path = suite_path.resolve() if suite_path is not None else started
        again = f"`memgauge optimize SUITE --resume {study_id}`"
        if path is None:
            raise UsageError(
                f"optimization {study_id} has no suite file to resume from; give it: {again}"
            )
        if suite_path is None and not path.is_file():  # a SUITE given: load_suite names it
            raise UsageError(
                f"optimization {study_id} was started from {path}, which is not there (moved "
                f"or deleted): give the suite where it is now, {again} (the same suite: it is "
                "checked)"
            )
        suite = load_suite(path)
        config = _check_resume(store, study_id, suite)
        if path != started:
            store.update_study(study_id, suite_path=str(path))  # the next resume finds it
    else:
        if suite_path is None:
            raise UsageError("give the SUITE file to optimize (or --resume ID)")
        path = suite_path.resolve()
        suite = load_suite(path)
        with import_roots(path.parent):  # a python: factory's defaults, from beside the suite
            config = resolve_config(suite, overrides or {}, path)
    objective = SuiteObjective(suite, config, recorder or store, path.parent)
    made: dict[str, Proposer] = default_proposers(config)
    pool = open_pool(workers, executor)
    objective.pool = pool
    try:
        data, _runner = run_study(
            config,
            objective,
            store,
            resume=study_id,
            suite_path=str(path),
            proposers=made,
            progress=progress,
            # what a resume checks: the suite as it was
            record_extra={"suite_sha256": suite_sha256(suite)},
        )
    except BaseException:
        if pool is not None:
            pool.stop()  # Ctrl-C or an error: end the workers now, the study resumes later
        raise
    finally:
        if pool is not None:
            pool.close()  # (and the cluster it started)
    return data


def diff_iterations(history: History, study_id: str, a: str, b: str) -> dict[str, Any]:
    """What changed from iteration `a` to `b` (`STEP` or `STEP.CANDIDATE`): the params that
    differ, and a unified diff per text that differs."""
    rows = {(r["step"], r["candidate"]): r for r in history.iterations(study_id, values=False)}

    def pick(label: str) -> dict[str, Any]:
        step, _, cand = label.partition(".")
        try:
            key = (int(step), int(cand or 0))
        except ValueError:
            raise UsageError(
                f"--diff {label!r}: give an iteration as STEP or STEP.CANDIDATE"
            ) from None
        if key not in rows:
            raise UsageError(f"--diff {label!r}: optimization {study_id} has no such iteration")
        return rows[key]

    ra, rb = pick(a), pick(b)
    pa, pb = ra.get("params") or {}, rb.get("params") or {}
    params = [
        {"field": k, "a": pa.get(k), "b": pb.get(k)}
        for k in sorted(set(pa) | set(pb))
        if pa.get(k) != pb.get(k)
    ]
    ta, tb = ra.get("texts") or {}, rb.get("texts") or {}
    # lines without their ends, joined by "\n": a text's last line, which has no newline,
    # would otherwise run into the diff's next line ("-old+new")
    texts = {
        k: "".join(
            line + "\n"
            for line in difflib.unified_diff(
                (ta.get(k) or "").splitlines(),
                (tb.get(k) or "").splitlines(),
                fromfile=f"{k} @ {a}",
                tofile=f"{k} @ {b}",
                lineterm="",
            )
        )
        for k in sorted(set(ta) | set(tb))
        if ta.get(k) != tb.get(k)
    }
    return {
        "a": a,
        "b": b,
        "score_a": ra.get("score"),
        "score_b": rb.get("score"),
        "params": params,
        "texts": texts,
    }
