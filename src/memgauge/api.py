"""memgauge's Python API: evaluate a dataset against live objects or specs, load a dataset, run a
suite, read a run. Every call goes through the one engine and records its run, exactly like the
command line does (which calls these).

```python
import memgauge

report = memgauge.evaluate("data/demo", {"lexical": "lexical", "mine": MyMemory()})
print(report.summary.measures())          # every number with its CI
memgauge.read_run(report.run_id).status   # the stored run
```

`store`: None records in the store `MEMGAUGE_STORE` names, else `MEMGAUGE_HOME/results.db`; a
path or URL (`sqlite:///PATH`, `postgresql://...`) records there; `False` keeps the run in memory
only (it cannot be resumed); and any object with the `Recorder` methods works too.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal

from memgauge._util.home import memgauge_home
from memgauge.aggregates.ir import DEFAULT_MEASURES
from memgauge.aggregates.mean import summarize_items
from memgauge.aggregates.targets import By, Requirement, parse_fail_under
from memgauge.data.demo import demo_dataset
from memgauge.data.io import load_retrieval_dataset
from memgauge.data.io import save_retrieval_dataset as save_dataset
from memgauge.data.models import RetrievalDataset
from memgauge.data.records import ItemRecord, RunRecord, RunSummary
from memgauge.errors import UsageError
from memgauge.llm.cache import CacheMode
from memgauge.llm.context import configure, llm_context
from memgauge.llm.usage import load_prices, priced
from memgauge.probes.sources import load_audit_source as audit_source
from memgauge.runs.builders import (
    audit_suite,
    evaluate_suite,
    extraction_suite,
    operations_suite,
)
from memgauge.runs.engine import Progress, RunReport
from memgauge.runs.engine import run_suite as _run_suite
from memgauge.runs.lanes import Borrowed
from memgauge.runs.outcome import exit_code
from memgauge.runs.recording import InMemoryRecorder, Recorder
from memgauge.runs.suite import EvaluatorEntry, Suite, evaluator_label, load_suite
from memgauge.runs.suite_compare import compare_runs
from memgauge.scorers.audit import AuditMatch
from memgauge.store.bundle import bundle_runs, read_bundle
from memgauge.store.llm_cache import SQLiteResponseCache
from memgauge.store.suite_runs import SuiteRunStore
from memgauge.store.url import StoreURL, default_store, store_url
from memgauge.subjects.parse import one_spec, parse_system, write_path_spec
from memgauge.subjects.protocol import Agent, MemorySystem
from memgauge.subjects.python_import import PythonSubject
from memgauge.subjects.specs import build_subject
from memgauge.track.gate import GateConfig, GateResult, evaluate_gate, sparkline
from memgauge.track.learning import relevant_learnings
from memgauge.track.regressions import kinds_of, learn_from, learnings_memory, learnings_path

__all__ = [
    "AUDIT_MATCH_METHOD",
    "DEFAULT_MEASURES",
    "GateConfig",
    "GateResult",
    "ItemRecord",
    "RunRecord",
    "RunReport",
    "RunSummary",
    "StoreArg",
    "StoreURL",
    "SuiteRunStore",
    "audit_source",
    "audit_suite",
    "close_llm",
    "compare_runs",
    "configure_llm",
    "demo_dataset",
    "evaluate",
    "existing_store",
    "exit_code",
    "export_runs",
    "extraction_suite",
    "gate",
    "history",
    "import_runs",
    "interim_summary",
    "learnings_path",
    "learnings_query",
    "load_dataset",
    "one_spec",
    "open_store",
    "operations_suite",
    "parse_system",
    "read_run",
    "results_path",
    "results_store",
    "run_suite",
    "save_dataset",
    "sparkline",
    "write_path_subject",
]

StoreArg = str | Path | StoreURL | Recorder | Literal[False] | None
#: a results store: a path, a URL (`sqlite:///PATH`, `postgresql://...`), or None (the default)
Where = str | Path | StoreURL | None

#: how the offline audit decides a probe (`audit --scoring offline`)
AUDIT_MATCH_METHOD: str = AuditMatch().method
SystemArg = str | Mapping[str, Any] | object


class _LazyCache:
    """Opens the SQLite response cache on first use, so runs without an LLM never create it."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._cache: SQLiteResponseCache | None = None
        self._lock = threading.Lock()

    def _open(self) -> SQLiteResponseCache:
        with self._lock:
            if self._cache is None:
                self._cache = SQLiteResponseCache(self.path)
            return self._cache

    def get(self, key: str) -> dict[str, Any] | None:
        return self._open().get(key)

    def put(self, key: str, model: str, response: dict[str, Any], *, replace: bool = False) -> None:
        self._open().put(key, model, response, replace=replace)


def configure_llm(
    *,
    cache_only: bool = False,
    no_cache: bool = False,
    refresh_cache: bool = False,
    llm_cache: str | Path | None = None,
) -> None:
    """Point the process's LLM calls at the response cache (`MEMGAUGE_LLM_CACHE`, else
    `MEMGAUGE_HOME/llm-cache.db`) in one mode: use it, replay only (a miss is an error, never
    a call), neither read nor write it, or call again and store."""
    if sum([cache_only, no_cache, refresh_cache]) > 1:
        raise UsageError("use at most one of --cache-only, --no-cache, --refresh-cache")
    path = (
        Path(llm_cache)
        if llm_cache
        else Path(os.environ.get("MEMGAUGE_LLM_CACHE") or memgauge_home() / "llm-cache.db")
    )
    mode: CacheMode = (
        "only" if cache_only else "off" if no_cache else "refresh" if refresh_cache else "use"
    )
    configure(cache=_LazyCache(path), cache_mode=mode)


def close_llm() -> None:
    """Close the LLM clients (their connection pools); the next call makes new ones."""
    llm_context().close()


def results_path() -> Path:
    """`MEMGAUGE_HOME/results.db`: where runs are recorded by default."""
    return memgauge_home() / "results.db"


def results_store(where: Where = None) -> StoreURL:
    """The store `where` names (a path or a URL), else `MEMGAUGE_STORE`, else
    `MEMGAUGE_HOME/results.db` (precedence: flag > environment > default)."""
    return default_store() if where is None else store_url(where)


def open_store(where: Where = None) -> SuiteRunStore:
    """The results store at `where` (see `results_store`), created and migrated if need be."""
    return SuiteRunStore(results_store(where))


def existing_store(where: Where = None) -> StoreURL:
    """The store at `where` for a command that only reads it: a UsageError, and no empty file
    left behind, when it is a SQLite file that does not exist."""
    url = results_store(where)
    if not url.exists():
        raise UsageError(
            f"no results store at {url}: nothing has been recorded there yet (run `memgauge"
            " run SUITE` or `memgauge evaluate`), or give the right one with --store"
        )
    return url


@contextmanager
def _recorder(store: StoreArg) -> Iterator[Recorder]:
    if store is False:
        yield InMemoryRecorder()
        return
    if store is None or isinstance(store, str | Path | StoreURL):
        with open_store(store) as opened:
            yield opened
        return
    yield store


def _resolve(recorder: Recorder, resume: str | None) -> str | None:
    """The run `resume` names: a whole id or its first characters (UsageError if none or
    several)."""
    find = getattr(recorder, "find_run_ids", None)
    if resume is None or not callable(find):
        return resume
    found: list[str] = find(resume)
    if resume in found:
        return resume
    if not found:
        raise UsageError(f"no run {resume!r} in this store; see `memgauge runs list`")
    if len(found) > 1:
        raise UsageError(
            f"{resume!r} matches {len(found)} runs ({', '.join(found[:5])}); type more"
        )
    return found[0]


def load_dataset(path: str | Path) -> RetrievalDataset:
    """A retrieval dataset (directory or bundle file); DataError lists every problem."""
    return load_retrieval_dataset(path)


def _system_specs(
    systems: Mapping[str, SystemArg] | Sequence[SystemArg],
) -> tuple[list[tuple[str, dict[str, Any]]], dict[str, object]]:
    """(label, spec) per system, and the live objects by label."""
    items: list[tuple[str | None, SystemArg]] = (
        list(systems.items()) if isinstance(systems, Mapping) else [(None, s) for s in systems]
    )
    specs: list[tuple[str, dict[str, Any]]] = []
    live: dict[str, object] = {}
    for label, value in items:
        if isinstance(value, str):
            parsed = parse_system(value)
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
        # memgauge's own subjects speak the protocol; anything else gets the python: adapter
        # (hits as dicts or ids, session passed only when search takes it, calls timed)
        # the caller's object: used, never closed (it may be evaluated again)
        if isinstance(obj, MemorySystem | Agent) and hasattr(obj, "capabilities"):
            return Borrowed(obj)
        return Borrowed(PythonSubject.wrap(obj, name))

    return build


def _requirements(fail_under: Iterable[str | Requirement]) -> list[Requirement]:
    return [r if isinstance(r, Requirement) else parse_fail_under(r) for r in fail_under]


def evaluate(
    dataset: str | Path | RetrievalDataset,
    systems: Mapping[str, SystemArg] | Sequence[SystemArg],
    *,
    measures: Sequence[str] = DEFAULT_MEASURES,
    k: int = 20,
    rel_threshold: int = 2,
    gain: Literal["exp", "linear"] = "exp",
    agent_k: int = 5,
    resamples: int = 1000,
    seed: int = 0,
    pool_depth: int | None = None,
    pool_grade: int = 1,
    ingest: bool = True,
    concurrency: int = 4,
    max_failure_rate: float = 0.1,
    name: str | None = None,
    kind: str = "evaluate",
    store: StoreArg = None,
    resume: str | None = None,
    force: bool = False,
    fail_under: Iterable[str | Requirement] = (),
    by: By = "point",
    progress: Progress | None = None,
) -> RunReport:
    """Evaluate memory search on `dataset` for each system, as a recorded run.

    `systems`: `{name: system}` or a list, where a system is a `-s` string (`"lexical"`,
    `"hybrid:k_rrf=10"`, `"python:pkg.mod:factory"`, `"http://..."`), a spec mapping
    (`{"reference": {"mode": "dense"}}`), or a live object with `reset`, `ingest` and `search`.
    The first system is the baseline of the paired comparisons. `fail_under`:
    `"[SUBJECT/][TASK/]MEASURE=VALUE"` targets, decided by `by` (see `aggregates.targets`).
    """
    specs, live = _system_specs(systems)
    path = (
        Path(f"memory:{dataset.name}") if isinstance(dataset, RetrievalDataset) else Path(dataset)
    )
    suite = evaluate_suite(
        path,
        specs,
        name=name,
        measures=measures,
        k=k,
        rel_threshold=rel_threshold,
        gain=gain,
        agent_k=agent_k,
        n_resamples=resamples,
        seed=seed,
        pool_depth=pool_depth,
        pool_grade=pool_grade,
        ingest=ingest,
        concurrency=concurrency,
        max_failure_rate=max_failure_rate,
    )
    datasets = {"retrieval": dataset} if isinstance(dataset, RetrievalDataset) else None
    with _recorder(store) as recorder:
        return _run_suite(
            suite,
            recorder,
            kind=kind,
            resume=_resolve(recorder, resume),
            force=force,
            progress=progress,
            build=_build(live),
            fail_under=_requirements(fail_under),
            by=by,
            datasets=datasets,
        )


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
    base: Path | None = None,
    subjects: Mapping[str, object] | None = None,
) -> RunReport:
    """Run (or resume) a suite: a `Suite`, or the path of a suite file.

    `subjects`: live objects standing in for subjects the suite names with `{live: {name}}`.
    """
    suite_path = None
    if not isinstance(suite, Suite):
        suite_path = Path(suite).resolve()
        suite = load_suite(suite_path)
    with _recorder(store) as recorder:
        return _run_suite(
            suite,
            recorder,
            suite_path=suite_path,
            base=base,
            kind=kind,
            concurrency=concurrency,
            resume=_resolve(recorder, resume),
            retry_failed=retry_failed,
            force=force,
            progress=progress,
            build=_build(subjects or {}),
            fail_under=_requirements(fail_under),
            by=by,
            seed_targets=seed_targets,
        )


def write_path_subject(
    role: Literal["extractor", "decider"], spec: str | None, recorded: Path | None
) -> tuple[dict[str, Any], str]:
    """The subject of `extraction` (`role="extractor"`) or `operations` (`"decider"`): a live
    one from `--extractor SPEC` / `--decider SPEC`, or the outputs recorded in production
    (`--outputs TRACE.jsonl`); and its label for reports."""
    if (spec is None) == (recorded is None):
        raise UsageError(f"give --{role} SPEC (a live {role}) or --outputs TRACE.jsonl, not both")
    if recorded is not None:
        if not recorded.is_file():
            raise UsageError(f"--outputs {recorded}: no such file")
        return {"recorded": {"path": str(recorded.resolve())}}, f"recorded outputs {recorded.name}"
    assert spec is not None
    built = write_path_spec(role, spec)
    ((kind, args),) = built.items()
    label = kind if kind != "python" else f"python:{args.get('target', '?')}"
    if kind.startswith("llm-"):
        label = f"{kind}:{args.get('model') or 'default'}"
    return built, label


def read_run(run_id: str, *, store: Where = None) -> RunRecord:
    """A recorded run (its id, or the first characters of it) with its summary."""
    path = existing_store(store)
    with SuiteRunStore(path) as opened:
        found = opened.find_run_ids(run_id)
        exact = run_id if run_id in found else (found[0] if len(found) == 1 else None)
        if exact is None:
            raise UsageError(
                f"no run {run_id!r} in {path}" if not found else f"{run_id!r} matches several runs"
            )
        run = opened.get_run(exact)
    assert run is not None
    return run


def _gated_run(store: SuiteRunStore, target: str) -> RunRecord:
    """The run `target` names: a run id (or its prefix), or a suite file (its latest completed
    run)."""
    path = Path(target)
    if path.suffix.lower() in (".yaml", ".yml", ".json") and path.exists():
        name = load_suite(path).name
        runs = store.suite_history(name)
        if not runs:
            raise UsageError(f"no completed run of suite {name!r} in {store.url}: run it first")
        return runs[-1]
    run_id = _resolve(store, target)
    assert run_id is not None
    run = store.get_run(run_id)
    assert run is not None
    if run.status != "completed" or run.summary is None:
        raise UsageError(f"run {run.run_id} is {run.status}: only a completed run can be gated")
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
) -> tuple[GateResult, int]:
    """Gate a run (its id, or a suite file: its latest completed run) against the rolling
    baseline of its suite's earlier runs, in the store and in the run bundles `baseline`
    (exported earlier: CI on a runner with no shared store); each regression becomes a failure
    memory (unless `learn` is False). Returns the verdict and how many failure memories were
    stored."""
    exported = bundle_runs(Path(p) for p in baseline)
    with SuiteRunStore(existing_store(store)) as opened:
        run = _gated_run(opened, target)
        earlier = {r.run_id: r for r in opened.suite_history(run.suite_name)}
        for r in exported:
            if r.suite_name == run.suite_name and r.status == "completed" and r.summary:
                earlier.setdefault(r.run_id, r)
        history = sorted(
            (
                r
                for r in earlier.values()
                if r.created_at < run.created_at and r.run_id != run.run_id
            ),
            key=lambda r: (r.created_at, r.run_id),
        )
        result = evaluate_gate(run, history, config or GateConfig(), kinds_of(run))
        opened.mark_gated(run.run_id)
        learned = 0
        if learn and any(c.regressed for c in result.checks):
            memory = learnings_memory(Path(learnings) if learnings else None, learn_into)
            try:
                learned = learn_from(result, run, opened.item_records(run.run_id), memory)
            finally:
                memory.close()
    return result, learned


def export_runs(run_ids: Sequence[str], *, store: Where = None) -> dict[str, Any]:
    """A bundle of the runs (ids or their first characters): JSON for `import_runs` or for
    `gate(..., baseline=...)`."""
    with SuiteRunStore(existing_store(store)) as opened:
        return opened.export_runs([_resolve(opened, r) or r for r in run_ids])


def import_runs(path: str | Path, *, store: Where = None) -> list[str]:
    """Record the runs of the bundle at `path` in the store; their ids."""
    entries = read_bundle(Path(path))
    with open_store(store) as opened:
        return opened.import_runs(entries)


def history(suite: str, *, store: Where = None, last: int = 20) -> list[RunRecord]:
    """A suite's completed runs (its name, or its file), oldest first: the last `last`."""
    path = Path(suite)
    if path.suffix.lower() in (".yaml", ".yml", ".json") and path.exists():
        suite = load_suite(path).name
    with SuiteRunStore(existing_store(store)) as opened:
        runs = opened.suite_history(suite)[-last:]
    if not runs:
        raise UsageError(f"no completed run of suite {suite!r}; see `memgauge runs list`")
    return runs


def learnings_query(
    text: str,
    *,
    k: int = 5,
    budget: int = 500,
    learnings: str | Path | None = None,
    learn_into: str | None = None,
) -> str:
    """The past failures most relevant to `text`, ready for a prompt ('' when none)."""
    if learn_into is None and not learnings_path(Path(learnings) if learnings else None).is_file():
        return ""
    memory = learnings_memory(Path(learnings) if learnings else None, learn_into)
    try:
        return relevant_learnings(memory, text, k=k, token_budget=budget)
    finally:
        memory.close()


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
    counts, tasks, evaluators = summarize_items(
        items, labels, seed=int(run.settings.get("seed", 0))
    )
    total = sum(counts.values())
    return RunSummary(
        n_items=total,
        n_completed=counts["completed"],
        n_failed=counts["failed"],
        n_queued=counts["queued"],
        failure_rate=counts["failed"] / total if total else None,
        tasks=tasks,
        evaluators=evaluators,
        llm_usage=priced(dict(usage), load_prices()),
    )
