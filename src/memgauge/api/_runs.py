"""Evaluations as recorded runs: `evaluate` (memory search on a retrieval dataset), `run_suite`
(a suite, or the suite a command built), the subject of the write-path commands, and the
summary of a run still going."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import Executor as PoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal, Unpack, get_args

from memgauge._util.numbers import MDE, N_RESAMPLES, resamples_out_of_range
from memgauge.aggregates.base import TaskView
from memgauge.aggregates.ir import DEFAULT_MEASURES
from memgauge.aggregates.mean import summarize_items
from memgauge.aggregates.repeats import RepeatsAggregate, repeats_of
from memgauge.aggregates.targets import By, Requirement
from memgauge.api._store import StoreArg, recorder_for, resolve_resume
from memgauge.data.io import load_retrieval_dataset
from memgauge.data.models import RetrievalDataset
from memgauge.data.records import ItemRecord, RunRecord, RunSummary
from memgauge.errors import UsageError, argument, check_path
from memgauge.llm.usage import load_prices, priced
from memgauge.metrics.conventions import Gain
from memgauge.metrics.ir import check_rel_threshold
from memgauge.runs.engine import RUN_KINDS, Progress, RunReport
from memgauge.runs.engine import run_suite as _run_suite
from memgauge.runs.kinds.retrieval import RetrievalSettings, evaluate_suite
from memgauge.runs.lanes import Borrowed
from memgauge.runs.options import RunOptions, whole_number
from memgauge.runs.suite import EvaluatorEntry, Suite, evaluator_label, load_suite
from memgauge.runs.summary import show_over_repeats
from memgauge.stats.sequential import DEFAULT_BOUNDS, Bounds
from memgauge.store.url import StoreURL
from memgauge.subjects.parse import parse_system, write_path_spec
from memgauge.subjects.python_import import speaking
from memgauge.subjects.registry import build_subject

__all__ = [
    "RunConfig",
    "evaluate",
    "interim_summary",
    "load_dataset",
    "run_suite",
    "write_path_subject",
]

SystemArg = str | Mapping[str, Any] | object


def load_dataset(path: str | Path) -> RetrievalDataset:
    """The retrieval dataset at `path` (a directory or a bundle file); a DataError lists every
    problem, each with its file and line."""
    check_path("path", path)
    return load_retrieval_dataset(path)


def _system_specs(
    systems: Mapping[str, SystemArg] | Sequence[SystemArg],
) -> tuple[list[tuple[str, dict[str, Any]]], dict[str, object]]:
    """(label, spec) per system, and the live objects by label."""
    if isinstance(systems, str) or not isinstance(systems, Mapping | Sequence):
        raise TypeError(
            "systems takes a list or a mapping of systems, e.g. ['lexical'] or "
            f"{{'mine': MyMemory()}}, got {type(systems).__name__} {systems!r}"
        )
    if not systems:
        raise UsageError("systems: give at least one system to evaluate")
    items: list[tuple[str | None, SystemArg]] = (
        list(systems.items()) if isinstance(systems, Mapping) else [(None, s) for s in systems]
    )
    specs: list[tuple[str, dict[str, Any]]] = []
    live: dict[str, object] = {}
    for label, value in items:
        if label is not None and not isinstance(label, str):
            raise TypeError(f"systems: a system's name is a string, got {label!r}")
        if value is None:
            raise TypeError(f"systems: {label or 'a system'} is None; give a system")
        if isinstance(value, str):
            parsed = parse_system(value, argument("systems", flag="--system"))
            for name, spec in parsed:
                specs.append((label if label and len(parsed) == 1 else name, spec))
        elif isinstance(value, Mapping):
            if label is None:
                raise UsageError("a system given as a spec needs a name: pass {name: spec}")
            specs.append((label, dict(value)))
        else:
            name = label or str(getattr(value, "name", type(value).__name__))
            live[name] = value
            specs.append((name, {"live": {"name": name}}))
    return specs, live


def _build(live: Mapping[str, object]) -> Callable[[dict[str, Any]], Any]:
    def build(spec: dict[str, Any]) -> Any:
        ((kind, args),) = spec.items()
        if kind != "live":
            return build_subject(spec)
        name = str(args["name"])
        obj = live[name]
        # the caller's object (behind the python: adapter unless it speaks the protocol):
        # used, never closed (it may be evaluated again)
        return Borrowed(speaking(obj, name))

    return build


@dataclass(frozen=True, kw_only=True)
class RunConfig(RunOptions):
    """A run's options (`RunOptions`: resume, targets, shards) and where it is recorded:
    built once, by an evaluating command from its shared options or by `evaluate` and
    `run_suite` from their keywords, and handed to the engine as it is. `store`: a path or URL,
    a `Recorder`, False (in memory only), or None (`results_store`'s default)."""

    store: StoreArg = None

    def __post_init__(self) -> None:
        super().__post_init__()
        store = self.store
        if not (
            store is None
            or store is False
            or isinstance(store, str | Path | StoreURL)
            or callable(getattr(store, "create_run", None))
        ):
            raise TypeError(
                "store takes a path or URL, a Recorder, False (in memory only) or None, "
                f"got {type(store).__name__} {store!r}"
            )


def _config(options: RunConfig | None, keywords: RunConfig) -> RunConfig:
    """`options`, or the run's settings given as keywords; both given is a mistake (which
    should win would be a guess)."""
    if options is None:
        return keywords
    if not isinstance(options, RunConfig):
        raise TypeError(f"options takes a RunConfig, got {type(options).__name__}")
    if keywords != RunConfig():
        raise UsageError("give a run's settings as options=RunConfig(...) or as keywords, not both")
    return options


def _check_kind(kind: object) -> None:
    """UsageError for a `kind` no command starts a run as: it was recorded as given."""
    if kind not in RUN_KINDS:
        raise UsageError(f"kind {kind!r}: give one of {', '.join(RUN_KINDS)}")


def _run(suite: Suite, config: RunConfig, **given: Any) -> RunReport:
    """`suite` run as `config` says, in its store (a resumed run named by its id's start)."""
    progress = given.get("progress")
    if progress is not None and not all(
        callable(getattr(progress, m, None)) for m in ("start", "phase", "advance")
    ):
        raise TypeError(
            "progress takes an object with start, phase and advance (runs.engine.Progress), "
            f"got {type(progress).__name__}"
        )
    with recorder_for(config.store) as recorder:
        resume = resolve_resume(recorder, config.resume)
        return _run_suite(suite, recorder, options=replace(config, resume=resume), **given)


def evaluate(
    dataset: str | Path | RetrievalDataset,
    systems: Mapping[str, SystemArg] | Sequence[SystemArg],
    *,
    resamples: int = N_RESAMPLES,
    kind: str = "evaluate",
    sprt_delta: float = MDE,
    sprt_bounds: Bounds = DEFAULT_BOUNDS,
    sampling_rate: float | None = None,
    feature_id: str | None = None,
    run_type: Literal["full", "shadow", "regression", "ab_test"] | None = None,
    store: StoreArg = None,
    resume: str | None = None,
    force: bool = False,
    fail_under: Iterable[str | Requirement] = (),
    by: By = "point",
    progress: Progress | None = None,
    workers: int = 1,
    executor: str | PoolExecutor | None = None,
    repeat: int | None = None,
    options: RunConfig | None = None,
    **settings: Unpack[RetrievalSettings],
) -> RunReport:
    """Evaluate memory search on `dataset` for each system, as a recorded run.

    `systems`: `{name: system}` or a list, where a system is a `-s` string (`"lexical"`,
    `"hybrid:k_rrf=10"`, `"python:pkg.mod:factory"`, `"http://..."`), a spec mapping
    (`{"reference": {"mode": "dense"}}`), or a live object with `reset`, `ingest` and `search`.
    The first system is the baseline of the paired comparisons. `settings` (`measures`, `k`,
    `rel_threshold`, `gain`, `pool_depth`, ...: `runs.kinds.retrieval.RetrievalSettings`) go
    to the suite's builder, `evaluate_suite`, as given. `fail_under`:
    `"[SUBJECT/][TASK/]MEASURE=VALUE"` targets, decided by `by` (see `aggregates.targets`).
    `pool_judge` (with `pool_depth`): the relevance judge (`"relevance"`, `{"relevance":
    {"model": m}}`) grades the pool's unjudged memories, recorded as bootstrapped judgments.
    `no_relevant`: what a judged query with no relevant memory scores, "zero", "one" (where the
    measure is 0/0: seed 002's Recall) or "skip" (`metrics.ir`).
    `workers` > 1 runs the systems given as specs in shards on a process pool, or on
    `executor`: `"dask:local"`, `"dask://HOST:PORT"` or any `concurrent.futures.Executor`
    (`memgauge.runs.pools` shows one for Ray); live objects run in this process.
    `dataset`: a dataset directory or bundle, a LoCoMo or LongMemEval file (read as `memgauge
    import` reads it by default), or a `RetrievalDataset`; `dataset_kind` says which of the
    first four it is (default: its content shows it). `options`: the run's settings as one
    `RunConfig`, instead of `store`, `resume`, `force`, `fail_under`, `by`, `workers`,
    `executor`. Each comparison carries seed 002's sequential test (`sequential_test_decision`):
    the SPRT on the paired RR@10 differences for an effect of `sprt_delta`, with `sprt_bounds`
    "ville" (log(1/alpha), log(beta)) or "wald" (seed 002's log((1-beta)/alpha),
    log(beta/(1-alpha))). Seed 002's EvalPipelineConfig: `sampling_rate` asks only that share
    of the judged queries (each query kept by its id's hash, salted with `seed`: the same
    sample every run), `feature_id` and `run_type` (full, shadow, regression, ab_test) label
    the run; all three are recorded with it (`runs show`, the ir aggregate's `pipeline`, seed
    002's `eval_results` rows). `repeat`: every query searched that many times by each
    system (the spread of its rankings, rank-biased overlap, pass@k; the `repeats` aggregate).
    `resamples`: the bootstrap resamples behind every CI. `kind`: what the run is recorded as
    started by (`runs list` shows it). `progress`: told of each phase and item
    (`runs.engine.Progress`); None shows nothing.

    How it ended is in what it returns, never raised: `report.status` is `failed` (with
    `report.reason`) when a system failed more than `max_failure_rate` of its items; a
    `fail_under` target missed leaves the run `completed`, with the target's `met` False in
    `report.summary.targets`; `memgauge.api.exit_code(report)` is the command line's exit code
    for it. Bad input raises (`UsageError`, `DataError`, or `TypeError` for a value of the
    wrong type) before anything runs, and a `fail_under` naming no measure of the run once it
    has run; Ctrl-C raises `errors.RunInterrupted` (a
    `KeyboardInterrupt`) naming the run, which `resume=` finishes.
    """
    check_path("dataset", dataset, RetrievalDataset)
    _check_kind(kind)
    given = settings.get("measures")
    if isinstance(given, Iterable) and not isinstance(given, str):
        # read once here: a generator given is checked, and kept, not emptied by the check
        settings["measures"] = list(given)
    _check_settings(resamples, sampling_rate, settings, sprt_bounds)
    config = _config(
        options,
        RunConfig(
            store=store,
            resume=resume,
            force=force,
            fail_under=fail_under,
            by=by,
            workers=workers,
            executor=executor,
            repeat=repeat,
        ),
    )
    specs, live = _system_specs(systems)
    # only what differs from the aggregate's defaults: a suite stays as it was before the option
    sprt = {
        k: v
        for k, v, default in (
            ("sprt_delta", sprt_delta, MDE),
            ("sprt_bounds", sprt_bounds, DEFAULT_BOUNDS),
        )
        if v != default
    }
    path = (
        Path(f"memory:{dataset.name}") if isinstance(dataset, RetrievalDataset) else Path(dataset)
    )
    suite = evaluate_suite(
        path,
        specs,
        n_resamples=resamples,
        sprt=sprt,
        pipeline={
            k: v
            for k, v in (
                ("sampling_rate", sampling_rate),
                ("feature_id", feature_id),
                ("run_type", run_type),
            )
            if v is not None
        },
        **settings,
    )
    datasets = {"retrieval": dataset} if isinstance(dataset, RetrievalDataset) else None
    return _run(suite, config, kind=kind, progress=progress, build=_build(live), datasets=datasets)


def _check_settings(
    resamples: object, sampling_rate: object, settings: Mapping[str, object], bounds: object
) -> None:
    """TypeError naming a setting of `evaluate` of the wrong type (which would otherwise
    surface as a comparison of str and int, or a string read as a list of one-letter
    measures), and UsageError for a value out of range, named by its keyword once (the
    suite's checks named the evaluator or aggregate it reached, `tasks.0.evaluators.3:`, once
    per evaluator)."""
    taken = inspect.signature(evaluate_suite).parameters
    # evaluate sets these itself: given again they would be a second value
    known = sorted(set(taken) - {"dataset", "systems", "n_resamples", "sprt", "pipeline"})
    for name in settings:
        if name not in known:
            # Python's own TypeError named the builder: "evaluate_suite() got an unexpected
            # keyword argument"
            raise TypeError(
                f"evaluate() got an unexpected keyword argument {name!r}; its settings are"
                f" {', '.join(known)}"
            )
    whole_number("resamples", resamples, optional=False)
    if isinstance(resamples, int) and (instead := resamples_out_of_range(resamples)):
        raise UsageError(f"{argument('resamples', resamples)}: {instead}")
    for name in (
        "k",
        "rel_threshold",
        "agent_k",
        "seed",
        "pool_grade",
        "pool_depth",
        "concurrency",
    ):
        whole_number(name, settings.get(name))
    threshold = settings.get("rel_threshold")
    if isinstance(threshold, int):
        check_rel_threshold(threshold)
    for name, given, choices in (
        ("gain", settings.get("gain"), get_args(Gain)),
        ("sprt_bounds", bounds, get_args(Bounds)),
    ):
        if given is not None and given not in choices:
            said = " or ".join(repr(c) for c in choices)
            raise UsageError(f"{argument(name, repr(given))}: give {said}")
    measures = settings.get("measures", DEFAULT_MEASURES)
    if isinstance(measures, str):
        raise TypeError(f"measures takes a list of names, e.g. [{measures!r}], not one string")
    if not measures:
        raise UsageError("measures: give at least one, or leave it out for the default ones")
    if not isinstance(measures, Iterable):
        raise TypeError(
            f"measures takes a list of names, e.g. ['Recall@5'], got"
            f" {type(measures).__name__} {measures!r}"
        )
    for measure in measures:
        if not isinstance(measure, str):
            # measures=[5] met a regular expression deep in the metrics: "expected string"
            raise TypeError(
                f"measures: a measure is a name such as 'Recall@5', got"
                f" {type(measure).__name__} {measure!r}"
            )
    corpora = settings.get("corpora")
    if isinstance(corpora, str):
        # read letter by letter: "no item of its dataset is in corpus -, 1, c, n, o, v"
        raise TypeError(f"corpora takes a list of corpus ids, e.g. [{corpora!r}], not one string")
    if sampling_rate is not None:
        if isinstance(sampling_rate, bool) or not isinstance(sampling_rate, int | float):
            raise TypeError(f"sampling_rate takes a number, got {sampling_rate!r}")
        if not 0 < sampling_rate <= 1:
            raise UsageError(f"sampling_rate {sampling_rate}: give a share above 0, up to 1")


def run_suite(
    suite: Suite | str | Path,
    *,
    store: StoreArg = None,
    concurrency: int | None = None,
    resume: str | None = None,
    retry_failed: bool = False,
    force: bool = False,
    fail_under: Iterable[str | Requirement] = (),
    by: By = "point",
    seed_targets: bool = True,
    progress: Progress | None = None,
    kind: str = "suite",
    base: str | Path | None = None,
    subjects: Mapping[str, object] | None = None,
    workers: int = 1,
    executor: str | PoolExecutor | None = None,
    repeat: int | None = None,
    options: RunConfig | None = None,
) -> RunReport:
    """Run (or resume) a suite: `suite` is a `Suite`, or the path of a suite file. Its relative
    paths start from `base`, by default the suite file's directory, else the current one.

    `store`, `resume`, `force`, `fail_under`, `by`, `progress`, `kind`: as in `evaluate`, which
    also says how a run's end is returned and what raises. `concurrency`: items in flight
    (default: the suite's). `retry_failed`: with `resume`, the failed items run again.
    `seed_targets`: False shows the seeds' targets without failing the run on them.
    `subjects`: live objects standing in for subjects the suite names with `{live: {name}}`.
    `workers`, `executor`: shards, as in `evaluate`. `repeat`: every item through each subject
    that many times, over the suite's `repeat:` (the `repeats` aggregate: the spread per item,
    pass@k and pass^k, a CI with items as clusters, nondeterministic subjects flagged).
    `options`: the run's settings as one `RunConfig`, instead of the keywords it holds.
    """
    config = _config(
        options,
        RunConfig(
            store=store,
            concurrency=concurrency,
            resume=resume,
            retry_failed=retry_failed,
            force=force,
            fail_under=fail_under,
            by=by,
            seed_targets=seed_targets,
            workers=workers,
            executor=executor,
            repeat=repeat,
        ),
    )
    check_path("suite", suite, Suite)
    if base is not None:
        check_path("base", base)
        base = Path(base)
    _check_kind(kind)
    if subjects is not None and not isinstance(subjects, Mapping):
        raise TypeError(
            "subjects takes a mapping {name: live object} for the suite's {live: {name}}, "
            f"got {type(subjects).__name__}"
        )
    suite_path = None
    if not isinstance(suite, Suite):
        suite_path = Path(suite).resolve()
        suite = load_suite(suite_path)
    _check_live(suite, subjects or {})
    build = _build(subjects or {})
    return _run(
        suite, config, suite_path=suite_path, base=base, kind=kind, progress=progress, build=build
    )


def _check_live(suite: Suite, subjects: Mapping[str, object]) -> None:
    """UsageError for an object of `subjects` that stands in for no `{live: {name}}` of the
    suite: it would never be called, and the run would not say so."""
    named = [
        str(spec["live"].get("name"))
        for spec in (suite.subjects or {}).values()
        if isinstance(spec, dict) and isinstance(spec.get("live"), dict)
    ]
    unused = [name for name in subjects if name not in named]
    if unused:
        has = f"those it names: {', '.join(named)}" if named else "it names none"
        raise UsageError(
            f"subjects: suite {suite.name!r} has no {{live: {{name: {unused[0]!r}}}}}; give {has}"
        )


def write_path_subject(
    role: Literal["extractor", "decider"],
    spec: str | None,
    recorded: str | Path | None,
    *,
    keywords: tuple[str, str] = ("spec", "recorded"),
) -> tuple[dict[str, Any], str]:
    """The subject of `extraction` (`role="extractor"`) or `operations` (`"decider"`): a live
    one from `spec` (`--extractor SPEC` / `--decider SPEC`), or the outputs recorded in
    production (`recorded`, `--outputs TRACE.jsonl`); and its label for reports. Messages name
    the two as the caller wrote them (`errors.argument`): the flags in a command, else
    `keywords` (the pytest plug-in's `extractor` or `decider` for both)."""
    spec_kw, recorded_kw = keywords
    if (spec is None) == (recorded is None):
        given = "not both" if spec is not None else "one of them"
        live = argument(spec_kw, "SPEC", flag=f"--{role}")
        outputs = argument(recorded_kw, "TRACE.jsonl", flag="--outputs")
        raise UsageError(f"give {live} (a live {role}) or {outputs}, {given}")
    if recorded is not None:
        check_path(recorded_kw, recorded)
        recorded = Path(recorded)
        if not recorded.is_file():
            raise UsageError(f"{argument(recorded_kw, recorded, flag='--outputs')}: no such file")
        return {"recorded": {"path": str(recorded.resolve())}}, f"recorded outputs {recorded.name}"
    assert spec is not None
    built = write_path_spec(role, spec, spec_kw)
    ((kind, args),) = built.items()
    label = kind if kind != "python" else f"python:{args.get('target', '?')}"
    if kind.startswith("llm-"):
        label = f"{kind}:{args.get('model') or 'default'}"
    return built, label


def interim_summary(
    run: RunRecord, items: Sequence[ItemRecord], usage: Mapping[str, Mapping[str, int]]
) -> RunSummary:
    """The summary of a run still going (or killed): counts and per evaluator means of the
    items recorded so far, and the LLM spend recorded so far (task aggregates wait for the
    end of the run)."""
    labels: dict[str, list[str]] = {}
    for task in run.suite.get("tasks", []):
        entries = [
            EvaluatorEntry.model_validate(e if isinstance(e, dict) and "spec" in e else {"spec": e})
            for e in task.get("evaluators", [])
        ]
        labels[task["name"]] = [evaluator_label(e, entries) for e in entries]
    seed = int(run.settings.get("seed", 0))
    counts, tasks, evaluators = summarize_items(items, labels, seed=seed)
    total = sum(counts.values())
    summary = RunSummary(
        n_items=total,
        n_completed=counts["completed"],
        n_failed=counts["failed"],
        n_unscored=sum(1 for it in items if it.unscored),
        n_queued=counts["queued"],
        failure_rate=counts["failed"] / total if total else None,
        tasks=tasks,
        evaluators=evaluators,
        llm_usage=priced(dict(usage), load_prices()),
    )
    # a task asked N times: its rows over the repeats recorded so far, as the finished run's
    # (items, each the mean of its repeats), not a mean of item-repeats
    every: dict[str, dict[str, list[ItemRecord]]] = {}
    for it in items:
        every.setdefault(it.task, {}).setdefault(it.subject, []).append(it)
    found = [
        RepeatsAggregate().compute(
            TaskView(
                name=task["name"],
                kind=str(task.get("kind", "")),
                subjects=list(every.get(task["name"], {})),
                evaluators=[(label, label) for label in labels[task["name"]]],
                seed=seed,
                repeat=repeats_of(run.suite, task["name"]),
            ),
            every.get(task["name"], {}),
        )
        for task in run.suite.get("tasks", [])
        if repeats_of(run.suite, task["name"]) > 1
    ]
    show_over_repeats(summary, found, every, seed)
    return summary
