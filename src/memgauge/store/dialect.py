"""The few statements SQLAlchemy Core does not spell the same on SQLite and PostgreSQL: inserts
that skip or replace a row on a key conflict, and reading a key of a JSON text column."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.sql.compiler import SQLCompiler

__all__ = ["insert_ignore", "json_key", "upsert"]


def _insert(conn: sa.Connection, table: sa.Table) -> Any:
    module = postgresql if conn.dialect.name == "postgresql" else sqlite
    return module.insert(table)


def insert_ignore(conn: sa.Connection, table: sa.Table, keys: Sequence[str]) -> Any:
    """`INSERT ... ON CONFLICT (keys) DO NOTHING`."""
    return _insert(conn, table).on_conflict_do_nothing(index_elements=list(keys))


def upsert(
    conn: sa.Connection, table: sa.Table, keys: Sequence[str], *, add: Sequence[str] = ()
) -> Any:
    """`INSERT ... ON CONFLICT (keys) DO UPDATE`: every other column takes the new row's value
    (SQLite's `INSERT OR REPLACE`, without deleting the row), or, for the columns in `add`, the
    old value plus the new one (a counter)."""
    stmt = _insert(conn, table)
    new = stmt.excluded
    sets = {
        c.name: (table.c[c.name] + new[c.name]) if c.name in add else new[c.name]
        for c in table.columns
        if c.name not in keys
    }
    return stmt.on_conflict_do_update(index_elements=list(keys), set_=sets)


class json_key(sa.sql.expression.ColumnElement[Any]):  # noqa: N801 (reads as a SQL function)
    """The value at `key` of a JSON object held as text in `column`, as JSON text (NULL when
    absent): `json(json_extract(c, '$.key'))` on SQLite, `(c::jsonb -> 'key')::text` on
    PostgreSQL. SQLite gives JSON's true as 1: read the value as a truth value, not a literal."""

    # not cached: the key is part of the SQL text, and these reads are rare
    inherit_cache = False

    def __init__(self, column: sa.ColumnElement[Any], key: str) -> None:
        self.column = column
        self.key = key
        self.type = sa.Text()


@compiles(json_key, "sqlite")
def _json_key_sqlite(element: json_key, compiler: SQLCompiler, **kw: Any) -> str:
    return f"json(json_extract({compiler.process(element.column, **kw)}, '$.{element.key}'))"


@compiles(json_key, "postgresql")
def _json_key_pg(element: json_key, compiler: SQLCompiler, **kw: Any) -> str:
    return f"(CAST({compiler.process(element.column, **kw)} AS jsonb) -> '{element.key}')::text"
