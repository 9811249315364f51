"""Issue 19 item 4: the SDK records everything seed 002's `eval_queries` holds, `logs export`
keeps session context, category and harvest time (so the agent metrics that need them are
numbers on a production golden set), and `logs annotate --system` re-runs the search with each
memory's text."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from memgauge.cli.main import main
from memgauge.online.querylog import QueryLog

MEMORIES = [
    {"id": "m1", "text": "Refresh OAuth tokens five minutes before they expire."},
    {"id": "m2", "text": "The OAuth client id lives in the vault."},
    {"id": "m3", "text": "The API listens on port 8080."},
    {"id": "m4", "text": "Deploys happen on Tuesdays after the standup."},
]


def test_every_eval_queries_field_is_recorded(tmp_path: Path) -> None:
    db = tmp_path / "log.db"
    log = QueryLog(db)
    stages = [
        {"stage": "candidate", "input_count": 0, "output_count": 40, "duration_ms": 3.5},
        {"stage": "fusion", "input_count": 40, "output_count": 10, "duration_ms": 0.4},
    ]
    log.query(
        "why did we pick postgres",
        session_id="s",
        result_ids=["m1"],
        category="causal-query",
        fusion_weights={"vector": 0.6, "fts5": 0.4},
        quality_proxy=0.72,
        fallback=True,
        fallback_reason="vector index cold",
        degraded=False,
        stages=stages,
    )
    log.query("plain", session_id="s")  # nothing optional given: NULLs, not zeros
    log.close()
    con = sqlite3.connect(db)
    rows = con.execute(
        "SELECT eval_category, fusion_weights, quality_proxy_score, fallback_triggered,"
        " fallback_reason, degraded_mode, stage_trace FROM eval_queries ORDER BY id"
    ).fetchall()
    con.close()
    cat, weights, proxy, fallback, reason, degraded, trace = rows[0]
    assert (cat, proxy, fallback, reason, degraded) == (
        "causal-query",
        0.72,
        1,
        "vector index cold",
        0,
    )
    assert json.loads(weights) == {"vector": 0.6, "fts5": 0.4}
    assert json.loads(trace) == stages
    assert rows[1] == (None,) * 7


def _log_sessions(db: Path) -> None:
    """Two sessions: each a cold first query, then warm ones after reading a memory."""
    log = QueryLog(db)
    for s in ("s1", "s2"):
        first = log.query(
            "which port does the api use",
            session_id=s,
            result_ids=["m3", "m1"],
            category="cold-start",
        )
        log.feedback("read_after_search", session_id=s, query_id=first, memory_id="m3")
        log.flush()  # the read is logged before the next query
        second = log.query(
            f"refresh oauth tokens {s}",
            session_id=s,
            result_ids=["m1", "m3"],
            category="semantic-search",
        )
        log.validate("m1", useful=True, session_id=s, query_id=second)
        log.flush()
        third = log.query(
            f"oauth client id {s}",
            session_id=s,
            result_ids=["m2", "m3"],
            category="semantic-search",
        )
        log.validate("m2", useful=True, session_id=s, query_id=third)
    log.close()


def _agent(result: dict[str, Any], name: str) -> dict[str, Any]:
    [system] = result["systems"]
    found = {k: v for k, v in system["agent_metrics"].items() if k.startswith(name)}
    assert found, sorted(system["agent_metrics"])
    return next(iter(found.values()))


def test_export_keeps_sessions_so_agent_metrics_are_numbers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "log.db"
    _log_sessions(db)
    memories = tmp_path / "memories.jsonl"
    memories.write_text("".join(json.dumps(m) + "\n" for m in MEMORIES))
    assert main(["logs", "judgments", str(db)]) == 0
    assert main(["logs", "harvest", str(db), "-n", "10"]) == 0
    out = tmp_path / "golden"
    assert main(["logs", "export", str(db), "--out", str(out), "--memories", str(memories)]) == 0
    queries = [json.loads(x) for x in (out / "queries.jsonl").read_text().splitlines()]
    assert len(queries) == 5  # the repeated first question collapsed
    by_text = {q["text"]: q for q in queries}
    warm = by_text["oauth client id s1"]
    assert warm["category"] == "semantic-search"
    assert warm["session_context"] == {
        "session_id": "s1",
        "working_memory_ids": ["m3", "m1"],
        "turn_number": 2,
    }
    cold = by_text["which port does the api use"]
    assert cold["session_context"]["turn_number"] == 0
    assert cold["session_context"]["working_memory_ids"] == []
    assert all(q["harvested_at"] for q in queries)
    capsys.readouterr()
    report = tmp_path / "report"
    args = ["evaluate", str(out), "-s", "lexical", "--out", str(report), "--no-store", "--quiet"]
    assert main(args) in (0, 1)
    result = json.loads((report / "result.json").read_text())
    for name in ("cold_start_mrr_ratio@", "session_personalization_lift@", "dedup_token_savings@"):
        metric = _agent(result, name)
        assert metric["value"] is not None, (name, metric)
        assert metric["n"] > 0
    # per-category results come from the exported categories
    [system] = result["systems"]
    assert {"semantic-search", "cold-start"} <= set(system["breakdown"]["category"])


def test_annotate_reruns_the_search_and_writes_each_memory_text(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "log.db"
    log = QueryLog(db)
    log.query("oauth tokens", session_id="s", result_ids=["m9"])  # m9 is gone from the system
    log.close()
    assert main(["logs", "harvest", str(db), "-n", "1"]) == 0
    memories = tmp_path / "memories.jsonl"
    memories.write_text("".join(json.dumps(m) + "\n" for m in MEMORIES))
    pool_file = tmp_path / "pool.jsonl"
    args = ["logs", "annotate", str(db), "--out", str(pool_file), "--system", "lexical"]
    assert main([*args, "--memories", str(memories)]) == 0
    [pool] = [json.loads(x) for x in pool_file.read_text().splitlines()]
    ids = [c["memory_id"] for c in pool["candidates"]]
    # the re-run's hits lead (OAuth memories first), the logged result follows
    assert ids[:2] == ["m2", "m1"] or ids[:2] == ["m1", "m2"]
    assert ids[-1] == "m9"
    texts = {c["memory_id"]: c["text"] for c in pool["candidates"]}
    assert texts["m1"] == MEMORIES[0]["text"]
    assert texts["m9"] is None  # known nowhere: said, not invented
    assert all(c["grade"] is None for c in pool["candidates"])
    # importing the pool as written (nothing graded) warns and exits 2
    capsys.readouterr()
    assert main(["logs", "import-annotations", str(db), str(pool_file)]) == 2
    assert "has a grade: nothing to import" in capsys.readouterr().err


def test_annotate_against_a_system_that_holds_nothing_writes_no_pool(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--system` with nothing in it (`lexical` without --memories, a mem0 spec without the
    application's user_id) found nothing for any query: the pool was written, led by nothing
    of the system's, with exit 0. It is an empty memory, exit 4, saying what to give."""
    db = tmp_path / "log.db"
    log = QueryLog(db)
    log.query("oauth tokens", session_id="s", result_ids=["m9"])
    log.close()
    assert main(["logs", "harvest", str(db), "-n", "1"]) == 0
    capsys.readouterr()
    pool_file = tmp_path / "pool.jsonl"
    args = ["logs", "annotate", str(db), "--out", str(pool_file), "--system", "lexical"]
    assert main(args) == 4
    err = " ".join(capsys.readouterr().err.split())
    assert "--system lexical: none of the 1 query's searches found anything" in err
    assert "give --memories FILE" in err
    assert not pool_file.exists()


def test_logs_commands_read_the_store_memgauge_store_names(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`export MEMGAUGE_STORE=postgresql://...` names the store for every command, the README
    says; `memgauge logs judgments` still asked for it ("Missing argument 'STORE'"). Left
    out, STORE is MEMGAUGE_STORE (else the default), as every command's --store; a command
    whose next argument would be read as the store still takes it first."""
    db = tmp_path / "log.db"
    log = QueryLog(db)
    qid = log.query("deploys", session_id="s", result_ids=["m4"])
    log.feedback("read_after_search", session_id="s", query_id=qid, memory_id="m4", rank=1)
    log.close()
    monkeypatch.setenv("MEMGAUGE_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("MEMGAUGE_STORE", str(db))
    assert main(["logs", "judgments"]) == 0
    assert json.loads(capsys.readouterr().out) == {"2": 1}
    assert main(["logs", "harvest", "-n", "1"]) == 0
    assert json.loads(capsys.readouterr().out) == {"harvested": 1}
    monkeypatch.delenv("MEMGAUGE_STORE")
    assert main(["logs", "judgments"]) == 2  # the default store: nothing recorded there
    assert "no results store at" in capsys.readouterr().err
    # the store is still import-annotations' first argument: this one is read as the store
    assert main(["logs", "import-annotations", str(tmp_path / "pool.jsonl")]) == 2
    assert "pool.jsonl" in capsys.readouterr().err


def test_annotate_with_memories_only_keeps_the_logged_pool_and_adds_texts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "log.db"
    log = QueryLog(db)
    log.query("deploys", session_id="s", result_ids=["m4", "m9"])
    log.close()
    assert main(["logs", "harvest", str(db), "-n", "1"]) == 0
    memories = tmp_path / "memories.jsonl"
    memories.write_text("".join(json.dumps(m) + "\n" for m in MEMORIES))
    pool_file = tmp_path / "pool.jsonl"
    args = ["logs", "annotate", str(db), "--out", str(pool_file), "--memories", str(memories)]
    assert main(args) == 0
    [pool] = [json.loads(x) for x in pool_file.read_text().splitlines()]
    assert [(c["memory_id"], c["text"]) for c in pool["candidates"]] == [
        ("m4", MEMORIES[3]["text"]),
        ("m9", None),
    ]


@pytest.mark.parametrize("call", ["export_golden_set", "derive_log_signals"])
def test_memories_from_python_name_its_arguments(call: str, tmp_path: Path) -> None:
    """`api.export_golden_set` and `api.derive_log_signals` said "give --memories or
    --dump-from, not both" and "--dump-from lexical: the system dumped no memories ...; give
    --memories FILE instead": flags a Python caller has no way to give."""
    from memgauge import api
    from memgauge.errors import SubjectError, UsageError

    db = tmp_path / "log.db"
    log = QueryLog(db)
    log.query("oauth tokens", session_id="s", result_ids=["m9"])
    log.close()
    api.harvest_queries(db, 1)
    memories = tmp_path / "memories.jsonl"
    memories.write_text('{"id": "m9", "text": "oauth"}\n')
    run = getattr(api, call)
    where = (tmp_path / "golden",) if call == "export_golden_set" else ()
    with pytest.raises(UsageError) as both:
        run(db, *where, memories_file=memories, dump_from="lexical")
    assert str(both.value) == "give memories_file or dump_from, not both"
    with pytest.raises(SubjectError) as empty:
        run(db, *where, dump_from="lexical")
    said = str(empty.value)
    assert said.startswith("dump_from=lexical: the system dumped no memories"), said
    assert said.endswith("; give memories_file=FILE instead"), said
    assert "--" not in said


def test_annotation_pool_from_python_names_its_arguments(tmp_path: Path) -> None:
    """The same empty memory from `api.write_annotation_pool` names the keywords a Python
    caller writes (`system=`, `memories_file=`), not the command's flags."""
    from memgauge import api
    from memgauge.errors import EmptyMemoryError

    db = tmp_path / "log.db"
    log = QueryLog(db)
    log.query("oauth tokens", session_id="s", result_ids=["m9"])
    log.close()
    api.harvest_queries(db, 1)
    pool_file = tmp_path / "pool.jsonl"
    with pytest.raises(EmptyMemoryError) as caught:
        api.write_annotation_pool(db, pool_file, system="lexical")
    message = str(caught.value)
    assert "system=lexical: none of the 1 query's searches found anything" in message
    assert "give memories_file=FILE" in message
    assert "--" not in message
    assert not pool_file.exists()
