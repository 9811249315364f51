"""A new SQLite store is made from the statements the migrations leave (`store/fresh_schema`),
not by running them: the store it gives is the migrations' own, object by object and row by
row, and making it loads no Alembic."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

from memgauge.store import fresh_schema
from memgauge.store.engine import open_engine, upgrade
from memgauge.store.suite_runs import SuiteRunStore
from memgauge.store.url import HEAD, store_url

_REVISIONS = [f"{n:04d}" for n in range(9, int(HEAD) + 1)]


def _made(path: Path, *, cached: bool) -> list[str]:
    url = store_url(str(path))
    engine = open_engine(url)
    try:
        return upgrade(engine, url, cached=cached)
    finally:
        engine.dispose()


def _everything(path: Path) -> dict[str, Any]:
    """What a store is: its `sqlite_master` rows in order, each table's columns and rows, the
    pragmas a migration could set."""
    conn = sqlite3.connect(path)
    try:
        master = conn.execute(
            "SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY rowid"
        ).fetchall()
        tables = [name for kind, name, _, _ in master if kind == "table"]
        return {
            "master": master,
            "columns": {t: conn.execute(f"PRAGMA table_xinfo('{t}')").fetchall() for t in tables},
            "rows": {t: sorted(map(repr, conn.execute(f"SELECT * FROM '{t}'"))) for t in tables},
            "pragmas": [
                conn.execute(f"PRAGMA {p}").fetchall()
                for p in ("user_version", "application_id", "journal_mode", "auto_vacuum")
            ],
        }
    finally:
        conn.close()


def test_a_new_store_is_the_store_the_migrations_make(tmp_path: Path) -> None:
    migrated, cached = tmp_path / "migrated.db", tmp_path / "cached.db"
    assert _made(migrated, cached=False) == _REVISIONS
    assert _made(cached, cached=True) == _REVISIONS
    conn = sqlite3.connect(migrated)
    try:
        statements = fresh_schema.schema_statements(conn)
    finally:
        conn.close()
    # the shipped file is what the migrations give now (else: python -m memgauge.store.refresh_schema)
    assert fresh_schema.cached_statements(HEAD) == tuple(statements)
    assert _everything(cached) == _everything(migrated)
    # and the store opens, records and reads as one the migrations made
    with SuiteRunStore(cached) as store:
        assert store.list_runs() == []


def test_a_cached_schema_of_another_revision_is_not_used(tmp_path: Path) -> None:
    fresh_schema.write_schema(tmp_path / "old.sql", "0021", ["CREATE TABLE t (x)"])
    text = (tmp_path / "old.sql").read_text()
    assert fresh_schema._parse(text) == ("0021", ["CREATE TABLE t (x)"])
    fresh_schema.cached_statements.cache_clear()
    try:
        assert fresh_schema.cached_statements("9999") is None
    finally:
        fresh_schema.cached_statements.cache_clear()


def test_a_store_not_empty_nor_at_a_revision_is_left_to_the_migrations(tmp_path: Path) -> None:
    path = tmp_path / "other.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE notes (x)")
    conn.commit()
    conn.close()
    assert _made(path, cached=True) == _REVISIONS
    names = {name for _, name, _, _ in _everything(path)["master"]}
    assert {"notes", "suite_runs", "alembic_version"} <= names


_PROBE = (
    "import json, sys\n"
    "from memgauge.store.suite_runs import SuiteRunStore\n"
    "with SuiteRunStore(sys.argv[1]) as store:\n"
    "    store.list_runs()\n"
    "print(json.dumps(sorted(sys.modules)))\n"
)


def test_making_a_new_store_loads_no_alembic(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-c", _PROBE, str(tmp_path / "new.db")],
        capture_output=True,
        text=True,
        env=dict(os.environ),
        timeout=120,
        check=True,
    )
    modules = json.loads(proc.stdout.strip().splitlines()[-1])
    assert [m for m in modules if m.split(".")[0] in ("alembic", "mako", "pygments")] == []
