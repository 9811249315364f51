"""The rows the logging SDK stores, pinned value for value and type for type (issue 31 item 8:
the writer's path was made faster; what reaches the database must not change). The golden file
was written by the writer before that change (`python tests/online/test_querylog_rows.py`
rewrites it: only when the stored rows are meant to change).

The records vary which of their fields are given, so that one statement of several rows holds
columns given in every row, in none and in some; the statements are made small (8 rows) so a
batch takes several, and one batch is large enough for statements of several sizes."""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path
from typing import Any

import pytest

from memgauge.online import querylog as sdk
from memgauge.online.querylog import QueryLog
from memgauge.store import logdb, querylog_rows
from memgauge.store.logdb import LogDB
from memgauge.store.querylog_rows import (
    _dumps,
    _ids_text,
    _jsonable,
    query_columns,
    storable_columns,
)

GOLDEN = Path(__file__).with_name("querylog_rows_golden.json")
TABLES = {
    "eval_queries": "id",
    "eval_feedback": "id",
    "eval_sessions": "session_id",
    "eval_outcomes": "id",
    "eval_agent_outputs": "id",
    "memory_confidence": "memory_id",
}


def _maybe(rng: random.Random, value: Any) -> Any:
    return value if rng.random() < 0.5 else None


def _log(log: QueryLog) -> None:
    rng = random.Random(31)
    for i in range(45):
        ids = [f"m{(i + k) % 17}" for k in range(rng.randrange(0, 6))]
        scores = [round(rng.random(), rng.randrange(1, 17)) for _ in ids]
        # the first 16 give no optional field at all: whole statements of NULL columns
        plain = i < 16
        log.query(
            f"query {i} caf\u00e9" if i % 5 == 0 else f"query {i}",
            query_id=f"q{i:03d}",
            session_id=None if i % 7 == 3 else f"s{i % 4}",
            tool_name="memory_search" if i % 3 else "memory_context",
            result_ids=ids,
            channel_contributions=None if plain else _maybe(rng, {"fts5": ids[:2], "v": ids[2:]}),
            latency_ms=None if plain else _maybe(rng, rng.choice([12, 3.25, 1 / 3, 1e-7])),
            mode=None if plain else _maybe(rng, "hybrid"),
            intent=None if plain else _maybe(rng, "lookup"),
            trace_id=None if plain else _maybe(rng, f"t{i}"),
            category=None if plain else _maybe(rng, "factual"),
            fusion_weights=None if plain else _maybe(rng, {"fts5": 0.7, "vector": 0.3}),
            quality_proxy=None if plain else _maybe(rng, rng.choice([0.5, 1, 0.123456789012345])),
            fallback=None if plain else _maybe(rng, rng.choice([True, False, 1])),
            fallback_reason=None if plain else _maybe(rng, "timeout"),
            degraded=None if plain else _maybe(rng, rng.choice([True, False])),
            stages=None
            if plain
            else _maybe(rng, [{"stage": "fusion", "input_count": 40, "duration_ms": 1.2}]),
            token_usage_ratio=None if plain else _maybe(rng, 0.25),
            pressure_level=None if plain else _maybe(rng, "normal"),
            scores=None if plain else _maybe(rng, scores),
            unboosted_scores=None if plain else _maybe(rng, [s / 2 for s in scores]),
            boost_impact_delta=None if plain else _maybe(rng, -0.01),
            limit=None if plain else _maybe(rng, rng.choice([5, 10, 20])),
            dedup_tokens_saved=None if plain else _maybe(rng, 2**30 + i),
        )
    for i in range(30):
        log.feedback(
            "read_after_search" if i % 2 else "reference",
            session_id=f"s{i % 4}",
            query_id=None if i % 3 else f"q{i:03d}",
            memory_id=None if i % 11 == 5 else f"m{i % 17}",
            rank=None if i % 4 else i,
            metadata=None if i % 5 else {"k": i, "x": [1.5, None]},
        )
        log.validate(f"m{i % 6}", useful=i % 3 > 0, session_id=f"s{i % 4}")
    log.validate_batch("s1", {"m1": True, "m2": False}, task_id="t1")
    for i in range(6):
        log.session(
            f"s{i % 4}",
            turns=None if i == 4 else i,
            ended=i == 5,
            metadata=None if i % 2 else {"i": i},
        )
        log.outcome(
            f"s{i % 4}",
            task_id=None if i % 2 else f"t{i}",
            success=None if i == 3 else i % 2 == 0,
            score=None if i % 3 else i / 7,
            knowledge_delta=None if i % 2 else 0.1,
            metadata=None if i % 2 else {"i": i},
        )
        log.agent_output(f"s{i % 4}", f"reply {i}", query_id=None if i % 2 else f"q{i:03d}")


def _value(value: Any) -> list[Any]:
    # floats by repr: the exact double, whatever JSON does with it
    return [type(value).__name__, repr(value) if isinstance(value, float) else value]


def stored_rows(where: str) -> dict[str, list[list[list[Any]]]]:
    db = LogDB(where)
    try:
        return {
            table: [
                [_value(v) for v in row]
                for row in db.execute(f"SELECT * FROM {table} ORDER BY {order}").fetchall()
            ]
            for table, order in TABLES.items()
        }
    finally:
        db.close()


def _write(where: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sdk, "_now", lambda: "2026-11-27T18:00:00.000+00:00")
    monkeypatch.setattr(logdb, "_ROWS_PER_STATEMENT", 8)
    log = QueryLog(where, flush_interval=3600)  # one round at flush(): one batch per kind
    _log(log)
    log.flush()
    assert (log.dropped, log.rejected) == (0, 0)
    log.close()


def test_the_stored_rows_are_the_ones_pinned(
    store_where: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On PostgreSQL too: the same values and Python types come back."""
    where = store_where
    _write(where, monkeypatch)
    got = stored_rows(where)
    want = json.loads(GOLDEN.read_text(encoding="utf-8"))
    assert {t: len(r) for t, r in got.items()} == {t: len(r) for t, r in want.items()}
    for table in TABLES:
        for row, (g, w) in enumerate(zip(got[table], want[table], strict=True)):
            assert g == w, f"{table} row {row + 1}"


if __name__ == "__main__":  # pragma: no cover - rewrites the golden file
    mp = pytest.MonkeyPatch()
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        _write(str(Path(tmp) / "log.db"), mp)
        rows = stored_rows(str(Path(tmp) / "log.db"))
    mp.undo()
    tables = [
        f"{json.dumps(t)}: [\n" + ",\n".join(json.dumps(r, ensure_ascii=False) for r in rs) + "\n]"
        for t, rs in rows.items()
    ]
    GOLDEN.write_text("{\n" + ",\n".join(tables) + "\n}\n", encoding="utf-8")
    print(f"wrote {GOLDEN}", file=sys.stderr)


def test_a_batch_with_records_that_cannot_be_stored_keeps_the_others_value_for_value(
    tmp_path: Path,
) -> None:
    """`storable_columns` (the writer's way when a record must be left out) against
    `query_columns` of the batch without those records: the same values of the same types,
    column by column, and each record left out described, in order."""
    log = QueryLog(tmp_path / "log.db", flush_interval=3600)
    _log(log)
    # 13 times over: more records than `_fixed_columns` transposes at a time (a batch's 2,048)
    good = list(log._queries) * 13
    log.close()
    bad = {
        7: ("channel_contributions", ({"x": {1, object()}},)),  # JSON cannot hold it
        300: ("latency_ms", "fast"),  # not a number
        301: ("dedup_tokens_saved", [1]),
        584: ("token_usage_ratio", object()),
    }
    buffered = list(good)
    for at, (field, value) in bad.items():
        record = list(good[at])
        record[0] = f"bad{at}"
        record[querylog_rows.QUERY_FIELDS.index(field)] = value
        buffered[at] = tuple(record)
    rejected: list[str] = []
    columns = storable_columns(buffered, rejected)
    assert [r.split(":")[0] for r in rejected] == [f"query bad{at}" for at in bad]
    assert "ValueError: could not convert string to float: 'fast'" in rejected[1]
    kept = [r for at, r in enumerate(good) if at not in bad]
    want = query_columns(kept)
    assert len(columns) == len(want) == 25
    assert len(columns[0]) == 581 > 2 * querylog_rows._ZIP_ROWS
    for at, (got, expected) in enumerate(zip(columns, want, strict=True)):
        assert [_value(v) for v in got] == [_value(v) for v in expected], f"column {at + 1}"
    assert storable_columns(buffered[7:8], rejected) == []


class _Id(str):
    __slots__ = ()


@pytest.mark.parametrize(
    "ids",
    [
        (),
        ("m1",),
        ("m1", "m2", ""),
        ('say "hi"', "back\\slash"),
        ("tab\there", "new\nline", "del\x7f"),
        ("caf\u00e9", "\u2603", "\U0001f600"),
        (1, "m2", 3.5, None, True),
        ("m1", ("nested", "tuple")),
        # what the joined text's check must send to the encoder
        ('a"b',),
        ("m1", 'q"'),
        ('"', '"', '"'),  # ids of quotes alone
        ("end\\",),
        ("del\x7f", "m2"),
        ("\x1f",),
        ("", ""),
        ("], [", "m2"),
        (_Id("sub"), "m2"),  # a str subclass: JSON writes its text
        ("m1", {"k": "v"}),
        ({"m1"},),
    ],
)
def test_the_result_ids_text_is_the_one_json_gives(ids: tuple[Any, ...]) -> None:
    assert _ids_text(ids) == _dumps(ids) == json.dumps(ids, default=_jsonable)


def test_the_result_ids_text_is_the_one_json_gives_for_random_ids() -> None:
    rng = random.Random(8)
    alphabet = [*"ab09 ~-_/", '"', "\\", "\x00", "\n", "\x7f", "\xe9", "\u2603", "\ud800"]
    for _ in range(3000):
        ids = tuple(
            "".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 4)))
            for _ in range(rng.randrange(0, 5))
        )
        assert _ids_text(ids) == json.dumps(ids), ids
