"""One exit-code policy for every evaluating command (the README's table), table-driven: all
good 0, a target missed 1, bad input 2, an unreachable judge 3, a dead subject 4 (an HTTP
endpoint nobody listens on, a subject whose every call raises); `demo` exits 0."""

from __future__ import annotations

import json
import os
import socket
from pathlib import Path
from typing import Any

import pytest
import yaml

from memgauge.cli.main import main
from memgauge.data.demo import demo_dataset
from memgauge.data.io import save_retrieval_dataset

DATA = Path(__file__).resolve().parents[1] / "data"
SHARED = Path(__file__).resolve().parents[2].parent / "shared" / "datasets"
EXTRACTION = DATA / "extraction" / "cases.json"
OPERATIONS = DATA / "operations" / "cases.json"
MEMAUDIT = SHARED / "memaudit-sample.json"
BROKEN = "{python: {target: 'broken:Broken'}}"


def _dead_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}"  # nothing listens here once the socket is closed


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    monkeypatch.syspath_prepend(str(DATA / "subjects"))
    data = tmp_path / "demo"
    save_retrieval_dataset(demo_dataset(), data)
    bad = tmp_path / "bad.json"
    bad.write_text('{"cases": [{"id": 1')
    return {"data": data, "bad": bad, "db": str(tmp_path / "r.db"), "out": str(tmp_path / "o")}


def _judge_unreachable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", _dead_url() + "/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    monkeypatch.setenv("MEMGAUGE_MODEL", "fake")
    monkeypatch.setenv("MEMGAUGE_LLM_RETRIES", "0")


def _evaluate(env: dict[str, Any], case: str, mp: pytest.MonkeyPatch) -> list[str]:
    base = ["evaluate", "--store", env["db"], "--out", env["out"], "--quiet"]
    if case == "good":
        return [*base, str(env["data"]), "-s", "lexical"]
    if case == "target":
        return [
            *base,
            str(env["data"]),
            "-s",
            "lexical",
            "--fail-under",
            "lexical/retrieval/nDCG@10=0.99",
        ]
    if case == "bad":
        return [*base, str(env["bad"]), "-s", "lexical"]
    if case == "dead-http":
        return [*base, str(env["data"]), "-s", _dead_url()]
    return [*base, str(env["data"]), "-s", "python:broken:Broken"]


def _suite(env: dict[str, Any], tmp: Path, subject: dict[str, Any], evaluators: list[Any]) -> str:
    items = [{"id": f"q{i}", "input": f"question {i}", "expected": "8080"} for i in range(5)]
    spec = {
        "name": "codes",
        "subjects": {"s": subject},
        "tasks": [
            {"name": "t", "kind": "expected-output", "items": items, "evaluators": evaluators}
        ],
    }
    path = tmp / "suite.yaml"
    path.write_text(yaml.safe_dump(spec))
    return str(path)


def _run(env: dict[str, Any], case: str, mp: pytest.MonkeyPatch, tmp: Path) -> list[str]:
    good = {
        "python": {
            "target": "lookup_agents:LookupAgent",
            "kwargs": {"answers": {"question": "8080"}},
        }
    }
    if case == "good":
        return ["run", _suite(env, tmp, good, ["contains"]), "--store", env["db"]]
    if case == "target":
        path = _suite(env, tmp, good, ["contains"])
        return ["run", path, "--store", env["db"], "--fail-under", "contains=1.5"]
    if case == "bad":
        return ["run", str(env["bad"]), "--store", env["db"]]
    if case == "judge":
        _judge_unreachable(mp)
        return ["run", _suite(env, tmp, good, [{"qa-judge": "strict"}]), "--store", env["db"]]
    if case == "dead-http":
        return [
            "run",
            _suite(env, tmp, {"http": {"base_url": _dead_url()}}, ["contains"]),
            "--store",
            env["db"],
        ]
    return [
        "run",
        _suite(env, tmp, {"python": {"target": "broken:Broken"}}, ["contains"]),
        "--store",
        env["db"],
    ]


def _extraction(env: dict[str, Any], case: str, mp: pytest.MonkeyPatch) -> list[str]:
    base = ["extraction", "--store", env["db"]]
    if case == "good":
        return [
            *base,
            str(EXTRACTION),
            "--extractor",
            "{python: {target: 'extractors:NaiveExtractor'}}",
            "--match",
            "exact",
            "--no-targets",
        ]
    if case == "target":
        return [
            *base,
            str(EXTRACTION),
            "--extractor",
            "{python: {target: 'extractors:NaiveExtractor'}}",
            "--match",
            "exact",
        ]
    if case == "bad":
        return [*base, str(env["bad"]), "--extractor", "{heuristic: {}}"]
    if case == "judge":
        _judge_unreachable(mp)
        return [
            *base,
            str(EXTRACTION),
            "--extractor",
            "{python: {target: 'extractors:NaiveExtractor'}}",
            "--match",
            "judge",
        ]
    if case == "dead-http":
        _judge_unreachable(mp)  # the LLM extractor's endpoint is the subject here
        return [*base, str(EXTRACTION), "--extractor", "{llm: {}}", "--match", "exact"]
    return [*base, str(EXTRACTION), "--extractor", BROKEN, "--match", "exact"]


def _operations(env: dict[str, Any], case: str, mp: pytest.MonkeyPatch) -> list[str]:
    base = ["operations", "--store", env["db"]]
    if case == "good":
        return [*base, str(OPERATIONS), "--decider", "{heuristic: {}}", "--no-targets"]
    if case == "target":
        return [
            *base,
            str(OPERATIONS),
            "--decider",
            "{heuristic: {}}",
            "--fail-under",
            "tier.operation=0.99",
        ]
    if case == "bad":
        return [*base, str(env["bad"]), "--decider", "{heuristic: {}}"]
    if case == "judge":
        _judge_unreachable(mp)
        # every decision an UPDATE, so the merge-quality judge is asked on every case
        return [
            *base,
            str(OPERATIONS),
            "--decider",
            "{heuristic: {threshold: 0.0}}",
            "--judge",
            "--no-targets",
        ]
    if case == "dead-http":
        _judge_unreachable(mp)
        return [*base, str(OPERATIONS), "--decider", "{llm: {}}"]
    return [*base, str(OPERATIONS), "--decider", BROKEN]


def _audit(env: dict[str, Any], case: str, mp: pytest.MonkeyPatch) -> list[str]:
    base = ["audit", "--store", env["db"], "--output", env["out"], "--no-progress"]
    if case == "good":
        return [*base, str(MEMAUDIT), "--scoring", "offline", "--agent", "extractive"]
    if case == "target":
        return [
            *base,
            str(MEMAUDIT),
            "--scoring",
            "offline",
            "--agent",
            "extractive",
            "--fail-under",
            "recall_accuracy=0.99",
        ]
    if case == "bad":
        return [*base, str(env["bad"]), "--scoring", "offline"]
    if case == "judge":
        _judge_unreachable(mp)
        return [*base, str(MEMAUDIT), "--scoring", "judge", "--agent", "extractive"]
    if case == "dead-http":
        return [
            *base,
            str(MEMAUDIT),
            "--scoring",
            "offline",
            "--agent",
            "memory",
            "--subject",
            _dead_url(),
            "--model",
            "m",
        ]
    return [
        *base,
        str(MEMAUDIT),
        "--scoring",
        "offline",
        "--subject",
        "python:broken:Broken",
        "--agent",
        "memory",
        "--model",
        "m",
    ]


CASES = {"good": 0, "target": 1, "bad": 2, "judge": 3, "dead-http": 4, "raising": 4}
COMMANDS = ["evaluate", "run", "extraction", "operations", "audit"]


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("case", list(CASES))
def test_exit_code(
    command: str,
    case: str,
    env: dict[str, Any],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    if command == "evaluate" and case == "judge":
        pytest.skip("evaluate has no judge")
    if command == "audit" and not MEMAUDIT.is_file():
        pytest.skip("../shared/datasets/memaudit-sample.json is not here")
    args = {
        "evaluate": lambda: _evaluate(env, case, monkeypatch),
        "run": lambda: _run(env, case, monkeypatch, tmp_path),
        "extraction": lambda: _extraction(env, case, monkeypatch),
        "operations": lambda: _operations(env, case, monkeypatch),
        "audit": lambda: _audit(env, case, monkeypatch),
    }[command]()
    code = main(args)
    err = capsys.readouterr().err
    assert code == CASES[case], f"memgauge {' '.join(args)}\n{err}"
    assert "Traceback" not in err


def test_demo_exits_0(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "--out", str(tmp_path / "demo"), "--no-store", "--no-progress"]) == 0
    capsys.readouterr()


def test_a_fail_under_that_names_no_measure_exits_2_and_the_run_is_finished(
    env: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    """The measures exist only once the run is summarized; the run is then complete and kept
    (never left `running`), and the typo is bad input, naming what the run has."""
    base = ["--store", env["db"], "--out", env["out"], "--quiet", "-s", "lexical"]
    args = ["evaluate", str(env["data"]), *base, "--fail-under", "Nope@10=0.5"]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "--fail-under Nope@10: no such measure" in err
    assert "lexical/retrieval/nDCG@10" in err
    assert main(["runs", "list", "--store", env["db"], "--json"]) == 0
    listed = capsys.readouterr().out.strip().splitlines()[-1]
    assert '"completed"' in listed
    assert "running" not in listed


def test_a_run_stopped_by_its_failure_rate_counts_every_failed_item(
    env: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    """A subject dead at setup fails all its items at once: the reason gives the final count."""
    args = ["evaluate", str(env["data"]), "--store", env["db"], "--out", env["out"], "--quiet"]
    assert main([*args, "-s", _dead_url()]) == 4
    out = capsys.readouterr()
    assert "37 of 37 items failed" in out.out + out.err, out


def test_an_extraction_stopped_by_its_failure_rate_counts_the_cases_never_asked_apart(
    env: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The run stops a dead extractor after 2 of 10 cases (at most 1 may fail): the 8 cases it
    never asked were counted as failed (n_failed 10, each 'not scored') while the run said '2
    of 10 items failed'; they are `n_not_run`, each saying why."""
    out = tmp_path / "x"
    args = ["extraction", str(EXTRACTION), "--extractor", BROKEN, "--concurrency", "1"]
    assert main([*args, "--store", env["db"], "--output", str(out), "--json"]) == 4
    captured = capsys.readouterr()
    summary = json.loads(captured.out.strip().splitlines()[-1])
    assert "2 of 10 items failed" in captured.err
    assert (summary["n_cases"], summary["n_failed"], summary["n_not_run"]) == (10, 2, 8)
    assert len(summary["failures"]) == 2
    assert "10 cases, 0 scored, 2 failed, 8 not run" in captured.out + captured.err
    written = json.loads((out / "extraction.json").read_text())
    assert (written["n_failed"], written["n_not_run"]) == (2, 8)
    not_run = [c for c in written["per_case"] if c["error"].startswith("not run: the run stopped")]
    assert len(not_run) == 8


def test_operations_stopped_by_its_failure_rate_counts_the_cases_never_asked_apart(
    env: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """As extraction's: a dead decider stopped after 1 of 9 cases, the 8 never asked were
    n_failed (9 failures, each 'not scored'); they are `n_not_run`."""
    out = tmp_path / "o"
    args = ["operations", str(OPERATIONS), "--decider", BROKEN, "--concurrency", "1"]
    assert main([*args, "--store", env["db"], "--output", str(out), "--json"]) == 4
    captured = capsys.readouterr()
    summary = json.loads(captured.out.strip().splitlines()[-1])
    assert "1 of 9 items failed" in captured.err
    assert (summary["n_cases"], summary["n_failed"], summary["n_not_run"]) == (9, 1, 8)
    assert len(summary["failures"]) == 1
    written = json.loads((out / "operations.json").read_text())
    not_run = [c for c in written["per_case"] if c["error"].startswith("not run: the run stopped")]
    assert len(not_run) == 8


def test_an_unreachable_judge_is_named_with_its_endpoint_model_and_what_to_do(
    env: dict[str, Any],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Exit 3's line said only "an LLM judge's endpoint could not be reached": not which
    endpoint, which model, nor what to do."""
    _judge_unreachable(monkeypatch)
    good = {
        "python": {
            "target": "lookup_agents:LookupAgent",
            "kwargs": {"answers": {"question": "8080"}},
        }
    }
    suite = _suite(env, tmp_path, good, [{"qa-judge": "strict"}])
    assert main(["run", suite, "--store", env["db"]]) == 3
    said = " ".join(capsys.readouterr().out.split())
    line = said[said.index("an LLM judge's endpoint could not be reached") :]
    assert f"({os.environ['OPENAI_BASE_URL']}, model fake)" in line, said
    assert "is the endpoint up? check OPENAI_BASE_URL" in line, said
