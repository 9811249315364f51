"""The commands on a `postgresql://` store, against a real server (tests/pgserver.py): run and
`--resume`, gate, history, runs, A/B tests, shadow and logs; the gate's verdicts, bundles and
`optimize` on both dialects; a server stopped mid-run stops the
run with exit 3 and it resumes once the server is back; four processes log into one store and
every row arrives."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from memgauge.cli.main import main
from memgauge.data.demo import demo_dataset
from memgauge.data.io import save_retrieval_dataset
from memgauge.store.shadow import ShadowStore
from pgserver import rows as _rows

DATA = Path(__file__).resolve().parents[1] / "data"
SUBJECTS = DATA / "subjects"


def _env() -> dict[str, str]:
    path = os.pathsep.join([str(SUBJECTS), os.environ.get("PYTHONPATH", "")])
    return {**os.environ, "PYTHONPATH": path}


def _evaluate_args(data: Path, out: Path, url: str, *subjects: str) -> list[str]:
    args = ["evaluate", str(data), "--store", url, "--out", str(out), "--quiet"]
    for s in subjects:
        args += ["-s", s]
    return args


def test_every_command_on_a_postgresql_store(
    pg_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    data = tmp_path / "demo"
    save_retrieval_dataset(demo_dataset(), data)
    for i in range(2):
        assert main(_evaluate_args(data, tmp_path / f"o{i}", pg_url, "lexical")) == 0
    capsys.readouterr()
    assert main(["runs", "list", "--store", pg_url, "--json"]) == 0
    runs = json.loads(capsys.readouterr().out)
    assert len(runs) == 2
    assert all(r["status"] == "completed" for r in runs)
    newest = runs[0]["run_id"]
    assert main(["runs", "show", newest[:-3], "--store", pg_url]) == 0
    assert main(["gate", newest, "--store", pg_url, "--no-learn"]) == 0
    suite = _rows(pg_url, f"SELECT suite_name FROM suite_runs WHERE run_id = '{newest}'")[0][0]
    assert main(["history", suite, "--store", pg_url, "--json"]) == 0
    assert len(json.loads(capsys.readouterr().out.strip().splitlines()[-1])["runs"]) == 2
    # a suite run (every task kind), then its resume, which finds nothing left to do
    sys.path.insert(0, str(SUBJECTS))
    try:
        suite_file = str(DATA / "suites" / "qa" / "suite.yaml")
        assert main(["run", suite_file, "--store", pg_url, "--json"]) in (0, 1)
        ran = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
        assert ran["status"] == "completed"
        assert main(["run", suite_file, "--store", pg_url, "--resume", ran["run_id"]]) in (0, 1)
    finally:
        sys.path.remove(str(SUBJECTS))
    # MEMGAUGE_STORE names the store when no --store is given
    monkeypatch.setenv("MEMGAUGE_STORE", pg_url)
    capsys.readouterr()
    assert main(["runs", "list", "--json"]) == 0
    assert len(json.loads(capsys.readouterr().out)) == 3
    # A/B tests
    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text(
        "".join(
            json.dumps({"query_id": f"q{i}", "control": 0.4, "treatment": 0.6}) + "\n"
            for i in range(40)
        )
    )
    assert main(["ab", "create", "graph", "--delta", "0.03"]) == 0
    assert main(["ab", "add", "graph", str(pairs)]) == 0
    assert main(["ab", "status", "graph", "--json"]) == 0
    assert json.loads(capsys.readouterr().out.strip().splitlines()[-1])[0]["n_pairs"] == 40
    # shadow runs
    with ShadowStore(pg_url) as shadow:
        shadow.record_shadow(
            "rerank", {"query_id": "q", "control": ["a", "b"], "treatment": ["b", "a"]}
        )
    assert main(["shadow", "summary", "rerank", "--json"]) == 0
    assert "rerank" in capsys.readouterr().out
    # production logs
    from memgauge.online.querylog import QueryLog

    log = QueryLog(pg_url)
    qid = log.query("oauth", session_id="s", result_ids=["m1"])
    log.validate("m1", useful=True, session_id="s", query_id=qid)
    log.close()
    assert main(["logs", "judgments", pg_url]) == 0
    assert json.loads(capsys.readouterr().out) == {"3": 1}
    assert main(["logs", "harvest", pg_url, "-n", "1"]) == 0
    assert main(["logs", "retain", pg_url, "--archive", str(tmp_path / "archive")]) == 0


def test_a_server_stopped_mid_run_stops_it_with_exit_3_and_it_resumes(
    tmp_path: Path, pg_server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pgserver import PGServer

    server = PGServer(pg_server.bindir)  # its own server: this test stops it
    try:
        server.start()
        url = server.new_database()
        data = tmp_path / "demo"
        save_retrieval_dataset(demo_dataset(), data)
        args = _evaluate_args(data, tmp_path / "out", url, "python:slow:SlowMemory@slow")
        proc = subprocess.Popen(
            [sys.executable, "-m", "memgauge.cli.main", *args],
            env=_env(),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        deadline = time.monotonic() + 120
        done = 0
        while time.monotonic() < deadline and done < 5:
            assert proc.poll() is None, proc.communicate()[1]
            with contextlib.suppress(sa.exc.ProgrammingError):  # the schema is being made
                done = _rows(
                    url, "SELECT COUNT(*) FROM suite_run_items WHERE status = 'completed'"
                )[0][0]
            time.sleep(0.05)
        server.stop()
        _out, err = proc.communicate(timeout=120)
        assert proc.returncode == 3, err
        assert "unreachable" in err
        assert "--resume" in err
        assert "Traceback" not in err
        server.start()
        [(run_id, status)] = _rows(url, "SELECT run_id, status FROM suite_runs")
        assert status != "completed"
        # the resume in this process (the stopped server and the exit of the process it
        # stopped are what needed one), its memory no longer slow
        monkeypatch.syspath_prepend(str(SUBJECTS))
        monkeypatch.setenv("SLOW_SUBJECTS_DELAY", "0")
        assert main([*args, "--resume", run_id]) == 0
        [(status,)] = _rows(url, "SELECT status FROM suite_runs")
        attempts = [r[0] for r in _rows(url, "SELECT attempts FROM suite_run_items")]
        assert status == "completed"
        assert len(attempts) == len(demo_dataset().qrels())
        assert all(a == 1 for a in attempts)  # nothing recorded twice
    finally:
        server.close()


LOGGER = """
import sys
from memgauge.online.querylog import QueryLog
url, who, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
log = QueryLog(url, flush_interval=0.01)
for i in range(n):
    qid = log.query(f"{who} query {i}", session_id=who, result_ids=[f"m{i}"], latency_ms=1.0)
    log.feedback("read_after_search", session_id=who, query_id=qid, memory_id=f"m{i}", rank=1)
    log.validate("shared", useful=i % 2 == 0, session_id=who, query_id=qid)
log.close()
"""


def test_four_processes_log_into_postgresql_and_every_row_arrives(pg_url: str) -> None:
    n = 300
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", LOGGER, pg_url, f"p{w}", str(n)],
            stderr=subprocess.PIPE,
            text=True,
        )
        for w in range(4)
    ]
    for proc in procs:
        _out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err
    [(queries,)] = _rows(pg_url, "SELECT COUNT(DISTINCT query_id) FROM eval_queries")
    [(feedback,)] = _rows(pg_url, "SELECT COUNT(*) FROM eval_feedback")
    [(validations,)] = _rows(
        pg_url, "SELECT validations FROM memory_confidence WHERE memory_id = 'shared'"
    )
    assert queries == 4 * n
    assert feedback == 4 * n * 2  # read_after_search and the validation's own event
    assert validations == 4 * n  # every update of the one row, none lost to a race


def _offset_suite(path: Path, offset: int) -> Path:
    """A suite whose agent answers `add A B` right only at offset 0 (score 1, else 0), with an
    optimization block over the offset."""
    import yaml

    items = [
        {"id": f"q{i}", "input": f"add {i} {i + 1}", "expected": str(2 * i + 1)} for i in range(8)
    ]
    suite = {
        "name": "offsets",
        "subjects": {
            "agent": {"python": {"target": "optsubjects:OffsetAgent", "kwargs": {"offset": offset}}}
        },
        "tasks": [
            {"name": "sums", "kind": "expected-output", "items": items, "evaluators": ["exact"]}
        ],
        "optimization": {"space": {"kwargs.offset": "int:-2..2"}, "seed": 1},
    }
    path.write_text(yaml.safe_dump(suite, sort_keys=False))
    return path


def _last_json(capsys: pytest.CaptureFixture[str]) -> Any:
    return json.loads(capsys.readouterr().out.strip().splitlines()[-1])


def test_gate_verdicts_bundles_and_optimize_on_either_dialect(
    store_where: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The gate's rule on SQLite and PostgreSQL: a failed run is kept out of later baselines
    until `gate --accept`; its verdict travels in a bundle (an exported failed run is no
    baseline either); `memgauge optimize` records its study and every candidate there."""
    suite = tmp_path / "suite.yaml"
    sys.path.insert(0, str(SUBJECTS))
    try:
        ids = []
        for offset in (0, 3, 0):
            _offset_suite(suite, offset)
            assert main(["run", str(suite), "--store", store_where, "--json"]) in (0, 1)
            ids.append(_last_json(capsys)["run_id"])
            gated = ["gate", str(suite), "--store", store_where, "--no-learn", "--json"]
            code = main(gated)
            verdict = _last_json(capsys)
            if offset == 3:
                assert code == 1
                assert verdict["status"] == "fail"
        good, bad, again = ids
        assert verdict["run_id"] == again
        assert verdict["baseline_runs"] == [good]
        assert verdict["excluded"] == [bad]
        # bundles carry the verdict: gated on a fresh SQLite store, a failed export is no baseline
        export = ["runs", "export", "--store", store_where, "--format", "bundle", "--out"]
        for run_id in ids:
            assert main([*export, str(tmp_path / f"{run_id}.json"), run_id]) == 0
        other = tmp_path / "ci.db"
        assert main(["runs", "import", str(tmp_path / f"{again}.json"), "--store", str(other)]) == 0
        baselines = [a for r in (good, bad) for a in ("--baseline", str(tmp_path / f"{r}.json"))]
        assert main(["gate", again, "--store", str(other), "--no-learn", "--json", *baselines]) == 0
        assert _last_json(capsys)["baseline_runs"] == [good]
        assert main(["gate", "--accept", bad, "--store", store_where]) == 0
        assert main(["gate", again, "--store", store_where, "--no-learn", "--json"]) == 0
        assert _last_json(capsys)["baseline_runs"] == [good, bad]
        # optimize: a study and its candidates, listed and shown from the same store
        _offset_suite(suite, 2)
        argv = ["optimize", str(suite), "--store", store_where, "--max-iterations", "3", "--json"]
        assert main(argv) == 0
        study = _last_json(capsys)
        assert main(["optimize", "list", "--store", store_where, "--json"]) == 0
        listed = _last_json(capsys)
        assert [s["study_id"] for s in listed] == [study["id"]]
        assert main(["optimize", "show", study["id"][:-2], "--store", store_where, "--json"]) == 0
        shown = _last_json(capsys)
        assert shown["id"] == study["id"]
        assert len(shown["iterations"]) >= 4  # the baseline and three iterations
        assert all(it["run_id"] for it in shown["iterations"])
    finally:
        sys.path.remove(str(SUBJECTS))


def test_a_nul_in_an_input_file_is_exit_2_before_it_reaches_the_server(
    pg_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """PostgreSQL refuses NUL in text: `ab add` with a query id holding `\\u0000` was its
    DataError, exit 70. The reader refuses it with the line; no pair is stored."""
    assert main(["ab", "create", "t", "--delta", "0.1", "--store", pg_url]) == 0
    bad = DATA / "bad" / "ab_pairs_nul_query_id.jsonl"
    assert main(["ab", "add", "t", str(bad), "--store", pg_url]) == 2
    err = capsys.readouterr().err
    assert "ab_pairs_nul_query_id.jsonl:2" in err
    assert "NUL character" in err
    assert _rows(pg_url, "SELECT COUNT(*) FROM eval_ab_test_pairs") == [(0,)]
