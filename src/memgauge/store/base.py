"""A store module's connection to the results store, on SQLite or PostgreSQL: opened, migrated
to the newest schema, closed with the `with` block; or, `read_only` (the viewer), a SQLite
store opened as it is."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import AbstractContextManager, suppress
from pathlib import Path
from typing import ClassVar, Self

import sqlalchemy as sa

from memgauge.errors import UnavailableError
from memgauge.store import engine as _engine
from memgauge.store.url import HEAD, RUNS, Records, StoreURL, default_store, store_url

__all__ = ["Store"]


class Store:
    """One connection to the store at `where` (a URL, a path, or None: `MEMGAUGE_STORE`, else
    `MEMGAUGE_HOME/results.db`), created and migrated if need be."""

    #: what it holds, as a store not there yet is refused saying (`url.nothing_recorded`)
    RECORDS: ClassVar[Records] = RUNS
    #: whether another thread may use the connection (never two at once: the caller's duty)
    threads: bool = False
    _file: tuple[int, int] | None = None

    def __init__(
        self, where: str | Path | StoreURL | None = None, *, read_only: bool = False
    ) -> None:
        self.url = default_store() if where is None else store_url(where)
        #: the SQLite file (None on PostgreSQL)
        self.path = self.url.path
        self.read_only = read_only
        if read_only:  # as it is: no migration, no write (see engine.open_read_only)
            self._engine = _engine.open_read_only(self.url, self.RECORDS)
            self._conn = self._engine.connect()
            return
        self._engine = _engine.open_engine(self.url)
        try:
            self._conn = self._engine.connect()
            with self._read() as c:
                current = _engine.version(c)
        except sa.exc.DBAPIError as exc:
            if self.url.is_sqlite:
                bad = _engine.sqlite_problem(self.url, exc)
                if bad is None:
                    raise
                self._engine.dispose()
                raise bad from None
            raise _engine.unreachable(self.url, exc) from None
        if current != HEAD:
            _engine.upgrade(self._engine, self.url)
        # the SQLite file opened (device, inode): what `check_in_place` looks for at its path
        self._file = _identity(self.path) if self.path is not None else None

    def check_in_place(self) -> None:
        """Raise UnavailableError (exit 3) when the SQLite file this store opened is no longer
        at its path: removed (its directory with it) or replaced. SQLite goes on writing to the
        file it holds open, so a run would end saying it was stored in a file that is gone."""
        if self._file is None or self.path is None or _identity(self.path) == self._file:
            return
        raise UnavailableError(
            f"results store {self.url}: the file was removed or replaced while this command"
            " wrote to it, and what it recorded went with the file; give a store that stays in"
            " place, and run the command again"
        )

    def _read(self) -> AbstractContextManager[sa.Connection]:
        return _engine.read(self._conn, self.url)

    def _write_tx(self, conn: sa.Connection | None = None) -> AbstractContextManager[sa.Connection]:
        return _engine.write(conn or self._conn, self.url)

    def connections(self) -> Iterator[sa.Connection]:
        """The open connections (one; a subclass may add its own)."""
        yield self._conn

    def close(self) -> None:
        """Close the connections and the engine."""
        for conn in list(self.connections()):
            with suppress(sa.exc.DBAPIError):  # a server already gone: nothing left to close
                conn.close()
        self._engine.dispose()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _identity(path: Path) -> tuple[int, int] | None:
    """The (device, inode) of the file at `path`; None when there is none."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino
