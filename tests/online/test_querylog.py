"""The production logging SDK: rows arrive, feedback links to queries, confidence updates,
four processes into one SQLite file lose nothing, a normal exit flushes, and importing it
stays light."""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from memgauge.online.querylog import QueryLog, promotion_eligible

WORKER = """
import sys
from memgauge.online.querylog import QueryLog
log = QueryLog(sys.argv[1])
for i in range(int(sys.argv[3])):
    log.query(f"query {i}", session_id=sys.argv[2], result_ids=[f"m{i}", f"m{i + 1}"], latency_ms=1.0)
# no close(): a normal exit must flush what is buffered
"""


def _count(db: Path, table: str, where: str = "") -> int:
    con = sqlite3.connect(db)
    try:
        return int(con.execute(f"SELECT COUNT(*) FROM {table} {where}").fetchone()[0])
    finally:
        con.close()


def test_queries_and_linked_feedback_are_written(tmp_path: Path) -> None:
    db = tmp_path / "log.db"
    log = QueryLog(db)
    qid = log.query(
        "oauth refresh",
        session_id="s1",
        result_ids=["m1", "m2"],
        channel_contributions={"fts5": ["m1"]},
        latency_ms=3.2,
        mode="quick",
    )
    log.feedback("read_after_search", session_id="s1", query_id=qid, memory_id="m2", rank=2)
    with pytest.raises(ValueError, match="unknown feedback event"):
        log.feedback("liked", session_id="s1")
    log.close()
    con = sqlite3.connect(db)
    row = con.execute(
        "SELECT query, session_id, result_ids, result_count, channel_contributions, total_latency_ms, mode FROM eval_queries"
    ).fetchone()
    assert row == ("oauth refresh", "s1", '["m1", "m2"]', 2, '{"fts5": ["m1"]}', 3.2, "quick")
    fb = con.execute(
        "SELECT event_type, query_id, memory_id, rank_in_results FROM eval_feedback"
    ).fetchone()
    con.close()
    assert fb == ("read_after_search", qid, "m2", 2)


def test_a_buffered_query_is_a_query_row_whose_fields_hold_what_was_logged(
    tmp_path: Path,
) -> None:
    """The hot path builds the row as a plain tuple (the garbage collector untracks it, never a
    NamedTuple's): every field must land under its own name, and the writer store it."""
    from memgauge.store.querylog_rows import QUERY_FIELDS, TAIL, record_tail

    log = QueryLog(tmp_path / "log.db", flush_interval=3600.0)
    given = {
        "session_id": "s1",
        "tool_name": "recall",
        "result_ids": (f"m{i}" for i in range(3)),
        "channel_contributions": {"fts5": ["m0"], "vector": ["m1", "m2"]},
        "latency_ms": 12.5,
        "mode": "hybrid",
        "intent": "lookup",
        "trace_id": "t9",
        "query_id": "q-7",
        "category": "intent-specific",
        "fusion_weights": {"fts5": 0.4, "vector": 0.6},
        "quality_proxy": 0.8,
        "fallback": True,
        "fallback_reason": "timeout",
        "degraded": False,
        "stages": [{"stage": "fusion", "output_count": 3}],
        # seed 002's tokenUsageRatio and pressureLevel
        "token_usage_ratio": 0.625,
        "pressure_level": "moderate",
        "scores": [0.9, 0.5, 0.4],
        "unboosted_scores": [0.6, 0.5, 0.4],
        "boost_impact_delta": None,
        "limit": 5,
        "dedup_tokens_saved": 42,
    }
    try:
        assert log.query("oauth refresh", **given) == "q-7"  # type: ignore[arg-type]
        (row,) = log._queries
        assert type(row) is tuple
        fields = dict(zip(QUERY_FIELDS, row[:TAIL], strict=True))
        # the sequences one value each after the fixed fields, the scores' counts in their place
        assert (fields.pop("scores"), fields.pop("unboosted_scores")) == (3, 3)
        fields.update(
            zip(("result_ids", "scores", "unboosted_scores"), record_tail(row), strict=True)
        )
        assert fields.pop("created_at").endswith("+00:00")
        assert fields == {
            "query": "oauth refresh",
            **given,
            "result_ids": ("m0", "m1", "m2"),
            "scores": (0.9, 0.5, 0.4),  # copied: a list the caller reuses stays as it was
            "unboosted_scores": (0.6, 0.5, 0.4),
            # JSON text when logged: no caller's dict or list is buffered
            "channel_contributions": '{"fts5": ["m0"], "vector": ["m1", "m2"]}',
            "fusion_weights": '{"fts5": 0.4, "vector": 0.6}',
            "stages": '[{"stage": "fusion", "output_count": 3}]',
        }
        log.flush()
    finally:
        log.close()
    con = sqlite3.connect(tmp_path / "log.db")
    try:
        stored = con.execute(
            "SELECT query_id, tool_name, result_ids, result_count, eval_category,"
            " fallback_reason, fallback_triggered, degraded_mode, stage_trace, token_usage_ratio,"
            " pressure_level, quality_proxy_score, avg_relevance_score, top_result_score, boost_impact_delta,"
            " dedup_tokens_saved FROM eval_queries"
        ).fetchall()
    finally:
        con.close()
    assert stored == [
        (
            "q-7",
            "recall",
            '["m0", "m1", "m2"]',
            3,
            "intent-specific",
            "timeout",
            1,
            0,
            '[{"stage": "fusion", "output_count": 3}]',
            0.625,
            "moderate",
            0.8,  # the host's own proxy wins over the formula
            pytest.approx(0.6),
            0.9,
            pytest.approx(0.1),  # mean 0.6 against 0.5 before boosting
            42,
        )
    ]


def test_the_seeds_quality_proxy_is_computed_when_the_host_gives_none(tmp_path: Path) -> None:
    """Seed 002: qualityProxy = avgRelevance .40 + topResult .25 + countSaturation .20 +
    latencyPenalty .15 (memgauge.store.quality: saturation = results / limit, latency
    penalty = 1 - ms / 1000), with avgRelevanceScore, topResultScore and boostImpactDelta."""
    log = QueryLog(tmp_path / "log.db")
    try:
        log.query("a", query_id="full", result_ids=["m1", "m2"], scores=[0.8, 0.4],
                  latency_ms=200.0, limit=4, unboosted_scores=[0.5, 0.4])  # fmt: skip
        log.query("b", query_id="given-delta", result_ids=["m1"], scores=[2.0],
                  latency_ms=3000.0, boost_impact_delta=0.25)  # fmt: skip
        log.query("c", query_id="no-latency", result_ids=["m1"], scores=[0.5])
        log.query("d", query_id="no-scores", result_ids=["m1"], latency_ms=5.0)
        log.flush()
    finally:
        log.close()
    con = sqlite3.connect(tmp_path / "log.db")
    try:
        rows = {
            r[0]: r[1:]
            for r in con.execute(
                "SELECT query_id, quality_proxy_score, avg_relevance_score, top_result_score,"
                " boost_impact_delta FROM eval_queries"
            )
        }
    finally:
        con.close()
    # 0.6 * .40 + 0.8 * .25 + (2 / 4) * .20 + (1 - 200 / 1000) * .15
    assert rows["full"] == (
        pytest.approx(0.24 + 0.2 + 0.1 + 0.12),
        pytest.approx(0.6),
        0.8,
        pytest.approx(0.6 - 0.45),
    )
    # a score above 1 counts as 1 in the proxy (kept as given in its own column); one result
    # of the default limit 10; a 3 s search earns no latency share
    assert rows["given-delta"] == (pytest.approx(0.40 + 0.25 + 0.02 + 0.0), 2.0, 2.0, 0.25)
    assert rows["no-latency"] == (None, 0.5, 0.5, None)  # n/a, never 0
    assert rows["no-scores"] == (None, None, None, None)


def test_memory_validate_moves_confidence_and_promotion_needs_five(tmp_path: Path) -> None:
    log = QueryLog(tmp_path / "log.db")
    for _ in range(3):
        log.validate("m7", useful=True, session_id="s")
    assert log.confidence("m7") == (pytest.approx(0.8), 3)
    log.validate("m7", useful=False, session_id="s")
    assert log.confidence("m7") == (pytest.approx(0.75), 4)
    for _ in range(10):
        log.validate("m7", useful=True, session_id="s")
    conf, n = log.confidence("m7") or (0.0, 0)
    assert conf == 1.0  # clamped
    assert promotion_eligible(conf, n)
    assert not promotion_eligible(0.95, 4)
    assert log.confidence("never") is None
    log.close()


def test_confidence_reaches_exactly_the_promotion_threshold(tmp_path: Path) -> None:
    log = QueryLog(tmp_path / "log.db")
    for useful in (True, True, False, True, True, False, True):  # 0.5 + 5 x 0.10 - 2 x 0.05
        log.validate("m1", useful=useful, session_id="s")
    conf, n = log.confidence("m1") or (0.0, 0)
    assert (conf, n) == (0.9, 7)  # not 0.8999999999999998
    assert promotion_eligible(conf, n)
    assert promotion_eligible(0.8999999999999998, 5)  # a value stored before rounding
    log.close()


def test_feedback_without_a_query_id_links_to_the_query_that_surfaced_the_memory(
    tmp_path: Path,
) -> None:
    from memgauge.store.querylog import bootstrap_judgments

    db = tmp_path / "log.db"
    log = QueryLog(db)
    q1 = log.query("first", session_id="s", result_ids=["m1", "m2"])
    q2 = log.query("second", session_id="s", result_ids=["m3", "m2"])
    log.query("elsewhere", session_id="other", result_ids=["m2"])
    log.validate("m2", useful=True, session_id="s")  # the newest query of s with m2: q2
    log.feedback("read_after_search", session_id="s", memory_id="m1")  # only q1 had m1
    log.feedback("reference", session_id="s", memory_id="m9")  # no query surfaced m9
    log.close()
    with sqlite3.connect(db) as con:
        rows = con.execute(
            "SELECT event_type, query_id, memory_id, rank_in_results FROM eval_feedback ORDER BY id"
        ).fetchall()
    assert rows == [
        ("validate_useful", q2, "m2", 2),
        ("read_after_search", q1, "m1", 1),
        ("reference", None, "m9", -1),
    ]
    bootstrap_judgments(db)
    with sqlite3.connect(db) as con:
        grade = con.execute(
            "SELECT relevance FROM eval_judgments WHERE query_id = ? AND memory_id = 'm2'"
            " ORDER BY relevance DESC",
            (q2,),
        ).fetchone()
    assert grade == (3,)  # validated useful, not "shown, never selected"


def test_a_record_the_database_cannot_take_is_left_out_alone(tmp_path: Path) -> None:
    db = tmp_path / "log.db"
    log = QueryLog(db)
    log.query(
        "sets and generators",
        session_id="s",
        result_ids=(f"m{i}" for i in range(3)),
        channel_contributions={"fts5": {"m2", "m1"}},
    )
    log.feedback("reference", session_id="s", memory_id="m1", metadata={"bad": object()})
    log.query("after it", session_id="s", result_ids=["m1"])
    log.flush()  # does not raise: the good records are written, the bad one counted
    assert log.rejected == 1
    assert log.last_rejected is not None
    assert "object is not JSON serializable" in log.last_rejected
    log.query("later", session_id="s")
    log.close()
    with sqlite3.connect(db) as con:
        rows = con.execute(
            "SELECT query, result_ids, result_count, channel_contributions FROM eval_queries"
            " ORDER BY id"
        ).fetchall()
        n_feedback = con.execute("SELECT COUNT(*) FROM eval_feedback").fetchone()[0]
    assert rows[0] == ("sets and generators", '["m0", "m1", "m2"]', 3, '{"fts5": ["m1", "m2"]}')
    assert [r[0] for r in rows] == ["sets and generators", "after it", "later"]
    assert n_feedback == 0


def test_a_string_utf8_cannot_encode_is_left_out_alone(tmp_path: Path) -> None:
    """A lone surrogate (text read with errors="surrogateescape") made the whole batch fail at
    the database, at every retry: nothing was logged any more and flush() raised
    UnicodeEncodeError. The record is left out and counted; the others are written (an id
    with one is stored, as its JSON escapes it)."""
    db = tmp_path / "log.db"
    log = QueryLog(db)
    log.query("before it", session_id="s", result_ids=["m1"])
    log.query("bad \udc80 text", session_id="s", result_ids=["m1"])
    log.query("an odd id", session_id="s", result_ids=["m\udc80"])
    log.feedback("reference", session_id="s\udc80", memory_id="m1")
    log.feedback("reference", session_id="s", memory_id="m1")
    log.agent_output("s", "bad \udc80 reply")
    log.agent_output("s", "a reply")
    log.flush()
    assert log.rejected == 3
    assert log.last_rejected is not None
    assert "UnicodeEncodeError" in log.last_rejected
    log.query("later", session_id="s")
    log.close()
    with sqlite3.connect(db) as con:
        rows = con.execute("SELECT query, result_ids FROM eval_queries ORDER BY id").fetchall()
        n_feedback = con.execute("SELECT COUNT(*) FROM eval_feedback").fetchone()[0]
        replies = con.execute("SELECT text FROM eval_agent_outputs").fetchall()
    assert rows == [("before it", '["m1"]'), ("an odd id", '["m\\udc80"]'), ("later", "[]")]
    assert (n_feedback, replies) == (1, [("a reply",)])


FORK_WORKER = """
import multiprocessing as mp, sqlite3, sys
from memgauge.online.querylog import QueryLog

def child(n):
    for i in range(n):
        LOG.query(f"child {i}", session_id="child")
    # returns normally: multiprocessing ends the child with os._exit, skipping atexit

if __name__ == "__main__":
    LOG = QueryLog(sys.argv[1])  # created before the fork, inherited by the child
    LOG.query("parent before", session_id="parent")
    ctx = mp.get_context("fork")
    p = ctx.Process(target=child, args=(2000,))
    p.start()
    p.join()
    LOG.query("parent after", session_id="parent")
    LOG.close()
    print(p.exitcode)
"""


@pytest.mark.skipif(sys.platform == "win32", reason="fork is POSIX")
def test_a_forked_child_logs_through_its_own_writer_and_flushes_at_exit(tmp_path: Path) -> None:
    db = tmp_path / "log.db"
    out = subprocess.run(
        [sys.executable, "-c", FORK_WORKER, str(db)], capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "0"
    assert _count(db, "eval_queries", "WHERE session_id = 'child'") == 2000
    assert _count(db, "eval_queries", "WHERE session_id = 'parent'") == 2  # none twice


def test_four_processes_lose_nothing_and_exit_flushes(tmp_path: Path) -> None:
    db = tmp_path / "shared.db"
    QueryLog(db).close()  # create the schema once, as a deployment would
    procs = [
        subprocess.Popen([sys.executable, "-c", WORKER, str(db), f"s{p}", "10000"])
        for p in range(4)
    ]
    for proc in procs:
        assert proc.wait(timeout=120) == 0
    assert _count(db, "eval_queries") == 40_000
    for p in range(4):
        assert _count(db, "eval_queries", f"WHERE session_id = 's{p}'") == 10_000


def test_importing_the_sdk_loads_nothing_heavy() -> None:
    code = "import sys, memgauge.online.querylog; print(json.dumps(sorted(m for m in ('numpy', 'scipy', 'pydantic', 'aiohttp', 'yaml', 'click', 'rich', 'sqlalchemy', 'alembic') if m in sys.modules)))"
    out = subprocess.run(
        [sys.executable, "-c", "import json; " + code], capture_output=True, text=True, check=True
    )
    assert json.loads(out.stdout) == []


def test_logging_into_a_sqlite_store_at_the_newest_schema_loads_no_sqlalchemy(
    tmp_path: Path,
) -> None:
    db = tmp_path / "log.db"
    QueryLog(db).close()  # created (and migrated) once
    code = (
        "import json, sys\n"
        "from memgauge.online.querylog import QueryLog\n"
        f"log = QueryLog({str(db)!r})\n"
        "qid = log.query('q', session_id='s', result_ids=['m'])\n"
        "log.validate('m', useful=True, session_id='s', query_id=qid)\n"
        "print(json.dumps([log.confidence('m'), 'sqlalchemy' in sys.modules]))\n"
        "log.close()\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout) == [[0.6, 1], False]


def test_retention_archives_old_queries_before_deleting(tmp_path: Path) -> None:
    from datetime import UTC, datetime, timedelta

    from memgauge.store.querylog import apply_retention

    db = tmp_path / "log.db"
    log = QueryLog(db)
    old = log.query("an old query", session_id="s")
    golden = log.query("an old golden query", session_id="s")
    log.query("a new query", session_id="s")
    log.feedback("reference", session_id="s", query_id=old)
    log.feedback("reference", session_id="s", query_id=golden)
    log.agent_output("s", "an old reply")
    log.close()
    later = datetime.now(UTC) + timedelta(days=100)
    con = sqlite3.connect(db)
    con.execute(
        "UPDATE eval_queries SET created_at = ? WHERE query = 'a new query'", (later.isoformat(),)
    )
    con.execute("UPDATE eval_queries SET is_eval_corpus = 1 WHERE query_id = ?", (golden,))
    con.commit()
    con.close()
    deleted = apply_retention(db, tmp_path / "archive", now=later)
    assert deleted == {
        "eval_queries": 1,
        "eval_feedback": 1,
        "eval_shadow_runs": 0,
        "eval_agent_outputs": 1,
    }
    (archived,) = (tmp_path / "archive").glob("eval_queries-*.jsonl")
    rows = [json.loads(line) for line in archived.read_text().splitlines()]
    assert [r["query"] for r in rows] == ["an old query"]
    assert _count(db, "eval_queries") == 2  # the new one and the golden set's
    assert _count(db, "eval_feedback", f"WHERE query_id = '{golden}'") == 1


KILLED = """
import os, signal, sys, time
from memgauge.online.querylog import QueryLog
log = QueryLog(sys.argv[1], flush_interval=0.05)
for i in range(2000):
    log.query(f"q{i}", session_id="k")
time.sleep(0.5)                      # these are written by now
for i in range(2000, 2100):
    log.query(f"q{i}", session_id="k")
os.kill(os.getpid(), signal.SIGKILL)  # the last ones may die with the buffer
"""


def test_kill_9_loses_at_most_the_buffer_and_never_corrupts(tmp_path: Path) -> None:
    db = tmp_path / "log.db"
    proc = subprocess.run([sys.executable, "-c", KILLED, str(db)], check=False)
    assert proc.returncode == -9
    n = _count(db, "eval_queries")
    assert 2000 <= n <= 2100
    con = sqlite3.connect(db)
    assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    con.close()


RETAIN_TERMINATED = """
import json, os, signal, sys
from datetime import UTC, datetime, timedelta
from memgauge.store import querylog

rows = 0


def dumps(row):  # SIGTERM, as a CI runner or cron sends it, on the 60th row archived
    global rows
    rows += 1
    if rows == 60:
        os.kill(os.getpid(), signal.SIGTERM)
    return json.dumps(row)


querylog.json = type("json", (), {"dumps": staticmethod(dumps)})
querylog.apply_retention(sys.argv[1], sys.argv[2], now=datetime.now(UTC) + timedelta(days=100))
"""


def test_retention_stopped_by_sigterm_leaves_no_half_written_archive(tmp_path: Path) -> None:
    """`logs retain` killed while archiving left `eval_queries-*.jsonl` cut inside a line (a
    file no reader can read to its end), its rows still in the log to archive again."""
    db, archive = tmp_path / "log.db", tmp_path / "archive"
    log = QueryLog(db)
    for i in range(100):
        log.query(f"query {i} " + "x" * 1000, session_id="s")
    log.close()
    proc = subprocess.run(
        [sys.executable, "-c", RETAIN_TERMINATED, str(db), str(archive)], check=False
    )
    assert proc.returncode == -signal.SIGTERM
    assert list(archive.glob("eval_queries-*.jsonl")) == []
    assert _count(db, "eval_queries") == 100  # nothing deleted: the next pass archives them
    from memgauge.store.querylog import apply_retention

    later = datetime.now(UTC) + timedelta(days=100)
    assert apply_retention(db, archive, now=later)["eval_queries"] == 100
    (archived,) = archive.glob("eval_queries-*.jsonl")
    assert len([json.loads(line) for line in archived.read_text().splitlines()]) == 100


def test_feedback_becomes_graded_judgments(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from memgauge.cli.main import main

    db = tmp_path / "log.db"
    log = QueryLog(db)
    qid = log.query("deploy day", session_id="s", result_ids=["m1", "m2", "m3", "m4"])
    log.feedback("read_after_search", session_id="s", query_id=qid, memory_id="m1", rank=1)
    log.validate("m1", useful=True, session_id="s", query_id=qid)
    log.feedback("reference", session_id="s", query_id=qid, memory_id="m2", rank=2)
    log.validate("m3", useful=False, session_id="s", query_id=qid)
    log.close()
    assert main(["logs", "judgments", str(db)]) == 0
    assert json.loads(capsys.readouterr().out) == {"3": 1, "2": 1, "0": 1, "1": 1}
    con = sqlite3.connect(db)
    grades = dict(con.execute("SELECT memory_id, relevance FROM eval_judgments").fetchall())
    con.close()
    assert grades == {"m1": 3, "m2": 2, "m3": 0, "m4": 1}
    assert main(["logs", "judgments", str(db)]) == 0  # re-running replaces, never duplicates
    assert _count(db, "eval_judgments") == 4


def test_harvest_pool_annotate_and_import(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from memgauge.cli.main import main

    db = tmp_path / "log.db"
    log = QueryLog(db)
    for i in range(30):
        log.query(
            f"Question {i % 10}",
            session_id="s",
            result_ids=[f"m{i}", f"m{i + 1}"],
            intent="find" if i % 2 else "recall",
        )
    log.close()
    assert main(["logs", "harvest", str(db), "-n", "5"]) == 0
    assert json.loads(capsys.readouterr().out) == {"harvested": 5}
    assert _count(db, "eval_queries", "WHERE is_eval_corpus = 1") == 5
    pool_file = tmp_path / "pool.jsonl"
    assert main(["logs", "annotate", str(db), "--out", str(pool_file)]) == 0
    pool = [json.loads(line) for line in pool_file.read_text().splitlines()]
    assert len(pool) == 5
    # "Question 3" was logged three times: its pool is the union of all three result lists
    assert all(len(p["candidates"]) >= 4 for p in pool)
    for p in pool:
        p["candidates"][0]["grade"] = 3
    graded = tmp_path / "graded.jsonl"
    graded.write_text("".join(json.dumps(p) + "\n" for p in pool))
    capsys.readouterr()
    assert main(["logs", "import-annotations", str(db), str(graded)]) == 0
    assert json.loads(capsys.readouterr().out) == {"judgments": 5}
    assert _count(db, "eval_judgments", "WHERE source = 'manual' AND relevance = 3") == 5
    pool[0]["candidates"][1]["grade"] = 7
    graded.write_text("".join(json.dumps(p) + "\n" for p in pool))
    assert main(["logs", "import-annotations", str(db), str(graded)]) == 2
    assert "graded.jsonl:1: candidates.1.grade" in capsys.readouterr().err


def test_re_searches_and_the_golden_set_evaluated_offline(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from memgauge.cli.main import main

    db = tmp_path / "log.db"
    log = QueryLog(db)
    a = log.query("how do I refresh oauth tokens", session_id="s1", result_ids=["m2", "m1"])
    log.query("refresh oauth tokens how to", session_id="s1", result_ids=["m1", "m2"])
    log.query("how do I refresh oauth tokens", session_id="s2", result_ids=["m1"])
    log.query("which port does the api use", session_id="s2", result_ids=["m3"])
    log.feedback("read_after_search", session_id="s1", query_id=a, memory_id="m1", rank=2)
    log.close()
    assert main(["logs", "re-search", str(db)]) == 0
    assert json.loads(capsys.readouterr().out) == {"re_searches": 1}
    assert _count(db, "eval_feedback", f"WHERE event_type = 're_search' AND query_id = '{a}'") == 1
    assert main(["logs", "re-search", str(db)]) == 0  # not recorded twice
    assert json.loads(capsys.readouterr().out) == {"re_searches": 0}
    main(["logs", "judgments", str(db)])
    main(["logs", "harvest", str(db), "-n", "10"])
    capsys.readouterr()
    out = tmp_path / "golden"
    assert main(["logs", "export", str(db), "--out", str(out)]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["queries"] == 3  # the repeated question collapsed to its newest logging
    memories = [
        {"id": "m1", "text": "Refresh OAuth tokens five minutes before they expire."},
        {"id": "m2", "text": "The OAuth client id lives in the vault."},
        {"id": "m3", "text": "The API listens on port 8080."},
    ]
    (out / "memories.jsonl").write_text("".join(json.dumps(m) + "\n" for m in memories))
    assert (
        main(
            [
                "evaluate",
                str(out),
                "-s",
                "lexical",
                "--out",
                str(tmp_path / "report"),
                "--no-store",
                "--quiet",
            ]
        )
        == 0
    )
    result = json.loads((tmp_path / "report" / "result.json").read_text())
    assert result["systems"]


def test_query_ids_a_process_makes_sort_in_the_order_logged(tmp_path: Path) -> None:
    """So that each goes at the end of the unique index on query_id (sdk._FIRST_ID says why)."""
    log = QueryLog(tmp_path / "log.db", flush_interval=3600)
    qids = [log.query(f"query {i}") for i in range(1_000)]
    log.close()
    assert sorted(qids) == qids
    assert len(set(qids)) == 1_000


@pytest.mark.parametrize("name", ["pool.json", "pool.yaml", "pool"])
def test_an_annotation_pool_named_other_than_jsonl_reads_back(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    """`logs annotate --out pool.json` wrote JSON lines, which `import-annotations` (reading a
    file as its name says) refused: "pool.json:2: not valid JSON: Extra data". The pool is now
    written as its name is read: a JSON list, a query a line, under any name but .jsonl."""
    from memgauge.cli.main import main

    db = tmp_path / "log.db"
    log = QueryLog(db)
    for i in range(3):
        log.query(f"Question {i}", session_id="s", result_ids=[f"m{i}"], intent="find")
    log.close()
    assert main(["logs", "harvest", str(db)]) == 0
    pool_file = tmp_path / name
    assert main(["logs", "annotate", str(db), "--out", str(pool_file)]) == 0
    graded = tmp_path / f"graded-{name}"
    graded.write_text(pool_file.read_text().replace('"grade": null', '"grade": 2'))
    capsys.readouterr()
    assert main(["logs", "import-annotations", str(db), str(graded)]) == 0, capsys.readouterr()
    assert json.loads(capsys.readouterr().out) == {"judgments": 3}


def test_retention_failing_before_its_deletes_leaves_no_archive_and_every_row(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`logs retain` archived the expired queries, then deleted them in another step: a failure
    between left an archive of rows still in the log (archived again, twice over, by the next
    pass), and its select outside the deletes' transaction let a row that changed between go
    unarchived. One transaction: a failure in the deletes leaves no archive and every row."""
    from memgauge.store import querylog
    from memgauge.store.logdb import LogDB

    db, archive = tmp_path / "log.db", tmp_path / "archive"
    log = QueryLog(db)
    log.query("an old query", session_id="s")
    log.close()
    real = LogDB.execute

    def execute(self: LogDB, sql: str, *args: Any) -> Any:
        if sql.startswith("DELETE FROM eval_queries"):
            raise sqlite3.OperationalError("disk I/O error")
        return real(self, sql, *args)

    monkeypatch.setattr(LogDB, "execute", execute)
    later = datetime.now(UTC) + timedelta(days=100)
    with pytest.raises(sqlite3.OperationalError):
        querylog.apply_retention(db, archive, now=later)
    monkeypatch.undo()
    assert list(archive.glob("*")) == []
    assert _count(db, "eval_queries") == 1
    assert querylog.apply_retention(db, archive, now=later)["eval_queries"] == 1
    (archived,) = archive.glob("eval_queries-*.jsonl")
    assert len(archived.read_text().splitlines()) == 1


def test_retention_on_postgresql_deletes_only_the_queries_it_archived(
    tmp_path: Path, pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One transaction made SQLite's select and deletes see the same rows (its write lock is
    taken first), but PostgreSQL reads each statement afresh (read committed): a query
    committed between the select and the deletes, past the cut, was deleted and in no
    archive. The deletes see the select's snapshot: that query stays for the next pass."""
    from memgauge.store import querylog
    from memgauge.store.logdb import LogDB

    log = QueryLog(pg_url)
    log.query("an old query", session_id="s")
    log.close()
    real = LogDB.execute
    logged: list[str] = []

    def execute(self: LogDB, sql: str, *args: Any) -> Any:
        cur = real(self, sql, *args)
        if sql.startswith("SELECT * FROM eval_queries") and not logged:
            logged.append("meanwhile")  # another process logs a query, committed at once
            late = QueryLog(pg_url)
            late.query("a query logged meanwhile", session_id="s")
            late.close()
        return cur

    monkeypatch.setattr(LogDB, "execute", execute)
    later = datetime.now(UTC) + timedelta(days=100)
    archive = tmp_path / "archive"
    assert querylog.apply_retention(pg_url, archive, now=later)["eval_queries"] == 1
    monkeypatch.undo()
    (archived,) = archive.glob("eval_queries-*.jsonl")
    assert [json.loads(x)["query"] for x in archived.read_text().splitlines()] == ["an old query"]
    conn = LogDB(pg_url)
    try:
        left = conn.execute("SELECT query FROM eval_queries").fetchall()
    finally:
        conn.close()
    assert [r[0] for r in left] == ["a query logged meanwhile"]
