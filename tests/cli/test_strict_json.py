"""Every `--json` output (and every command that prints JSON) is strict JSON: a parser that
refuses NaN and Infinity, as jq and JavaScript do, reads each one (issue 13, item 4).

The commands run on real data: a suite run twice into one store, A/B tests (one of them
poisoned by an infinite pair an older memgauge accepted), a query log, shadow runs, extraction
and operation cases, an audit, a benchmark, and an LLM judge over the fake OpenAI server."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.helpers import shares_onnx_graphs

from memgauge.cli.main import main
from memgauge.llm import FakeOpenAIServer

DATA = Path(__file__).resolve().parents[1] / "data"
MEMAUDIT = Path(__file__).resolve().parents[3] / "shared" / "datasets" / "memaudit-sample.json"


def strict_loads(text: str) -> Any:
    """json.loads that refuses NaN, Infinity and -Infinity."""

    def refuse(name: str) -> Any:
        raise ValueError(f"{name} is not JSON")

    return json.loads(text, parse_constant=refuse)


SUITE = """name: strict-json
subjects:
  lexical: {reference: {mode: lexical}}
tasks:
  - {name: recall, kind: retrieval, dataset: bundle.yaml, evaluators: [{retrieval: nDCG@10}]}
  - name: answers
    kind: expected-output
    k: 1
    items:
      - {id: q1, input: when do we deploy, expected: Tuesdays}
      - {id: q2, input: what about secrets, expected: never}
    evaluators: [icontains, {token_f1: {variant: locomo}}]
"""


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory, _onnx_graphs: Path) -> Iterator[Path]:
    """A store with two suite runs, A/B tests, shadow runs, and a query log; its home's ONNX
    graph the worker's (tests/conftest.py), not built again."""
    from memgauge.online.querylog import QueryLog
    from memgauge.online.shadow import ShadowRunner
    from memgauge.store.ab_tests import ABTestStore
    from memgauge.store.shadow import ShadowStore

    tmp = tmp_path_factory.mktemp("world")
    shares_onnx_graphs(tmp / "home", _onnx_graphs)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("MEMGAUGE_HOME", str(tmp / "home"))
        shutil.copy(DATA / "good" / "bundle.yaml", tmp / "bundle.yaml")
        (tmp / "suite.yaml").write_text(SUITE)
        db = str(tmp / "r.db")
        for _ in range(2):
            assert main(["run", str(tmp / "suite.yaml"), "--store", db, "--no-progress"]) == 0
        # A/B: an ordinary test, and one poisoned by `1e999`, which an older memgauge accepted
        pairs = tmp / "pairs.jsonl"
        pairs.write_text(
            "".join(
                json.dumps({"query_id": f"q{i}", "control": 0.5, "treatment": 0.5 + i % 3 / 10})
                + "\n"
                for i in range(30)
            )
        )
        assert main(["ab", "create", "ok", "--delta", "0.1", "--store", db]) == 0
        assert main(["ab", "add", "ok", str(pairs), "--store", db]) == 0
        assert main(["ab", "create", "poisoned", "--delta", "0.1", "--store", db]) == 0
        inf = float("inf")
        with ABTestStore(Path(db)) as store:
            store.add(
                "poisoned",
                [{"query_id": "q", "control": 0.5, "treatment": inf}],
                lambda state, new: {
                    "n": 1,
                    "total": inf,
                    "total_sq": inf,
                    "decision": "continue",
                    "log_lr": 0.0,
                },
            )
        with ShadowStore(Path(db)) as shadow:
            runner = ShadowRunner(
                "swap", lambda q, k: ["a", "b"], lambda q, k: ["b", "a"], shadow, percent=100
            )
            for i in range(5):
                runner.search(f"q{i}", "text")
            runner.close()
        log = QueryLog(tmp / "log.db")
        for i in range(6):
            log.query(f"question {i}", session_id="s", result_ids=["m1", "m2"], query_id=f"q{i}")
        log.close()
        yield tmp


def _lines(text: str) -> list[Any]:
    return [strict_loads(line) for line in text.splitlines() if line.strip()]


COMMANDS: dict[str, list[str]] = {
    "runs list": ["runs", "list", "--store", "{db}", "--json"],
    "runs show": ["runs", "show", "{run}", "--store", "{db}", "--json"],
    "runs compare": ["runs", "compare", "{first}", "{run}", "--store", "{db}", "--json"],
    "runs export json": ["runs", "export", "{run}", "--store", "{db}", "--format", "json"],
    "runs export jsonl": ["runs", "export", "{run}", "--store", "{db}", "--format", "jsonl"],
    "gate": ["gate", "{tmp}/suite.yaml", "--store", "{db}", "--json", "--no-learn"],
    "history": ["history", "strict-json", "--store", "{db}", "--json"],
    "ab status": ["ab", "status", "--store", "{db}", "--json"],
    "shadow summary": ["shadow", "summary", "--store", "{db}", "--json"],
    "metrics": [
        "metrics",
        str(DATA / "good" / "qrels.txt"),
        str(DATA / "good" / "run.txt"),
        "--per-query",
        "--json",
    ],
    "extraction": [
        "extraction",
        str(DATA / "extraction" / "cases.json"),
        "--outputs",
        "{tmp}/empty-trace.jsonl",
        "--match",
        "exact",
        "--json",
    ],
    "operations": [
        "operations",
        str(DATA / "operations" / "cases.json"),
        "--decider",
        "{heuristic: {}}",
        "--json",
    ],
    "audit": [
        "audit",
        str(MEMAUDIT),
        "--agent",
        "extractive",
        "--scoring",
        "offline",
        "--store",
        "{db}",
        "--output",
        "{tmp}/audit",
        "--no-progress",
        "--json",
    ],
    "bench": [
        "bench",
        "lexical",
        "--dataset",
        str(DATA / "good" / "bundle.yaml"),
        "--requests",
        "5",
        "--json",
    ],
    "run": ["run", "{tmp}/suite.yaml", "--store", "{db}", "--no-progress", "--json"],
    "logs judgments": ["logs", "judgments", "{tmp}/log.db"],
    "logs harvest": ["logs", "harvest", "{tmp}/log.db", "-n", "3"],
    "logs annotate": ["logs", "annotate", "{tmp}/log.db", "--out", "{tmp}/pool.jsonl"],
    "logs export": ["logs", "export", "{tmp}/log.db", "--out", "{tmp}/golden"],
    "logs retain": ["logs", "retain", "{tmp}/log.db", "--archive", "{tmp}/archive"],
}


@pytest.mark.parametrize("name", list(COMMANDS))
def test_json_output_is_strict(
    name: str, world: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from memgauge.store.suite_runs import SuiteRunStore

    monkeypatch.setenv("MEMGAUGE_HOME", str(world / "home"))
    db = world / "r.db"
    with SuiteRunStore(db) as store:
        ids = [r["run_id"] for r in store.list_runs()]
    trace = world / "empty-trace.jsonl"
    cases = json.loads((DATA / "extraction" / "cases.json").read_text())["cases"]
    # an extractor that kept nothing: precision over zero extracted facts is n/a
    trace.write_text("".join(json.dumps({"case_id": c["id"], "output": []}) + "\n" for c in cases))
    values = {"db": str(db), "tmp": str(world), "run": ids[0], "first": ids[-1]}
    args = []
    for arg in COMMANDS[name]:
        for key, value in values.items():
            arg = arg.replace("{" + key + "}", value)
        args.append(arg)
    capsys.readouterr()
    code = main(args)
    out = capsys.readouterr().out
    assert code in (0, 1), out
    parsed = _lines(out) if name in ("runs export jsonl", "run") else [strict_loads(out)]
    assert parsed
    if name == "ab status":
        (poisoned,) = [r for r in parsed[0] if r["name"] == "poisoned"]
        assert poisoned["sprt"]["total"] is None  # Infinity in the store, null on the wire


def test_poisoned_ab_test_refuses_new_pairs_cleanly(
    world: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = str(world / "r.db")
    capsys.readouterr()
    # before: an sqlite IntegrityError traceback (NaN stored as NULL in a NOT NULL column)
    assert main(["ab", "add", "poisoned", str(world / "pairs.jsonl"), "--store", db]) == 2
    err = capsys.readouterr().err
    assert "non-finite SPRT state" in err
    assert "Traceback" not in err


@pytest.mark.parametrize("command", ["calibrate", "rejudge"])
def test_judge_json_is_strict(
    command: str,
    llm_server: FakeOpenAIServer,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    llm_server.respond(lambda payload: json.dumps({"reasoning": "-", "label": "yes"}))
    rows = [
        {"id": f"a{i}", "input": "q", "output": "x", "expected": "x", "label": "pass"}
        for i in range(4)
    ]
    path = tmp_path / "labels.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    extra = ["-k", "2"] if command == "rejudge" else []
    args = ["judge", command, str(path), "--judge", "{qa-judge: strict}", "--json", *extra]
    assert main(args) == 0
    # identical verdicts: judge variance 0 over item variance 0, a share of nothing
    assert strict_loads(capsys.readouterr().out)
