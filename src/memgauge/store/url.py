"""Where the results store is: a URL, `sqlite:///PATH` (the default, `MEMGAUGE_HOME/results.db`)
or `postgresql://USER:PASSWORD@HOST:PORT/DB` for a store shared by hosts and CI runners.

A plain path is a SQLite file, as before URLs. `MEMGAUGE_STORE` names the store when no
`--store` is given (precedence: flag > environment > default).

Standard library only: the logging SDK (`memgauge.online.querylog`) parses its target here, and
importing it must not load SQLAlchemy.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from memgauge.data.environment import memgauge_home
from memgauge.errors import UsageError, argument

__all__ = [
    "FLAGS",
    "HEAD",
    "RUNS",
    "SEARCHES",
    "Records",
    "StoreURL",
    "default_store",
    "given_store",
    "nothing_recorded",
    "store_given_as",
    "store_url",
]

#: the newest Alembic revision of the results store's schema (tests/store/test_schema.py checks
#: it is the head of the shipped scripts): a store already there opens without loading Alembic
HEAD = "0024"


@dataclass(frozen=True, slots=True)
class Records:
    """What a reader wants a store to hold, as `nothing_recorded` says it: `none`, that there
    is none yet, and `how`, what records them."""

    none: str
    how: str


#: a results store's runs (every command's default)
RUNS = Records("nothing has been recorded", "run `memgauge run SUITE` or `memgauge evaluate` first")
#: feature flags (`flags list`, `flags set`, `Flags(...)`)
FLAGS = Records("no flag has been created", "`memgauge flags create NAME ...` creates one")
#: a query log's searches (`logs ...`, `watch`)
SEARCHES = Records("no search has been logged", "`memgauge.online.QueryLog` logs them")


#: how the running command takes its store, as `nothing_recorded` advises giving it (None:
#: as its caller names the setting, `--store PATH` in a command, `store=PATH` from Python)
_GIVEN_AS: ContextVar[str | None] = ContextVar("memgauge_store_given_as", default=None)


@contextmanager
def store_given_as(how: str) -> Iterator[None]:
    """Within it, `nothing_recorded` advises giving the store `how` (`as the STORE argument`
    for a command that takes it as an argument, not with --store)."""
    token = _GIVEN_AS.set(how)
    try:
        yield
    finally:
        _GIVEN_AS.reset(token)


def nothing_recorded(records: Records = RUNS) -> str:
    """Why a store that does not exist yet cannot be read, and what to do: the one message of
    every reader, which says what `records` it wanted and how its command takes the store."""
    how = _GIVEN_AS.get() or f"with {argument('store', 'PATH')}"
    return f"{records.none} there yet ({records.how}), or give the right one {how}"


_SCHEME = re.compile(r"^([a-z][a-z0-9+.-]*)://", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class StoreURL:
    """A parsed store location.

    Attributes:
        dialect: "sqlite" or "postgresql".
        url: the SQLAlchemy URL (`sqlite:///...` with an absolute path, or `postgresql+psycopg://...`).
        path: the SQLite file (None for PostgreSQL).
        dsn: the libpq connection string for PostgreSQL (`postgresql://...`, None for SQLite).
    """

    dialect: str
    url: str
    path: Path | None = None
    dsn: str | None = None

    @property
    def is_sqlite(self) -> bool:
        """Whether this is a SQLite file."""
        return self.dialect == "sqlite"

    def __str__(self) -> str:
        """The location as shown to people: a SQLite file's path, a server URL without its
        password."""
        if self.path is not None:
            return str(self.path)
        parts = urlsplit(self.dsn or self.url)
        netloc = parts.netloc
        if "@" in netloc:
            creds, host = netloc.rsplit("@", 1)
            user = creds.split(":", 1)[0]
            netloc = f"{user}:***@{host}" if ":" in creds else f"{user}@{host}"
        return urlunsplit((parts.scheme, netloc, parts.path, parts.query, ""))

    def exists(self) -> bool:
        """Whether there is something to read: the SQLite file exists (a server is assumed to
        hold a store; opening it creates the schema if not)."""
        return self.path is None or self.path.is_file()


def store_url(value: str | Path | StoreURL, *, name: str | None = None) -> StoreURL:
    """Parse `--store` / `MEMGAUGE_STORE`: `sqlite:///PATH`, `postgresql://...`
    (`postgres://` and `postgresql+psycopg://` too), or a plain path (a SQLite file). `name`:
    where the value was given (an option, or an environment variable), as errors name it;
    by default the caller's store setting (`--store`, or `store` from Python)."""
    if isinstance(value, StoreURL):
        return value
    name = name or argument("store")
    if not isinstance(value, str | os.PathLike):
        # str() of any object is a name SQLite would create a file under in the working
        # directory: `<memgauge.store.shadow.ShadowStore object at 0x...>`
        raise UsageError(
            "a results store is given by where it is: a path, sqlite:///PATH or"
            " postgresql://USER:PASSWORD@HOST:PORT/DATABASE (or None: MEMGAUGE_STORE, else"
            f" MEMGAUGE_HOME/results.db), not a {type(value).__name__} object"
        )
    text = os.fspath(value) if isinstance(value, os.PathLike) else value
    if not isinstance(text, str):
        raise UsageError(f"a results store's path is text, not {type(text).__name__}")
    match = _SCHEME.match(text)
    if match is None:
        return _sqlite(_given(name, text), Path(text).expanduser())
    scheme = match.group(1).lower()
    if scheme == "sqlite":
        rest = text[match.end() :]
        if not rest.startswith("/") or rest in ("/", "/:memory:"):
            raise UsageError(
                f"{_given(name, text)}: give a file, as sqlite:///relative/path.db or"
                " sqlite:////absolute/path.db"
            )
        return _sqlite(_given(name, text), Path(rest[1:]).expanduser())
    if scheme in ("postgresql", "postgres", "postgresql+psycopg"):
        tail = text[match.end() :]
        dsn = f"postgresql://{tail}"
        _check_server(dsn, name)
        return StoreURL("postgresql", f"postgresql+psycopg://{tail}", dsn=dsn)
    raise UsageError(
        f"{_given(name, text)}: unknown scheme {scheme!r}; use sqlite:///PATH, a plain path, or"
        " postgresql://USER:PASSWORD@HOST:PORT/DATABASE"
    )


def given_store(url: StoreURL) -> str:
    """The store `url` as a message names it, with the setting its caller gave it by:
    `--store URL` in a command, `store=URL` from Python (the password masked)."""
    return _given(argument("store"), str(url))


def _given(name: str, text: str) -> str:
    """How an error names the value `text` given as `name`: `--store X`, `MEMGAUGE_STORE=X`."""
    return f"{name} {text}" if name.startswith("-") else f"{name}={text}"


def _sqlite(given: str, path: Path) -> StoreURL:
    # a directory cannot be opened as a file: SQLite's "unable to open database file" would
    # not say why
    if path.is_dir():
        raise UsageError(
            f"{given}: is a directory; give the store's file, e.g. {path / 'results.db'}"
        )
    return StoreURL("sqlite", f"sqlite:///{path.absolute()}", path=path)


def _check_server(dsn: str, name: str) -> None:
    """Refuse a server URL that neither SQLAlchemy nor libpq could read (an unclosed `[`, a
    port that is not a number in 0-65535), naming it with its password masked: parsed here,
    with the standard library, so that no later reader meets it first and fails as a bug."""
    try:
        parts = urlsplit(dsn)
        parts.port  # noqa: B018 (reading it is the check: a bad port raises ValueError)
    except ValueError as exc:
        raise UsageError(
            f"{_given(name, _masked(dsn))}: not a valid server URL ({exc}); write"
            " postgresql://USER:PASSWORD@HOST:PORT/DATABASE (an IPv6 host in brackets:"
            " [::1]:5432)"
        ) from None


def _masked(dsn: str) -> str:
    """`dsn` with any password replaced by `***` (without parsing it: it may not parse)."""
    return re.sub(r"^([^:/]+://[^:/@]*):[^/]*@", r"\1:***@", dsn)


def default_store() -> StoreURL:
    """`MEMGAUGE_STORE` if set, else `MEMGAUGE_HOME/results.db`."""
    env = os.environ.get("MEMGAUGE_STORE")
    if env:
        # the user gave no --store: an error names the variable they set
        return store_url(env, name="MEMGAUGE_STORE")
    return store_url(memgauge_home() / "results.db")
