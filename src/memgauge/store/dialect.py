"""The few statements SQLAlchemy Core does not spell the same on SQLite and PostgreSQL: inserts
that skip or replace a row on a key conflict, and reading a key of a JSON text column."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from operator import itemgetter
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects import sqlite
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.sql.compiler import SQLCompiler

__all__ = ["driver_rows", "executemany", "insert_ignore", "json_key", "upsert"]

# statements built once per dialect: building an upsert costs milliseconds (its `excluded`
# columns), compiling one more; a run records a batch of items every few milliseconds
_UPSERTS: dict[tuple[str, str, tuple[str, ...], tuple[str, ...]], Any] = {}
_COMPILED: dict[tuple[str, int], tuple[str, tuple[str, ...] | None]] = {}


def _insert(conn: sa.Connection, table: sa.Table) -> Any:
    if conn.dialect.name == "postgresql":
        # PostgreSQL's dialect, only when a store is there (50 ms of imports for SQLite)
        from sqlalchemy.dialects import postgresql

        return postgresql.insert(table)
    return sqlite.insert(table)


def insert_ignore(conn: sa.Connection, table: sa.Table, keys: Sequence[str]) -> Any:
    """`INSERT ... ON CONFLICT (keys) DO NOTHING`."""
    return _insert(conn, table).on_conflict_do_nothing(index_elements=list(keys))


def upsert(
    conn: sa.Connection, table: sa.Table, keys: Sequence[str], *, add: Sequence[str] = ()
) -> Any:
    """`INSERT ... ON CONFLICT (keys) DO UPDATE`: every other column takes the new row's value
    (SQLite's `INSERT OR REPLACE`, without deleting the row), or, for the columns in `add`, the
    old value plus the new one (a counter)."""
    key = (conn.dialect.name, table.name, tuple(keys), tuple(add))
    made = _UPSERTS.get(key)
    if made is None:
        stmt = _insert(conn, table)
        new = stmt.excluded
        sets = {
            c.name: (table.c[c.name] + new[c.name]) if c.name in add else new[c.name]
            for c in table.columns
            if c.name not in keys
        }
        made = _UPSERTS[key] = stmt.on_conflict_do_update(index_elements=list(keys), set_=sets)
    return made


def _compiled(conn: sa.Connection, stmt: Any) -> tuple[str, tuple[str, ...] | None]:
    """`stmt`'s SQL on the connection's dialect, and its parameters' names in the order the
    driver takes them (None: by name)."""
    key = (conn.dialect.name, id(stmt))
    compiled = _COMPILED.get(key)
    if compiled is None:
        c = stmt.compile(dialect=conn.dialect)
        order = tuple(c.positiontup) if c.positional and c.positiontup is not None else None
        compiled = _COMPILED[key] = (str(c), order)
    return compiled


def executemany(
    conn: sa.Connection,
    stmt: Any,
    rows: Sequence[Any],
    names: tuple[str, ...] | None = None,
) -> None:
    """Run `stmt` (a statement built once, at module level or by `upsert`) for every row, on
    the driver's `executemany` with its SQL compiled once per dialect. A row is a dict of its
    parameters, or, given their `names`, a tuple of them in that order (passed to a driver
    whose SQL takes them in that order as they are: no object made per row).

    The hot path of recording items: SQLAlchemy's own executemany builds each row's
    parameters in Python (about 30 us a row, most of a batch's time on SQLite). The rows must
    hold driver values already (no type's bind processing is applied)."""
    if not rows:
        return
    sql, order = _compiled(conn, stmt)
    params: Any = rows
    if names is not None:
        if order is None:  # named parameters (PostgreSQL's driver)
            params = [dict(zip(names, r, strict=True)) for r in rows]
        elif order != names:
            at = [names.index(n) for n in order]  # each parameter's place in a row, once
            if len(at) > 1:
                params = list(map(itemgetter(*at), rows))
            else:
                params = [tuple(r[i] for i in at) for r in rows]
    elif order is not None and len(order) > 1:
        # one C call a row (a generator a row cost the recorder a tenth of its time)
        params = list(map(itemgetter(*order), rows))
    elif order is not None:
        params = [tuple(r[n] for n in order) for r in rows]
    conn.exec_driver_sql(sql, params)


def driver_rows(conn: sa.Connection, stmt: Any, params: Mapping[str, Any]) -> Iterator[Any]:
    """The rows of `stmt` (built once, as `executemany`'s) as the driver gives them (tuples),
    read on its cursor in the caller's transaction: a long read without a SQLAlchemy row, and
    its fetch calls, per row."""
    sql, order = _compiled(conn, stmt)
    cursor: Any = conn.connection.cursor()
    try:
        cursor.execute(sql, params if order is None else tuple(params[n] for n in order))
        yield from cursor
    finally:
        cursor.close()


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
