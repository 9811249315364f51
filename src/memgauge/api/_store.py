"""Where runs are recorded: the results store, opened, required, and runs found in it by id."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Literal

from memgauge._util.home import memgauge_home
from memgauge.data.records import RunRecord
from memgauge.errors import UsageError
from memgauge.runs.recording import InMemoryRecorder, Recorder
from memgauge.store.suite_runs import SuiteRunStore

__all__ = [
    "StoreArg",
    "open_store",
    "read_run",
    "require_store",
    "resolve_run_id",
    "results_path",
]

StoreArg = str | Path | Recorder | Literal[False] | None


def results_path() -> Path:
    """`MEMGAUGE_HOME/results.db`: where runs are recorded by default."""
    return memgauge_home() / "results.db"


def open_store(path: str | Path | None = None) -> SuiteRunStore:
    """The results store at `path` (default `MEMGAUGE_HOME/results.db`), created if new."""
    return SuiteRunStore(Path(path) if path is not None else results_path())


def require_store(store: str | Path | None) -> Path:
    """The store at `store` (default: MEMGAUGE_HOME/results.db) for a command that only reads
    it: a UsageError, and no empty file left behind, when it does not exist."""
    where = Path(store) if store is not None else results_path()
    if not where.is_file():
        raise UsageError(
            f"no results store at {where}: nothing has been recorded there yet (run `memgauge"
            " run SUITE` or `memgauge evaluate`), or give the right one with --store"
        )
    return where


@contextmanager
def recorder_for(store: StoreArg) -> Iterator[Recorder]:
    """The recorder `store` names: memory (`False`), a store file (a path, or None for the
    default), or a `Recorder` given as it is."""
    if store is False:
        yield InMemoryRecorder()
        return
    if store is None or isinstance(store, str | Path):
        with open_store(store) as opened:
            yield opened
        return
    yield store


def _pick(found: list[str], given: str, where: str) -> str:
    """The one id of `found` that `given` names (itself, or the only one it starts)."""
    if given in found:
        return given
    if not found:
        raise UsageError(f"no run {given!r} in {where}; see `memgauge runs list`")
    if len(found) > 1:
        raise UsageError(f"{given!r} matches {len(found)} runs ({', '.join(found[:5])}); type more")
    return found[0]


def resolve_run_id(store: SuiteRunStore, given: str) -> str:
    """The run id that `given` (a whole id or its first characters) names; UsageError if none
    or several."""
    return _pick(store.find_run_ids(given), given, str(store.path))


def resolve_resume(recorder: Recorder, resume: str | None) -> str | None:
    """The run `resume` names in `recorder`, when it can search its runs; else `resume`."""
    find = getattr(recorder, "find_run_ids", None)
    if resume is None or not callable(find):
        return resume
    return _pick(find(resume), resume, "this store")


def read_run(run_id: str, *, store: str | Path | None = None) -> RunRecord:
    """A recorded run (its id, or the first characters of it) with its summary."""
    path = Path(store) if store is not None else results_path()
    if not path.is_file():
        raise UsageError(f"no results store at {path}")
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


def upgrade_store(store: str | Path | None = None) -> list[str]:
    """Bring an existing results store (default `MEMGAUGE_HOME/results.db`) to this memgauge's
    schema; return the migrations applied (none when it was up to date)."""
    from memgauge.store.connection import upgrade

    return upgrade(require_store(store))
