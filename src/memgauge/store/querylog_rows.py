"""The query-log writer's rows: seed 002's `eval_queries` columns from what `QueryLog` buffered
(`QueryRow`), and the JSON text of the values it stores. Standard library only (the logging SDK
imports it).

`query_columns` makes a batch's values column by column; `storable_columns` leaves out (and
describes) a record that cannot be stored. The stored rows are checked against the rows stored
before `query_columns` existed (tests/online/test_querylog_rows.py)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from itertools import islice
from typing import Any

from memgauge.store.quality import boost_delta, quality_fields

__all__ = [
    "QUERY_FIELDS",
    "TAIL",
    "JSONText",
    "QueryRow",
    "encode_mapping",
    "encode_stages",
    "query_columns",
    "record_tail",
    "storable_columns",
]

#: a mapping or list as `QueryLog` buffers it: its JSON text, made when logged; or, when it
#: could not be made, the value alone in a tuple, for the writer to reject with `_dumps`'s reason
JSONText = str | tuple[Any]

#: One logged search as `QueryLog.query` buffers it: the columns of seed 002's `eval_queries`
#: named by QUERY_FIELDS, in its order, then the values of three sequences one item each (the
#: result ids, then the scores and the unboosted scores, whose counts the record holds where
#: they would be: `record_tail` splits them). Its mappings and trace are JSON text already
#: (`encode_mapping`); the rest of the JSON and the derived columns are left to the writer.
#:
#: One flat tuple of strings and numbers, because CPython's collector untracks such a tuple the
#: first time a pass finds its items untracked, and walks a tracked one on every full pass. A
#: NamedTuple is never untracked; a tuple holding a tuple (the result ids, as it did) is
#: untracked only by its second pass: the first untracks the inner tuple after looking at the
#: record. Every pass of the middle generation (one young pass in eleven) moved the records
#: logged since the previous young pass, still tracked, to the oldest generation: about 7,000
#: in 100,000 calls, enough to make CPython run two full passes, the worst calls
#: (BENCHMARKS.md, issue 31 item 8, third round).
QueryRow = tuple[Any, ...]
QUERY_FIELDS = (
    "query_id",
    "query",
    "intent",
    "mode",
    "session_id",
    "tool_name",
    "channel_contributions",  # JSONText | None
    "latency_ms",
    "trace_id",
    "created_at",
    "category",
    "fusion_weights",  # JSONText | None
    "quality_proxy",
    "fallback",
    "fallback_reason",
    "degraded",
    "stages",  # JSONText | None
    "token_usage_ratio",
    "pressure_level",
    # seed 002 section 1.1's quality telemetry (the writer derives the rest: store.quality)
    "scores",  # how many (their values in the record's tail), None when not given
    "unboosted_scores",  # likewise
    "boost_impact_delta",
    "limit",
    "dedup_tokens_saved",
)
#: where a record's tail (result ids, scores, unboosted scores) begins
TAIL = len(QUERY_FIELDS)
_SCORES = QUERY_FIELDS.index("scores")


def record_tail(
    record: QueryRow,
) -> tuple[tuple[Any, ...], tuple[Any, ...] | None, tuple[Any, ...] | None]:
    """(result ids, scores, unboosted scores) of a buffered record (None: not given)."""
    n_scores, n_unboosted = record[_SCORES], record[_SCORES + 1]
    end = len(record) - (n_scores or 0) - (n_unboosted or 0)
    scores_end = end + (n_scores or 0)
    return (
        record[TAIL:end],
        None if n_scores is None else record[end:scores_end],
        None if n_unboosted is None else record[scores_end:],
    )


def _jsonable(value: Any) -> Any:
    """JSON for what json.dumps does not take: sets, other iterables, NumPy scalars."""
    if hasattr(value, "item") and not hasattr(value, "__len__"):
        return value.item()
    if isinstance(value, (set, frozenset)):
        return sorted(value, key=str)
    if hasattr(value, "__iter__") and not isinstance(value, (str, bytes, dict)):
        return list(value)
    raise TypeError(f"{type(value).__name__} is not JSON serializable")


_make_encoder = getattr(json.encoder, "c_make_encoder", None)


def _dumps(value: Any) -> str:
    """`json.dumps(value, default=_jsonable)`, the same text at under half the cost.

    json.dumps given `default` builds a JSONEncoder, which builds a C encoder, on every call:
    2.5 us for ten ids, against 1.0 us for building the C encoder alone (CPython's
    `json.encoder.c_make_encoder`, what JSONEncoder.encode uses). The writer thread shares the
    GIL with the application logging, so this is time taken from both. A fresh encoder (and
    circular-reference check) per call: no state shared between writer threads."""
    if _make_encoder is None:  # pragma: no cover - CPython always has the accelerator
        return json.dumps(value, default=_jsonable)
    encode = _make_encoder(
        {}, _jsonable, json.encoder.encode_basestring_ascii, None, ": ", ", ", False, False, True
    )
    return "".join(encode(value, 0))


def _dumps_mapping(value: Any) -> str:
    """JSON of a mapping (None is `{}`)."""
    if value is None:
        return "{}"
    return _dumps(value if type(value) is dict else dict(value))


# One C encoder for every thread: without the circular-reference check (markers None) it keeps
# no state between calls, so it is made once, not per value as `_dumps`'s is (1 us). A cycle
# ends in RecursionError here and is then rejected by the writer with `_dumps`'s message.
# Any: the C encoder's type is private (None where there is none: the call's TypeError
# takes the fallback)
_encode_now: Any = (
    None
    if _make_encoder is None
    else _make_encoder(
        None, _jsonable, json.encoder.encode_basestring_ascii, None, ": ", ", ", False, False, True
    )
)


def encode_mapping(value: Any) -> JSONText:
    """At logging time, `_dumps_mapping(value)` for a value that is not None.

    Why then and not in the writer: a buffered record holding the caller's dict (or its lists)
    stays tracked by the garbage collector, and under a burst every full collection, run in
    whichever thread allocates, walks tens of thousands of them (the worst `QueryLog.query`
    call, BENCHMARKS.md issue 31 item 8). A record of str / int / float / None only is untracked
    by the first collection that sees it. Encoding here costs less than 1 us; the caller's dict
    changed after the call no longer changes what is stored."""
    try:
        return "".join(_encode_now(value if type(value) is dict else dict(value), 0))
    except Exception:
        return (value,)


def encode_stages(stages: Any) -> JSONText:
    """At logging time, the writer's `stage_trace` JSON of a retrieval trace (not None)."""
    try:
        return "".join(_encode_now([dict(st) for st in stages], 0))
    except Exception:
        return (stages,)


def _text(value: JSONText, dumps: Any) -> str:
    """The JSON text `encode_*` made, or `dumps` of the value it could not (which raises)."""
    return value if type(value) is str else str(dumps(value[0]))


def _ids_text(ids: tuple[Any, ...]) -> str:
    """`_dumps(ids)` (the SDK's own copy of the caller's ids), the same text.

    Ids that are strings of printable ASCII without a quote or a backslash, the usual ones,
    are joined between quotes: JSON (ASCII-only, as stored) writes them as they are, and one
    join with one check of the joined text costs about half of the shared C encoder (which
    appends each id and each separator to a list), with the GIL the application's threads
    want. Checking each id before joining them cost more than the encoder (issue 31, second
    round). Anything else goes through the encoder, and `_dumps` for what it cannot encode,
    to raise `_dumps`'s error."""
    try:
        body = '", "'.join(ids)
    except TypeError:  # an id that is not a string
        body = None
    # printable ASCII is " " to "~"; the only quotes allowed are the separators' 2 per gap
    if body is not None and body.isascii() and body.isprintable() and "\\" not in body:
        if body.count('"') == 2 * len(ids) - 2:
            return f'["{body}"]'
        if not ids:
            return "[]"
    try:
        return "".join(_encode_now(ids, 0))
    except Exception:
        return _dumps(ids)


def _stages_text(stages: Any) -> str:
    return _dumps([dict(st) for st in stages])


def _given(column: Sequence[Any]) -> bool:
    """Whether any value of `column` is not None (`any` stops at the first true one and reads
    None without a call; only a column of false values is counted)."""
    return any(column) or column.count(None) != len(column)


def _each(convert: Any, column: Sequence[Any]) -> Sequence[Any]:
    """`convert` of each value that is not None; a column of None only as it is (and one
    with no None in C, through `map`: a column a search always gives, its latency)."""
    nones = column.count(None)
    if nones == len(column):
        return column
    if not nones:
        return list(map(convert, column))
    return [None if v is None else convert(v) for v in column]


def _json_column(column: Sequence[Any], dumps: Any, empty: str | None) -> Sequence[Any]:
    """The JSON text `encode_*` made (`_text`), `empty` where none was logged."""
    nones = column.count(None)
    if nones == len(column):
        return column if empty is None else [empty] * len(column)
    if tuple not in set(map(type, column)):  # all text already (a tuple: `_text` raises)
        return column if not nones else [empty if v is None else v for v in column]
    return [empty if v is None else _text(v, dumps) for v in column]


#: records transposed at a time (`_fixed_columns`)
_ZIP_ROWS = 256


def _fixed_columns(queries: Sequence[QueryRow]) -> list[list[Any]]:
    """The records' fixed fields (QUERY_FIELDS), column by column.

    Why `zip` of 256 records at a time: `zip(*records)` is the cheapest transposition (a third
    of the cost of a `map(itemgetter(i), records)` per column), but it holds an iterator for each
    record until it is done, each an object the garbage collector counts. A batch of 2,048 at
    once made the collector run two or three young passes in its middle, each moving the live
    iterators a generation up; about 700 reached the oldest at a time, and with the ones freed
    since they made CPython run a full pass (the worst call, in whichever thread allocated)."""
    # not strict: the records' tails differ in length, and only their first TAIL are taken
    columns = [list(column) for column in islice(zip(*queries[:_ZIP_ROWS], strict=False), TAIL)]
    for at in range(_ZIP_ROWS, len(queries), _ZIP_ROWS):
        part = islice(zip(*queries[at : at + _ZIP_ROWS], strict=False), TAIL)
        for column, values in zip(columns, part, strict=True):
            column.extend(values)
    return columns


def _flag(value: Any) -> int:
    return int(bool(value))


def query_columns(queries: Sequence[QueryRow]) -> list[Sequence[Any]]:
    """The `eval_queries` values of `queries`, column by column, in `_QUERY_INSERT`'s order;
    raises what a value's conversion raises (TypeError, ValueError): `storable_columns` leaves
    out the records that raise it.

    Why columns: the row loop's 25 conditional conversions and a tuple a row cost about 0.9 us
    a row with the GIL, which the application's threads want, and each tuple is an allocation
    the garbage collector counts towards its next pass, run in whichever thread allocates.
    Here a column is one C loop (`zip`, `map`, a list's `count`) and a column no record gives
    (most of seed 002's 25, in a typical search) is passed on as it is; the INSERT's rows are
    made from the columns (`LogDB.plan_columns`), never a tuple each."""
    (
        qid,
        text,
        intent,
        mode,
        session,
        tool,
        channels,
        latency,
        trace,
        created,
        cat,
        weights,
        proxy,
        fallback,
        reason,
        degraded,
        stages,
        usage_ratio,
        pressure,
        n_scores,
        n_unboosted,
        boost,
        limit,
        dedup_saved,
    ) = _fixed_columns(queries)
    if _given(n_scores) or _given(n_unboosted):  # row by row
        tails = list(map(record_tail, queries))
        ids_text = [_ids_text(t[0]) for t in tails]
        counts: Sequence[int] = [len(t[0]) for t in tails]
        scores = [t[1] for t in tails]
        quality = [
            quality_fields(s, n, lat, lim) if s else (None, None, None)
            for s, n, lat, lim in zip(scores, counts, latency, limit, strict=True)
        ]
        avg: Sequence[Any] = [q[0] for q in quality]
        top: Sequence[Any] = [q[1] for q in quality]
        proxies: Sequence[Any] = [
            q[2] if p is None else float(p) for q, p in zip(quality, proxy, strict=True)
        ]
        boost = [  # the host's own delta wins
            boost_delta(s, t[2]) if b is None and s else b
            for s, t, b in zip(scores, tails, boost, strict=True)
        ]
    else:
        # each record's ids sliced, encoded and let go in turn: 2,048 slices alive at once
        # would be 2,048 tracked tuples (`_fixed_columns` says why that matters)
        ids_text = [_ids_text(record[TAIL:]) for record in queries]
        counts = list(map(TAIL.__rsub__, map(len, queries)))  # len - TAIL, in C
        avg = top = n_scores  # None in every record, as quality_fields gives for no scores
        proxies = _each(float, proxy)
    return [
        qid,
        list(map(str, text)),
        intent,
        mode,
        session,
        tool,
        ids_text,
        counts,
        _json_column(channels, _dumps_mapping, "{}"),
        _each(float, latency),
        trace,
        created,
        cat,
        _json_column(weights, _dumps_mapping, None),
        proxies,
        _each(_flag, fallback),
        reason,
        _each(_flag, degraded),
        _json_column(stages, _stages_text, None),
        _each(float, usage_ratio),
        _each(str, pressure),
        avg,
        top,
        _each(float, boost),
        _each(int, dedup_saved),
    ]


def storable_columns(queries: Sequence[QueryRow], rejected: list[str]) -> Sequence[Sequence[Any]]:
    """`query_columns(queries)` without the records that cannot be stored (a value JSON cannot
    hold, a number that is not one), each described in `rejected`, in order.

    Found by halving the batch until each part converts or is the one record at fault: a bad
    record costs about two conversions of its batch, and the values are made by the one
    function, `query_columns`, however the batch is cut (there was a second copy of its
    conversions, a tuple a row, for this case)."""
    try:
        return query_columns(queries)
    except (TypeError, ValueError) as exc:
        if len(queries) == 1:
            rejected.append(f"query {queries[0][0]}: {type(exc).__name__}: {exc}")
            return []
    half = len(queries) // 2
    parts = [storable_columns(queries[:half], rejected), storable_columns(queries[half:], rejected)]
    kept = [part for part in parts if part]
    if not kept:
        return []
    # new lists: a part's columns may be one list twice (`query_columns`'s avg and top)
    columns: list[list[Any]] = [list(column) for column in kept[0]]
    for part in kept[1:]:
        for column, more in zip(columns, part, strict=True):
            column.extend(more)
    return columns
