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
import time
from pathlib import Path

from memgauge.store.url import HEAD

WORKER = """
import sys, time
from pathlib import Path
from memgauge.online.querylog import QueryLog
from memgauge.store.suite_runs import SuiteRunStore

root, t0, slot, trials = Path(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4])
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
print("\\n".join(failures))
"""

WORKERS, SLOTS, SLOT_S = 8, 24, 0.12


def test_simultaneous_opens_of_a_new_database_never_fail(tmp_path: Path) -> None:
    t0 = time.time() + 2.0  # time for every worker to start and import
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WORKER, str(tmp_path), str(t0), str(SLOT_S), str(SLOTS)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(WORKERS)
    ]
    failures = []
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        failures += out.split("\n") if out.strip() else []
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
