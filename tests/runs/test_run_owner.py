"""One process drives a run at a time: a live owner on this host is never displaced nor called
stale, a dead one (kill -9, or a pid reused by another process) is taken over without a flag, a
remote one only with --force, and of two processes racing to resume, exactly one drives."""

from __future__ import annotations

import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from memgauge._util.process import process_start
from memgauge.cli.main import main
from memgauge.llm import FakeOpenAIServer

LookupSuite = Callable[..., Path]  # the conftest fixtures' types
Spawn = Callable[..., "subprocess.Popen[str]"]


def _cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def _finished(db: Path) -> int:
    try:
        with sqlite3.connect(db, timeout=5) as conn:
            n: int = conn.execute(
                "SELECT COUNT(*) FROM suite_run_items WHERE status IN ('completed', 'failed')"
            ).fetchone()[0]
            return n
    except sqlite3.OperationalError:
        return 0


def _wait_finished(db: Path, at_least: int) -> None:
    deadline = time.monotonic() + 60
    while not (db.exists() and _finished(db) >= at_least):
        assert time.monotonic() < deadline, f"fewer than {at_least} items finished"
        time.sleep(0.05)


def _run_id(db: Path) -> str:
    with sqlite3.connect(db) as conn:
        (run_id,) = conn.execute("SELECT run_id FROM suite_runs").fetchone()
    return str(run_id)


def _half_done_run(
    make: LookupSuite, capsys: pytest.CaptureFixture[str], n: int
) -> tuple[Path, Path, str]:
    """A run of `n` items of which the second half is queued again: (suite, store, run id)."""
    path = make(n)
    db = path.parent / "r.db"
    assert _cli(capsys, "run", str(path), "--store", str(db))[0] == 0
    _requeue(db, n)
    return path, db, _run_id(db)


def _requeue(db: Path, n: int) -> None:
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE suite_run_items SET status = 'queued' WHERE seq >= ?", (n // 2,))


def _set_owner(db: Path, run_id: str, **cols: Any) -> None:
    """Make the run look `running` and driven by the given owner (pid, host, pid_start...)."""
    cols = {"status": "running", "owner": "their-token", **cols}
    sets = ", ".join(f"{k} = ?" for k in cols)
    with sqlite3.connect(db) as conn:
        conn.execute(f"UPDATE suite_runs SET {sets} WHERE run_id = ?", (*cols.values(), run_id))


@pytest.fixture
def sleeper() -> Iterator[subprocess.Popen[bytes]]:
    """A live process on this host that is not memgauge (a stand-in owner)."""
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    yield proc
    proc.kill()
    proc.wait()


def test_a_live_owner_is_refused_naming_its_pid_and_a_dead_one_is_taken_over(
    lookup_suite: LookupSuite,
    capsys: pytest.CaptureFixture[str],
    sleeper: subprocess.Popen[bytes],
) -> None:
    path, db, run_id = _half_done_run(lookup_suite, capsys, 10)
    pid = sleeper.pid
    _set_owner(db, run_id, pid=pid, host=socket.gethostname(), pid_start=process_start(pid))

    resume = ("run", str(path), "--store", str(db), "--resume", run_id)
    code, _, err = _cli(capsys, *resume)
    assert code == 2
    assert f"process {pid} on this host is driving this run" in err
    assert "Traceback" not in err
    code, _, err = _cli(capsys, *resume, "--force")  # --force never displaces a live local owner
    assert (code, str(pid) in err) == (2, True)
    assert _finished(db) == 5  # the refused resumes did nothing

    # the same pid, but started at another time: a process that got the pid later, not the owner
    _set_owner(db, run_id, pid_start="another-boot:1")
    code, out, _ = _cli(capsys, *resume)
    assert code == 0
    assert "resumed and finished: completed; 10 completed" in out

    # killed: the owner is gone and the run is taken over without a flag
    _requeue(db, 10)
    _set_owner(db, run_id, pid=pid, host=socket.gethostname(), pid_start=process_start(pid))
    code, out, _ = _cli(capsys, "runs", "show", run_id, "--store", str(db), "--json")
    assert json.loads(out)["warning"] is None  # alive: not stale, whatever its heartbeat
    sleeper.send_signal(signal.SIGKILL)
    sleeper.wait()
    code, out, _ = _cli(capsys, "runs", "show", run_id, "--store", str(db), "--json")
    assert "is gone" in json.loads(out)["warning"]
    code, out, _ = _cli(capsys, *resume)
    assert code == 0
    assert "10 completed" in out
    with sqlite3.connect(db) as conn:
        row = conn.execute("SELECT status, owner, pid FROM suite_runs").fetchone()
    assert row == ("completed", None, os.getpid())  # ended: ownership released


def test_a_remote_owner_is_taken_over_only_with_force(
    lookup_suite: LookupSuite, capsys: pytest.CaptureFixture[str]
) -> None:
    path, db, run_id = _half_done_run(lookup_suite, capsys, 6)
    _set_owner(db, run_id, pid=4242, host="build-box-7", heartbeat_at="2020-01-01T00:00:00+00:00")

    code, out, _ = _cli(capsys, "runs", "list", "--store", str(db), "--json")
    (listed,) = json.loads(out)
    assert "no heartbeat from process 4242 on host build-box-7" in listed["warning"]
    resume = ("run", str(path), "--store", str(db), "--resume", run_id)
    code, _, err = _cli(capsys, *resume)
    assert code == 2
    assert "process 4242 on host build-box-7" in err
    assert "--force" in err
    code, out, _ = _cli(capsys, *resume, "--force")
    assert code == 0
    assert "resumed and finished: completed; 6 completed" in out


def test_a_live_local_owner_is_never_stale_and_watch_follows_it_to_the_end(
    lookup_suite: LookupSuite,
    capsys: pytest.CaptureFixture[str],
    sleeper: subprocess.Popen[bytes],
    spawn: Spawn,
) -> None:
    _, db, run_id = _half_done_run(lookup_suite, capsys, 4)
    pid = sleeper.pid
    # alive on this host, silent for an hour (one item may take that long)
    _set_owner(
        db,
        run_id,
        pid=pid,
        host=socket.gethostname(),
        pid_start=process_start(pid),
        heartbeat_at="2020-01-01T00:00:00+00:00",
    )
    _, out, _ = _cli(capsys, "runs", "list", "--store", str(db), "--json")
    assert json.loads(out)[0]["warning"] is None
    _, out, _ = _cli(capsys, "runs", "list", "--store", str(db))
    assert "owner gone" not in out

    watch = spawn("runs", "watch", run_id, "--store", str(db), "--interval", "0.1")
    try:
        with pytest.raises(subprocess.TimeoutExpired):
            watch.communicate(timeout=3)  # still following: the owner is alive
        with sqlite3.connect(db) as conn:
            conn.execute("UPDATE suite_runs SET status = 'completed', owner = NULL")
        out, err = watch.communicate(timeout=30)
    finally:
        watch.kill()
    assert watch.returncode == 0, err
    assert f"run {run_id} of suite 'lookup': completed;" in out
    assert "warning" not in out


def test_two_processes_racing_to_resume_one_drives_and_no_item_is_asked_twice(
    tmp_path: Path, lookup_suite: LookupSuite, judge: FakeOpenAIServer, spawn: Spawn
) -> None:
    calls = tmp_path / "calls.txt"
    path = lookup_suite(100, judged=True, delay=0.05, calls_file=str(calls))
    db = tmp_path / "r.db"
    first = spawn(
        "run",
        str(path),
        "--store",
        str(db),
        "--no-progress",
        "--no-cache",
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        _wait_finished(db, 20)
    finally:
        first.send_signal(signal.SIGKILL)
        first.wait()
    run_id = _run_id(db)
    remaining = 100 - _finished(db)
    calls.unlink()
    judge.requests.clear()

    cmd = ("run", str(path), "--store", str(db), "--resume", run_id, "--no-cache")
    racers = [spawn(*cmd, "--no-progress", "--json") for _ in range(2)]
    results = [(p, *p.communicate(timeout=180)) for p in racers]
    codes = sorted(p.returncode for p, _, _ in results)
    assert codes == [0, 2], [err for _, _, err in results]
    (winner,) = [p for p, _, _ in results if p.returncode == 0]
    (loser_err,) = [err for p, _, err in results if p.returncode == 2]
    assert f"process {winner.pid}" in loser_err
    assert "Traceback" not in loser_err
    doc = next(json.loads(out.splitlines()[-1]) for p, out, _ in results if p.returncode == 0)
    assert (doc["status"], doc["n_completed"]) == ("completed", 100)
    # each remaining item was asked and judged once, by the one process driving the run
    assert len(calls.read_text().splitlines()) == remaining
    assert len(judge.requests) == remaining


def test_a_process_whose_run_is_taken_over_stops_and_leaves_the_run_to_the_new_owner(
    tmp_path: Path, lookup_suite: LookupSuite, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memgauge.errors import UsageError
    from memgauge.runs import engine, owner
    from memgauge.runs.suite import load_suite
    from memgauge.store.suite_runs import SuiteRunStore

    monkeypatch.setattr(owner, "HEARTBEAT_SECONDS", 0.05)
    path = lookup_suite(200, concurrency=1, delay=0.02)
    db = tmp_path / "r.db"

    def take_over() -> None:  # what `--resume ID --force` on another host does
        _wait_finished(db, 5)
        with sqlite3.connect(db, timeout=10) as conn:
            conn.execute("UPDATE suite_runs SET owner = 'theirs', pid = 4242, host = 'far'")

    thief = threading.Thread(target=take_over)
    thief.start()
    with SuiteRunStore(db) as store, pytest.raises(UsageError, match="taken over by process 4242"):
        engine.run_suite(load_suite(path), store, suite_path=path)
    thief.join()
    with sqlite3.connect(db) as conn:
        row = conn.execute("SELECT status, owner, pid, summary_json FROM suite_runs").fetchone()
    assert row == ("running", "theirs", 4242, None)  # untouched by the process that lost it
    assert _finished(db) < 200


def test_the_viewer_and_a_report_judge_a_running_run_by_its_owner(
    lookup_suite: LookupSuite,
    capsys: pytest.CaptureFixture[str],
    sleeper: subprocess.Popen[bytes],
    tmp_path: Path,
) -> None:
    """A run killed mid-way said `running` in the viewer for ever, its pages refreshing every
    2 s, while `runs list` and `runs show` flagged it with the command that finishes it; and a
    report (a file) of a running run said it refreshed itself, which a file never does."""
    from starlette.testclient import TestClient

    from memgauge.view.app import create_app

    _, db, run_id = _half_done_run(lookup_suite, capsys, 10)
    pid = sleeper.pid
    _set_owner(db, run_id, pid=pid, host=socket.gethostname(), pid_start=process_start(pid))
    live = 'data-live="1"'
    with TestClient(create_app(db)) as client:
        pages = [client.get(p).text for p in ("/", f"/runs/{run_id}", f"/runs/{run_id}/items")]
        assert all(live in page for page in pages)  # alive: followed, however long it takes
        assert "owner gone" not in pages[0]
        assert "is gone (killed?)" not in pages[1]
        report = tmp_path / "run.html"
        assert _cli(capsys, "report", run_id, "--store", str(db), "--out", str(report))[0] == 0
        assert "refreshes every 2 s" not in report.read_text()
        sleeper.send_signal(signal.SIGKILL)
        sleeper.wait()
        pages = [client.get(p).text for p in ("/", f"/runs/{run_id}", f"/runs/{run_id}/items")]
    assert not any(live in page for page in pages)
    assert "(owner gone?)" in pages[0]
    gone = f"process {pid} is gone (killed?); finish it with `memgauge run SUITE --resume {run_id}`"
    assert gone in pages[1]
    assert "refreshes every 2 s" not in pages[1]
