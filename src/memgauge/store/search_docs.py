"""The searchable copy of a run's items (revision 0023): one document per item, the lower-case
text of every value the viewer's search looks in (`run_pages._SEARCHED`: id, category, input,
expected value, output; every verdict's reason and error), so that a search reads one text an
item instead of inflating each deflated output and decoding JSON's escapes in Python.

A document holds each value as `run_pages._has` reads it (`forms`): its text lower-cased, and,
where the text has a JSON escape, its decoded JSON lower-cased too (rewritten without its
`\\uXXXX` escapes, and each string holding a double quote or a backslash as shown: revision
0024 added these, so that `"quoted"` or `C:\\dir` is found as the page shows it); the forms are
joined by `SEPARATOR` (these rules, and `search_rows`, are in `stored_forms`: revision 0023
filled older runs' documents with them). `needle in form` for some form is then what `_has`
answers, so a needle without the separator is in the document exactly when `_has` finds it in
one of the values. An item whose document cannot be kept as SQL text (a NUL, or a lone
surrogate from an escape) gets none, and is searched as before.

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

from collections.abc import Iterable, Sequence
from typing import Any, NamedTuple

import sqlalchemy as sa

from memgauge.store.dialect import executemany, upsert
from memgauge.store.stored_forms import (
    INSERT_SEARCH,
    SEPARATOR,
    document,
    forms,
    search_rows,
    text_forms,
)
from memgauge.store.tables import suite_run_search as search_t

__all__ = ["SEPARATOR", "Held", "document", "forms", "held", "put", "refill", "text_forms"]

#: keys per statement when a batch's documents are rewritten (bound parameters stay few)
_BATCH = 300


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
    rows = search_rows(c, run_id, params, only_i, only_s)
    if rows:
        c.execute(INSERT_SEARCH, rows)


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
