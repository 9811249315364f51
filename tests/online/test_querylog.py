"""The production logging SDK: rows arrive, feedback links to queries, confidence updates,
four processes into one SQLite file lose nothing, a normal exit flushes, and importing it
stays light."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

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
    code = "import sys, memgauge.online.querylog; print(json.dumps(sorted(m for m in ('numpy', 'scipy', 'pydantic', 'aiohttp', 'yaml', 'click', 'rich') if m in sys.modules)))"
    out = subprocess.run(
        [sys.executable, "-c", "import json; " + code], capture_output=True, text=True, check=True
    )
    assert json.loads(out.stdout) == []
