"""Suite files: short forms, weights, the JSON Schema, and errors with line and key."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memgauge.errors import DataError
from memgauge.runs.suite import EvaluatorEntry, evaluator_label, load_suite, suite_json_schema

DATA = Path(__file__).resolve().parents[1] / "data"


def test_good_suite_with_short_forms_and_weights() -> None:
    suite = load_suite(DATA / "good" / "suite.yaml")
    assert suite.name == "good-suite"
    assert suite.subjects == {"lexical": {"reference": {"mode": "lexical"}}}
    recall, answers = suite.tasks
    assert recall.evaluators[0].spec == {"retrieval": "nDCG@10"}
    assert [(e.spec, e.weight) for e in answers.evaluators] == [
        ("exact", 1.0),
        ({"token_f1": {"variant": "locomo"}}, 2.0),
    ]
    assert suite.concurrency == 4


def test_json_suite_reports_lines_too(tmp_path: Path) -> None:
    path = tmp_path / "suite.json"
    path.write_text(
        json.dumps(
            {
                "name": "j",
                "subjects": {"s": {"reference": {}}},
                "tasks": [{"name": "t", "kind": "telepathy", "evaluators": ["exact"]}],
                "colour": "blue",
            },
            indent=2,
        )
    )
    with pytest.raises(DataError) as info:
        load_suite(path)
    by_field = {p.field: p for p in info.value.problems}
    assert by_field["tasks.0.kind"].line == 11
    assert "colour" in by_field
    assert all(p.file == str(path) for p in info.value.problems)


def test_schema_describes_the_suite() -> None:
    schema = suite_json_schema()
    assert schema["$schema"].endswith("2020-12/schema")
    assert set(schema["required"]) == {"name", "subjects", "tasks"}
    assert "TaskSpec" in schema["$defs"]
    kinds = schema["$defs"]["TaskSpec"]["properties"]["kind"]["enum"]
    assert kinds == sorted(
        ["retrieval", "expected-output", "script", "kg", "extraction", "operations", "embedding"]
    )


@pytest.mark.parametrize(
    ("spec", "label"),
    [
        ("retrieval", "nDCG@10"),
        ({"retrieval": "Recall@5"}, "Recall@5"),
        ({"retrieval": {"measure": "Recall@5"}}, "Recall@5"),
        ({"retrieval": {"measure": "Recall@5", "rel_threshold": 1}}, "Recall@5"),
        ({"retrieval": {"gain": "linear"}}, "nDCG@10"),
    ],
)
def test_a_retrieval_evaluator_is_named_after_the_measure_it_computes(
    spec: object, label: str
) -> None:
    """Whatever else the spec sets: a row named after another measure would put its value
    beside the ir aggregate's value of that measure, under one name."""
    entry = EvaluatorEntry.model_validate({"spec": spec})
    assert evaluator_label(entry, [entry]) == label


def test_a_system_string_as_a_subject_is_refused_with_the_spec_it_stands_for(
    tmp_path: Path,
) -> None:
    # `-s lexical` works on the command line; in a suite it is {reference: {mode: lexical}}
    path = tmp_path / "suite.yaml"
    path.write_text(
        "name: s\nsubjects:\n  base: lexical\n  mine: 'python:mymemory:make'\n  odd: nonsense\n"
        "tasks:\n  - {name: t, kind: retrieval, dataset: d, evaluators: [{retrieval: nDCG@10}]}\n",
        encoding="utf-8",
    )
    with pytest.raises(DataError) as info:
        load_suite(path)
    by_field = {p.field: p.message for p in info.value.problems}
    assert by_field["subjects.base"].endswith(
        "got 'lexical', which as a spec is {reference: {mode: lexical}}"
    )
    assert by_field["subjects.mine"].endswith(
        "which as a spec is {python: {target: 'mymemory:make'}}"
    )
    assert by_field["subjects.odd"].endswith("got 'nonsense'")  # no spec it could stand for


def test_a_task_without_evaluators_is_told_what_to_write(tmp_path: Path) -> None:
    path = tmp_path / "suite.yaml"
    path.write_text(
        "name: s\nsubjects:\n  lex: {reference: {mode: lexical}}\n"
        "tasks:\n  - {name: t, kind: retrieval, dataset: d}\n",
        encoding="utf-8",
    )
    with pytest.raises(DataError) as info:
        load_suite(path)
    (problem,) = [p for p in info.value.problems if p.field == "tasks.0.evaluators"]
    assert problem.line == 5
    assert problem.message.startswith("required field is missing; list what scores each item")
    assert "evaluators: [{retrieval: nDCG@10}]" in problem.message
