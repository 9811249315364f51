"""`bench_systems`: every memory system installed here (and any named) on LoCoMo and
LongMemEval-format data, as one recorded run, ranked per dataset."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypedDict, Unpack

from memgauge._util.numbers import MAX_FAILURE_RATE, N_RESAMPLES
from memgauge.api._runs import RunConfig, _build, _config, _run
from memgauge.data.io import dataset_path_problem
from memgauge.data.records import AggregateResult
from memgauge.errors import UsageError, argument
from memgauge.metrics.conventions import DEFAULT_DEPTH
from memgauge.runs.engine import Progress, RunReport
from memgauge.runs.suite import Suite
from memgauge.runs.systems import BENCH_MEASURES, bench_systems_suite
from memgauge.subjects.installed import Installed, installed_systems
from memgauge.subjects.parse import parse_system

__all__ = [
    "BenchSettings",
    "SystemsBench",
    "bench_systems",
    "bench_systems_plan",
    "bench_systems_suite_of",
    "run_bench_suite",
    "write_bench_suite",
]

PathArg = str | Path


@dataclass(frozen=True)
class SystemsBench:
    """What `bench_systems` ran: the run, the systems found (usable or skipped, with why) and
    each dataset's ranking (the `ranking` aggregate's result)."""

    report: RunReport
    found: list[Installed]

    @property
    def skipped(self) -> list[Installed]:
        """The adapters not usable here, each with why and its install line."""
        return [f for f in self.found if f.skipped is not None]

    @property
    def rankings(self) -> list[AggregateResult]:
        """One per dataset: `detail["systems"]`, ranked first, then the unranked with why."""
        return [a for a in self.report.summary.aggregates if a.aggregate == "ranking"]


def _datasets(
    locomo: PathArg | None, longmemeval: PathArg | None, datasets: Sequence[PathArg]
) -> list[tuple[str, Path, str | None]]:
    out: list[tuple[str, Path, str | None]] = []
    for name, path in (("locomo", locomo), ("longmemeval", longmemeval)):
        if path is not None:
            out.append((name, Path(path), name))
    for path in map(Path, datasets):
        out.append((path.stem or path.name, path, None))
    for _name, path, _kind in out:
        # checked before the systems start: a FIFO would block the run once started
        if (what := dataset_path_problem(path)) is not None:
            raise UsageError(f"dataset {path}: {what}")
    return out


def bench_systems_plan(
    systems: Sequence[str] = (), *, discover: bool = True, skip: Sequence[str] = ()
) -> tuple[list[tuple[str, dict[str, Any]]], list[Installed]]:
    """The systems a bench runs, (label, spec) each: the usable installed adapters (unless
    `discover` is False, less those `skip` names), then `systems` (`-s` strings); and every
    adapter found, usable or skipped."""
    found = installed_systems() if discover else []
    known = {f.label for f in found}
    unknown = [s for s in skip if s not in known]
    if unknown:
        raise UsageError(
            f"{argument('skip', ', '.join(unknown))}: not a system found here"
            + (f" (found: {', '.join(sorted(known))})" if known else " (nothing is discovered)")
        )
    chosen = [(f.label, dict(f.spec)) for f in found if f.skipped is None and f.label not in skip]
    for text in systems:
        chosen += parse_system(text)
    labels = [label for label, _ in chosen]
    twice = sorted({x for x in labels if labels.count(x) > 1})
    if twice:
        raise UsageError(f"two systems are named {', '.join(twice)}: add @LABEL to tell them apart")
    return chosen, found


def bench_systems_suite_of(
    *,
    locomo: PathArg | None = None,
    longmemeval: PathArg | None = None,
    datasets: Sequence[PathArg] = (),
    systems: Sequence[str] = (),
    discover: bool = True,
    skip: Sequence[str] = (),
    measures: Sequence[str] = BENCH_MEASURES,
    k: int = DEFAULT_DEPTH,
    corpora: Sequence[str] = (),
    limit: int | None = None,
    resamples: int = N_RESAMPLES,
    seed: int = 0,
    concurrency: int = 4,
    max_failure_rate: float = MAX_FAILURE_RATE,
) -> tuple[Suite, list[Installed]]:
    """The suite `bench_systems` runs (`memgauge run` runs it the same), and every adapter
    found, usable or skipped."""
    chosen, found = bench_systems_plan(systems, discover=discover, skip=skip)
    suite = bench_systems_suite(
        _datasets(locomo, longmemeval, datasets),
        chosen,
        measures=measures,
        corpora=corpora,
        limit=limit,
        k=k,
        n_resamples=resamples,
        seed=seed,
        concurrency=concurrency,
        max_failure_rate=max_failure_rate,
    )
    return suite, found


class BenchSettings(TypedDict, total=False):
    """`bench_systems`'s settings of the suite, as `bench_systems_suite_of` takes them (and
    defaults them)."""

    locomo: PathArg | None
    longmemeval: PathArg | None
    datasets: Sequence[PathArg]
    systems: Sequence[str]
    discover: bool
    skip: Sequence[str]
    measures: Sequence[str]
    k: int
    corpora: Sequence[str]
    limit: int | None
    resamples: int
    seed: int
    concurrency: int
    max_failure_rate: float


def bench_systems(
    *,
    progress: Progress | None = None,
    options: RunConfig | None = None,
    **settings: Unpack[BenchSettings],
) -> SystemsBench:
    """Benchmark the memory systems installed here (the reference memory's lexical, dense and
    hybrid; mem0, LangMem, the MCP memory server, the Agents SDK session where usable) and
    `systems` (`-s` strings: `python:pkg.mod:factory`, `http://host:port`, a spec file ...)
    on `locomo` (LoCoMo's paper protocol: evidence turns judged, each question searched in its
    own conversation), `longmemeval` (its `paper` protocol) and `datasets` (any retrieval
    dataset memgauge reads): one task each, with `measures` (the first ranks), their CIs and
    paired comparisons, context tokens and latency, recorded as one run. `corpora` and `limit`
    keep it small (LoCoMo's conversations; the first N judged queries of each dataset).
    A system that stores or returns nothing is not ranked (its items are `empty_memory`
    failures, counted against `max_failure_rate`). `discover=False` runs only `systems`;
    `skip` leaves out installed ones by label. `options`: the run's settings (store, resume,
    targets), as for `evaluate`. The settings' defaults are `bench_systems_suite_of`'s.
    """
    suite, found = bench_systems_suite_of(**settings)
    report = run_bench_suite(suite, options=options, progress=progress)
    return SystemsBench(report, found)


def run_bench_suite(
    suite: Suite, *, options: RunConfig | None = None, progress: Progress | None = None
) -> RunReport:
    """Run a bench suite as `bench_systems` does (recorded as a run of kind `bench-systems`)."""
    config = _config(options, RunConfig())
    return _run(suite, config, kind="bench-systems", progress=progress, build=_build({}))


def write_bench_suite(suite: Suite, path: PathArg) -> None:
    """`suite` as YAML at `path`, each dataset's path relative to the file (so it moves with
    it): `memgauge run` runs it to the numbers `bench_systems` gives."""
    import yaml

    from memgauge._util.files import atomic_write_text

    where = Path(path)
    doc = suite.model_dump(mode="json", exclude_unset=True)
    base = where.resolve().parent
    for task in doc["tasks"]:
        task["dataset"] = os.path.relpath(task["dataset"], base)
    head = "# written by `memgauge bench systems --write-suite`; run it with `memgauge run`\n"
    atomic_write_text(where, head + yaml.safe_dump(doc, sort_keys=False, allow_unicode=True))
