"""A suite run's items on a connection: writing finished items (status, output, verdicts,
failures) and reading them back as typed records or export rows. `SuiteRunStore` holds the
transaction; these functions are its SQL, the same on SQLite and PostgreSQL.

Failure messages, score errors and reasons are scrubbed of keys and bearer tokens on the way in
(`_util.redact`): they quote what a provider or a service answered, which may echo the
request's credentials.
"""

from __future__ import annotations

import functools
import json
import sys
from array import array
from collections.abc import Iterable, Iterator, Mapping, Sequence
from operator import itemgetter
from typing import Any

import sqlalchemy as sa
from pydantic_core import from_json, to_json

from memgauge._util.redact import redactor
from memgauge.data.records import (
    Failure,
    ItemRecord,
    RunSummary,
    ScoreRecord,
    mean_of_repeats,
    repeat_source,
)
from memgauge.store import search_docs
from memgauge.store.dialect import driver_rows, executemany, json_key, upsert
from memgauge.store.headline import query_rows
from memgauge.store.search_docs import refill as refill_search
from memgauge.store.stored_forms import verdicts_digest
from memgauge.store.tables import Packed, packed, stored_json, unpacked
from memgauge.store.tables import suite_run_failures as failures_t
from memgauge.store.tables import suite_run_items as items_t
from memgauge.store.tables import suite_run_outputs as outputs_t
from memgauge.store.tables import suite_run_queries as queries_t
from memgauge.store.tables import suite_run_scores as scores_t
from memgauge.store.tables import suite_run_subjects as subjects_t
from memgauge.store.tables import suite_run_tasks as tasks_t
from memgauge.store.tables import suite_run_values as values_t

__all__ = [
    "SCORES_OF_RUN",
    "dumps_item",
    "export_rows",
    "insert_plan",
    "item_record",
    "item_records",
    "loads_item",
    "measure_values",
    "record_items",
    "replace_queries",
    "replace_values",
    "requeue",
    "score_record",
    "verdicts_digest",
]

KEY = ("run_id", "subject", "task", "item_id")
_PACKED = Packed()


def dumps_item(value: Any) -> str:
    """An item's output, latency or verdict detail as JSON: written once per item, read back as
    data, never compared as text, so no key sorting, and pydantic-core's encoder (six times the
    standard library's: this was most of a fast run's recording time); what it refuses (a lone
    surrogate) the standard library escapes."""
    try:
        return to_json(value, fallback=str).decode()
    except (ValueError, TypeError):
        return json.dumps(value, separators=(",", ":"), default=str)


def loads_item(text: str | bytes) -> Any:
    """pydantic-core's parser (twice the standard library's); an escaped lone surrogate, which
    it refuses, is the standard library's to read."""
    text = unpacked(text)
    try:
        return from_json(text)
    except ValueError:
        return json.loads(text)


_PLANNED = (*KEY, "seq", "status", "category", "input_json", "expected_json", "repeat_index")
_INSERT_ITEM = sa.insert(items_t).values({k: sa.bindparam(k) for k in _PLANNED})
_SEARCHED = itemgetter("item_id", "category", "input_json", "expected_json")


def insert_plan(
    c: sa.Connection,
    run_id: str,
    subjects: Mapping[str, Any],
    tasks: Sequence[Mapping[str, Any]],
    items: Sequence[ItemRecord],
) -> None:
    """A new run's subjects (name -> spec), tasks (in the suite's order) and items, queued."""
    if subjects:
        c.execute(
            sa.insert(subjects_t),
            [
                {"run_id": run_id, "subject": name, "spec_json": stored_json(spec)}
                for name, spec in subjects.items()
            ],
        )
    if tasks:
        c.execute(
            sa.insert(tasks_t),
            [
                {
                    "run_id": run_id,
                    "task": t["task"],
                    "kind": t["kind"],
                    "dataset": t.get("dataset"),
                    "dataset_sha256": t.get("dataset_sha256"),
                    "spec_json": stored_json(t.get("spec")),
                    "n_items": t["n_items"],
                    "seq": seq,
                }
                for seq, t in enumerate(tasks)
            ],
        )
    if items:
        rows: list[dict[str, Any]] = [
            {
                "run_id": run_id,
                "subject": it.subject,
                "task": it.task,
                "item_id": it.item_id,
                "seq": it.seq,
                "status": "queued",
                "category": it.category,
                "input_json": stored_json(it.input),
                "expected_json": stored_json(it.expected),
                "repeat_index": it.repeat,
            }
            for it in items
        ]
        executemany(c, _INSERT_ITEM, rows)
        # their documents of the values written, not read back (`refill`): a new run's items
        # have no output and no verdict yet
        search_docs.put(
            c, run_id, {(r["subject"], r["task"], r["item_id"]): [*_SEARCHED(r)] for r in rows}
        )


def _digest(r: ItemRecord) -> str:
    # a failed item keeps no verdict (see `record_items`)
    scores = () if r.status == "failed" else r.scores
    return verdicts_digest((v.evaluator, v.value, v.passed, v.error is None) for v in scores)


_SET = (
    "status",
    "attempts",
    "score",
    "started_at",
    "finished_at",
    "duration_ms",
    "verdicts_digest",
)
_UPDATE_ITEM = (
    sa.update(items_t)
    .where(*(items_t.c[k] == sa.bindparam(f"k_{k}") for k in KEY))
    .values({c: sa.bindparam(f"v_{c}") for c in _SET})
)
#: the columns of `record_items`' rows (tuples), in their statements' order
_UPDATED = (*(f"v_{c}" for c in _SET), *(f"k_{k}" for k in KEY))
_OUTPUT = (*KEY, "output_json", "latency_json", "extra_json")
_SCORE = (
    *KEY,
    "evaluator",
    "value",
    "passed",
    "reason",
    "error",
    "detail_json",
    "raw_reply",
    "seq",
)
#: where a `_SCORE` row holds what an item's document reads of it
_EVALUATOR, _REASON, _ERROR = map(_SCORE.index, ("evaluator", "reason", "error"))


def record_items(c: sa.Connection, run_id: str, rows: Sequence[ItemRecord]) -> None:
    """Keep finished items in the caller's transaction. Idempotent: recording an item again
    replaces its output and verdicts (failures are history and accumulate); a failed item
    keeps no verdict (one answered, scored and then found void, as a subject that holds
    nothing, loses the scores it had)."""
    keys = [(run_id, r.subject, r.task, r.item_id) for r in rows]
    # read before the writes below: what of each item they leave in place
    held = search_docs.held(c, run_id, (k[1:] for k in keys))
    # the run's values are its summary's (`replace_values`): rewritten with the next one
    c.execute(sa.delete(values_t).where(values_t.c.run_id == run_id))
    failed = [(r.subject, r.task, r.item_id) for r in rows if r.status == "failed"]
    if failed:
        s = scores_t.c
        c.execute(
            sa.delete(scores_t).where(
                s.run_id == run_id, sa.tuple_(s.subject, s.task, s.item_id).in_(failed)
            )
        )
    # the secrets looked up once for the batch, each distinct text redacted once (a LoCoMo
    # run's 10,752 reasons are 365 texts)
    clean = functools.cache(redactor())

    def as_stored(value: str | bytes) -> Any:
        return _PACKED.process_bind_param(value, c.dialect)

    executemany(
        c,
        _UPDATE_ITEM,
        [
            (
                r.status,
                r.attempts,
                r.score,
                r.started_at,
                r.finished_at,
                r.duration_ms,
                _digest(r),
                *key,
            )
            for r, key in zip(rows, keys, strict=True)
        ],
        _UPDATED,
    )
    texts = [
        dumps_item(r.output) if r.status == "completed" or r.output is not None else None
        for r in rows
    ]
    outputs = [
        (
            *key,
            as_stored(packed(text)),
            dumps_item(r.latency_ms),
            dumps_item(r.extra) if r.extra else None,
        )
        for r, key, text in zip(rows, keys, texts, strict=True)
        if text is not None
    ]
    executemany(c, upsert(c, outputs_t, KEY), outputs, _OUTPUT)
    scores = [
        (
            *key,
            v.evaluator,
            v.value,
            None if v.passed is None else int(v.passed),
            clean(v.reason) if v.reason else "",
            None if v.error is None else clean(v.error),
            dumps_item({**v.detail, **({"fallback": True} if v.fallback else {})})
            if v.detail or v.fallback
            else "{}",
            v.raw_reply,
            seq,
        )
        for r, key in zip(rows, keys, strict=True)
        for seq, v in enumerate(r.scores)
    ]
    executemany(c, upsert(c, scores_t, (*KEY, "evaluator")), scores, _SCORE)
    failures = [
        {
            **dict(zip(KEY, key, strict=True)),
            "stage": f.stage,
            "kind": f.kind,
            "message": clean(f.message),
            "attempt": f.attempt,
            "at": f.at,
        }
        for r, key in zip(rows, keys, strict=True)
        for f in r.failures
    ]
    if failures:
        c.execute(sa.insert(failures_t), failures)
    _documents(c, run_id, rows, held, texts, scores)


def _documents(
    c: sa.Connection,
    run_id: str,
    rows: Sequence[ItemRecord],
    held: dict[tuple[str, str, str], search_docs.Held],
    texts: Sequence[str | None],
    scores: Sequence[tuple[Any, ...]],
) -> None:
    """The recorded items' documents (`search_docs`) from the values `record_items` wrote; an
    item whose rows keep something of an earlier recording (an output not replaced, verdicts
    of evaluators not given again), or recorded twice in the batch, from its rows as stored."""
    seen: set[tuple[str, str, str]] = set()
    again: set[tuple[str, str, str]] = set()
    values: dict[tuple[str, str, str], list[Any]] = {}
    end = 0
    for r, text in zip(rows, texts, strict=True):
        start, end = end, end + len(r.scores)  # its `_SCORE` rows: scores[start:end]
        key = (r.subject, r.task, r.item_id)
        before = held.get(key)
        if before is None:  # not an item of the run: it has no document
            continue
        if (
            key in seen
            or (before.verdicts and r.status != "failed")
            or (before.output and text is None)
        ):
            again.add(key)
            continue
        seen.add(key)
        vals = [*before.values, text]
        # in the order `refill` reads them: by evaluator, as the scores' key sorts (an
        # evaluator given twice: the upsert keeps the last)
        of = {v[_EVALUATOR]: (v[_REASON], v[_ERROR]) for v in scores[start:end]}
        for evaluator in sorted(of):
            vals += of[evaluator]
        values[key] = vals
    for key in again:
        values.pop(key, None)
    search_docs.put(c, run_id, values)
    if again:
        refill_search(c, run_id, sorted(again))


_INSERT_QUERY = sa.insert(queries_t)


def replace_queries(c: sa.Connection, run_id: str, summary: RunSummary | None) -> None:
    """Keep each query's detail of the run's summary (`headline.query_rows`) in the caller's
    transaction, in place of what an earlier summary of the run left."""
    c.execute(sa.delete(queries_t).where(queries_t.c.run_id == run_id))
    rows = query_rows(summary) if summary is not None else {}
    if rows:
        executemany(
            c,
            _INSERT_QUERY,
            [
                {
                    "run_id": run_id,
                    "task": task,
                    "subject": subject,
                    "query_id": query_id,
                    "detail_json": _PACKED.process_bind_param(packed(text), c.dialect),
                }
                for (task, subject, query_id), text in rows.items()
            ],
        )


#: one (subject, task, evaluator)'s values: the item ids, sorted, and their values (NaN: not
#: scored, or an error)
MeasureValues = dict[tuple[str, str, str], tuple[list[str], "array[float]"]]


def measure_values(verdicts: Iterable[Sequence[Any]]) -> MeasureValues:
    """Verdict rows (subject, task, evaluator, item id, value, error[, repeat]) as each
    (subject, task, evaluator)'s values in item id order: what comparing runs reads
    (`suite_run_values`). A repeat's verdict (stored under `ID#rR`) is its item's: the item's
    value is the mean of its repeats' (`mean_of_repeats`), so a paired test resamples items,
    never item-repeats as if they were independent."""
    nan = float("nan")
    found: dict[tuple[str, str, str], dict[str, float]] = {}
    # an item's verdicts past its first (its repeats'), each item's in order, first included
    more: dict[tuple[tuple[str, str, str], str], list[float]] = {}
    for row in verdicts:
        subject, task, evaluator, item_id, value, error = row[:6]
        if len(row) > 6 and row[6]:
            item_id = repeat_source(item_id, row[6])
        key = (subject, task, evaluator)
        per = found.get(key)
        if per is None:
            per = found[key] = {}
        v = float(value) if value is not None and not error else nan
        if item_id in per:
            more.setdefault((key, item_id), [per[item_id]]).append(v)
        else:
            per[item_id] = v
    for (key, item_id), values in more.items():
        found[key][item_id] = mean_of_repeats(values)
    out: MeasureValues = {}
    for key, per in found.items():
        ids = sorted(per)
        out[key] = (ids, array("d", map(per.__getitem__, ids)))
    return out


def values_bytes(values: array[float]) -> bytes:
    """Float64 values as stored: little-endian whatever the host."""
    if sys.byteorder != "little":
        values = array("d", values)
        values.byteswap()
    return values.tobytes()


_VERDICTS = (
    "SELECT s.subject, s.task, s.evaluator, s.item_id, s.value, s.error{} FROM suite_run_scores s{}"
    " WHERE s.run_id = :run"
)
#: a run's verdicts with each item's repeat (`measure_values`' rows)
SCORES_OF_RUN = sa.text(
    _VERDICTS.format(
        ", i.repeat_index",
        " JOIN suite_run_items i ON i.run_id = s.run_id"
        " AND i.subject = s.subject AND i.task = s.task AND i.item_id = s.item_id",
    )
)
#: the same of a run that repeats no item: each verdict's own row (a third of the read)
_SCORES_ALONE = sa.text(_VERDICTS.format("", ""))
_REPEATS = sa.text("SELECT 1 FROM suite_run_items WHERE run_id = :run AND repeat_index > 0 LIMIT 1")
_INSERT_VALUES = sa.insert(values_t)


def replace_values(c: sa.Connection, run_id: str) -> None:
    """Keep each (subject, task, evaluator)'s values of the run (`measure_values` of its
    verdicts as stored) in the caller's transaction, in place of earlier ones."""
    c.execute(sa.delete(values_t).where(values_t.c.run_id == run_id))
    params = {"run": run_id}
    repeats = c.execute(_REPEATS, params).first() is not None
    found = measure_values(driver_rows(c, SCORES_OF_RUN if repeats else _SCORES_ALONE, params))
    if found:
        executemany(
            c,
            _INSERT_VALUES,
            [
                {
                    "run_id": run_id,
                    "subject": key[0],
                    "task": key[1],
                    "evaluator": key[2],
                    "item_ids_json": _PACKED.process_bind_param(
                        packed(json.dumps(ids, ensure_ascii=False)), c.dialect
                    ),
                    "values_f8": values_bytes(vals),
                }
                for key, (ids, vals) in found.items()
            ],
        )


def requeue(c: sa.Connection, run_id: str) -> None:
    """Put failed items back in the queue, and completed items with a verdict marked
    `retryable`, dropping their verdicts (failure records stay, as history)."""
    s, i = scores_t.c, items_t.c
    retryable = sa.exists().where(
        s.run_id == run_id,
        *(s[k] == i[k] for k in KEY[1:]),
        json_key(s.detail_json, "retryable").in_(("true", "1")),
    )
    c.execute(
        sa.update(items_t)
        .where(
            i.run_id == run_id,
            sa.or_(i.status == "failed", sa.and_(i.status == "completed", retryable)),
        )
        .values(status="queued", score=None, verdicts_digest=None)
    )
    c.execute(sa.delete(values_t).where(values_t.c.run_id == run_id))
    queued = sa.select(i.subject, i.task, i.item_id).where(i.run_id == run_id, i.status == "queued")
    c.execute(
        sa.delete(scores_t).where(
            s.run_id == run_id, sa.tuple_(s.subject, s.task, s.item_id).in_(queued)
        )
    )
    # their verdicts' reasons left their documents
    refill_search(c, run_id, [(r[0], r[1], r[2]) for r in c.execute(queued)])


def _items_select(run_id: str, *columns: Any) -> Any:
    """The run's items joined with their outputs, in subject, task, seq order."""
    o, i = outputs_t.c, items_t.c
    return (
        sa.select(*columns)
        .select_from(items_t.outerjoin(outputs_t, sa.and_(*(o[k] == i[k] for k in KEY))))
        .where(i.run_id == run_id)
        .order_by(i.subject, i.task, i.seq)
    )


def _verdicts(
    c: sa.Connection, run_id: str, detail: bool
) -> dict[tuple[str, str, str], list[ScoreRecord]]:
    s = scores_t.c
    detail_cols = (
        [s.detail_json]
        if detail
        else [json_key(s.detail_json, "fallback"), json_key(s.detail_json, "panel_passed")]
    )
    out: dict[tuple[str, str, str], list[ScoreRecord]] = {}
    stmt = (
        sa.select(
            s.subject,
            s.task,
            s.item_id,
            s.evaluator,
            s.value,
            s.passed,
            s.reason,
            s.error,
            s.raw_reply,
            *detail_cols,
        )
        .where(s.run_id == run_id)
        .order_by(s.seq)
    )
    for r in c.execute(stmt):
        if detail:
            detail_of = loads_item(r[9])
        else:
            pairs = zip(("fallback", "panel_passed"), r[9:11], strict=True)
            detail_of = {k: loads_item(v) for k, v in pairs if v is not None}
        out.setdefault((r[0], r[1], r[2]), []).append(score_record(r[3:8], detail_of, r[8]))
    return out


def item_records(
    c: sa.Connection, run_id: str, *, detail: bool = True, outputs: bool = True
) -> list[ItemRecord]:
    """Every item of the run with its output, verdicts and failures, in subject, task, seq
    order. Without `detail`, inputs, expected values and verdict details are left out (but a
    verdict's fallback flag and panel votes); without `outputs`, outputs, latencies and extras
    (what comparing two runs' verdicts needs no more than their inputs: a retrieval item's
    output is its ranked hits, deflated)."""
    scores = _verdicts(c, run_id, detail)
    failures: dict[tuple[str, str, str], list[Failure]] = {}
    f = failures_t.c
    for r in c.execute(
        sa.select(f.subject, f.task, f.item_id, f.stage, f.kind, f.message, f.attempt, f.at)
        .where(f.run_id == run_id, f.item_id.is_not(None))
        .order_by(f.failure_id)
    ):
        failures.setdefault((r[0], r[1], r[2]), []).append(
            Failure(stage=r[3], kind=r[4], message=r[5], attempt=r[6] or 1, at=r[7])
        )
    i, o = items_t.c, outputs_t.c
    inputs = (
        [i.input_json, i.expected_json]
        if detail
        else [sa.literal("{}", sa.Text), sa.literal("null", sa.Text)]
    )
    stmt = _items_select(
        run_id,
        i.subject,
        i.task,
        i.item_id,
        i.seq,
        i.status,
        i.attempts,
        i.category,
        *inputs,
        i.score,
        i.started_at,
        i.finished_at,
        i.duration_ms,
        *(
            (o.output_json, o.latency_json, o.extra_json)
            if outputs
            else (sa.null(), sa.null(), sa.null())
        ),
        i.repeat_index,
    )
    return [
        item_record(x, scores.get((x[0], x[1], x[2]), []), failures.get((x[0], x[1], x[2]), []))
        for x in c.execute(stmt)
    ]


def score_record(r: Sequence[Any], detail: dict[str, Any], raw_reply: str | None) -> ScoreRecord:
    """A verdict from its columns (evaluator, value, passed, reason, error), its detail (whose
    `fallback` flag is taken out of it) and its raw reply."""
    return ScoreRecord(
        evaluator=r[0],
        value=r[1],
        passed=None if r[2] is None else bool(r[2]),
        reason=r[3] or "",
        error=r[4],
        fallback=bool(detail.pop("fallback", False)),
        detail=detail,
        raw_reply=raw_reply,
    )


def item_record(r: Sequence[Any], scores: list[ScoreRecord], failures: list[Failure]) -> ItemRecord:
    """An item from a row of its columns (subject, task, item_id, seq, status, attempts,
    category, input, expected, score, started_at, finished_at, duration_ms, output, latency,
    extra, and optionally repeat_index: `item_records`' select, and the viewer's), with its
    verdicts and failures."""
    inp = loads_item(r[7])
    return ItemRecord(
        subject=r[0],
        task=r[1],
        item_id=r[2],
        seq=r[3],
        status=r[4],
        attempts=r[5] or 0,
        category=r[6],
        input=inp if isinstance(inp, dict) else {"text": inp},
        expected=loads_item(r[8]),
        score=r[9],
        started_at=r[10],
        finished_at=r[11],
        duration_ms=r[12],
        output=None if r[13] is None else loads_item(r[13]),
        latency_ms=loads_item(r[14]) if r[14] else {},
        extra=loads_item(r[15]) if r[15] else {},
        scores=scores,
        failures=failures,
        repeat=r[16] if len(r) > 16 and r[16] else 0,
    )


def export_rows(c: sa.Connection, run_id: str) -> Iterator[dict[str, Any]]:
    """One record per item: input, expected, output, latency, scores with reasons."""
    scores: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
    for v in _verdicts(c, run_id, detail=True).items():
        for s in v[1]:
            entry = {
                "evaluator": s.evaluator,
                "value": s.value,
                "passed": s.passed,
                "reason": s.reason,
                "error": s.error,
                "detail": {**s.detail, **({"fallback": True} if s.fallback else {})},
            }
            if s.raw_reply is not None:
                entry["raw_reply"] = s.raw_reply
            scores.setdefault(v[0], []).append(entry)
    i, o = items_t.c, outputs_t.c
    stmt = _items_select(
        run_id,
        i.subject,
        i.task,
        i.item_id,
        i.status,
        i.attempts,
        i.category,
        i.input_json,
        i.expected_json,
        i.score,
        i.started_at,
        i.finished_at,
        i.duration_ms,
        o.output_json,
        o.latency_json,
        i.repeat_index,
    )
    for x in c.execute(stmt):
        yield {
            "run_id": run_id,
            "subject": x[0],
            "task": x[1],
            # the stored id (a repeat's `ID#rR`: unique per subject and task, as in a bundle),
            # and the dataset's id with the repeat beside it, to group a row by without parsing
            "item_id": x[2],
            "source_id": repeat_source(x[2], x[14] or 0),
            "repeat": x[14] or 0,
            "status": x[3],
            "attempts": x[4],
            "category": x[5],
            "input": json.loads(x[6]),
            "expected": json.loads(x[7]),
            "score": x[8],
            "started_at": x[9],
            "finished_at": x[10],
            "duration_ms": x[11],
            "output": None if x[12] is None else loads_item(x[12]),
            "latency_ms": None if x[13] is None else json.loads(x[13]),
            "scores": sorted(scores.get((x[0], x[1], x[2]), []), key=lambda s: s["evaluator"]),
        }
