"""The public Python API: exactly the curated names, each of them importable (the README's example
runs as written in tests/docs)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from tests.helpers import repeatable

import memgauge
from memgauge.data.demo import demo_dataset
from memgauge.store.suite_runs import SuiteRunStore

ROOT = Path(__file__).resolve().parents[2]

PUBLIC = {
    "DataError",
    "Failure",
    "ItemRecord",
    "MeasureValue",
    "MemgaugeError",
    "Problem",
    "RunRecord",
    "RunReport",
    "RunSummary",
    "ScoreRecord",
    "TargetCheck",
    "UnavailableError",
    "UsageError",
    "__version__",
    "evaluate",
    "load_dataset",
    "read_run",
    "relevant_learnings",
    "run_suite",
}


def test_the_public_names_are_exactly_these() -> None:
    assert set(memgauge.__all__) == PUBLIC
    for name in PUBLIC:
        assert getattr(memgauge, name) is not None
    with pytest.raises(AttributeError):
        memgauge.not_a_name  # noqa: B018


def test_importing_memgauge_loads_no_engine() -> None:
    code = "import sys, memgauge; print(sorted(m for m in sys.modules if m.startswith('memgauge')))"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert "memgauge.api" not in out
    assert "memgauge.runs" not in out


def test_a_live_object_is_borrowed_and_the_run_equals_its_stored_record(tmp_path: Path) -> None:
    # the caller's object is used, never closed: evaluating it twice gives the same numbers;
    # what evaluate returns (kept in memory as the run went) equals a later read of the store
    from memgauge.subjects.reference import ReferenceMemory

    memory = ReferenceMemory.in_memory("lexical")
    store = tmp_path / "results.db"
    first = memgauge.evaluate(demo_dataset(), {"mine": memory}, store=store)
    second = memgauge.evaluate(demo_dataset(), {"mine": memory}, store=store)
    assert first.run.status == second.run.status == "completed"
    assert repeatable(first.summary.measures()) == repeatable(second.summary.measures())
    assert memgauge.read_run(first.run.run_id, store=store) == first.run
    with SuiteRunStore(store) as opened:
        items = opened.item_records(first.run.run_id)
    assert [r.model_dump() for r in items] == [r.model_dump() for r in first.items]
    memory.close()


def test_a_suite_built_in_code_is_checked_before_anything_is_written(tmp_path: Path) -> None:
    from memgauge.runs.suite import Suite

    suite = Suite.model_validate(
        {
            "name": "misspelt",
            "subjects": {"m": {"reference": {"mdoe": "lexical"}}},
            "tasks": [
                {
                    "name": "t",
                    "kind": "expected-output",
                    "items": [{"id": "a", "input": "q", "expected": "a"}],
                    "evaluators": [{"spec": {"contains": {"negat": True}}}],
                }
            ],
        }
    )
    store = tmp_path / "results.db"
    with pytest.raises(memgauge.UsageError) as err:
        memgauge.run_suite(suite, store=store)
    assert "subjects.m.reference.mdoe: unknown key; did you mean 'mode'?" in str(err.value)
    assert "tasks.0.evaluators.0.contains.negat: unknown key" in str(err.value)
    with SuiteRunStore(store) as opened:
        assert opened.list_runs() == []


def test_a_run_config_is_the_keywords_as_one_object(tmp_path: Path) -> None:
    # the same run from keywords and from options=RunConfig(...): equal numbers and targets;
    # both at once is refused before anything is written (which should win would be a guess)
    from memgauge import api

    target = ("lexical/retrieval/Recall@10=0.99",)
    by_keywords = memgauge.evaluate(
        demo_dataset(), ["lexical"], store=False, fail_under=target, by="ci-upper"
    )
    config = api.RunConfig(store=False, fail_under=target, by="ci-upper")
    by_object = memgauge.evaluate(demo_dataset(), ["lexical"], options=config)
    assert repeatable(by_object.summary.measures()) == repeatable(by_keywords.summary.measures())
    assert by_object.summary.targets == by_keywords.summary.targets
    assert [t.measure for t in by_object.summary.targets if t.source == "--fail-under"] == [
        "Recall@10"
    ]
    db = tmp_path / "r.db"
    with pytest.raises(memgauge.UsageError, match="not both"):
        memgauge.run_suite(ROOT / "tests/data/suites/qa/suite.yaml", options=config, store=db)
    assert not db.exists()


class _OwnIds:
    """A memory that gives what it stores ids of its own (row numbers), a first-hour mistake."""

    def __init__(self) -> None:
        self.texts: list[str] = []

    def reset(self) -> None:
        self.texts.clear()

    def ingest(self, memories: Any) -> None:
        self.texts += [m.text for m in memories]

    def search(self, query: str, k: int) -> list[dict[str, str]]:
        words = set(query.lower().split())
        found = [i for i, t in enumerate(self.texts) if words & set(t.lower().split())]
        return [{"id": str(i), "text": self.texts[i]} for i in found[:k]]


class _SomeOwnIds(_OwnIds):
    """Returns the ingested ids, and beside them one of its own (a summary it made)."""

    def __init__(self) -> None:
        super().__init__()
        self.ids: list[str] = []

    def ingest(self, memories: Any) -> None:
        super().ingest(memories)
        self.ids += [m.id for m in memories]

    def search(self, query: str, k: int) -> list[dict[str, str]]:
        hits = [{"id": self.ids[int(h["id"])], "text": h["text"]} for h in super().search(query, k)]
        return [*hits[: k - 1], {"id": "summary-1", "text": "a summary of its own"}]


def test_hits_that_name_no_memory_of_the_dataset_fail_the_subject_not_score_zero() -> None:
    """A memory that returns ids of its own scored 0.000 on every measure with exit 0 (and a
    note): its searches are failures of kind foreign_ids, as a memory holding nothing is, naming
    the ids it returned and what search must return; the other systems are scored."""
    report = memgauge.evaluate(
        demo_dataset(), {"own": _OwnIds(), "lexical": "lexical"}, store=False
    )
    assert report.status == "failed"  # every item of one subject failed: past max_failure_rate
    own = [r for r in report.items if r.subject == "own"]
    assert len(own) == 37
    assert {r.status for r in own} == {"failed"}
    failure = own[0].failures[-1]
    assert (failure.stage, failure.kind) == ("setup", "foreign_ids")
    assert re.fullmatch(
        r"none of the \d+ hits of its 37 searches in task retrieval names a memory it was given "
        r"\('\d+', '\d+', '\d+', \.\.\.\), and every score would be 0: search must return the "
        r"id each memory was ingested with \(Memory\.id\), not ids of the system's own \(a row "
        r"number, a UUID its store made\); keep a map back to the ingested ids",
        failure.message,
    )
    assert {r.status for r in report.items if r.subject == "lexical"} == {"completed"}


def test_hits_of_its_own_beside_the_datasets_are_said_to() -> None:
    # some hits foreign, the others the dataset's: scored, and the report says which count
    from memgauge.aggregates.ir_facts import IrFacts

    report = memgauge.evaluate(demo_dataset(), {"some": _SomeOwnIds()}, store=False)
    assert {r.status for r in report.items} == {"completed"}
    ir = report.summary.aggregate("ir")
    assert ir is not None
    facts = ir.facts_as(IrFacts)
    assert facts is not None
    (system,) = facts.systems
    (note,) = [n for n in system.notes if "name no memory of the dataset" in n]
    assert re.fullmatch(
        r"37 of \d+ hits name no memory of the dataset \('summary-1'\); they count as not "
        r"relevant\. search must return the ids ingest was given \(each Memory's id\), not ids "
        r"of the system's own\.",
        note,
    )


def test_two_objects_of_one_class_are_told_how_to_name_them_in_python() -> None:
    # a list of two live objects takes both names from the class: the error said "@LABEL",
    # a command-line syntax, to a Python caller
    with pytest.raises(memgauge.UsageError) as info:
        memgauge.evaluate(demo_dataset(), [_OwnIds(), _OwnIds()], store=False)
    assert str(info.value) == (
        "system names must be unique, got ['_OwnIds', '_OwnIds']; give each a distinct label "
        "(-s SPEC@LABEL; from Python, pass the systems as a dict {label: system})"
    )


class _OneAtATime(_OwnIds):
    """An ingest written for one memory, handed the list it is always given."""

    def ingest(self, memories: Any) -> None:
        self.texts.append(memories.text)


def test_an_ingest_that_fails_on_the_list_says_what_it_is_given() -> None:
    # it said only "setup failed: AttributeError: 'list' object has no attribute 'text'"
    report = memgauge.evaluate(demo_dataset(), {"mine": _OneAtATime()}, store=False)
    assert report.status == "failed"
    failure = report.items[0].failures[-1]
    assert (failure.stage, failure.kind) == ("setup", "AttributeError")
    assert failure.message == (
        "python:mine: ingest(memories) failed: 'list' object has no attribute 'text' (it is "
        "given a list of Memory objects, each with .id and .text, up to 512 a call)"
    )
