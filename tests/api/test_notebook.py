"""memgauge used from a notebook: what a cell shows of the records it gets back."""

from __future__ import annotations

import asyncio
import inspect
import signal
from pathlib import Path
from typing import Any

import pytest

import memgauge
from memgauge.data.demo import demo_dataset
from memgauge.data.models import Memory
from memgauge.errors import RunInterrupted, UsageError
from memgauge.subjects.registry import SUBJECTS


def test_a_run_and_its_records_show_a_readable_repr() -> None:
    # a cell ending in `report` printed the whole suite, every measure and every item: a third
    # of a megabyte; each record now shows a long value by its size, and keeps the short ones
    report = memgauge.evaluate(demo_dataset(), ["lexical"], store=False)
    summary = report.summary
    records = [report, report.run, summary, *summary.aggregates, report.items[0]]
    for record in [*records, demo_dataset()]:
        assert len(repr(record)) < 1500, type(record).__name__
    shown = repr(report)
    assert f"run_id='{report.run_id}'" in shown
    assert f"items=<list of {len(report.items)} ItemRecord>" in shown
    assert "tasks=<list of 1 TaskSummary>" in repr(summary)
    measure = summary.measures()[0]
    assert f"value={measure.value!r}" in repr(measure)
    assert f"n_scored={measure.n_scored}" in repr(measure)


class _Words:
    """A memory that finds a memory sharing a word with the query; `stop_at`: the search that
    Ctrl-C (a notebook's interrupt) lands in."""

    def __init__(self, stop_at: int | None = None) -> None:
        self.stop_at = stop_at
        self.searches = 0

    def reset(self) -> None:
        self.items: list[Memory] = []

    def ingest(self, memories: list[Memory]) -> None:
        self.items += memories

    def search(self, query: str, k: int) -> list[dict[str, str]]:
        self.searches += 1
        if self.searches == self.stop_at:
            signal.raise_signal(signal.SIGINT)
        words = set(query.lower().split())
        return [{"id": m.id} for m in self.items if words & set(m.text.lower().split())][:k]


def test_an_interrupted_run_says_how_to_resume_it_from_python(tmp_path: Path) -> None:
    # a notebook's interrupt showed `RunInterrupted: 20261129-...`, the run id alone; it now
    # says how to finish the run with the Python keyword, and that call finishes it
    store = tmp_path / "results.db"
    with pytest.raises(RunInterrupted) as stopped:
        memgauge.evaluate(demo_dataset(), {"mine": _Words(stop_at=3)}, store=store)
    run_id = stopped.value.run_id
    assert memgauge.read_run(run_id, store=store).status == "cancelled"
    said = str(stopped.value)
    assert f"run {run_id} was interrupted and is kept as cancelled" in said
    assert f"resume='{run_id}'" in said
    assert "--resume" not in said
    report = memgauge.evaluate(demo_dataset(), {"mine": _Words()}, store=store, resume=run_id)
    assert (report.run_id, report.resumed, report.status) == (run_id, True, "completed")
    with pytest.raises(RunInterrupted, match="kept in memory only \\(store=False\\)"):
        memgauge.evaluate(demo_dataset(), {"mine": _Words(stop_at=3)}, store=False)


@pytest.mark.parametrize(
    ("settings", "said"),
    [
        ({"workers": 0}, "workers=0: give 1 or more"),
        ({"fail_under": ["nDCG@10>>0.5"]}, "fail_under='nDCG@10>>0.5': write MEASURE=VALUE"),
        ({"fail_under": ["bogus=0.5"]}, "fail_under bogus: no such measure in this run"),
        ({"resume": "nope"}, "resume=nope: no such run in this store"),
        ({"executor": "dask://host", "workers": 2}, "executor='dask://host': give the scheduler"),
    ],
    ids=["workers", "fail_under", "fail_under_measure", "resume", "executor"],
)
def test_a_bad_setting_from_python_is_named_by_its_keyword(
    settings: dict[str, Any], said: str
) -> None:
    # these named the command line's flag (`--workers 0`, `--resume nope`) to a program that
    # never wrote one
    with pytest.raises(UsageError) as refused:
        memgauge.evaluate(demo_dataset(), ["lexical"], store=False, **settings)
    assert said in str(refused.value)
    assert "--" not in str(refused.value)


def test_resuming_a_run_of_another_kind_from_python_names_the_call_not_a_command(
    tmp_path: Path,
) -> None:
    # `run_suite(..., resume=ID)` of a run `evaluate` started said to resume it with
    # `memgauge evaluate ... --resume ID`, a command the program never ran
    store = tmp_path / "results.db"
    run_id = memgauge.evaluate(demo_dataset(), ["lexical"], store=store).run_id
    with pytest.raises(UsageError) as refused:
        memgauge.evaluate(demo_dataset(), ["lexical"], store=store, resume=run_id, kind="demo")
    said = str(refused.value)
    assert said.startswith(f"resume={run_id}: that run was started as kind='evaluate'"), said
    assert f"`evaluate(DATASET, SYSTEMS, resume='{run_id}')`" in said, said
    assert "--" not in said, said
    assert "memgauge evaluate" not in said, said


class _Broken(_Words):
    def search(self, query: str, k: int) -> list[dict[str, str]]:
        raise RuntimeError("index offline")


def test_what_a_run_and_the_llm_setup_say_from_python_names_no_flag() -> None:
    # a failed run kept in memory said `(--no-store)`, and configure_llm named the flags
    report = memgauge.evaluate(demo_dataset(), {"mine": _Broken()}, store=False)
    assert report.status == "failed"
    assert "kept in memory only (store=False), not recorded" in (report.reason or "")
    with pytest.raises(UsageError) as refused:
        memgauge.api.configure_llm(cache_only=True, no_cache=True)
    assert str(refused.value) == "use at most one of cache_only, no_cache, refresh_cache"


@pytest.mark.parametrize(
    ("settings", "said"),
    [
        ({"resamples": -1}, "resamples=-1: give 100 to 1,000,000"),
        # the CLI's bound: a 95% interval from 50 resamples moves with the seed
        ({"resamples": 50}, "resamples=50: give 100 to 1,000,000"),
        ({"rel_threshold": -1}, "rel_threshold -1: give a grade of 0 or more"),
        ({"gain": "quadratic"}, "gain='quadratic': give 'exp' or 'linear'"),
        ({"sprt_bounds": "bogus"}, "sprt_bounds='bogus': give 'ville' or 'wald'"),
    ],
    ids=["resamples", "resamples-under-the-cli-bound", "rel_threshold", "gain", "sprt_bounds"],
)
def test_a_setting_out_of_range_is_named_once_by_its_keyword(
    settings: dict[str, Any], said: str
) -> None:
    # these reached the suite's checks, which named the evaluator or aggregate they landed in
    # (`tasks.0.evaluators.3.retrieval.gain: ...`), once per evaluator: seven times
    with pytest.raises(UsageError) as refused:
        memgauge.evaluate(demo_dataset(), ["lexical"], store=False, **settings)
    assert str(refused.value) == said


def test_a_dataset_in_memory_with_workers_names_a_function_that_exists(tmp_path: Path) -> None:
    # the error told a notebook to call `memgauge.save_dataset`, which is not there
    with pytest.raises(UsageError) as refused:
        memgauge.evaluate(demo_dataset(), ["lexical"], store=False, workers=2)
    said = str(refused.value)
    assert "memgauge.api.save_dataset(dataset, DIRECTORY)" in said
    assert said.endswith("or run without workers")
    memgauge.api.save_dataset(demo_dataset(), tmp_path / "demo")
    report = memgauge.evaluate(tmp_path / "demo", ["lexical"], store=False)
    assert report.status == "completed"


@pytest.mark.parametrize("subpackage", ["api", "metrics", "stats"])
def test_a_subpackage_is_there_after_import_memgauge_alone(
    monkeypatch: pytest.MonkeyPatch, subpackage: str
) -> None:
    # `import memgauge` then `memgauge.api.close_llm()` (README) or `memgauge.metrics.evaluate`
    # raised AttributeError unless something had imported the subpackage before: a fresh
    # kernel's first cell. Taken off the package here, as a fresh `import memgauge` has it.
    monkeypatch.delattr(memgauge, subpackage, raising=False)
    assert getattr(memgauge, subpackage).__name__ == f"memgauge.{subpackage}"
    with pytest.raises(AttributeError, match="has no attribute 'nope'"):
        memgauge.nope  # noqa: B018


@pytest.mark.parametrize("name", ["api.nope", "nope.api", "a-b", ""])
def test_a_name_no_subpackage_can_have_is_no_attribute_not_an_import_error(name: str) -> None:
    # `getattr(memgauge, "nope.api", None)` raised ModuleNotFoundError (No module named
    # 'memgauge.nope') out of the lookup of a subpackage: getattr's default, and hasattr,
    # are for an AttributeError
    assert getattr(memgauge, name, None) is None
    assert not hasattr(memgauge.api, name)


class _ClosesAsync(_Words):
    """A plug-in's memory whose `close` is `async def` (its other methods plain)."""

    closed = 0

    def dump(self) -> list[Memory]:
        return [Memory(id="m1", text="the deploy runs on Tuesdays")]

    async def close(self) -> None:
        await asyncio.sleep(0)
        _ClosesAsync.closed += 1


def test_a_plugin_memory_with_async_close_is_closed_from_a_running_loop(tmp_path: Path) -> None:
    # a notebook's cell runs in an event loop: closing a plug-in's memory with `async def
    # close` called asyncio.run there, "cannot be called from a running event loop"
    SUBJECTS.register("closes-async", _ClosesAsync)
    spec = tmp_path / "memory.yaml"
    spec.write_text("{closes-async: {}}\n", encoding="utf-8")

    async def cell() -> list[Memory]:
        return memgauge.api.dump_memories(str(spec))

    try:
        assert [m.id for m in asyncio.run(cell())] == ["m1"]
    finally:
        SUBJECTS.unregister("closes-async")
    assert _ClosesAsync.closed == 1


@pytest.mark.parametrize(
    "name", ["evaluate", "run_suite", "read_run", "load_dataset", "relevant_learnings"]
)
def test_help_names_every_keyword_of_the_public_functions(name: str) -> None:
    # `help(memgauge.run_suite)` said nothing of 12 of its keywords (store, resume, ...), and
    # `help(memgauge.evaluate)` nothing of how a failed run or a missed target comes back
    function = getattr(memgauge, name)
    doc = inspect.getdoc(function) or ""
    for keyword in inspect.signature(function).parameters:
        if keyword != "settings":  # evaluate's **settings: named one by one in it
            assert f"`{keyword}`" in doc or f"    {keyword}: " in doc, (name, keyword)
    if name == "evaluate":
        assert "exit_code(report)" in doc
        assert "RunInterrupted" in doc


class _CtrlCAtStart:
    """A caller's progress display that Ctrl-C lands in as it starts (after the run is
    recorded, before any item runs: where the subjects' modules are imported too)."""

    def start(self, run_id: str, total: int, done: int) -> None:
        signal.raise_signal(signal.SIGINT)

    def phase(self, subject: str, task: str, corpus: str | None) -> None:
        pass

    def advance(self, row: object) -> None:
        pass


def test_ctrl_c_before_the_items_run_leaves_a_cancelled_resumable_run(tmp_path: Path) -> None:
    # it raised a bare KeyboardInterrupt (no run id) and left the run `running`
    store = tmp_path / "results.db"
    with pytest.raises(KeyboardInterrupt) as stopped:
        memgauge.evaluate(demo_dataset(), ["lexical"], store=store, progress=_CtrlCAtStart())
    assert isinstance(stopped.value, RunInterrupted)
    run_id = stopped.value.run_id
    assert memgauge.read_run(run_id, store=store).status == "cancelled"
    report = memgauge.evaluate(demo_dataset(), ["lexical"], store=store, resume=run_id)
    assert (report.run_id, report.status) == (run_id, "completed")


@pytest.mark.parametrize("n", [50, 1_000_001])
def test_a_suites_n_resamples_has_the_bound_of_resamples(n: int) -> None:
    """A suite's `n_resamples: 50` ran (its bound was 1) where `--resamples 50` and
    `evaluate(resamples=50)` are refused: one bound, MIN_RESAMPLES."""
    from memgauge.aggregates.cost import CostAggregate
    from memgauge.aggregates.ir import IRAggregate

    for aggregate in (IRAggregate, CostAggregate):
        with pytest.raises(UsageError, match=f"n_resamples {n}: give 100 to 1,000,000"):
            aggregate(n_resamples=n)
