"""The logging SDK's buffer is out of the garbage collector's reach (issue 31 item 8): the
caller's dicts and lists are JSON text from the call on, so a buffered record holds strings and
numbers only, and CPython untracks it; what is stored is the text the writer made from the
caller's values before (json.dumps with `_jsonable`), byte for byte. Counts, never times."""

from __future__ import annotations

import gc
import json
import sqlite3
from datetime import UTC, datetime
from pathlib import Path
from types import MappingProxyType
from typing import Any

import pytest

from memgauge.online import querylog as sdk
from memgauge.online.querylog import QueryLog
from memgauge.store.querylog_rows import _jsonable

CHANNELS = {"fts5": ["m0", "caf\u00e9"], "vector": ("m1", {"nested": [1, 2.5, None]})}
WEIGHTS = MappingProxyType({"fts5": 0.4, "vector": float("inf")})  # a Mapping, not a dict
STAGES = [{"stage": "fusion", "ids": {"b", "a"}}, MappingProxyType({"stage": "\u2603 rerank"})]
META = {"why": '\u00fcber \n "quoted"', "ids": ["m0", ["deep", {"x": True}]]}


def _dumps(value: Any) -> str:
    """What the writer stored before (and stores now): json.dumps with the SDK's fallback."""
    return json.dumps(value, default=_jsonable)


def _log_everything(log: QueryLog) -> str:
    qid = log.query(
        "recherche \u00e0 l'\u00e9t\u00e9",
        session_id="s1",
        result_ids=["m0", "m1"],
        channel_contributions=CHANNELS,
        fusion_weights=WEIGHTS,
        stages=STAGES,
    )
    log.feedback("read_after_search", session_id="s1", query_id=qid, memory_id="m0", metadata=META)
    log.session("s1", turns=3, metadata=META)
    log.outcome("s1", task_id="t1", success=True, metadata=MappingProxyType(META))
    return qid


def _records(log: QueryLog) -> list[tuple[Any, ...]]:
    return [*log._queries, *log._feedback, *log._events]


def test_a_buffered_record_is_untracked_by_the_first_collection_that_sees_it(
    tmp_path: Path,
) -> None:
    """One young pass, not two: a record still tracked when a pass of the middle generation
    comes due is moved to the oldest, and enough of them make CPython run a full pass, which
    walks everything the process holds in whichever thread allocates (the worst call). A
    record holding a tuple (its result ids, an event's fields) was untracked only by its
    second pass: the first untracks the inner tuple after looking at the record."""
    log = QueryLog(tmp_path / "log.db", flush_interval=3600.0)
    gc.collect()  # the log and its buffers are old: only the records are young
    gc.disable()  # no automatic pass between the calls and the one counted here
    try:
        _log_everything(log)
        log.query("scored", session_id="s1", result_ids=["m0", "m1"], scores=[0.5, 0.25])
        log.query("unboosted only", session_id="s1", unboosted_scores=iter([0.5]))
        log.agent_output("s1", "a reply")
        records = _records(log)
        assert len(records) == 7
        assert all(gc.is_tracked(record) for record in records)  # none has been seen yet
        gc.collect(0)
        assert [gc.is_tracked(record) for record in records] == [False] * 7
    finally:
        gc.enable()
        log.close()


def test_a_buffered_record_is_not_tracked_by_the_garbage_collector(tmp_path: Path) -> None:
    log = QueryLog(tmp_path / "log.db", flush_interval=3600.0)
    try:
        _log_everything(log)
        gc.collect()
        records = _records(log)
        assert len(records) == 4
        assert [gc.is_tracked(record) for record in records] == [False] * 4
    finally:
        log.close()


def test_the_stored_json_is_the_text_the_writer_made_from_the_callers_values(
    tmp_path: Path,
) -> None:
    log = QueryLog(tmp_path / "log.db", flush_interval=3600.0)
    try:
        _log_everything(log)
        log.flush()
        assert (log.rejected, log.dropped) == (0, 0)
    finally:
        log.close()
    con = sqlite3.connect(tmp_path / "log.db")
    try:
        query = con.execute(
            "SELECT query, result_ids, channel_contributions, fusion_weights, stage_trace"
            " FROM eval_queries"
        ).fetchone()
        feedback = con.execute("SELECT metadata FROM eval_feedback").fetchone()[0]
        session = con.execute("SELECT metadata FROM eval_sessions").fetchone()[0]
        outcome = con.execute("SELECT metadata FROM eval_outcomes").fetchone()[0]
    finally:
        con.close()
    assert query == (
        "recherche \u00e0 l'\u00e9t\u00e9",
        '["m0", "m1"]',
        _dumps(CHANNELS),
        _dumps(dict(WEIGHTS)),
        _dumps([dict(st) for st in STAGES]),
    )
    assert query[2] == (
        '{"fts5": ["m0", "caf\\u00e9"], "vector": ["m1", {"nested": [1, 2.5, null]}]}'
    )
    assert query[3] == '{"fts5": 0.4, "vector": Infinity}'
    assert query[4] == '[{"stage": "fusion", "ids": ["a", "b"]}, {"stage": "\\u2603 rerank"}]'
    assert feedback == session == outcome == _dumps(META)


def test_a_dict_changed_after_the_call_is_stored_as_it_was_logged(tmp_path: Path) -> None:
    log = QueryLog(tmp_path / "log.db", flush_interval=3600.0)
    channels = {"fts5": ["m0"]}
    meta = {"n": 1}
    try:
        qid = log.query("q", session_id="s", result_ids=["m0"], channel_contributions=channels)
        log.feedback(
            "read_after_search", session_id="s", query_id=qid, memory_id="m0", metadata=meta
        )
        channels["fts5"].append("m9")  # the caller reuses its objects for the next search
        meta["n"] = 2
        log.flush()
    finally:
        log.close()
    con = sqlite3.connect(tmp_path / "log.db")
    try:
        stored = con.execute("SELECT channel_contributions FROM eval_queries").fetchone()[0]
        stored_meta = con.execute("SELECT metadata FROM eval_feedback").fetchone()[0]
    finally:
        con.close()
    assert (stored, stored_meta) == ('{"fts5": ["m0"]}', '{"n": 1}')


def test_a_value_json_cannot_hold_is_still_rejected_alone_with_the_writers_reason(
    tmp_path: Path,
) -> None:
    loop: dict[str, Any] = {}
    loop["self"] = loop
    log = QueryLog(tmp_path / "log.db", flush_interval=3600.0)
    try:
        log.query("circular", session_id="s", channel_contributions=loop)
        log.query("fine", session_id="s", channel_contributions={"fts5": ["m0"]})
        log.feedback("read_after_search", session_id="s", memory_id="m0", metadata={"x": object()})
        log.session("s", metadata={"ok": [1]})
        log.flush()
        assert log.rejected == 2
        assert log.last_rejected is not None
        assert "object is not JSON serializable" in log.last_rejected
    finally:
        log.close()
    con = sqlite3.connect(tmp_path / "log.db")
    try:
        queries = con.execute("SELECT query, channel_contributions FROM eval_queries").fetchall()
        sessions = con.execute("SELECT metadata FROM eval_sessions").fetchall()
        feedback = con.execute("SELECT COUNT(*) FROM eval_feedback").fetchone()[0]
    finally:
        con.close()
    assert queries == [("fine", '{"fts5": ["m0"]}')]
    assert (sessions, feedback) == ([('{"ok": [1]}',)], 0)


def test_the_logging_time_is_the_text_datetime_gave_across_seconds(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The hot path formats the date and time of day once a second and the stamp once a
    millisecond: each stamp must still be `datetime.now(UTC).isoformat(timespec="milliseconds")`
    of its instant (both floor)."""
    instants = [
        1_700_000_000_000_000_000,
        1_700_000_000_000_999_999,  # the same millisecond: the text made for it
        1_700_000_000_999_999_999,  # same second, last millisecond
        1_700_000_001_000_400_000,  # the next second
        1_699_999_999_123_456_789,  # a clock set back
    ]
    clock = iter(instants)
    monkeypatch.setattr(sdk.time, "time_ns", lambda: next(clock))
    stamps = [sdk._now() for _ in instants]
    assert stamps == [
        "2023-11-14T22:13:20.000+00:00",
        "2023-11-14T22:13:20.000+00:00",
        "2023-11-14T22:13:20.999+00:00",
        "2023-11-14T22:13:21.000+00:00",
        "2023-11-14T22:13:19.123+00:00",
    ]
    assert stamps == [
        datetime.fromtimestamp(ns // 10**9, UTC)
        .replace(microsecond=ns // 1000 % 10**6)
        .isoformat(timespec="milliseconds")
        for ns in instants
    ]


def test_result_ids_given_as_one_string_are_rejected_not_split_into_characters(
    tmp_path: Path,
) -> None:
    """`result_ids="m12"` (one id as text: a str is a Sequence to a type checker) was logged as
    the three results "m", "1" and "2", a result count of 3 and judgments of memories that do
    not exist. The record is rejected with a reason, and the call still returns at once."""
    log = QueryLog(tmp_path / "log.db", flush_interval=3600.0)
    try:
        log.query("one id as text", session_id="s", result_ids="m12")
        log.query("fine", session_id="s", result_ids=["m12"])
        log.query("scored", session_id="s", result_ids="m12", scores=[0.9])
        log.flush()
        assert log.rejected == 2
        assert log.last_rejected is not None
        assert "result_ids is a string ('m12'), not a list of memory ids" in log.last_rejected
    finally:
        log.close()
    con = sqlite3.connect(tmp_path / "log.db")
    try:
        rows = con.execute("SELECT query, result_ids, result_count FROM eval_queries").fetchall()
    finally:
        con.close()
    assert rows == [("fine", '["m12"]', 1)]


def test_a_channels_ids_given_as_one_string_are_rejected_as_result_ids_are(
    tmp_path: Path,
) -> None:
    """`channel_contributions={"lexical": "m12"}` was stored as given, and read as the ids "m",
    "1" and "2": the channel surfaced none of the results, 0 where it surfaced one, silently.
    The record is rejected with its reason, by the rule `result_ids` follows."""
    log = QueryLog(tmp_path / "log.db", flush_interval=3600.0)
    try:
        given = {"dense": ["m12"], "lexical": "m12"}
        log.query("one id as text", session_id="s", result_ids=["m12"], channel_contributions=given)
        log.query("fine", session_id="s", result_ids=["m12"], channel_contributions={"l": ["m12"]})
        log.flush()
        assert log.rejected == 1
        assert log.last_rejected is not None
        assert (
            "channel_contributions['lexical'] is a string ('m12'), not a list of memory ids"
            in log.last_rejected
        )
    finally:
        log.close()
    con = sqlite3.connect(tmp_path / "log.db")
    try:
        rows = con.execute("SELECT query, channel_contributions FROM eval_queries").fetchall()
    finally:
        con.close()
    assert rows == [("fine", '{"l": ["m12"]}')]
