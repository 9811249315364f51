"""`memgauge schema` accepts every form the README shows and every good file the repository
ships, and `memgauge validate` accepts the same files."""

from __future__ import annotations

import functools
import json
import re
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from tests.docs.blocks import read_blocks
from tests.online.test_traces_made_by_the_tools import MADE_BY_TOOLS

from memgauge._util.builtins import BUILTINS
from memgauge.cli.main import main
from memgauge.data.detect import detect_kind
from memgauge.data.jsonio import iter_jsonl
from memgauge.runs.schemas import SCHEMA_KINDS, json_schema

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data"

#: files under tests/data that are not datasets (fixtures of other tests), and why
NOT_DATASETS = {
    "embeddings/minilm_reference.json": "reference vectors of the MiniLM embedder test",
    "stores/spine-0009.read.json": "what an earlier store API read (test_upgrade_in_place)",
    "stores/integ-0011.read.json": "what an earlier store API read (test_upgrade_in_place)",
    "stores/main-detail.read.json": "what main read of a store before facts (test_store_before_facts)",
    "judges/seed000_fixtures.json": "seed 000's judge fixtures, read by their test",
    "beir/mini/corpus.jsonl": "BEIR's format, read by `memgauge import beir`",
    "beir/mini/queries.jsonl": "BEIR's format, read by `memgauge import beir`",
    "longmemeval/sample.hypotheses.jsonl": "a system's answers as LongMemEval's evaluate_qa.py "
    "reads them, which memgauge refuses as no dataset (tests/official)",
    "spans/otlp.json": "an OTLP-JSON trace export, read by `memgauge logs import-spans`",
    "spans/phoenix.jsonl": "Phoenix's span export, read by `memgauge logs import-spans`",
    "traces/otlp_agent.jsonl": "an OTLP-JSON trace export, read by `memgauge logs import-traces`",
    "traces/phoenix_spans.jsonl": "Phoenix's span export, read by `memgauge logs import-traces`",
    "traces/langsmith_runs.json": "LangSmith runs, read by `logs import-traces` and `extraction`",
    **{
        f"traces/{name}": "a trace export made by the tool itself, read by `logs import-traces`"
        " (tests/online/test_traces_made_by_the_tools.py validates it)"
        for name in MADE_BY_TOOLS
    },
    "traces/otel_sdk.expected.json": "what the OpenTelemetry SDK recorded: the answer key of "
    "tests/online/test_traces_made_by_the_tools.py",
    **{
        f"memaudit/results/{name}.results.json": "memaudit's own results.json, compared with "
        "memgauge's memaudit.json by tests/official/test_memaudit_official.py"
        for name in ("fixture-dataset", "memorybench-locomo", "sample")
    },
}
#: formats that are not memgauge's own JSON (TREC text, LoCoMo / LongMemEval as published):
#: `validate` checks them, no JSON Schema describes them
NO_SCHEMA = {"qrels", "run", "locomo", "longmemeval", "dataset-dir"}

GOOD_FILES = sorted(
    p
    for p in DATA.rglob("*")
    if p.is_file()
    and "bad" not in p.relative_to(DATA).parts
    and p.suffix in (".json", ".jsonl", ".yaml", ".yml", ".txt")
    and str(p.relative_to(DATA)) not in NOT_DATASETS
)


@functools.cache  # built and checked once per kind: errors() runs for each JSONL record
def validator(kind: str) -> jsonschema.Draft202012Validator:
    schema = json_schema(kind)
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def errors(kind: str, value: Any) -> list[str]:
    return [
        f"{'/'.join(map(str, e.absolute_path))}: {e.message[:300]}"
        for e in validator(kind).iter_errors(value)
    ]


def readme_yaml_blocks() -> list[Any]:
    return [yaml.safe_load(b.text) for b in read_blocks("README.md") if b.lang == "yaml"]


def test_every_schema_kind_is_a_valid_json_schema(capsys: pytest.CaptureFixture[str]) -> None:
    for kind in SCHEMA_KINDS:
        assert main(["schema", kind]) == 0
        jsonschema.Draft202012Validator.check_schema(json.loads(capsys.readouterr().out))


def test_schemas_help_lists_every_kind_it_takes(capsys: pytest.CaptureFixture[str]) -> None:
    """`schema --help`'s "Kinds:" left out trace, pairs and vectors, which it takes."""
    assert main(["schema", "--help"]) == 0
    helped = " ".join(capsys.readouterr().out.split())
    listed = helped[helped.index("Kinds: ") : helped.index(". The suite and subject")]
    assert set(SCHEMA_KINDS) - set(re.findall(r"[a-z]+(?= \(|,|$)", listed)) == set()


@pytest.mark.parametrize(
    ("group", "prefix"),
    [
        ("memgauge.subjects", "subject_kind"),
        ("memgauge.evaluators", "evaluator"),
        ("memgauge.aggregates", "aggregate"),
    ],
)
def test_every_builtin_components_arguments_are_described(group: str, prefix: str) -> None:
    """An editor completing `{http: {...}}`, `{regex: {...}}` or `{ir: {...}}` from `memgauge
    schema` says what each argument of every built-in subject kind, evaluator and aggregate is
    (the README says a component's docstring describes its arguments there): mem0's `user_id`,
    the subprocess subject's `env` or a script's `scale` had no word."""
    definitions = json_schema("suite")["$defs"]
    undescribed = []
    for name in BUILTINS[group]:
        properties = definitions[f"{prefix}.{name}"].get("properties", {})
        undescribed += [
            f"{prefix}.{name}: {arg}"
            for arg, field in properties.items()
            if not field.get("description")
        ]
    assert undescribed == []


def test_the_readmes_suites_validate_against_the_schema() -> None:
    suites = [b for b in readme_yaml_blocks() if isinstance(b, dict) and "tasks" in b]
    assert suites, "the README shows a suite"
    for suite in suites:
        assert errors("suite", suite) == []


def test_the_readmes_evaluator_lists_validate_against_the_schema() -> None:
    lists = [b["evaluators"] for b in readme_yaml_blocks() if list(b) == ["evaluators"]]
    assert lists, "the README shows a list of judges"
    for evaluators in lists:
        suite = {
            "name": "judges",
            "subjects": {"m": {"reference": {}}},
            "tasks": [
                {
                    "name": "t",
                    "kind": "expected-output",
                    "items": [{"id": "q1", "input": "x", "expected": "y"}],
                    "evaluators": evaluators,
                }
            ],
        }
        assert errors("suite", suite) == []


def test_the_schema_refuses_what_load_suite_refuses() -> None:
    suite = yaml.safe_load((DATA / "suites" / "qa" / "suite.yaml").read_text())
    assert errors("suite", suite) == []
    suite["subjects"]["agent"]["python"]["kwarg"] = suite["subjects"]["agent"]["python"].pop(
        "kwargs"
    )
    suite["tasks"][0]["evaluators"].append({"token_f1": {"varient": "locomo"}})
    suite["tasks"][0]["evaluators"].append("bleu")
    suite["tasks"][0]["aggregates"] = [{"ir": {"measure": ["nDCG@10"]}}]
    found = errors("suite", suite)
    assert [e.split(":")[0] for e in found] == [
        "subjects/agent",
        "tasks/0/evaluators/3",
        "tasks/0/evaluators/4",
        "tasks/0/aggregates",  # (an array or null: the error is the whole list's)
    ]


def test_the_long_evaluator_form_still_validates() -> None:
    suite = {
        "name": "long",
        "subjects": {"m": {"reference": {"mode": "lexical"}}},
        "tasks": [
            {
                "name": "t",
                "kind": "expected-output",
                "items": [{"id": "a", "input": "q", "expected": "x"}],
                "evaluators": [{"spec": {"regex": "^x"}, "weight": 2, "label": "starts"}],
            }
        ],
    }
    assert errors("suite", suite) == []


@pytest.mark.parametrize("path", GOOD_FILES, ids=lambda p: str(p.relative_to(DATA)))
def test_every_good_file_matches_its_schema_and_validates(
    path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # the example suite's python agent lives beside the other test subjects
    monkeypatch.syspath_prepend(str(DATA / "subjects"))
    kind = detect_kind(path)
    assert kind is not None, path
    assert main(["validate", str(path)]) == 0, capsys.readouterr().err
    assert capsys.readouterr().out.startswith(f"ok  {path}  ({kind}:")
    if kind in NO_SCHEMA:
        return
    assert kind in SCHEMA_KINDS, kind
    if path.suffix == ".jsonl":
        problems: list[Any] = []
        for line, record in iter_jsonl(path, problems):
            assert errors(kind, record) == [], f"{path}:{line}"
        assert not problems
    else:
        assert errors(kind, yaml.safe_load(path.read_text(encoding="utf-8-sig"))) == []


def test_the_good_files_cover_the_kinds_validate_gained() -> None:
    kinds = {detect_kind(p) for p in GOOD_FILES}
    assert {"suite", "subject", "extraction", "operations", "items", "memories", "bundle"} <= kinds
    # the case files are named cases.json: their content tells them apart
    assert detect_kind(DATA / "extraction" / "cases.json") == "extraction"
    assert detect_kind(DATA / "operations" / "cases.json") == "operations"
    assert detect_kind(Path("audit-out/probes.jsonl")) == "items"  # an audit's probes
