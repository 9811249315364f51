"""A `python:` target's module is found where `python -m` and pytest find one: in the current
directory, and beside the suite file for a suite, in every command that takes one (issue 29
item 1). Each test writes the module into a directory that is not on `sys.path` and runs the
command from there (or from elsewhere, the module beside the suite)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from tests.helpers import QUIET_PLUGINS, gated_suite

from memgauge import api
from memgauge.cli.main import main
from memgauge.data.demo import demo_dataset

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data"
SUBJECTS = DATA / "subjects"
MEMORY = (SUBJECTS / "keyword_memory.py").read_text()  # a memory system and an agent
EXTRACTORS = (SUBJECTS / "extractors.py").read_text()
# a decider that stores every incoming memory as new
DECIDER = """
def decide(existing, incoming):
    return {"action": "CREATE", "content": incoming["content"]}


def make():
    return decide
"""

# answers `add A B` with (A + B) * scale + offset: right at offset 0, scale 1
ADDER = """
class Adder:
    def __init__(self, offset=0, scale=1):
        self.offset, self.scale = offset, scale

    def answer(self, question, history=None):
        _, a, b = question.split()
        return str((int(a) + int(b)) * self.scale + self.offset)
"""

Place = Callable[[Path, str, str], str]


@pytest.fixture
def place() -> Iterator[Place]:
    """Write module NAME (made unique to the test) into DIR; its name, forgotten afterwards
    so that no other test imports it from sys.modules."""
    names: list[str] = []

    def write(where: Path, name: str, source: str) -> str:
        unique = f"{name}_{len(names)}_{abs(hash(str(where))) % 10**8}"
        where.mkdir(parents=True, exist_ok=True)
        (where / f"{unique}.py").write_text(source)
        names.append(unique)
        return unique

    yield write
    for name in names:
        sys.modules.pop(name, None)


@pytest.fixture
def demo(tmp_path: Path) -> Path:
    where = tmp_path / "data" / "demo"
    api.save_dataset(demo_dataset(), where)
    return where


def _ndcg_of_keyword_memory(demo: Path) -> float:
    """nDCG@10 of the same memory given as a live object: what every command must find."""
    sys.path.insert(0, str(SUBJECTS))
    try:
        from keyword_memory import KeywordMemory
    finally:
        sys.path.remove(str(SUBJECTS))
    report = api.evaluate(demo, {"mine": KeywordMemory()}, measures=("nDCG@10",), store=False)
    value = _measure(report.run, "mine", "nDCG@10")
    assert value is not None
    assert value > 0.1
    return value


def _measure(run: api.RunRecord, subject: str, name: str) -> float | None:
    assert run.summary is not None
    found = [m.value for m in run.summary.measures() if (m.subject, m.name) == (subject, name)]
    assert len(found) == 1, found
    return found[0]


def _last_run(db: Path) -> api.RunRecord:
    with api.open_store(db) as store:
        (row, *_) = store.list_runs()
    return api.read_run(row["run_id"], store=db)


def _retrieval_suite(where: Path, module: str, demo: Path) -> Path:
    suite = {
        "name": "beside",
        "subjects": {
            # kwargs: the factory's signature is checked when the suite is read
            "mine": {
                "python": {"target": f"{module}:KeywordMemory", "kwargs": {"boost_recent": False}}
            }
        },
        "tasks": [
            {
                "name": "recall",
                "kind": "retrieval",
                "dataset": str(demo),
                "evaluators": [{"retrieval": "nDCG@10"}],
            }
        ],
    }
    path = where / "suite.yaml"
    path.write_text(yaml.safe_dump(suite))
    return path


def test_evaluate_finds_the_module_in_the_current_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, place: Place, demo: Path
) -> None:
    work = tmp_path / "work"
    module = place(work, "mymemory", MEMORY)
    monkeypatch.chdir(work)
    db = tmp_path / "r.db"
    args = ["evaluate", str(demo), "-s", f"python:{module}:KeywordMemory@mine", "--store", str(db)]
    assert main([*args, "--out", str(tmp_path / "out")]) == 0  # was 2: No module named ...
    run = _last_run(db)
    assert run.summary is not None
    assert run.summary.n_failed == 0
    assert _measure(run, "mine", "nDCG@10") == _ndcg_of_keyword_memory(demo)
    assert str(work) not in sys.path  # looked for there while imported, not kept


def test_run_finds_the_module_beside_the_suite(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, place: Place, demo: Path
) -> None:
    suites = tmp_path / "suites"
    module = place(suites, "mymemory", MEMORY)
    suite = _retrieval_suite(suites, module, demo)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    db = tmp_path / "r.db"
    assert main(["run", str(suite), "--store", str(db)]) == 0
    assert _measure(_last_run(db), "mine", "nDCG@10") == _ndcg_of_keyword_memory(demo)
    assert str(suites) not in sys.path


@pytest.mark.slow
def test_run_with_workers_finds_the_module_beside_the_suite_in_each_worker(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, place: Place, demo: Path
) -> None:
    suites = tmp_path / "suites"
    module = place(suites, "mymemory", MEMORY)
    suite = _retrieval_suite(suites, module, demo)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    monkeypatch.setenv("MEMGAUGE_SHARD_STARTUP", "0")  # to the workers, however small the run
    db = tmp_path / "r.db"
    assert main(["run", str(suite), "--store", str(db), "--workers", "2"]) == 0
    run = _last_run(db)
    assert run.summary is not None
    assert run.summary.n_failed == 0
    assert _measure(run, "mine", "nDCG@10") == _ndcg_of_keyword_memory(demo)


def test_validate_checks_the_kwargs_against_the_factory_beside_the_suite(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    place: Place,
    demo: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    suites = tmp_path / "suites"
    module = place(suites, "mymemory", MEMORY)
    suite = _retrieval_suite(suites, module, demo)
    monkeypatch.chdir(tmp_path)
    assert main(["validate", str(suite)]) == 0, capsys.readouterr().err
    assert "suite 'beside': 1 subject, 1 task" in capsys.readouterr().out
    # and a misspelt kwarg is found in the factory's signature, not "cannot import"
    suite.write_text(suite.read_text().replace("boost_recent", "boost_recnt"))
    assert main(["validate", str(suite)]) == 2
    assert "did you mean 'boost_recent'?" in capsys.readouterr().err


def test_gate_learns_into_a_memory_from_the_current_directory(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    place: Place,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.syspath_prepend(str(SUBJECTS))  # the agent under test, not the point here
    db = str(tmp_path / "r.db")
    assert main(["run", str(gated_suite(tmp_path, right=6)), "--store", db]) == 0
    assert main(["run", str(gated_suite(tmp_path, right=2)), "--store", db]) == 0
    work = tmp_path / "work"
    module = place(work, "team_memory", MEMORY)
    monkeypatch.chdir(work)
    capsys.readouterr()
    into = f"python:{module}:KeywordMemory"
    code = main(["gate", str(tmp_path / "suite.yaml"), "--store", db, "--learn-into", into])
    err = capsys.readouterr().err
    assert code == 1, err  # the regression; was 2 (cannot import)
    assert "stored 1 failure memories" in err


def test_optimize_reads_the_factorys_defaults_beside_the_suite(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    place: Place,
    capsys: pytest.CaptureFixture[str],
) -> None:
    suites = tmp_path / "suites"
    module = place(suites, "adder", ADDER)
    items = [
        {"id": f"q{i}", "input": f"add {i} {i + 1}", "expected": str(2 * i + 1)} for i in range(10)
    ]
    suite = {
        "name": "opt",
        "subjects": {"agent": {"python": {"target": f"{module}:Adder", "kwargs": {"offset": 2}}}},
        "tasks": [
            {"name": "sums", "kind": "expected-output", "items": items, "evaluators": ["exact"]}
        ],
        # kwargs.scale is not given: its default comes from the factory's signature
        "optimization": {
            "space": {"kwargs.offset": "int:-2..2", "kwargs.scale": "int:1..2"},
            "seed": 1,
        },
    }
    path = suites / "suite.yaml"
    path.write_text(yaml.safe_dump(suite, sort_keys=False))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    db = tmp_path / "r.db"
    argv = ["optimize", str(path), "--store", str(db), "--max-iterations", "3", "--json"]
    code = main(argv)
    out, err = capsys.readouterr()
    assert code == 0, err
    data = json.loads(out.strip().splitlines()[-1])
    assert data["baseline"]["params"] == {"kwargs.offset": 2, "kwargs.scale": 1}
    assert data["baseline"]["score"] == 0.0  # every sum off by 2
    assert all(
        api.read_run(it["run_id"], store=db).status == "completed" for it in data["iterations"]
    )


def test_extraction_finds_the_extractor_in_the_current_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, place: Place
) -> None:
    work = tmp_path / "work"
    module = place(work, "myextractor", EXTRACTORS)
    monkeypatch.chdir(work)
    cases = str(DATA / "extraction" / "cases.json")
    db = tmp_path / "r.db"
    mine = f"{{python: {{target: '{module}:NaiveExtractor'}}}}"
    args = ["--match", "exact", "--no-targets", "--output", str(tmp_path / "o")]
    assert main(["extraction", cases, "--extractor", mine, "--store", str(db), *args]) == 0
    found = _last_run(db)
    # the same numbers as the same extractor found on sys.path
    monkeypatch.syspath_prepend(str(SUBJECTS))
    theirs = "{python: {target: 'extractors:NaiveExtractor'}}"
    assert main(["extraction", cases, "--extractor", theirs, "--store", str(db), *args]) == 0
    assert found.summary is not None
    assert found.summary.n_failed == 0
    expected = _last_run(db).summary
    assert expected is not None
    assert [m.value for m in found.summary.measures()] == [m.value for m in expected.measures()]
    assert any(m.value for m in found.summary.measures())


def test_operations_finds_the_decider_in_the_current_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, place: Place
) -> None:
    work = tmp_path / "work"
    module = place(work, "mydecider", DECIDER)
    monkeypatch.chdir(work)
    path = DATA / "operations" / "cases.json"
    db = tmp_path / "r.db"
    mine = f"{{python: {{target: '{module}:make'}}}}"
    out = tmp_path / "o"
    argv = ["operations", str(path), "--decider", mine, "--store", str(db), "--no-targets"]
    assert main([*argv, "--output", str(out)]) == 0
    run = _last_run(db)
    assert run.summary is not None
    assert run.summary.n_failed == 0
    cases = json.loads(path.read_text())["cases"]
    creates = sum(c["expected"]["action"] == "CREATE" for c in cases)
    # every decision CREATE: the action is right exactly where CREATE was expected
    assert _measure(run, "decider", "check.action") == pytest.approx(creates / len(cases))


def test_audit_finds_the_subject_in_the_current_directory(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    place: Place,
    llm_server: Any,
    capsys: pytest.CaptureFixture[str],
) -> None:
    work = tmp_path / "work"
    module = place(work, "mymemory", MEMORY)
    monkeypatch.chdir(work)
    argv = ["audit", str(DATA / "good" / "conversations.jsonl"), "--agent", "memory"]
    argv += ["--subject", f"python:{module}:KeywordMemory", "--scoring", "offline", "--json"]
    argv += ["--store", str(tmp_path / "r.db"), "--output", str(tmp_path / "o"), "--no-progress"]
    code = main(argv)
    out, err = capsys.readouterr()
    assert code == 0, err
    assert json.loads(out.strip().splitlines()[-1])["agent"] == "memory: fake"
    prompts = [r["json"]["messages"][-1]["content"] for r in llm_server.requests]
    # the memories the module's search found are in the reader's prompt
    assert prompts
    assert all("RETRIEVED MEMORIES:" in p for p in prompts)
    # keyword overlap: the question about where the user lives finds the Lisbon turn
    assert (
        "RETRIEVED MEMORIES:\n[2025-01-02 10:00] user: I live in Lisbon.\n\n"
        "QUESTION: What does the user live in?"
    ) in prompts


def test_the_pytest_plugin_finds_the_module_in_the_current_directory(
    tmp_path: Path, place: Place
) -> None:
    project = tmp_path / "project"
    demo = project / "demo"
    api.save_dataset(demo_dataset(), demo)
    module = place(project, "mymemory", MEMORY)
    # the test in tests/, the module at the project's root, where pytest is run: pytest puts
    # tests/ on sys.path, not the root
    (project / "tests").mkdir()
    (project / "tests" / "test_memory.py").write_text(
        "from memgauge.pytest_plugin import assert_retrieval\n\n\n"
        "def test_mine():\n"
        f"    report = assert_retrieval({str(demo)!r}, 'python:{module}:KeywordMemory', "
        "{'nDCG@10': 0.1})\n"
        "    assert report.status == 'completed'\n"
    )
    # -P: no directory of python's own on sys.path, as the `pytest` command runs (pytester's
    # run would put the directory on PYTHONPATH)
    done = subprocess.run(
        [
            sys.executable,
            "-P",
            "-m",
            "pytest",
            "-p",
            "memgauge.pytest_plugin",
            "-p",
            "no:cacheprovider",
            *QUIET_PLUGINS,  # no pyproject.toml here to turn them off (2-3 CPU-s a start)
        ],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 passed" in done.stdout
