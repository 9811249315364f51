"""The results store's SQLAlchemy engine on either dialect, its migration to the newest schema,
and what a lost server becomes.

SQLite: connections come from `connection.connect` (WAL, busy timeout, foreign keys; opening
retried while the file is locked), with the driver's own transaction handling off, so that
SQLAlchemy's transactions are SQLite's: `BEGIN` for reads (one snapshot for a reader's several
statements) and `BEGIN IMMEDIATE` for writes (the write lock taken up front: a deferred
transaction that reads first can fail with "database is locked" at once when another process
writes, busy timeout or not).

PostgreSQL: psycopg 3 (`memgauge[postgres]`), read committed; the compare-and-swap updates are
single statements, so row locks are all they need.

Migrations: Alembic, one history for both dialects (`store/revisions`). `upgrade` runs in one
transaction that holds the store's write lock (SQLite) or an advisory lock (PostgreSQL), so
processes opening a new store at once create it exactly once. A store already at `url.HEAD`
opens without loading Alembic.
"""

from __future__ import annotations

import random
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from importlib import resources
from typing import Any

import sqlalchemy as sa
from sqlalchemy import event

from memgauge.errors import UnavailableError, UsageError
from memgauge.store.connection import BUSY_TIMEOUT_MS, busy, connect
from memgauge.store.url import HEAD, StoreURL

__all__ = ["open_engine", "read", "unreachable", "upgrade", "write"]

#: pg_advisory_xact_lock key of a store's migration ("memgauge" in ASCII, as a bigint)
_MIGRATION_LOCK = 0x6D656D6761756765


def open_engine(url: StoreURL) -> sa.Engine:
    """An engine on the store at `url` (not yet migrated: see `upgrade`)."""
    if url.path is not None:
        path = url.path
        path.parent.mkdir(parents=True, exist_ok=True)

        def creator() -> sqlite3.Connection:
            conn = connect(path, check_same_thread=False)
            conn.isolation_level = None  # SQLAlchemy's BEGIN, not the driver's
            return conn

        engine = sa.create_engine(url.url, creator=creator, poolclass=sa.pool.NullPool)

        @event.listens_for(engine, "begin")
        def _begin(conn: sa.Connection) -> None:
            write = conn.get_execution_options().get("memgauge_write")
            conn.exec_driver_sql("BEGIN IMMEDIATE" if write else "BEGIN")

        return engine
    try:
        import psycopg  # noqa: F401
    except ImportError:
        raise UnavailableError(
            f"--store {url}: PostgreSQL needs its driver: pip install 'memgauge[postgres]'"
        ) from None
    return sa.create_engine(url.url, poolclass=sa.pool.NullPool)


def unreachable(url: StoreURL, exc: BaseException) -> UnavailableError:
    """The error a lost or unreachable server becomes (exit 3)."""
    orig = getattr(exc, "orig", None) or exc
    reason = " ".join(str(orig).split())
    return UnavailableError(
        f"results store {url} unreachable ({reason}). Nothing recorded so far is lost: once the"
        " server is back, finish a run with `--resume RUN_ID` (see `memgauge runs list`)"
    )


def lost(url: StoreURL, exc: sa.exc.DBAPIError) -> bool:
    """Whether `exc` means the server went away or cannot be reached (never so for SQLite,
    whose errors stay what they are)."""
    if url.is_sqlite:
        return False
    return bool(exc.connection_invalidated) or isinstance(
        exc, sa.exc.OperationalError | sa.exc.InterfaceError
    )


@contextmanager
def _translated(url: StoreURL) -> Iterator[None]:
    try:
        yield
    except sa.exc.DBAPIError as exc:
        if lost(url, exc):
            raise unreachable(url, exc) from None
        raise


@contextmanager
def read(conn: sa.Connection, url: StoreURL) -> Iterator[sa.Connection]:
    """A read transaction (one snapshot on SQLite)."""
    with _translated(url), conn.begin():
        yield conn


@contextmanager
def write(conn: sa.Connection, url: StoreURL) -> Iterator[sa.Connection]:
    """A write transaction: `BEGIN IMMEDIATE` on SQLite; committed at the end of the block,
    rolled back if it raises."""
    conn.execution_options(memgauge_write=True)
    try:
        with _translated(url), conn.begin():
            yield conn
    finally:
        conn.execution_options(memgauge_write=False)


def version(conn: sa.Connection) -> str | None:
    """The store's Alembic revision, or None (new, or made before Alembic)."""
    if not sa.inspect(conn).has_table("alembic_version"):
        return None
    row = conn.exec_driver_sql("SELECT version_num FROM alembic_version").first()
    return None if row is None else str(row[0])


def _alembic_config(conn: sa.Connection) -> Any:
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(resources.files("memgauge.store") / "revisions"))
    cfg.attributes["connection"] = conn
    return cfg


def _legacy(url: StoreURL) -> None:
    """Bring a SQLite store made before Alembic to 0009 with its own frozen migrations."""
    from memgauge.store.migrations import migrate

    assert url.path is not None
    conn = connect(url.path)
    try:
        legacy = conn.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'"
        ).fetchone()
        if legacy is not None:
            migrate(conn)
    finally:
        conn.close()


def _upgrade_once(engine: sa.Engine, url: StoreURL) -> list[str]:
    with engine.connect() as conn:
        conn.execution_options(memgauge_write=True)
        with conn.begin():
            if not url.is_sqlite:
                conn.execute(sa.text("SELECT pg_advisory_xact_lock(:k)"), {"k": _MIGRATION_LOCK})
            current = version(conn)
            if current == HEAD:
                return []
            from alembic import command
            from alembic.script import ScriptDirectory

            cfg = _alembic_config(conn)
            if current is None and sa.inspect(conn).has_table("schema_migrations"):
                command.stamp(cfg, "0009")
                current = "0009"
            script = ScriptDirectory.from_config(cfg)
            todo = [r.revision for r in script.iterate_revisions("head", current)]
            command.upgrade(cfg, "head")
            return list(reversed(todo))


def upgrade(engine: sa.Engine, url: StoreURL) -> list[str]:
    """Migrate the store to the newest revision; return the revisions applied (oldest first).

    Retried while a SQLite file is locked, up to the busy timeout: SQLite does not call its
    busy handler for every lock (see `connection`)."""
    try:
        if url.is_sqlite:
            _legacy(url)
        deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
        delay = 0.002
        while True:
            try:
                return _upgrade_once(engine, url)
            except sa.exc.OperationalError as exc:
                orig = exc.orig
                retry = isinstance(orig, sqlite3.OperationalError) and busy(orig)
                if not retry or time.monotonic() >= deadline:
                    raise
            time.sleep(delay * (0.5 + random.random()))
            delay = min(delay * 2, 0.1)
    except sa.exc.DBAPIError as exc:
        if url.is_sqlite:
            if isinstance(exc.orig, sqlite3.DatabaseError) and "not a database" in str(exc.orig):
                raise UsageError(
                    f"{url}: not a SQLite database; give the path of a memgauge store"
                    " (for example MEMGAUGE_HOME/results.db) or of a new file"
                ) from None
            raise
        raise unreachable(url, exc) from None
