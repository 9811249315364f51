"""Where runs are recorded: the results store (a SQLite file or a PostgreSQL server, named by a
path or a URL), opened, required, upgraded, runs found in it by id, and runs moved between
stores as bundles."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal

from memgauge._util.numbers import INT32_MAX, INT64_MAX
from memgauge.data.environment import memgauge_home
from memgauge.data.records import RunRecord
from memgauge.errors import UsageError, check_path, named_by
from memgauge.runs.recording import InMemoryRecorder, Recorder
from memgauge.store.bundle import export_bundle, read_bundle
from memgauge.store.suite_runs import SuiteRunStore
from memgauge.store.url import (
    RUNS,
    Records,
    StoreURL,
    default_store,
    nothing_recorded,
    store_given_as,
    store_url,
)

__all__ = [
    "Location",
    "StoreArg",
    "StoreURL",
    "Where",
    "export_items",
    "export_runs",
    "import_runs",
    "memgauge_home",
    "open_store",
    "read_run",
    "read_store",
    "require_store",
    "resolve_run_id",
    "results_path",
    "results_store",
    "store_given_as",
    "upgrade_store",
    "viewer_store",
]

StoreArg = str | Path | StoreURL | Recorder | Literal[False] | None
#: a results store or query log: a path, or a URL (`sqlite:///PATH`, `postgresql://...`)
Location = str | Path | StoreURL
#: a results store, or None (the default: `results_store`)
Where = Location | None


def results_path() -> Path:
    """`MEMGAUGE_HOME/results.db`: where runs are recorded when neither `--store` nor
    `MEMGAUGE_STORE` says otherwise."""
    return memgauge_home() / "results.db"


def results_store(where: Where = None) -> StoreURL:
    """The store `where` names (a path or a URL), else `MEMGAUGE_STORE`, else
    `MEMGAUGE_HOME/results.db` (precedence: flag > environment > default)."""
    return default_store() if where is None else store_url(where)


def open_store(where: Where = None) -> SuiteRunStore:
    """The results store at `where` (see `results_store`), created and migrated if need be."""
    return SuiteRunStore(results_store(where))


def require_store(where: Where = None, records: Records = RUNS) -> StoreURL:
    """The store at `where` for a command that only reads it: a UsageError saying that no
    `records` are there yet, and no empty file left behind, when it is a SQLite file that does
    not exist."""
    url = results_store(where)
    if not url.exists():
        raise UsageError(f"no results store at {url}: {nothing_recorded(records)}")
    return url


def read_store(where: Where = None) -> SuiteRunStore:
    """The results store at `where` for a command that only reads it (`runs list`, `runs
    show`, `history`, ...), opened as it is, as the viewer opens it (`engine.open_read_only`):
    a missing SQLite file is a UsageError and is not created (nor are its directories), and a
    store at another schema than this memgauge's is refused with what to do, never migrated."""
    return SuiteRunStore(results_store(where), read_only=True)


def viewer_store(where: Where = None) -> StoreURL:
    """The store `memgauge view` and `memgauge report` read, a SQLite file or a PostgreSQL
    server (see `require_store`); they open it read-only."""
    return require_store(where)


@contextmanager
def recorder_for(store: StoreArg) -> Iterator[Recorder]:
    """The recorder `store` names: memory (`False`), a store (a path or URL, or None for the
    default), or a `Recorder` given as it is."""
    if store is False:
        yield InMemoryRecorder()
        return
    if store is None or isinstance(store, str | Path | StoreURL):
        with open_store(store) as opened:
            yield opened
        return
    yield store


def _pick(found: list[str], given: str, where: str) -> str:
    """The one id of `found` that `given` names (itself, or the only one it starts)."""
    return named_by(
        given,
        found,
        none=f"no run {given!r} in {where}; see `memgauge runs list`",
        several=f"{given!r} matches {len(found)} runs ({', '.join(found[:5])}); type more",
    )


def resolve_run_id(store: SuiteRunStore, given: str) -> str:
    """The run id that `given` (a whole id or its first characters) names; UsageError if none
    or several."""
    return _pick(store.find_run_ids(given), given, str(store.url))


def resolve_run_ids(store: SuiteRunStore, given: Sequence[str]) -> list[str]:
    """The run ids `given` names (`resolve_run_id` each), to compare with each other;
    UsageError when two name the same run (a typo: a run compared with itself shows no
    difference)."""
    ids = [resolve_run_id(store, g) for g in given]
    for i, run_id in enumerate(ids):
        if run_id in ids[:i]:
            spelled = ", ".join(repr(g) for g, r in zip(given, ids, strict=True) if r == run_id)
            raise UsageError(
                f"{spelled} names run {run_id} twice: a run compared with itself shows no "
                "difference; give two different runs (`memgauge runs list` lists them)"
            )
    return ids


def resolve_resume(recorder: Recorder, resume: str | None) -> str | None:
    """The run `resume` names in `recorder`, when it can search its runs; else `resume`."""
    find = getattr(recorder, "find_run_ids", None)
    if resume is None or not callable(find):
        return resume
    return _pick(find(resume), resume, "this store")


def read_run(run_id: str, *, store: Where = None) -> RunRecord:
    """The recorded run `run_id` (its id, or the first characters of it) with its summary, from
    `store` (as `evaluate` takes it; None: the default store); UsageError when it has no such
    run or the characters match several."""
    if not isinstance(run_id, str):
        raise TypeError(f"run_id takes a run's id (a string), got {type(run_id).__name__}")
    with read_store(store) as opened:
        url = opened.url
        found = opened.find_run_ids(run_id)
        exact = run_id if run_id in found else (found[0] if len(found) == 1 else None)
        if exact is None:
            raise UsageError(
                f"no run {run_id!r} in {url}" if not found else f"{run_id!r} matches several runs"
            )
        run = opened.get_run(exact)
    assert run is not None
    return run


def upgrade_store(store: Where = None) -> list[str]:
    """Bring an existing results store to this memgauge's schema; return what was applied
    (none when it was up to date)."""
    from memgauge.store.engine import upgrade_store as upgrade

    return upgrade(require_store(store))


def export_items(
    store: SuiteRunStore, run_id: str, on_note: Callable[[str], None] | None = None
) -> Iterator[dict[str, Any]]:
    """Every item of the run as `memgauge runs export` writes it (`SuiteRunStore.iter_export`),
    each ranked hit with its text: the store leaves it out where it is the dataset's own, and
    it is read back from the run's dataset while that has the sha256 the run recorded
    (`runs.hit_texts`). Where it cannot be, `on_note` is given why, once per task (the
    reason the report and the viewer show)."""
    from memgauge.aggregates.hits import hits_of
    from memgauge.runs.hit_texts import hit_texts  # the aggregates: not for `runs list`

    run = store.get_run(run_id, summary=False)
    texts = hit_texts(run) if run is not None else None
    told: set[str] = set()
    for r in store.iter_export(run_id):
        if texts is None:
            yield r
            continue
        output = texts.filled(r["task"], r["output"])
        note = texts.note(r["task"])
        hits = hits_of(output)
        if on_note and note and r["task"] not in told and any("text" not in h for h in hits or ()):
            told.add(r["task"])
            on_note(f"task {r['task']}: hit {note}")
        yield {**r, "output": output}


def export_runs(run_ids: Sequence[str], *, store: Where = None) -> dict[str, Any]:
    """A bundle of the runs (ids or their first characters): JSON for `import_runs` or for
    `gate(..., baseline=...)`."""
    if isinstance(run_ids, str):
        raise TypeError(f"run_ids takes a list of run ids, e.g. [{run_ids!r}], not one string")
    run_ids = list(run_ids)
    for run_id in run_ids:
        if not isinstance(run_id, str):
            # [5] met SQLAlchemy's "String value expected when autoescape=True"
            raise TypeError(
                f"run_ids: a run id is a string, got {type(run_id).__name__} {run_id!r}"
            )
    if not run_ids:
        # a bundle of no run: its import recorded nothing, and as a baseline it counted nothing
        raise UsageError("run_ids: give at least one run id (see `memgauge runs list`)")
    with read_store(store) as opened:
        return export_bundle(opened, [resolve_run_id(opened, r) for r in run_ids])


def import_runs(path: str | Path, *, store: Where = None) -> list[str]:
    """Record the runs of the bundle at `path` in the store; their ids."""
    check_path("path", path)
    url = results_store(store)
    # PostgreSQL's INTEGER columns hold 32 bits, SQLite's 64
    most = INT32_MAX if url.dialect == "postgresql" else INT64_MAX
    entries = read_bundle(Path(path), most=most)
    with SuiteRunStore(url) as opened:
        return opened.import_runs(entries)
