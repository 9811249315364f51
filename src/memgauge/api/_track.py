"""A suite's runs over time: regression gates against a rolling baseline, history, and the
failure memories the gate learns from."""

from __future__ import annotations

import dataclasses
import difflib
import os
from collections.abc import Sequence
from pathlib import Path

from memgauge.aggregates.targets import MeasureRef, parse_measure_ref
from memgauge.api._store import Where, read_store, require_store, resolve_resume
from memgauge.data.records import RunRecord
from memgauge.errors import UsageError, argument
from memgauge.runs.suite import suite_name
from memgauge.store.bundle import bundle_runs
from memgauge.store.suite_runs import SuiteRunStore
from memgauge.subjects.learnings import learnings_stored, opened_learnings
from memgauge.subjects.parse import one_spec
from memgauge.track.gate import GateConfig, GateResult, evaluate_gate, with_unended
from memgauge.track.learning import relevant_learnings
from memgauge.track.regressions import kinds_of, learn_from

__all__ = ["accept_gate", "failed_gates", "gate", "history", "learnings_query"]


def _gated_run(store: SuiteRunStore, target: str) -> RunRecord:
    """The run `target` names: a run id (or its prefix), or a suite file (its latest completed
    run: the one that completed last, not the one created last, which on a store several
    processes share may have started after and ended before the run that just ended)."""
    path = Path(target)
    if path.suffix.lower() in (".yaml", ".yml", ".json"):
        if not path.exists():  # a run id has no such suffix: a mistyped suite path
            raise UsageError(f"{target}: no such suite file (gate names a suite file or a run)")
        name = suite_name(path)
        runs = store.suite_history(name)
        if not runs:
            raise UsageError(f"no completed run of suite {name!r} in {store.url}: run it first")
        return max(runs, key=lambda r: (r.finished_at or r.created_at, r.created_at, r.run_id))
    run_id = resolve_resume(store, target)
    assert run_id is not None
    run = store.get_run(run_id)
    assert run is not None
    if run.status != "completed":
        raise UsageError(f"run {run.run_id} is {run.status}: only a completed run can be gated")
    if run.summary is None:
        # the engine stores the summary before it marks a run completed: a run without one
        # came from elsewhere (a bundle or a store written without it)
        raise UsageError(
            f"run {run.run_id} is completed but holds no summary (its results were never"
            " aggregated into the store), so there is nothing to gate: run its suite again, or"
            " import it (`memgauge runs import`) from a bundle that has its summary"
        )
    return run


def gate(
    target: str,
    *,
    store: Where = None,
    config: GateConfig | None = None,
    learn: bool = True,
    learnings: str | Path | None = None,
    learn_into: str | None = None,
    baseline: Sequence[str | Path] = (),
    measures: Sequence[str | MeasureRef] = (),
) -> tuple[GateResult, int]:
    """Gate a run (its id, or a suite file: its run that completed last) against the rolling
    baseline of its suite's earlier runs, in the store and in the run bundles `baseline`
    (exported earlier: CI on a runner with no shared store); each regression becomes a failure
    memory (unless `learn` is False). Returns the verdict (its `memories` name the failure
    memories' ids) and how many failure memories were newly stored.

    The gate decides on the run's targets, each task's primary measures and `measures`
    (`[SUBJECT/][TASK/]NAME`, as `--measure`; added to `config.measures`); every other
    measure is information. A name that matches no measure of the run is a UsageError."""
    if isinstance(target, os.PathLike):  # a suite file as any path object, as Path takes it
        target = os.fspath(target)
    if not isinstance(target, str):
        raise TypeError(
            "target takes a run id (or its first characters) or a suite file, got"
            f" {type(target).__name__}"
        )
    for name, given in (("baseline", baseline), ("measures", measures)):
        if isinstance(given, str | os.PathLike):
            # read letter by letter: the bundle `/`, or the measures R, e, c, a, l, l
            raise TypeError(
                f"{name} takes a list, e.g. [{os.fspath(given)!r}], not one"
                f" {'path' if name == 'baseline' else 'name'}"
            )
    if learn_into is not None:
        # read now, not only once a regression needs it: a typo passed every gate until the
        # first regression, which then ended in exit 2, its verdict not recorded
        one_spec(learn_into, argument("learn_into"))
    config = config or GateConfig()
    named = tuple(
        m
        if isinstance(m, MeasureRef)
        else parse_measure_ref(m, where=argument("measures", repr(m), flag="--measure"))
        for m in measures
    )
    if named:
        config = dataclasses.replace(config, measures=(*config.measures, *named))
    with SuiteRunStore(require_store(store)) as opened:
        run = _gated_run(opened, target)
        exported, failed_there = bundle_runs((Path(p) for p in baseline), run.suite_name)
        # the baseline reads the earlier runs' numbers: their headlines, no per-query detail
        earlier = {r.run_id: r for r in opened.suite_history(run.suite_name, headline=True)}
        # a run the store holds keeps the store's verdict (it may have been accepted since)
        failed_there -= set(earlier)
        for r in exported:
            earlier.setdefault(r.run_id, r)
        history = sorted(
            (
                r
                for r in earlier.values()
                if r.created_at < run.created_at and r.run_id != run.run_id
            ),
            key=lambda r: (r.created_at, r.run_id),
        )
        failed = opened.failed_gates(run.suite_name) | failed_there
        result = evaluate_gate(run, history, config, kinds_of(run), failed)
        made_before = [
            r
            for r in opened.list_runs(limit=100, suite=run.suite_name)
            if r["created_at"] < run.created_at
        ]
        result = with_unended(result, made_before)
        if learn and any(c.regressed for c in result.checks):
            # before the verdict is recorded: a --learnings or --learn-into that cannot be
            # used is bad input (exit 2), which must leave the run as it was, not gated 'fail'
            where = Path(learnings) if learnings else None
            with opened_learnings(where, learn_into) as memory:
                kept = learn_from(result, run, opened.item_records(run.run_id), memory)
            result = dataclasses.replace(result, memories=kept)
        opened.mark_gated(run.run_id, result.status)
    return result, sum(m.new for m in result.memories)


def accept_gate(run: str, *, store: Where = None) -> tuple[str, str | None]:
    """`gate --accept`: a run (its id or a prefix) counts in later baselines even though it
    failed the gate. Returns its full id and its verdict before (None: never gated)."""
    with SuiteRunStore(require_store(store)) as opened:
        run_id = resolve_resume(opened, run)
        assert run_id is not None
        record = opened.get_run(run_id, summary=False)
        assert record is not None
        if record.status != "completed":
            # a baseline counts completed runs only: accepting this one would change nothing
            raise UsageError(
                f"{argument('run', run, flag='--accept')}: run {run_id} is {record.status};"
                " only a completed run counts"
                " in a baseline"
            )
        return run_id, opened.accept_gate(run_id)


def history(suite: str, *, store: Where = None, last: int = 20) -> list[RunRecord]:
    """A suite's completed runs (its name, or its file), oldest first: the last `last`."""
    if isinstance(last, bool) or not isinstance(last, int):
        raise TypeError(f"last takes a whole number, got {type(last).__name__} {last!r}")
    if last < 1:  # [-0:] is every run and [-(-1):] drops the oldest: neither was asked
        raise UsageError(f"last {last}: give how many of the latest runs, 1 or more")
    if isinstance(suite, os.PathLike):  # its file as any path object, as Path takes it
        suite = os.fspath(suite)
    if not isinstance(suite, str):
        raise TypeError(f"suite takes a suite's name or its file, got {type(suite).__name__}")
    path = Path(suite)
    if path.suffix.lower() in (".yaml", ".yml", ".json") and path.exists():
        suite = suite_name(path)
    with read_store(store) as opened:
        runs = opened.suite_history(suite)[-last:]
        if not runs:
            # a mistyped name: the closest suite of the recent runs
            names = {r["suite"] for r in opened.list_runs(limit=500)} - {suite}
            close = difflib.get_close_matches(suite, sorted(names), n=1)
            hint = f"did you mean {close[0]!r}? " if close else ""
            raise UsageError(f"no completed run of suite {suite!r}; {hint}see `memgauge runs list`")
    return runs


def failed_gates(suite: str, *, store: Where = None) -> set[str]:
    """The ids of the runs of `suite` (its name) that failed the gate and were not accepted:
    the runs a rolling baseline leaves out."""
    with read_store(store) as opened:
        return opened.failed_gates(suite)


def learnings_query(
    text: str,
    *,
    k: int = 5,
    budget: int = 500,
    learnings: str | Path | None = None,
    learn_into: str | None = None,
) -> str:
    """The past failures most relevant to `text`, ready for a prompt ('' when none)."""
    if learn_into is None and not learnings_stored(Path(learnings) if learnings else None):
        return ""
    with opened_learnings(Path(learnings) if learnings else None, learn_into) as memory:
        return relevant_learnings(memory, text, k=k, token_budget=budget)
