"""A `python:` memory written with `async def` (as Graphiti's, mem0's AsyncMemory or any
asyncio client is) is evaluated as its synchronous twin is: the same numbers, its failures
recorded, its connection (bound to the loop of its first call) working across calls, its
searches concurrent when the spec says so, and no thread left behind."""

from __future__ import annotations

import asyncio
import gc
import json
import threading
import warnings
from pathlib import Path
from typing import Any

import pytest
import yaml

from memgauge import api
from memgauge.cli.main import main
from memgauge.data.demo import demo_dataset
from memgauge.data.io import save_retrieval_dataset

SUBJECTS = Path(__file__).resolve().parents[1] / "data" / "subjects"
MEASURES = ["RR@5", "nDCG@10", "Recall@10"]


@pytest.fixture(scope="session")
def dataset(demo_dir: Path) -> Path:
    return demo_dir


@pytest.fixture
def made(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """The AsyncMemory objects a test's runs make (the module as the run imports it)."""
    monkeypatch.syspath_prepend(str(SUBJECTS))
    import async_memory

    async_memory.AsyncMemory.made.clear()
    return async_memory.AsyncMemory.made


def _async_threads() -> list[str]:
    return [t.name for t in threading.enumerate() if t.name.startswith("memgauge-async-")]


def _per_query(out: Path) -> dict[str, dict[str, Any]]:
    doc = json.loads((out / "result.json").read_text())
    return {
        s["name"]: {q["query_id"]: q["metrics"] for q in s["per_query"]} for s in doc["systems"]
    }


def test_an_async_memory_gives_its_synchronous_twins_numbers(
    tmp_path: Path, dataset: Path, made: list[Any]
) -> None:
    spec = tmp_path / "async.yaml"
    target = {"target": "async_memory:AsyncMemory", "concurrent": True}
    spec.write_text(yaml.safe_dump({"python": target}))
    args = ["evaluate", str(dataset), "-s", "python:keyword_memory:KeywordMemory@sync"]
    args += ["-s", f"{spec}@async", *(a for m in MEASURES for a in ("-m", m))]
    out = tmp_path / "out"
    assert main([*args, "--no-store", "--quiet", "--out", str(out)]) == 0
    rows = _per_query(out)
    assert rows["async"] == rows["sync"]
    assert len(rows["async"]) == 37
    (memory,) = made
    # one loop for every call: its connection, made on the first, was never on another loop
    assert memory._conn is not None
    # concurrent: true in its spec: the engine's threads searched it at once, on its one loop
    assert memory.most_in_flight > 1
    # its loop stopped with the run; the object is left open, as a synchronous one's is
    assert _async_threads() == []
    assert not memory.closed


def test_a_failing_async_search_is_a_recorded_failure(
    tmp_path: Path, dataset: Path, made: list[Any]
) -> None:
    ds = tmp_path / "flaky"
    data = demo_dataset()
    first = data.queries[0]
    queries = [first.model_copy(update={"text": first.text + " [fail]"}), *data.queries[1:]]
    save_retrieval_dataset(data.model_copy(update={"queries": queries}), ds)
    report = api.evaluate(
        ds,
        {"async": {"python": {"target": "async_memory:AsyncMemory"}}},
        measures=["RR@5"],
        options=api.RunConfig(store=False),
    )
    failed = [r for r in report.items if r.status == "failed"]
    assert [r.item_id for r in failed] == [first.id]
    assert failed[0].failures[0].message == "search failed on purpose"
    assert sum(r.status == "completed" for r in report.items) == 36
    assert _async_threads() == []


def test_a_live_async_object_given_to_the_api_keeps_one_loop_and_is_left_open(
    tmp_path: Path, made: list[Any]
) -> None:
    """Given to a second run, and under two names in a third, it is called on the loop its
    connection was made on: each run made a new loop, and every search of the second run
    failed with "attached to a different event loop"."""
    import async_memory

    data = demo_dataset()
    dataset = tmp_path / "few"
    queries = data.queries[:5]
    asked = {q.id for q in queries}
    judgments = [j for j in data.judgments if j.query_id in asked]
    few = data.model_copy(
        update={
            "queries": queries,
            "judgments": judgments,
            "equivalence_classes": [],
            "causal_chains": [],
        }
    )
    save_retrieval_dataset(few, dataset)
    live = async_memory.AsyncMemory()
    for subjects in ({"live": live}, {"live": live}, {"a": live, "b": live}):
        report = api.evaluate(
            dataset, subjects, measures=["RR@5"], options=api.RunConfig(store=False)
        )
        assert {r.status for r in report.items} == {"completed"}
    assert not live.closed  # the caller's object: the run never closes it
    assert live._conn is not None
    del report, subjects
    gc.collect()
    assert len(_async_threads()) == 1  # its one loop, for as long as the object lives
    del live
    made.clear()  # the class keeps every instance: the last reference
    gc.collect()
    assert _async_threads() == []


def test_a_live_async_function_keeps_one_loop_and_a_made_one_stops_with_its_subject() -> None:
    """An extractor given as an `async def` function, wrapped for a second run, ran on a new
    loop (a client it made on its first call failed there); a function a factory made kept
    its loop's thread after the run closed its subject."""
    from memgauge.subjects.python_import import PythonSubject

    loops: list[object] = []

    async def extract(conversation: list[Any], existing: list[Any]) -> list[Any]:
        loops.append(asyncio.get_running_loop())
        return []

    for _run in range(2):
        PythonSubject.wrap(extract, "live").extract([], [])
    assert loops[0] is loops[1]
    made = PythonSubject.wrap(extract, "made")
    made.close()  # as the run closes a subject it built
    assert _async_threads() == []


def test_an_async_agent_answers_an_audit_suites_probes(
    tmp_path: Path, made: list[Any], capsys: pytest.CaptureFixture[str]
) -> None:
    """An agent's `async def answer` goes through the same bridge: every probe answered on its
    one loop, none failed, the audit's rates computed."""
    memaudit = Path(__file__).resolve().parents[3] / "shared" / "datasets" / "memaudit-sample.json"
    suite = tmp_path / "suite.yaml"
    task = {
        "name": "audit",
        "kind": "expected-output",
        "dataset": str(memaudit),
        "probes": {},
        "evaluators": [{"spec": "audit-match"}],
    }
    doc = {
        "name": "async-agent",
        "subjects": {"mine": {"python": {"target": "async_memory:AsyncAgent"}}},
        "tasks": [task],
    }
    suite.write_text(yaml.safe_dump(doc))
    assert main(["run", str(suite), "--store", str(tmp_path / "r.db"), "--json"]) == 0
    out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    (row,) = [r for r in out["results"] if r["subject"] == "mine"]
    assert (row["n_scored"], row["n_failed"]) == (14, 0)
    assert _async_threads() == []


def test_an_async_close_beside_plain_methods_is_awaited() -> None:
    """A plug-in's object with a plain `search` but an `async def close` (a client it closes
    asynchronously) had its close called and the coroutine dropped: never awaited, what it
    closes left open. `close_subject` awaits it."""
    from memgauge.subjects.protocol import close_subject

    class Plain:
        closed = False

        def search(self, query: str, k: int) -> list[dict[str, str]]:
            return []

        async def close(self) -> None:
            await asyncio.sleep(0)
            Plain.closed = True

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # "coroutine ... was never awaited" would be one
        close_subject(Plain())
        gc.collect()
    assert Plain.closed
