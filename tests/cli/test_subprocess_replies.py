"""What a `subprocess:` subject's replies make of a run, through `memgauge evaluate` with a real
child: a reply after its timeout fails its own query only; a log line on stdout fails the
subject saying where logs go."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from tests.helpers import run_memgauge

from memgauge.cli.main import main
from memgauge.data.demo import demo_dataset
from memgauge.data.io import save_retrieval_dataset

SCRIPT = Path(__file__).resolve().parents[1] / "data" / "subjects" / "keyword_memory.py"


def test_a_late_reply_fails_its_own_query_only(tmp_path: Path) -> None:
    save_retrieval_dataset(demo_dataset(), tmp_path / "dataset")
    spec = {"subprocess": {"command": [sys.executable, str(SCRIPT), "--fail=slow-once"]}}
    spec["subprocess"]["timeout"] = 0.5
    (tmp_path / "mine.yaml").write_text(yaml.safe_dump(spec))
    out = tmp_path / "o"
    args = ["evaluate", str(tmp_path / "dataset"), "-s", f"{tmp_path / 'mine.yaml'}@mine"]
    done = run_memgauge(*args, "--no-store", "--out", str(out), "--quiet")
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    (system,) = json.loads((out / "result.json").read_text())["systems"]
    errors = [q["error"] for q in system["per_query"] if q["error"]]
    assert len(errors) == 1, errors
    assert "no answer to 'search' within 0.5 s" in errors[0]
    counts = system["metrics"]["nDCG@10"]
    assert (counts["n_scored"], counts["n_failed"]) == (36, 1)


def test_a_log_line_on_stdout_says_to_log_to_stderr(tmp_path: Path) -> None:
    save_retrieval_dataset(demo_dataset(), tmp_path / "dataset")
    spec = {"subprocess": {"command": [sys.executable, str(SCRIPT), "--fail=log-to-stdout"]}}
    (tmp_path / "mine.yaml").write_text(yaml.safe_dump(spec))
    out = tmp_path / "o"
    args = ["evaluate", str(tmp_path / "dataset"), "-s", "lexical"]
    done = run_memgauge(
        *args, "-s", f"{tmp_path / 'mine.yaml'}@mine", "--no-store", "--out", str(out)
    )
    assert done.returncode == 4, done.stdout[-2000:] + done.stderr[-2000:]
    said = " ".join(done.stdout.split())
    assert (
        "wrote a line that is not JSON: 'loading index from ./memory.db'; stdout is for JSON "
        "responses only: write logs to stderr"
    ) in said, said[-2000:]


def test_a_child_that_never_flushes_is_asked_whether_it_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The quick start's program without `flush=True`: its replies sit in its stdout buffer
    (a pipe is block-buffered), so memgauge waits for the first till the timeout."""
    monkeypatch.delenv("PYTHONUNBUFFERED", raising=False)  # as on a user's machine
    script = tmp_path / "my_memory.py"
    script.write_text(
        "import json, sys\n"
        "for line in sys.stdin:\n"
        "    req = json.loads(line)\n"
        "    print(json.dumps({'id': req['id'], 'result': None}))\n"
    )
    save_retrieval_dataset(demo_dataset(), tmp_path / "dataset")
    spec = {"subprocess": {"command": [sys.executable, str(script)], "timeout": 0.5}}
    (tmp_path / "mine.yaml").write_text(yaml.safe_dump(spec))
    args = ["evaluate", str(tmp_path / "dataset"), "-s", f"{tmp_path / 'mine.yaml'}@mine"]
    done = run_memgauge(*args, "--no-store", "--out", str(tmp_path / "o"))
    assert done.returncode == 4, done.stdout[-2000:] + done.stderr[-2000:]
    said = " ".join(done.stdout.split())
    assert (
        "no answer to 'reset' within 0.5 s; it has answered nothing yet: does it flush its "
        "stdout after each line (print(..., flush=True))?"
    ) in said, said[-2000:]


def _project(tmp_path: Path, child: dict[str, Any], program_in: str = ".") -> None:
    """tmp_path/project: a suite of one subprocess subject (`child`) on the demo dataset
    beside it, its program (the keyword memory's script) in `program_in` there."""
    project = tmp_path / "project"
    (project / program_in).mkdir(parents=True, exist_ok=True)
    (project / program_in / "my_memory.py").write_text(SCRIPT.read_text())
    save_retrieval_dataset(demo_dataset(), project / "dataset")
    task = {
        "name": "recall",
        "kind": "retrieval",
        "dataset": "dataset",
        "evaluators": [{"retrieval": "nDCG@10"}],
    }
    suite = {"name": "mine", "subjects": {"mine": {"subprocess": child}}, "tasks": [task]}
    (project / "suite.yaml").write_text(yaml.safe_dump(suite))


def test_a_suites_program_runs_in_the_suites_directory(tmp_path: Path) -> None:
    """`command: [python, my_memory.py]` in a suite names the program beside the suite, as its
    dataset and its python: targets are: run from another directory, it is still found."""
    _project(tmp_path, {"command": [sys.executable, "my_memory.py"]})
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    store = str(tmp_path / "r.db")
    done = run_memgauge("run", "../project/suite.yaml", "--store", store, cwd=elsewhere)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "37 completed, 0 failed" in done.stdout


def test_a_suites_relative_cwd_starts_in_the_suites_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`cwd: tools` in a suite is the tools directory beside the suite, as its dataset's path
    and its program's are read: it was memgauge's own directory's `tools`, so the run failed
    every item (or started nothing) when run from elsewhere."""
    _project(tmp_path, {"command": [sys.executable, "my_memory.py"], "cwd": "tools"}, "tools")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    assert main(["run", "../project/suite.yaml", "--store", str(tmp_path / "r.db")]) == 0
    assert "37 completed, 0 failed" in capsys.readouterr().out
