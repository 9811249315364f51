"""A SQLite store another process keeps locked for longer than the busy timeout (a large `runs
import`, a migration, someone's `sqlite3` shell): the command that waited for it ends with exit
3, saying so, as for an unreachable server; it used to end with SQLite's "database is locked"
as an internal error (exit 70, a traceback), and a run so stopped is finished with `--resume`."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from contextlib import closing, contextmanager
from pathlib import Path

import pytest
from tests.helpers import gated_suite, last_json, run_memgauge

from memgauge.store import connection
from memgauge.store.url import HEAD

DATA = Path(__file__).resolve().parents[1] / "data"


@contextmanager
def _held(db: Path) -> Iterator[None]:
    """The store's write lock, held by another connection (as another process would)."""
    with closing(sqlite3.connect(db, isolation_level=None)) as other:
        other.execute("BEGIN IMMEDIATE")
        yield
        other.execute("ROLLBACK")


def test_a_store_locked_past_the_busy_timeout_is_unavailable_not_a_bug(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.syspath_prepend(str(DATA / "subjects"))
    monkeypatch.setattr(connection, "BUSY_TIMEOUT_MS", 100)  # waited for 0.1 s, not 10
    suite, db = gated_suite(tmp_path, 4), tmp_path / "results.db"
    first = run_memgauge("run", str(suite), "--store", str(db), "--json")
    assert first.returncode == 0, first.stderr
    bundle = tmp_path / "run.json"
    run_id = last_json(first.stdout)["run_id"]
    out = run_memgauge("runs", "export", run_id, "--store", str(db), "--format", "bundle")
    assert out.returncode == 0, out.stderr
    bundle.write_text(out.stdout)
    assert run_memgauge("flags", "create", "F", "--store", str(db)).returncode == 0
    with _held(db):
        for args in (
            ["run", str(suite)],
            ["runs", "import", str(bundle)],
            ["flags", "set", "F", "--rollout", "50"],
        ):
            done = run_memgauge(*args, "--store", str(db))
            assert done.returncode == 3, (args, done.returncode, done.stderr)
            assert f"results store {db} stayed locked by another process" in done.stderr
            assert "Traceback" not in done.stderr
    listed = run_memgauge("runs", "list", "--store", str(db), "--json")
    assert listed.returncode == 0
    assert [r["run_id"] for r in json.loads(listed.stdout)] == [run_id]  # nothing half-written
    assert run_memgauge("run", str(suite), "--store", str(db)).returncode == 0


def test_a_store_locked_while_another_process_upgrades_it_is_unavailable_not_a_bug(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # another process migrating an older store holds its write lock (the commit's "a
    # migration"): the command that opened the store too waited in its own upgrade, and
    # ended there with "database is locked" as an internal error (exit 70, a traceback)
    monkeypatch.setattr(connection, "BUSY_TIMEOUT_MS", 250)
    db = tmp_path / "results.db"
    assert run_memgauge("flags", "create", "F", "--store", str(db)).returncode == 0
    older = f"{int(HEAD) - 1:04d}"
    with closing(sqlite3.connect(db, isolation_level=None)) as conn:
        conn.execute("UPDATE alembic_version SET version_num = ?", (older,))
    with _held(db):
        done = run_memgauge("flags", "set", "F", "--rollout", "50", "--store", str(db))
    assert done.returncode == 3, done.stderr
    # the timeout as it is, not rounded down to whole seconds ("for more than 0 s")
    assert f"results store {db} stayed locked by another process for more than 0.25 s (" in (
        done.stderr
    )
    assert "Traceback" not in done.stderr
    with closing(sqlite3.connect(db)) as conn:  # nothing migrated behind the lock
        assert conn.execute("SELECT version_num FROM alembic_version").fetchone() == (older,)
