"""A big run's comparison with the suite's run before it, kept when the run is recorded
(`suite_run_compared`, `store.compared_rows`); and the searchable documents' new form, each
JSON string holding a double quote or a backslash as the page shows it (`store.search_docs`):
the documents that hold a backslash are made again (the others have no such string).

The rules are frozen here as of this revision (a migration never changes).

Revision ID: 0024
Revises: 0023
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Iterator
from typing import Any

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0024"
down_revision = "0023"
branch_labels = None
depends_on = None

_SEPARATOR = "\x1f"
#: `tables.Packed`: text, or deflated bytes (BYTEA on PostgreSQL)
_PACKED = sa.Text().with_variant(postgresql.BYTEA(), "postgresql")


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield k
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


def _forms(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, memoryview):
        value = value.tobytes()
    if isinstance(value, bytes):
        text = zlib.decompress(value).decode() if value[:1] == b"\x78" else value.decode()
    else:
        text = str(value)
    out = [text.lower()]
    if "\\u" not in text and '\\"' not in text and "\\\\" not in text:
        return out
    try:
        parsed = json.loads(text)
    except ValueError:
        return out
    if "\\u" in text:
        out.append(json.dumps(parsed, ensure_ascii=False).lower())
    out.extend(t.lower() for t in _strings(parsed) if '"' in t or "\\" in t)
    return out


def _document(values: list[Any]) -> str | None:
    doc = _SEPARATOR.join(f for v in values for f in _forms(v))
    if "\x00" in doc:
        return None
    try:
        doc.encode()
    except UnicodeEncodeError:
        return None
    return doc


_KEYS = (
    "SELECT x.subject, x.task, x.item_id FROM suite_run_search x WHERE x.run_id = :run"
    " AND {has_backslash}"
)


def _refill(bind: sa.Connection) -> None:
    """The documents holding a backslash, made again with this revision's forms, run by run."""
    find = "strpos" if bind.dialect.name == "postgresql" else "instr"
    has_backslash = f"{find}(x.doc, :backslash) > 0"
    run_ids = [r[0] for r in bind.execute(sa.text("SELECT run_id FROM suite_runs")).all()]
    for run_id in run_ids:
        keys = {
            (r[0], r[1], r[2])
            for r in bind.execute(
                sa.text(_KEYS.format(has_backslash=has_backslash)),
                {"run": run_id, "backslash": "\\"},
            )
        }
        if not keys:
            continue
        values: dict[tuple[str, str, str], list[Any]] = {}
        for r in bind.execute(
            sa.text(
                "SELECT i.subject, i.task, i.item_id, i.category, i.input_json,"
                " i.expected_json, o.output_json FROM suite_run_items i"
                " LEFT JOIN suite_run_outputs o ON o.run_id = i.run_id AND o.subject = i.subject"
                " AND o.task = i.task AND o.item_id = i.item_id WHERE i.run_id = :run"
            ),
            {"run": run_id},
        ):
            if (r[0], r[1], r[2]) in keys:
                values[(r[0], r[1], r[2])] = [r[2], *r[3:]]
        for r in bind.execute(
            sa.text(
                "SELECT subject, task, item_id, reason, error FROM suite_run_scores"
                " WHERE run_id = :run"
            ),
            {"run": run_id},
        ):
            found = values.get((r[0], r[1], r[2]))
            if found is not None:
                found += [r[3], r[4]]
        for (subject, task, item_id), vals in values.items():
            key = {"run_id": run_id, "subject": subject, "task": task, "item_id": item_id}
            doc = _document(vals)
            if doc is None:  # searched value by value, as an item without one always was
                bind.execute(
                    sa.text(
                        "DELETE FROM suite_run_search WHERE run_id = :run_id"
                        " AND subject = :subject AND task = :task AND item_id = :item_id"
                    ),
                    key,
                )
            else:
                bind.execute(
                    sa.text(
                        "UPDATE suite_run_search SET doc = :doc WHERE run_id = :run_id"
                        " AND subject = :subject AND task = :task AND item_id = :item_id"
                    ),
                    {**key, "doc": doc},
                )


def upgrade() -> None:
    """Add the kept comparisons' table, then make the documents with a backslash again."""
    op.create_table(
        "suite_run_compared",
        sa.Column("run_id", sa.Text(), nullable=False),
        sa.Column("baseline_id", sa.Text(), nullable=False),
        sa.Column("state_key", sa.Text(), nullable=False),
        sa.Column("payload_json", _PACKED, nullable=False),
        sa.PrimaryKeyConstraint("run_id", "baseline_id"),
        sa.ForeignKeyConstraint(["run_id"], ["suite_runs.run_id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["baseline_id"], ["suite_runs.run_id"], ondelete="CASCADE"),
    )
    _refill(op.get_bind())
