"""The searchable copy of a run's items (revision 0023): one document per item, the lower-case
text of every value the viewer's search looks in (`run_pages._SEARCHED`: id, category, input,
expected value, output; every verdict's reason and error), so that a search reads one text an
item instead of inflating each deflated output and decoding JSON's escapes in Python.

A document holds each value as `run_pages._has` reads it (`forms`): its text lower-cased, and,
where the text has a JSON escape, its decoded JSON lower-cased too (rewritten without its
`\\uXXXX` escapes, and each string holding a double quote or a backslash as shown: revision
0024 added these, so that `"quoted"` or `C:\\dir` is found as the page shows it); the forms are
joined by
`SEPARATOR`. `needle in form` for some form is then what `_has` answers, so a needle
without the separator is in the document exactly when `_has` finds it in one of the values.
An item whose document cannot be kept as SQL text (a NUL, or a lone surrogate from an escape)
gets none, and is searched as before.

A search then asks SQL's `instr` of each document (about 5 us for a 2 KB one on SQLite), not
Python of each value. An FTS5 trigram index over the documents was measured too: it finds a
rare needle's items at once, but indexing costs 0.2 ms a document written in bulk and 0.65 ms
through a trigger (a 100,000-item run: 20-65 s more to record), against 0.03 ms for the
document alone, and the scan of the run's items that a search does anyway stays.

Written with the items, so an item's document is its rows' whatever path wrote them: a
recorded batch's (`item_rows.record_items`) from the values it writes, as it writes them
(`put`); a new run's (`item_rows.insert_plan`, one read of its inputs), an item whose recording
leaves rows of an earlier one in place (an output it does not replace, verdicts of other
evaluators: `held` says, read before it writes), and after `requeue`, from the rows as stored
(`refill`, read back in the caller's transaction). Reading each batch back was most of a
recording's time (a LoCoMo evaluate: 0.37 CPU-s), the outputs just deflated inflated again.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, NamedTuple

import sqlalchemy as sa

from memgauge.store.dialect import executemany, upsert
from memgauge.store.tables import suite_run_search as search_t
from memgauge.store.tables import unpacked

__all__ = ["SEPARATOR", "Held", "document", "forms", "held", "put", "refill", "text_forms"]

#: between the forms of a document: a needle holding it is searched as before
SEPARATOR = "\x1f"
#: keys per statement when a batch's documents are rewritten (bound parameters stay few)
_BATCH = 300


def forms(value: Any) -> list[str]:
    """`value` (a stored column: text, JSON or a deflated blob) as `run_pages._has` reads it
    (`text_forms` of its text)."""
    if value is None:
        return []
    if isinstance(value, memoryview):
        value = value.tobytes()
    return text_forms(unpacked(value) if isinstance(value, bytes) else str(value))


def _strings(value: Any) -> Iterator[str]:
    """Every string of a JSON value (keys and values), depth first."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield k
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


def text_forms(text: str) -> list[str]:
    """A stored text's forms, each lower-cased: the text; where it has an escape (a
    backslash), its JSON decoded: written again without `\\uXXXX` escapes (when it has one),
    and each string holding a double quote or a backslash (which JSON writes escaped) as the
    page shows it, so `"quoted"` or `C:\\dir` is found as shown."""
    out = [text.lower()]
    if "\\u" not in text and '\\"' not in text and "\\\\" not in text:
        return out  # no escape a search could miss (a newline's `\\n` is left as written)
    try:
        parsed = json.loads(text)
    except ValueError:
        return out
    if "\\u" in text:
        out.append(json.dumps(parsed, ensure_ascii=False).lower())
    # only the strings JSON writes otherwise than shown for what a search box can hold: a
    # string with a newline alone (most long outputs) would double the document for nothing
    out.extend(t.lower() for t in _strings(parsed) if '"' in t or "\\" in t)
    return out


def document(values: Iterable[Any]) -> str | None:
    """One item's document of its searched values; None when SQL text cannot hold it."""
    doc = SEPARATOR.join(f for v in values for f in forms(v))
    if "\x00" in doc:
        return None
    try:
        doc.encode()
    except UnicodeEncodeError:  # a lone surrogate
        return None
    return doc


def _key_clause(keys: Sequence[tuple[str, str, str]], params: dict[str, Any], alias: str) -> str:
    """`(subject, task, item_id) IN (VALUES ...)` for `keys`, its parameters added to `params`."""
    parts = []
    for n, (subject, task, item_id) in enumerate(keys):
        params.update({f"s{n}": subject, f"t{n}": task, f"i{n}": item_id})
        parts.append(f"(:s{n}, :t{n}, :i{n})")
    return f"({alias}.subject, {alias}.task, {alias}.item_id) IN (VALUES {', '.join(parts)})"


def refill(
    c: sa.Connection, run_id: str, keys: Sequence[tuple[str, str, str]] | None = None
) -> None:
    """Rewrite the documents of the run's items `keys` (subject, task, item id; every item of
    the run when None) from their rows as stored, in the caller's transaction."""
    if keys is None:
        _refill(c, run_id, None)
        return
    for start in range(0, len(keys), _BATCH):
        _refill(c, run_id, keys[start : start + _BATCH])


def _refill(c: sa.Connection, run_id: str, keys: Sequence[tuple[str, str, str]] | None) -> None:
    params: dict[str, Any] = {"run": run_id}
    only_i = f" AND {_key_clause(keys, params, 'i')}" if keys is not None else ""
    only_s = f" AND {_key_clause(keys, {}, 's')}" if keys is not None else ""
    only_x = f" AND {_key_clause(keys, {}, 'x')}" if keys is not None else ""
    c.execute(sa.text(f"DELETE FROM suite_run_search AS x WHERE x.run_id = :run{only_x}"), params)
    values: dict[tuple[str, str, str], list[Any]] = {}
    for r in c.execute(
        sa.text(
            "SELECT i.subject, i.task, i.item_id, i.category, i.input_json, i.expected_json,"
            " o.output_json FROM suite_run_items i LEFT JOIN suite_run_outputs o"
            " ON o.run_id = i.run_id AND o.subject = i.subject AND o.task = i.task"
            f" AND o.item_id = i.item_id WHERE i.run_id = :run{only_i}"
        ),
        params,
    ):
        values[(r[0], r[1], r[2])] = [r[2], *r[3:]]
    for r in c.execute(
        sa.text(
            "SELECT s.subject, s.task, s.item_id, s.reason, s.error FROM suite_run_scores s"
            f" WHERE s.run_id = :run{only_s}"
        ),
        params,
    ):
        found = values.get((r[0], r[1], r[2]))
        if found is not None:
            found += [r[3], r[4]]
    rows = []
    for (subject, task, item_id), vals in values.items():
        doc = document(vals)
        if doc is not None:
            rows.append(
                {"run_id": run_id, "subject": subject, "task": task, "item_id": item_id, "doc": doc}
            )
    if rows:
        c.execute(
            sa.text(
                "INSERT INTO suite_run_search (run_id, subject, task, item_id, doc)"
                " VALUES (:run_id, :subject, :task, :item_id, :doc)"
            ),
            rows,
        )


Key = tuple[str, str, str]


class Held(NamedTuple):
    """An item as stored before a recording: the values its document starts with (id, category,
    input, expected value), and whether it has verdicts and an output already."""

    values: list[Any]
    verdicts: bool
    output: bool


_HELD = sa.text(
    "SELECT i.item_id, i.category, i.input_json, i.expected_json,"
    " EXISTS (SELECT 1 FROM suite_run_scores s WHERE s.run_id = i.run_id"
    " AND s.subject = i.subject AND s.task = i.task AND s.item_id = i.item_id),"
    " EXISTS (SELECT 1 FROM suite_run_outputs o WHERE o.run_id = i.run_id"
    " AND o.subject = i.subject AND o.task = i.task AND o.item_id = i.item_id)"
    " FROM suite_run_items i WHERE i.run_id = :run AND i.subject = :subject AND i.task = :task"
    " AND i.item_id IN :ids"
).bindparams(sa.bindparam("ids", expanding=True))


def held(c: sa.Connection, run_id: str, keys: Iterable[Key]) -> dict[Key, Held]:
    """The run's items `keys` as stored (an item the run does not have is left out)."""
    ids: dict[tuple[str, str], list[str]] = {}
    for subject, task, item_id in keys:
        ids.setdefault((subject, task), []).append(item_id)
    out: dict[Key, Held] = {}
    for (subject, task), of in ids.items():
        for start in range(0, len(of), _BATCH):
            params = {"run": run_id, "subject": subject, "task": task}
            for r in c.execute(_HELD, {**params, "ids": of[start : start + _BATCH]}):
                out[(subject, task, r[0])] = Held([r[0], r[1], r[2], r[3]], bool(r[4]), bool(r[5]))
    return out


_DELETE = sa.delete(search_t).where(
    *(search_t.c[k] == sa.bindparam(k) for k in ("run_id", "subject", "task", "item_id"))
)


def put(c: sa.Connection, run_id: str, values: dict[Key, list[Any]]) -> None:
    """Write the documents of the run's items `values` (each item's searched values, as stored
    and in `refill`'s order), in place of the ones they had."""
    rows, gone = [], []
    for (subject, task, item_id), vals in values.items():
        key = {"run_id": run_id, "subject": subject, "task": task, "item_id": item_id}
        doc = document(vals)
        if doc is None:
            gone.append(key)
        else:
            rows.append({**key, "doc": doc})
    executemany(c, upsert(c, search_t, ("run_id", "subject", "task", "item_id")), rows)
    executemany(c, _DELETE, gone)
