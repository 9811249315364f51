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
opens without loading Alembic, and so does a new SQLite store (`fresh_schema`).
"""

from __future__ import annotations

import os
import random
import sqlite3
import time
from collections.abc import Callable, Iterator
from contextlib import closing, contextmanager
from importlib import resources
from pathlib import Path
from typing import Any
from urllib.parse import quote

import sqlalchemy as sa
from sqlalchemy import event

from memgauge.errors import UnavailableError, UsageError
from memgauge.store import connection
from memgauge.store.connection import busy, connect
from memgauge.store.fresh_schema import cached_statements
from memgauge.store.url import HEAD, RUNS, Records, StoreURL, given_store, nothing_recorded

__all__ = [
    "UPGRADE_COMMAND",
    "damaged",
    "open_engine",
    "open_read_only",
    "read",
    "schema_problem",
    "sqlite_problem",
    "unreachable",
    "upgrade",
    "upgrade_store",
    "write",
]

#: what brings a store to this memgauge's schema (any command that writes to it does too)
UPGRADE_COMMAND = "memgauge runs upgrade --store PATH"

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
    return _server_engine(url)


def _server_engine(url: StoreURL, **connect_args: Any) -> sa.Engine:
    """An engine on the PostgreSQL store at `url` (exit 3 without the driver)."""
    try:
        import psycopg  # noqa: F401
    except ImportError:
        raise UnavailableError(
            f"{given_store(url)}: PostgreSQL needs its driver: pip install 'memgauge[postgres]'"
        ) from None
    try:
        return sa.create_engine(url.url, poolclass=sa.pool.NullPool, connect_args=connect_args)
    except (ValueError, sa.exc.ArgumentError) as exc:  # what `url.store_url`'s check let by
        raise UsageError(f"{given_store(url)}: not a valid server URL ({exc})") from None


def unreachable(url: StoreURL, exc: BaseException) -> UnavailableError:
    """The error a lost or unreachable server becomes (exit 3)."""
    orig = getattr(exc, "orig", None) or exc
    reason = " ".join(str(orig).split())
    return UnavailableError(
        f"results store {url} unreachable ({reason}). Nothing recorded so far is lost: once the"
        " server is back, finish a run with `--resume RUN_ID` (see `memgauge runs list`)"
    )


def damaged(url: StoreURL, exc: sa.exc.DBAPIError) -> UsageError | None:
    """The error a SQLite file that is not a database, or a damaged one, becomes (exit 2);
    None for any other error (a lock, a full disk, a server's)."""
    orig = exc.orig
    if not url.is_sqlite or not isinstance(orig, sqlite3.DatabaseError):
        return None
    if isinstance(orig, sqlite3.OperationalError):  # locked, read-only, ...: not the file
        return None
    if "not a database" in str(orig):
        return UsageError(
            f"{url}: not a SQLite database; give the path of a memgauge store"
            " (for example MEMGAUGE_HOME/results.db) or of a new file"
        )
    return UsageError(
        f"{url}: cannot be read as a memgauge store ({orig}): the file is damaged; restore it"
        " from a backup, or give the path of another store or of a new file"
    )


def lost(url: StoreURL, exc: sa.exc.DBAPIError) -> bool:
    """Whether `exc` means the server went away or cannot be reached (never so for SQLite,
    whose errors stay what they are)."""
    if url.is_sqlite:
        return False
    return bool(exc.connection_invalidated) or isinstance(
        exc, sa.exc.OperationalError | sa.exc.InterfaceError
    )


def locked(url: StoreURL, exc: sa.exc.DBAPIError) -> UnavailableError | None:
    """The error a SQLite store whose lock another process held past the busy timeout becomes
    (exit 3, as an unreachable server: nothing recorded is lost, and the command can be run
    again or the run resumed once the lock is free); None for any other error."""
    orig = exc.orig
    if not url.is_sqlite or not isinstance(orig, sqlite3.OperationalError) or not busy(orig):
        return None
    return UnavailableError(
        f"results store {url} stayed locked by another process for more than"
        f" {connection.BUSY_TIMEOUT_MS / 1000:g} s ({orig}). Nothing recorded so far is lost:"
        " once that process is done, run the command again, or finish a run with `--resume RUN_ID`"
        " (see `memgauge runs list`)"
    )


def sqlite_problem(url: StoreURL, exc: sa.exc.DBAPIError) -> UsageError | UnavailableError | None:
    """What a SQLite store's error met while opening or migrating it becomes: a damaged file
    (exit 2, `damaged`) or a lock held past the busy timeout (exit 3, `locked`); None for any
    other error."""
    return damaged(url, exc) or locked(url, exc)


@contextmanager
def _translated(url: StoreURL) -> Iterator[None]:
    try:
        yield
    except sa.exc.DBAPIError as exc:
        if lost(url, exc):
            raise unreachable(url, exc) from None
        if (error := locked(url, exc)) is not None:
            raise error from None
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


def _legacy(url: StoreURL) -> list[str]:
    """Bring a SQLite store made before Alembic to 0009 with its own frozen migrations; their
    names (none when there were none to apply)."""
    from memgauge.store.migrations import migrate

    assert url.path is not None
    with closing(connect(url.path)) as conn:
        legacy = conn.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'"
        ).fetchone()
        return migrate(conn) if legacy is not None else []


def _created(conn: sa.Connection) -> list[str] | None:
    """An empty SQLite file given the schema the migrations make (`fresh_schema`), in the
    caller's transaction: the revisions that made it, oldest first; None when the file is not
    empty or the cached statements are not at `HEAD`."""
    statements = cached_statements(HEAD)
    if statements is None:
        return None
    if conn.exec_driver_sql("SELECT count(*) FROM sqlite_master").scalar():
        return None
    for statement in statements:
        conn.exec_driver_sql(statement)
    conn.exec_driver_sql("INSERT INTO alembic_version (version_num) VALUES (?)", (HEAD,))
    return _revisions()


def _upgrade_once(engine: sa.Engine, url: StoreURL, *, cached: bool) -> list[str]:
    with engine.connect() as conn:
        conn.execution_options(memgauge_write=True)
        with conn.begin():
            if not url.is_sqlite:
                conn.execute(sa.text("SELECT pg_advisory_xact_lock(:k)"), {"k": _MIGRATION_LOCK})
            current = version(conn)
            if current == HEAD:
                return []
            if current is None and url.is_sqlite and cached:
                made = _created(conn)
                if made is not None:
                    return made
            if current is not None and current not in _revisions():
                # Alembic would fail on the unknown revision as if memgauge had a bug
                problem = _revision_problem(current, legacy=False)
                raise UsageError(f"{url}: {problem}")
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


def upgrade(engine: sa.Engine, url: StoreURL, *, cached: bool = True) -> list[str]:
    """Migrate the store to the newest revision; return what was applied, oldest first: the
    frozen migrations' names (a SQLite store made before Alembic), then Alembic's revisions.
    A new SQLite store (an empty file) is given the schema those revisions make from the
    statements they leave (`fresh_schema`; `cached=False`: by Alembic).

    Retried while a SQLite file is locked, up to the busy timeout: SQLite does not call its
    busy handler for every lock (see `connection`)."""
    try:
        legacy = _legacy(url) if url.is_sqlite else []
        deadline = time.monotonic() + connection.BUSY_TIMEOUT_MS / 1000
        delay = 0.002
        while True:
            try:
                return legacy + _upgrade_once(engine, url, cached=cached)
            except sa.exc.OperationalError as exc:
                orig = exc.orig
                retry = isinstance(orig, sqlite3.OperationalError) and busy(orig)
                if not retry or time.monotonic() >= deadline:
                    raise
            time.sleep(delay * (0.5 + random.random()))
            delay = min(delay * 2, 0.1)
    except sa.exc.DBAPIError as exc:
        if url.is_sqlite:
            bad = sqlite_problem(url, exc)
            if bad is not None:
                raise bad from None
            raise
        raise unreachable(url, exc) from None


def upgrade_store(url: StoreURL) -> list[str]:
    """Bring the store at `url` to this memgauge's schema (`memgauge runs upgrade`); what was
    applied (see `upgrade`; none when it was up to date)."""
    engine = open_engine(url)
    try:
        return upgrade(engine, url)
    finally:
        engine.dispose()


def _revisions() -> list[str]:
    """The shipped revisions, oldest first (read from the scripts' file names: no Alembic)."""
    versions = resources.files("memgauge.store") / "revisions" / "versions"
    return sorted(
        p.name[1:5] for p in versions.iterdir() if p.name.startswith("r") and p.name.endswith(".py")
    )


#: what a SQLite file with none of the store's tables is
NOT_A_STORE = "not a memgauge results store (it has no alembic_version or schema_migrations table)"


def _revision_problem(at: str | None, *, legacy: bool) -> str | None:
    """Why a store at revision `at` (None: no `alembic_version` row or table; `legacy`: it has
    the pre-Alembic `schema_migrations` table) cannot be read as it is by this memgauge, or None
    when it is at `url.HEAD`: a sentence that says what to do."""
    older = "; upgrade it with `" + UPGRADE_COMMAND + "`, then open it again"
    if at == HEAD:
        return None
    if at is not None:
        if at in _revisions():
            return (
                f"the store is at an older schema (revision {at}, this memgauge's is {HEAD})"
                + older
            )
        return (
            f"the store was written by a newer memgauge (revision {at} is unknown here);"
            " upgrade memgauge to read it"
        )
    if legacy:
        return (
            "the store is at an older schema (made before its migrations moved to Alembic)" + older
        )
    return NOT_A_STORE


def schema_problem(conn: sqlite3.Connection) -> str | None:
    """Why a SQLite store opened without migrating cannot be read by this memgauge (see
    `_revision_problem`), or None when its schema is this memgauge's (`url.HEAD`)."""

    def has(table: str) -> bool:
        found = conn.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (table,)
        ).fetchone()
        return found is not None

    at = None
    if has("alembic_version"):
        row = conn.execute("SELECT version_num FROM alembic_version").fetchone()
        at = None if row is None else str(row[0])
        if at is None:
            return _revision_problem(None, legacy=False)
    return _revision_problem(at, legacy=has("schema_migrations"))


def _server_read_only(url: StoreURL, records: Records) -> sa.Engine:
    """A PostgreSQL store opened as it is: every transaction read-only
    (`default_transaction_read_only`, so the server refuses any write), no migration; a store at
    another schema is refused as a SQLite one is, an unreachable server with exit 3."""
    ro = _server_engine(url, options="-c default_transaction_read_only=on")
    try:
        with ro.connect() as conn:
            inspector = sa.inspect(conn)
            at = version(conn)
            problem = _revision_problem(at, legacy=inspector.has_table("schema_migrations"))
            # an empty database, as a team's store starts (the first command that records
            # creates the tables): no store yet, rather than someone else's
            empty = problem is not None and not inspector.get_table_names()
    except sa.exc.DBAPIError as exc:
        ro.dispose()
        raise unreachable(url, exc) from None
    if empty:
        ro.dispose()
        raise UsageError(f"no results store at {url}: {nothing_recorded(records)}")
    if problem is not None:
        ro.dispose()
        raise UsageError(f"{url}: {problem}")
    return ro


def _wal_hint(where: Path, conn: sqlite3.Connection) -> str:
    """What to add when a SQLite file in WAL mode with no -wal file beside it holds no table at
    all: a copy of a store taken while it was written, whose newest pages (the schema among
    them) were in the -wal file left behind."""
    with open(where, "rb") as fh:
        header = fh.read(20)
    wal = len(header) == 20 and header[18] == 2  # the file format's write version: 2 is WAL
    if not wal or conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]:
        return ""
    return (
        f"; a store in WAL mode keeps its newest writes in {where.name}-wal: a copy needs that"
        " file beside it (or copy the store after the commands writing it have ended)"
    )


def _probe(where: Path, read_only: Callable[[], sqlite3.Connection]) -> sqlite3.Connection:
    """The connection that reads a SQLite store's schema before it is opened for reading: one
    that could write (`query_only` stops its statements from doing so) where the file may be
    written, else `read_only`'s. SQLite makes the -wal and -shm files of a WAL store for any
    connection, and only one that can write deletes them as the last one closes: a store a
    command refuses (a newer memgauge's) is left as the command found it."""
    if not os.access(where, os.W_OK) or not os.access(where.parent, os.W_OK):
        return read_only()
    conn = sqlite3.connect(where, timeout=connection.BUSY_TIMEOUT_MS / 1000)
    conn.execute(f"PRAGMA busy_timeout = {connection.BUSY_TIMEOUT_MS}")
    conn.execute("PRAGMA query_only = ON")
    return conn


def open_read_only(url: StoreURL, records: Records = RUNS) -> sa.Engine:
    """An engine that reads the SQLite store at `url` as it is: SQLite's `mode=ro` (no
    connection it makes can write, whatever runs on it) and `query_only`, no migration. A store
    at another schema than this memgauge's is refused with the command that upgrades it (an
    older one) or the advice to upgrade memgauge (a newer one). A PostgreSQL store is read in
    read-only transactions (see `_server_read_only`). A store not there yet is refused saying
    that no `records` are there yet (`url.nothing_recorded`)."""
    if url.path is None:
        return _server_read_only(url, records)
    where = url.path
    if not where.is_file():
        raise UsageError(f"no results store at {where}: {nothing_recorded(records)}")
    uri = f"file:{quote(str(where.resolve()))}?mode=ro"

    def creator() -> sqlite3.Connection:
        conn = sqlite3.connect(
            uri, uri=True, timeout=connection.BUSY_TIMEOUT_MS / 1000, check_same_thread=False
        )
        conn.isolation_level = None  # SQLAlchemy's BEGIN, not the driver's
        conn.execute(f"PRAGMA busy_timeout = {connection.BUSY_TIMEOUT_MS}")
        conn.execute("PRAGMA query_only = ON")
        return conn

    had_wal = Path(f"{where}-wal").exists()
    probe = _probe(where, creator)
    try:
        problem = schema_problem(probe)
        if problem == NOT_A_STORE and not had_wal:
            problem += _wal_hint(where, probe)
    except sqlite3.DatabaseError as exc:
        raise UsageError(
            f"{where}: cannot be read as a memgauge store ({exc}); give the path of a memgauge"
            " store (for example MEMGAUGE_HOME/results.db)"
        ) from None
    finally:
        probe.close()
    if problem is not None:
        raise UsageError(f"{where}: {problem}")
    engine = sa.create_engine(url.url, creator=creator, poolclass=sa.pool.NullPool)

    @event.listens_for(engine, "begin")
    def _begin(conn: sa.Connection) -> None:
        conn.exec_driver_sql("BEGIN")

    return engine
