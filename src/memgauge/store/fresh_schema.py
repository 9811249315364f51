"""A new SQLite store's schema, created from the statements the migrations leave behind.

Alembic brings a new store to `url.HEAD` one revision after another, and loading it (Alembic,
Mako, Pygments, SQLAlchemy's PostgreSQL dialect: about 140 modules) is most of what creating a
store costs (0.2 CPU-seconds of a LoCoMo evaluation). `fresh_sqlite.sql` holds the statements
of `sqlite_master` of a store the migrations made, in the order they made them, with the
revision they reach; an empty SQLite file gets those statements and that revision in one
transaction instead. `tests/store/test_fresh_schema.py` proves the result equal to the
migrations' (every `sqlite_master` row, every table's rows, the pragmas); a file left at an older
revision is not used (the migrations run), and that test fails until it is written again:

    python -m memgauge.store.refresh_schema
"""

from __future__ import annotations

import sqlite3
from functools import cache
from importlib import resources
from pathlib import Path

__all__ = ["FILE", "cached_statements", "schema_statements", "write_schema"]

FILE = "fresh_sqlite.sql"
_REVISION = "-- revision "
_END = ";\n\n"


def schema_statements(conn: sqlite3.Connection) -> list[str]:
    """The statements that made `conn`'s schema, oldest first: what SQLite keeps of each
    (`sqlite_master.sql`), without the objects it makes itself (automatic indexes,
    `sqlite_sequence`)."""
    rows = conn.execute(
        "SELECT sql FROM sqlite_master WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite_%'"
        " ORDER BY rowid"
    ).fetchall()
    return [str(sql) for (sql,) in rows]


def _parse(text: str) -> tuple[str, list[str]]:
    first, _, body = text.partition("\n")
    if not first.startswith(_REVISION):
        raise ValueError(f"{FILE}: its first line is not `{_REVISION}NNNN`")
    return first[len(_REVISION) :].strip(), [s for s in body.split(_END) if s.strip()]


@cache
def cached_statements(head: str) -> tuple[str, ...] | None:
    """The statements of a new store at revision `head`, or None when the file holds another
    revision's (the migrations then make the store)."""
    text = (resources.files("memgauge.store") / FILE).read_text(encoding="utf-8")
    revision, statements = _parse(text)
    return tuple(statements) if revision == head else None


def write_schema(path: Path, revision: str, statements: list[str]) -> None:
    """Write `statements` (`schema_statements`) of a store at `revision` to `path`."""
    body = "".join(s + _END for s in statements)
    path.write_text(f"{_REVISION}{revision}\n{body}", encoding="utf-8")
