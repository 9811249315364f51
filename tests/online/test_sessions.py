"""Issue 19 item 5: sessions and task outcomes from the query log (seed 002 sections 5.3 and
5.4), through the SDK and `memgauge logs`."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from memgauge.cli.main import main
from memgauge.online.querylog import QueryLog


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> Any:
    capsys.readouterr()
    assert main(list(args)) == 0
    return json.loads(capsys.readouterr().out)


def test_a_session_summary_and_batch_validation_after_its_task(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "log.db"
    log = QueryLog(db)
    log.session("s", turns=4)
    a = log.query("deploy day", session_id="s", result_ids=["m1", "m2", "m3"])
    log.feedback("read_after_search", session_id="s", query_id=a, memory_id="m2", rank=2)
    log.feedback("re_search", session_id="s", query_id=a)
    b = log.query("which day do we deploy", session_id="s", result_ids=["m2", "m4"])
    log.feedback("read_after_search", session_id="s", query_id=b, memory_id="m4", rank=2)
    log.query("unjudged question", session_id="s", result_ids=["m9"])
    log.session("s", ended=True)  # the turn count stays
    log.outcome("s", task_id="t1", success=True)
    log.close()
    con = sqlite3.connect(db)
    # judgments for the first two searches only: m2 relevant to both
    con.executemany(
        "INSERT INTO eval_judgments (query_id, memory_id, relevance, source, created_at)"
        " VALUES (?, ?, ?, 'manual', 'now')",
        [(a, "m2", 3), (a, "m1", 0), (b, "m2", 2)],
    )
    con.commit()
    con.close()
    [summary] = _run(capsys, "logs", "sessions", str(db))["sessions"]
    assert summary["searches"] == 3
    assert summary["memories_accessed"] == 2
    assert summary["n_judged"] == 2
    assert summary["avg_mrr"] == pytest.approx((1 / 2 + 1) / 2)  # m2 at rank 2, then rank 1
    assert summary["re_search_rate"] == pytest.approx(1 / 3)
    assert summary["turns"] == 4
    assert summary["searches_per_turn"] == pytest.approx(3 / 4)
    assert summary["duration_minutes"] is not None
    assert summary["duration_minutes"] >= 0
    assert [o["task_id"] for o in summary["outcomes"]] == ["t1"]
    assert summary["outcomes"][0]["success"] is True
    assert summary["to_validate"] == ["m2", "m4"]
    done = _run(
        capsys, "logs", "validate", str(db), "--session", "s", "--task", "t1", "--useful", "m2"
    )
    assert done == {"validated": 1, "to_validate": ["m4"]}
    con = sqlite3.connect(db)
    [(meta,)] = con.execute(
        "SELECT metadata FROM eval_feedback WHERE event_type = 'validate_useful'"
    ).fetchall()
    con.close()
    assert json.loads(meta) == {"batch": True, "task_id": "t1"}
    assert main(["logs", "validate", str(db), "--session", "nope", "--useful", "m2"]) == 2
    assert "no session 'nope'" in capsys.readouterr().err
    assert main(["logs", "sessions", str(db), "--session", "nope"]) == 2


def _sessions(db: Path, n: int) -> None:
    """`n` sessions: the first relevant memory at rank 1 in the even ones (they succeed, most
    of them), at rank 3 in the odd ones (they fail, most of them)."""
    log = QueryLog(db)
    for i in range(n):
        s = f"s{i}"
        ids = ["rel", "x", "y"] if i % 2 == 0 else ["x", "y", "rel"]
        qid = log.query(f"question {i}", session_id=s, result_ids=ids, query_id=f"q{i}")
        log.validate("rel", useful=True, session_id=s, query_id=qid)
        log.session(s, turns=i + 2)
        for j in range(i % 3):  # more searches in some sessions
            log.query(f"again {i} {j}", session_id=s, result_ids=ids)
    log.close()


def test_outcomes_correlate_with_retrieval_quality_with_a_ci_or_say_too_few(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    few = tmp_path / "few.db"
    _sessions(few, 3)
    assert main(["logs", "judgments", str(few)]) == 0
    for i in range(3):
        assert main(["logs", "outcome", str(few), "--session", f"s{i}", "--success"]) == 0
    report = _run(capsys, "logs", "outcomes", str(few))
    assert report["success"]["value"] is None
    assert "needs at least 10" in report["success"]["note"]
    assert report["n_judged_with_outcome"] == 3

    db = tmp_path / "log.db"
    _sessions(db, 14)
    assert main(["logs", "judgments", str(db)]) == 0
    for i in range(14):
        won = i % 2 == 0 if i not in (0, 1) else i == 1  # two sessions go against the trend
        flag = "--success" if won else "--failure"
        assert main(["logs", "outcome", str(db), "--session", f"s{i}", flag, "--task", "t"]) == 0
        assert main(["logs", "outcome", str(db), "--session", f"s{i}", "--score", str(i)]) == 0
    report = _run(capsys, "logs", "outcomes", str(db))
    success = report["success"]
    assert success["n"] == 14
    assert (success["n_success"], success["n_failure"]) == (7, 7)
    # the even sessions have MRR 1, the odd ones 1/3; 6 of 7 successes are even ones
    assert success["mrr_success"] == pytest.approx((6 + 1 / 3) / 7)
    assert success["mrr_failure"] == pytest.approx((1 + 6 / 3) / 7)
    low, high = success["ci"]
    assert low < success["value"] < high
    assert success["value"] > 0
    assert report["score"]["n"] == 14
    assert main(["logs", "outcome", str(db), "--session", "s0"]) == 2
    assert main(["logs", "outcome", str(db), "--session", "s0", "--score", "nan"]) == 2


def test_session_length_signal_and_channel_contribution(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "log.db"
    _sessions(db, 12)
    signal = _run(capsys, "logs", "sessions", str(db))["session_length"]
    assert signal["n"] == 12
    assert signal["method"] == "spearman"
    assert signal["value"] is not None
    assert signal["ci"] is not None
    few = tmp_path / "few.db"
    _sessions(few, 2)
    signal = _run(capsys, "logs", "sessions", str(few))["session_length"]
    assert (signal["value"], signal["n"]) == (None, 2)

    log = QueryLog(db)
    log.query("c", session_id="c", result_ids=["a", "b"], channel_contributions={"fts5": ["a"]})
    log.query(
        "d",
        session_id="c",
        result_ids=["a", "b"],
        channel_contributions={"fts5": ["a", "b"], "vector": ["b"]},
    )
    log.close()
    channels = _run(capsys, "logs", "channels", str(db))
    assert channels["n_searches"] == 2  # the searches that logged channels
    assert channels["n_results"] == 4
    assert channels["contribution"] == {"fts5": 0.75, "vector": 0.25}
    assert channels["unique"] == {"fts5": 0.5, "vector": 0.0}


def test_scroll_past_and_copy_reference_come_from_the_logs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "log.db"
    log = QueryLog(db)
    qid = log.query("deploys", session_id="s", result_ids=["m1", "m2", "m3", "m4"])
    log.feedback("read_after_search", session_id="s", query_id=qid, memory_id="m3", rank=3)
    log.flush()
    log.agent_output(
        "s",
        "Sure. As noted, deploys happen on Tuesdays after the standup with the whole team,"
        " so plan for that.",
    )
    log.agent_output("s", "The API is fast.")  # shares words, not a span, with m2
    log.close()
    memories = tmp_path / "memories.jsonl"
    rows = [
        {"id": "m1", "text": "Deploys happen on Tuesdays after the standup with the whole team."},
        {"id": "m2", "text": "The API listens on port 8080 behind the proxy."},
        {"id": "m3", "text": "Rollbacks need two approvals."},
        {"id": "m4", "text": "Tuesday standups start at nine."},
    ]
    memories.write_text("".join(json.dumps(r) + "\n" for r in rows))
    found = _run(capsys, "logs", "signals", str(db), "--memories", str(memories))
    # m1 and m2 were ranked above the selected m3 and skipped; m4 below it was never reached
    assert found == {"scroll_past": 2, "reference": 1, "new": 3}
    con = sqlite3.connect(db)
    events = con.execute(
        "SELECT event_type, memory_id, rank_in_results, query_id FROM eval_feedback"
        " WHERE event_type IN ('scroll_past', 'reference') ORDER BY event_type, memory_id"
    ).fetchall()
    con.close()
    assert events == [
        ("reference", "m1", 1, qid),
        ("scroll_past", "m1", 1, qid),
        ("scroll_past", "m2", 2, qid),
    ]
    again = _run(capsys, "logs", "signals", str(db), "--memories", str(memories))
    assert again["new"] == 0  # derived once
    # a reference is a selection: the judgments bootstrap it as relevant
    assert main(["logs", "judgments", str(db)]) == 0


def test_sessions_outcomes_and_the_new_columns_on_postgresql(
    pg_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Revision 0014's tables and columns through the SDK and the CLI on a PostgreSQL store."""
    log = QueryLog(pg_url)
    log.session("s", turns=3)
    qid = log.query(
        "deploys",
        session_id="s",
        result_ids=["m1", "m2"],
        category="cold-start",
        fusion_weights={"fts5": 1.0},
        quality_proxy=0.5,
        fallback=False,
        degraded=True,
        stages=[{"stage": "final-rank", "input_count": 2, "output_count": 2}],
    )
    log.feedback("read_after_search", session_id="s", query_id=qid, memory_id="m2", rank=2)
    log.agent_output("s", "we deploy on tuesdays after the standup every week")
    log.close()
    assert main(["logs", "outcome", pg_url, "--session", "s", "--failure", "--task", "t"]) == 0
    [summary] = _run(capsys, "logs", "sessions", pg_url)["sessions"]
    assert (summary["searches"], summary["turns"], summary["to_validate"]) == (1, 3, ["m2"])
    assert summary["outcomes"][0]["success"] is False
    memories = tmp_path / "memories.jsonl"
    memories.write_text(
        json.dumps({"id": "m1", "text": "We deploy on Tuesdays after the standup."}) + "\n"
    )
    found = _run(capsys, "logs", "signals", pg_url, "--memories", str(memories))
    assert (found["scroll_past"], found["reference"]) == (1, 1)
    # the agent's copy of m1 made it an accessed memory: it now awaits validation too
    assert _run(capsys, "logs", "validate", pg_url, "--session", "s", "--not-useful", "m2") == {
        "validated": 1,
        "to_validate": ["m1"],
    }
    assert main(["logs", "harvest", pg_url, "-n", "1"]) == 0
    out = tmp_path / "golden"
    assert main(["logs", "export", pg_url, "--out", str(out)]) == 0
    [query] = [json.loads(x) for x in (out / "queries.jsonl").read_text().splitlines()]
    assert query["category"] == "cold-start"
    assert query["session_context"]["turn_number"] == 0


#: the `logs` commands that read --memories FILE (`{db}`, `{bad}`, `{out}` filled in)
READ_MEMORIES = [
    ["logs", "signals", "{db}", "--memories", "{bad}"],
    ["logs", "annotate", "{db}", "--out", "{out}", "--memories", "{bad}"],
    ["logs", "annotate", "{db}", "--out", "{out}", "--system", "lexical", "--memories", "{bad}"],
]


def _harvested_log(tmp_path: Path) -> Path:
    """A query log of one search whose second result was read, harvested."""
    db = tmp_path / "log.db"
    log = QueryLog(db)
    qid = log.query("q", session_id="s", result_ids=["m1", "m2"])
    log.feedback("read_after_search", session_id="s", query_id=qid, memory_id="m2", rank=2)
    log.close()
    assert main(["logs", "harvest", str(db), "-n", "1"]) == 0
    return db


@pytest.mark.parametrize("command", READ_MEMORIES)
def test_malformed_memories_exit_2_and_record_nothing(
    command: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = Path(__file__).resolve().parents[1] / "data" / "bad" / "memories_wrong_types.jsonl"
    db = _harvested_log(tmp_path)
    out = tmp_path / "pool.jsonl"
    capsys.readouterr()
    args = [a.format(db=db, bad=bad, out=out) for a in command]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "memories_wrong_types.jsonl:1" in err
    assert "Traceback" not in err
    assert not out.exists()
    con = sqlite3.connect(db)
    derived = con.execute(
        "SELECT COUNT(*) FROM eval_feedback WHERE event_type = 'scroll_past'"
    ).fetchone()
    con.close()
    assert derived == (0,)  # nothing half-written: the scroll-past needs no text, yet waits


@pytest.mark.parametrize(
    "command", [*READ_MEMORIES, ["logs", "export", "{db}", "--out", "{out}", "--memories", "{bad}"]]
)
def test_memories_repeating_an_id_exit_2_naming_the_line(
    command: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--memories FILE with two memories under one id was read one in place of the other (the
    pool's and the signals' texts), or written as it was: `logs export`'s memories.jsonl, a
    dataset `memgauge evaluate` then refused. It is refused as synth and a task's memories:
    refuse it, at the repeated id's line, and nothing is written."""
    bad = Path(__file__).resolve().parents[1] / "data" / "bad" / "memories_duplicate_ids.jsonl"
    db = _harvested_log(tmp_path)
    out = tmp_path / "written"
    capsys.readouterr()
    assert main([a.format(db=db, bad=bad, out=out) for a in command]) == 2
    assert f"{bad}:2: id: duplicate memory id 'm1' (first at line 1)" in capsys.readouterr().err
    assert not out.exists()


@pytest.mark.parametrize(
    "args",
    [
        ["outcome", "--session", "", "--success"],
        ["outcome", "--session", "s", "--task", "", "--success"],
        ["validate", "--session", "s", "--useful", ""],
        ["validate", "--session", "s", "--useful", "m1", "--not-useful", ""],
    ],
    ids=["outcome-session", "outcome-task", "validate-useful", "validate-not-useful"],
)
def test_an_empty_session_task_or_memory_id_is_refused(
    args: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`logs outcome --session ''` recorded an outcome of a session called '', `logs validate
    --useful ''` a validation of a memory called '' (exit 0)."""
    db = tmp_path / "log.db"
    log = QueryLog(db)
    log.query("q", session_id="s", result_ids=["m1"])
    log.close()
    assert main(["logs", args[0], str(db), *args[1:]]) == 2
    assert "'': an empty one names nothing; give its id" in capsys.readouterr().err
    with sqlite3.connect(db) as con:
        assert con.execute("SELECT COUNT(*) FROM eval_outcomes").fetchone() == (0,)
        assert con.execute("SELECT COUNT(*) FROM eval_feedback").fetchone() == (0,)


def test_an_outcome_said_to_succeed_and_fail_is_refused_and_nothing_recorded(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "log.db"
    _sessions(db, 1)
    capsys.readouterr()
    assert main(["logs", "outcome", str(db), "--session", "s0", "--success", "--failure"]) == 2
    err = capsys.readouterr().err
    assert "--success and --failure cannot go together" in err
    [summary] = _run(capsys, "logs", "sessions", str(db))["sessions"]
    assert summary["outcomes"] == []
