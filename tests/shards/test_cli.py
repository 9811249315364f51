"""`--workers` and `--executor` on the command line: kill -9 of the driver mid-run, then
`--resume` finishes the run with nothing done twice; Dask missing is exit 3 with the pip
command; the flags reach every evaluating command."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from tests.helpers import finished
from tests.shards.runs_alike import SUBJECTS

from memgauge import api
from memgauge.cli.main import main


def _env() -> dict[str, str]:
    return {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(SUBJECTS), os.environ.get("PYTHONPATH", "")]),
    }


def test_kill_9_of_a_sharded_driver_then_resume_finishes_the_run_once(
    locomo_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "r.db"
    slow = json.dumps(
        {"python": {"target": "shard_subjects:SlowIngestMemory", "kwargs": {"per_memory": 0.03}}}
    )
    spec = tmp_path / "slow.json"
    spec.write_text(slow)
    args = ["evaluate", str(locomo_dir), "-s", f"{spec}@slow", "--store", str(db)]
    args += ["--out", str(tmp_path / "out"), "--no-progress"]
    # its own session: kill -9 reaches the driver and its worker processes, as a lost host would
    proc = subprocess.Popen(
        [sys.executable, "-m", "memgauge.cli.main", *args, "--workers", "2"],
        env=_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline:
            run_id, before = finished(db)
            if run_id is not None and before > 0:
                break
            if proc.poll() is not None:
                raise AssertionError(f"it ended before the kill: {proc.communicate()[1]!r}")
            time.sleep(0.05)
        else:
            raise AssertionError("no shard came back within 3 minutes")
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
    run_id, before = finished(db)
    assert run_id is not None
    assert 0 < before < 60
    code = main([*args, "--workers", "2", "--resume", run_id])
    assert code == 0, capsys.readouterr()
    with sqlite3.connect(db) as conn:
        (status,) = conn.execute("SELECT status FROM suite_runs").fetchone()
        rows = conn.execute("SELECT item_id, status, attempts FROM suite_run_items").fetchall()
    assert status == "completed"
    assert len(rows) == 60
    assert len({r[0] for r in rows}) == 60
    assert all(r[1] == "completed" and r[2] == 1 for r in rows)  # nothing done twice


def _session(sid: int) -> dict[int, tuple[int, str]]:
    """The live processes of session `sid` (pid: parent, command line), read from /proc: a
    process keeps its session when it is orphaned, so its driver's workers stay findable."""
    out = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:  # ended while we looked
            continue
        state, ppid, _pgrp, session = stat[stat.rindex(")") + 2 :].split()[:4]
        if int(session) == sid and state != "Z":
            out[int(entry.name)] = (int(ppid), cmdline)
    return out


@pytest.mark.skipif(not Path("/proc/self/stat").is_file(), reason="reads processes in /proc")
def test_kill_9_of_the_driver_alone_ends_its_workers_and_the_resource_tracker(
    locomo_dir: Path, tmp_path: Path
) -> None:
    pids = tmp_path / "pids"
    pids.mkdir()
    slow = {"python": {"target": "shard_subjects:PidMemory", "kwargs": {"pids": str(pids)}}}
    slow["python"]["kwargs"]["per_memory"] = 0.2  # 36 s of ingest: still running at the kill
    task = {"name": "recall", "kind": "retrieval", "dataset": str(locomo_dir), "k": 5}
    task["evaluators"] = [{"retrieval": "Recall@5"}]
    suite = tmp_path / "suite.yaml"
    suite.write_text(json.dumps({"name": "s", "subjects": {"slow": slow}, "tasks": [task]}))
    args = ["run", str(suite), "--store", str(tmp_path / "r.db"), "--no-progress"]
    # its own session, so that its orphans can be found (and ended, if the test fails); stderr
    # to a file, which the orphans would hold open as they would a pipe
    err = tmp_path / "stderr"
    with err.open("wb") as stderr:
        proc = subprocess.Popen(
            [sys.executable, "-m", "memgauge.cli.main", *args, "--workers", "2"],
            env=_env(),
            stdout=subprocess.DEVNULL,
            stderr=stderr,
            start_new_session=True,
        )
    try:
        deadline = time.monotonic() + 120
        while len(list(pids.iterdir())) < 2:  # both workers are running a shard
            assert proc.poll() is None, f"it ended before the kill: {err.read_text()}"
            assert time.monotonic() < deadline, "the workers did not start within 2 minutes"
            time.sleep(0.05)
        children = {p: cmd for p, (ppid, cmd) in _session(proc.pid).items() if ppid == proc.pid}
        assert sum("spawn_main" in cmd for cmd in children.values()) == 2
        assert sum("resource_tracker" in cmd for cmd in children.values()) == 1
        assert {int(p.name) for p in pids.iterdir()} <= set(children)
        proc.kill()  # the driver alone: its children see it die, nobody signals them
        proc.wait()
        deadline = time.monotonic() + 15
        while _session(proc.pid) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert _session(proc.pid) == {}
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)  # what is left of a failed test
        proc.wait()


def _evaluate_on(executor: str, dataset: Path, out: Path) -> int:
    args = ["evaluate", str(dataset), "-s", "lexical", "--no-store", "--executor", executor]
    return main([*args, "--out", str(out)])


def test_dask_missing_is_exit_3_with_the_pip_command(
    locomo_dir: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setitem(sys.modules, "distributed", None)  # import distributed -> ImportError
    assert _evaluate_on("dask:local", locomo_dir, tmp_path / "out") == 3
    assert "pip install 'memgauge[dask]'" in capsys.readouterr().err


@pytest.mark.parametrize("command", ["run", "evaluate", "audit", "extraction", "operations"])
def test_every_evaluating_command_takes_workers_and_executor(
    command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([command, "--help"]) == 0
    text = capsys.readouterr().out
    assert "--workers" in text
    assert "--executor" in text


def test_an_unknown_executor_is_exit_2(
    locomo_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _evaluate_on("ray", locomo_dir, tmp_path / "out") == 2
    assert "use process, dask:local or dask://HOST:PORT" in capsys.readouterr().err


@pytest.mark.parametrize("address", ["dask://", "dask://host", "dask://:", "tcp://h:99999"])
def test_a_scheduler_address_without_host_or_port_is_exit_2_before_the_run(
    address: str, locomo_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`dask://` or `dask://host` was Dask's ValueError deep in the run (a traceback, exit
    70); a port past 65535 waited 20 s for a scheduler that cannot be there (exit 3)."""
    assert _evaluate_on(address, locomo_dir, tmp_path / "out") == 2
    err = capsys.readouterr().err
    assert f"--executor {address!r}: give the scheduler as" in err
    assert "HOST:PORT (a port from 1 to 65535)" in err
    assert "Traceback" not in err
    assert not (tmp_path / "out").exists()


MEMAUDIT = Path(__file__).resolve().parents[3] / "shared" / "datasets" / "memaudit-sample.json"


def test_an_llm_subject_calls_from_the_workers_its_spend_is_recorded_and_replays_exactly(
    llm_server: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "r.db"
    args = ["audit", str(MEMAUDIT), "--agent", "chat", "--model", "fake", "--scoring", "offline"]
    args += ["--store", str(db), "--workers", "2", "--json", "--no-progress"]
    assert main([*args, "--output", str(tmp_path / "a")]) == 0, capsys.readouterr().err
    first = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    calls = len(llm_server.requests)
    with api.open_store(db) as store:
        n = len(store.item_records(first["run_id"]))
    # every probe asked from the workers (two probes asking the same were one request), and
    # their spend came back with the shards
    assert first["llm_usage"]["fake"]["calls"] == n > 10
    assert first["llm_usage"]["fake"]["requests"] == calls > 10
    # the workers read the driver's cache: a replay makes no call and gives the same answers
    assert main([*args, "--output", str(tmp_path / "b"), "--cache-only"]) == 0
    again = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert len(llm_server.requests) == calls
    assert again["metrics"] == first["metrics"]
    with api.open_store(db) as store:
        runs = [store.item_records(run_id) for run_id in (first["run_id"], again["run_id"])]
    assert [(r.item_id, r.output) for r in runs[0]] == [(r.item_id, r.output) for r in runs[1]]
    assert all(r.output for r in runs[0])


def test_a_bad_llm_concurrency_is_refused_before_a_sharded_run_is_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The workers' share of MEMGAUGE_LLM_CONCURRENCY was read once the run was recorded and
    the pool started: a value out of range (no LLM judge having read it before) left a run
    recorded for exit 2. It is refused first, nothing written."""
    from memgauge.data.demo import demo_dataset
    from memgauge.data.io import save_retrieval_dataset

    data = tmp_path / "demo"
    save_retrieval_dataset(demo_dataset(), data)
    db = tmp_path / "r.db"
    monkeypatch.setenv("MEMGAUGE_LLM_CONCURRENCY", "-3")
    args = ["evaluate", str(data), "-s", "lexical", "--store", str(db), "--quiet"]
    assert main([*args, "--workers", "2", "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "MEMGAUGE_LLM_CONCURRENCY='-3' is out of range" in err, err
    assert finished(db) == (None, 0)
