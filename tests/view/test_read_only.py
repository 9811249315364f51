"""The viewer opens the store read-only: it refuses a store at an older schema naming the
command that upgrades it (and that command works), refuses a newer one, and cannot write."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest
import sqlalchemy as sa
from alembic.script import ScriptDirectory
from viewer_store import ViewerStore, snapshot

from memgauge.cli.main import main
from memgauge.errors import UsageError
from memgauge.store import revisions
from memgauge.store.engine import UPGRADE_COMMAND
from memgauge.store.run_pages import RunReader
from memgauge.store.url import HEAD
from memgauge.view.app import create_app


def _older(tmp_path: Path, store: ViewerStore) -> Path:
    """A copy of the store as an older memgauge left it: its last revision not applied (the
    one before it as the scripts chain them, not HEAD - 1: revision numbers may skip)."""
    db = tmp_path / "old.db"
    shutil.copy(store.path, db)
    scripts = ScriptDirectory(str(Path(revisions.__file__).parent))
    conn = sqlite3.connect(db)
    conn.execute(
        "UPDATE alembic_version SET version_num = ?", (scripts.get_revision(HEAD).down_revision,)
    )
    conn.commit()
    conn.close()
    return db


def test_an_older_schema_is_refused_with_the_upgrade_command(
    tmp_path: Path, viewer_store: ViewerStore, capsys: pytest.CaptureFixture[str]
) -> None:
    db = _older(tmp_path, viewer_store)
    with pytest.raises(UsageError, match="older schema") as err:
        create_app(db)
    assert UPGRADE_COMMAND in str(err.value)
    assert main(["view", "--store", str(db), "--port", "0"]) == 2
    said = capsys.readouterr()
    assert "memgauge runs upgrade" in said.err
    assert "Ctrl-C stops" not in said.out  # no address announced for a store it refuses
    assert main(["report", "x", "--out", str(tmp_path / "r.html"), "--store", str(db)]) == 2


def test_runs_upgrade_brings_the_store_to_this_schema(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A store with no migration applied yet (the oldest schema there is) is refused, then
    upgraded by the command the refusal names, then read."""
    fresh = tmp_path / "fresh.db"
    conn = sqlite3.connect(fresh)
    conn.execute("CREATE TABLE schema_migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)")
    conn.commit()
    conn.close()
    with pytest.raises(UsageError, match="older schema"):
        RunReader(fresh)
    assert main(["runs", "upgrade", "--store", str(fresh)]) == 0
    assert "applied 0001_runs" in capsys.readouterr().out
    RunReader(fresh).close()
    assert main(["runs", "upgrade", "--store", str(fresh)]) == 0
    assert "up to date" in capsys.readouterr().out


def test_a_newer_schema_and_a_foreign_file_are_refused(
    tmp_path: Path, viewer_store: ViewerStore
) -> None:
    db = tmp_path / "new.db"
    shutil.copy(viewer_store.path, db)
    conn = sqlite3.connect(db)
    conn.execute("UPDATE alembic_version SET version_num = '9999'")
    conn.commit()
    conn.close()
    with pytest.raises(UsageError, match="newer memgauge"):
        RunReader(db)
    other = tmp_path / "other.db"
    sqlite3.connect(other).close()
    other.write_bytes(b"")
    with pytest.raises(UsageError, match="not a memgauge results store"):
        RunReader(other)
    text = tmp_path / "notes.db"
    text.write_text("hello, not a database at all " * 100)
    with pytest.raises(UsageError, match="cannot be read as a memgauge store"):
        RunReader(text)
    with pytest.raises(UsageError, match="no results store"):
        create_app(tmp_path / "missing.db")


def test_the_viewers_connection_cannot_write(viewer_store: ViewerStore) -> None:
    before = snapshot(viewer_store.path)
    with RunReader(viewer_store.path) as reader:
        with pytest.raises(sa.exc.OperationalError, match=r"readonly|read-only|query_only"):
            reader._conn.exec_driver_sql("DELETE FROM suite_runs")
        reader._conn.rollback()
        with pytest.raises(sa.exc.OperationalError):
            reader.set_status(viewer_store.judged[0], "failed")
    assert snapshot(viewer_store.path) == before


def test_an_unreachable_postgresql_store_is_exit_3_before_the_port_is_bound(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A server store that cannot be reached is exit 3 with its password masked, from --store
    or from MEMGAUGE_STORE, and `report` writes nothing."""
    url = "postgresql://memgauge:secret@127.0.0.1:1/memgauge"
    assert main(["view", "--store", url, "--port", "0"]) == 3
    err = capsys.readouterr().err
    assert "unreachable" in err
    assert "secret" not in err
    monkeypatch.setenv("MEMGAUGE_STORE", url)
    assert main(["report", "x", "--out", str(tmp_path / "r.html")]) == 3
    assert "unreachable" in capsys.readouterr().err
    assert not (tmp_path / "r.html").exists()
