"""Every evaluating command is a recorded run that resumes after kill -9: `evaluate`, `demo`,
`extraction`, `operations` and `audit` are killed mid-run, then finished with `--resume ID`;
nothing recorded before the kill is done again and the finished run is complete."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from tests.helpers import finished

from memgauge.cli.main import main
from memgauge.data.demo import demo_dataset
from memgauge.data.io import save_retrieval_dataset
from memgauge.llm import FakeOpenAIServer

DATA = Path(__file__).resolve().parents[1] / "data"
SUBJECTS = DATA / "subjects"
SHARED = Path(__file__).resolve().parents[2].parent / "shared" / "datasets"


def _kill_after(args: list[str], db: Path, at_least: int, env: dict[str, str]) -> str:
    proc = subprocess.Popen(
        [sys.executable, "-m", "memgauge.cli.main", *args],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 120
    try:
        while time.monotonic() < deadline:
            run_id, n = finished(db)
            if run_id is not None and n >= at_least:
                break
            if proc.poll() is not None:
                raise AssertionError(f"it ended before the kill: {proc.communicate()[1]!r}")
            time.sleep(0.05)
        else:
            raise AssertionError("no progress within 2 minutes")
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.communicate()
    assert run_id is not None
    return run_id


def _check(db: Path, run_id: str, before: int, n_items: int) -> None:
    with sqlite3.connect(db) as conn:
        status, kind = conn.execute(
            "SELECT status, kind FROM suite_runs WHERE run_id = ?", (run_id,)
        ).fetchone()
        attempts = [r[0] for r in conn.execute("SELECT attempts FROM suite_run_items")]
        (n_runs,) = conn.execute("SELECT COUNT(*) FROM suite_runs").fetchone()
    assert status == "completed"
    assert n_runs == 1  # the resume finished the same run
    assert len(attempts) == n_items
    assert all(a == 1 for a in attempts)  # nothing done twice
    assert before < n_items
    assert kind != "suite"


Command = Callable[[Path, Path], tuple[list[str], int]]


def _env(extra: dict[str, str] | None = None) -> dict[str, str]:
    path = os.pathsep.join([str(SUBJECTS), os.environ.get("PYTHONPATH", "")])
    return {**os.environ, "PYTHONPATH": path, **(extra or {})}


def test_evaluate_resumes_after_kill_9(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    data = tmp_path / "demo"
    save_retrieval_dataset(demo_dataset(), data)
    db = tmp_path / "r.db"
    args = [
        "evaluate",
        str(data),
        "-s",
        "python:slow:SlowMemory@slow",
        "-s",
        "lexical",
        "--store",
        str(db),
        "--out",
        str(tmp_path / "out"),
        "--quiet",
    ]
    run_id = _kill_after(args, db, 5, _env())
    before = finished(db)[1]
    monkeypatch.setenv("SLOW_SUBJECTS_DELAY", "0")  # slow only for the kill to land mid-run
    sys.path.insert(0, str(SUBJECTS))
    try:
        assert main([*args, "--resume", run_id]) == 0
    finally:
        sys.path.remove(str(SUBJECTS))
    _check(db, run_id, before, 2 * len(demo_dataset().qrels()))
    assert (tmp_path / "out" / "result.json").exists()


def test_bench_systems_resumes_after_kill_9(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    data = tmp_path / "demo"
    save_retrieval_dataset(demo_dataset(), data)
    db = tmp_path / "r.db"
    args = ["bench", "systems", "--dataset", str(data), "--no-discover"]
    args += ["-s", "python:slow:SlowMemory@slow", "-s", "lexical"]
    args += ["--store", str(db), "--out", str(tmp_path / "out"), "--quiet"]
    run_id = _kill_after(args, db, 5, _env())
    before = finished(db)[1]
    monkeypatch.setenv("SLOW_SUBJECTS_DELAY", "0")  # slow only for the kill to land mid-run
    sys.path.insert(0, str(SUBJECTS))
    try:
        assert main([*args, "--resume", run_id]) == 0
    finally:
        sys.path.remove(str(SUBJECTS))
    _check(db, run_id, before, 2 * len(demo_dataset().qrels()))
    assert run_id in (tmp_path / "out" / "result.json").read_text()
    assert "demo: systems ranked by nDCG@10" in capsys.readouterr().out


def test_demo_resumes_after_kill_9(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "r.db"
    args = ["demo", "--store", str(db), "--out", str(tmp_path / "out"), "--no-progress"]
    # an empty embeddings cache: the killed process embeds every memory and query itself, so
    # its dense systems are still running once the first lexical items are stored
    run_id = _kill_after(args, db, 1, _env({"MEMGAUGE_EMBEDDINGS": str(tmp_path / "cold")}))
    before = finished(db)[1]
    (tmp_path / "out" / "dataset" / "queries.jsonl").unlink()  # --resume writes it again
    assert main([*args, "--resume", run_id[:12]]) == 0
    _check(db, run_id, before, 4 * len(demo_dataset().qrels()))
    result = (tmp_path / "out" / "result.json").read_text()
    assert run_id in result
    assert f"recorded run {run_id}" in capsys.readouterr().out


def test_extraction_and_operations_resume_after_kill_9(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.syspath_prepend(str(SUBJECTS))
    for command, cases, flag, target in (
        ("extraction", DATA / "extraction" / "cases.json", "--extractor", "slow:SlowExtractor"),
        ("operations", DATA / "operations" / "cases.json", "--decider", "slow:SlowDecider"),
    ):
        db = tmp_path / f"{command}.db"
        args = [
            command,
            str(cases),
            flag,
            f"{{python: {{target: '{target}'}}}}",
            "--store",
            str(db),
            "--no-targets",
            "--concurrency",
            "1",
        ]
        run_id = _kill_after(args, db, 2, _env())
        before = finished(db)[1]
        with monkeypatch.context() as m:  # slow only for the kill to land mid-run
            m.setenv("SLOW_SUBJECTS_DELAY", "0")
            assert main([*args, "--resume", run_id]) == 0
        n = 10 if command == "extraction" else 9
        _check(db, run_id, before, n)


def test_audit_resumes_after_kill_9(
    tmp_path: Path, llm_server: FakeOpenAIServer, capsys: pytest.CaptureFixture[str]
) -> None:
    sample = SHARED / "memaudit-sample.json"
    if not sample.is_file():
        pytest.skip("../shared/datasets/memaudit-sample.json is not here")
    llm_server.latency = 0.3
    llm_server.respond(lambda payload: "I do not know.")
    db = tmp_path / "r.db"
    args = [
        "audit",
        str(sample),
        "--agent",
        "chat",
        "--scoring",
        "offline",
        "--concurrency",
        "1",
        "--store",
        str(db),
        "--output",
        str(tmp_path / "out"),
        "--no-progress",
    ]
    env = _env(
        {"OPENAI_BASE_URL": llm_server.base_url, "OPENAI_API_KEY": "k", "MEMGAUGE_MODEL": "fake"}
    )
    run_id = _kill_after(args, db, 3, env)
    before = finished(db)[1]
    llm_server.latency = 0.0
    assert main([*args, "--resume", run_id]) in (0, 1)
    _check(db, run_id, before, 14)


def test_resuming_another_commands_run_names_that_command(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`run SUITE --resume ID` of an `operations` run (or the other way round) said "the suite
    (or the command's options) changed", which sent one looking at the suite file."""
    import json

    db = str(tmp_path / "r.db")
    suite = str(DATA / "good" / "suite.yaml")
    operations = [
        "operations",
        str(DATA / "operations" / "cases.json"),
        "--decider",
        "{heuristic: {}}",
    ]
    assert main([*operations, "--store", db]) == 0
    assert main(["run", suite, "--store", db]) == 0
    capsys.readouterr()
    assert main(["runs", "list", "--store", db, "--json"]) == 0
    runs = {r["kind"]: r["run_id"] for r in json.loads(capsys.readouterr().out)}
    for args, other, started in (
        (["run", suite], runs["operations"], "operations"),
        (operations, runs["suite"], "run SUITE"),
    ):
        assert main([*args, "--store", db, "--resume", other]) == 2, args
        err = capsys.readouterr().err
        assert f"--resume {other}: that run was started by `memgauge {started}`" in err
