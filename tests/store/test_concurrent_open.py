"""Many processes opening one new database at the same moment never fail (issue 13, item 5).

SQLite does not call its busy handler when switching a new file to WAL while another process
does the same: before the fix, `database is locked` came from `PRAGMA journal_mode = WAL` in
about one open in twenty. Eight processes here open a fresh file together in each of 24 time
slots (the logging SDK's `QueryLog` and the results store's `SuiteRunStore`, alternately), 192
simultaneous opens in all; every one must succeed, with the schema in place.
"""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

from memgauge.store.url import HEAD

WORKER = """
import os, sys, time
from pathlib import Path
from memgauge.online.querylog import QueryLog
from memgauge.store.suite_runs import SuiteRunStore

root, workers = Path(sys.argv[1]), int(sys.argv[2])
slot, trials = float(sys.argv[3]), int(sys.argv[4])
t0 = time.time() + 0.3  # time for every worker to be forked


def opens(out):
    failures = []
    for t in range(trials):
        start = t0 + t * slot
        while (wait := start - time.time()) > 0:  # every worker opens the file at this moment
            time.sleep(wait if wait > 0.002 else 0)
        try:
            if t % 2 == 0:
                QueryLog(root / f"log{t}.db").close()
            else:
                SuiteRunStore(root / f"runs{t}.db").close()
        except Exception as exc:
            failures.append(f"slot {t}: {type(exc).__name__}: {exc}")
    out.write_text("\\n".join(failures))


pids = []
for w in range(workers):
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            opens(root / f"failures{w}.txt")
            code = 0
        finally:
            os._exit(code)
    pids.append(pid)
for pid in pids:
    status = os.waitpid(pid, 0)[1]
    assert os.waitstatus_to_exitcode(status) == 0, status
"""

WORKERS, SLOTS, SLOT_S = 8, 24, 0.12


def test_simultaneous_opens_of_a_new_database_never_fail(tmp_path: Path) -> None:
    # one process imports memgauge and forks the eight (each its own process, its own
    # connections): not eight imports of SQLAlchemy and Alembic
    done = subprocess.run(
        [sys.executable, "-c", WORKER, str(tmp_path), str(WORKERS), str(SLOT_S), str(SLOTS)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    failures = []
    for w in range(WORKERS):
        text = (tmp_path / f"failures{w}.txt").read_text()
        failures += text.split("\n") if text.strip() else []
    assert failures == []
    for t in range(SLOTS):
        name = f"log{t}.db" if t % 2 == 0 else f"runs{t}.db"
        con = sqlite3.connect(tmp_path / name)
        try:
            assert con.execute("PRAGMA journal_mode").fetchone() == ("wal",)
            (version,) = con.execute("SELECT version_num FROM alembic_version").fetchone()
        finally:
            con.close()
        assert version == HEAD
