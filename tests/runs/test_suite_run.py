"""`memgauge run` and `memgauge runs`: every task kind end to end on a real SQLite store, item
failures and timeouts recorded as data, the failure-rate stop, resume after kill -9, and two
processes writing one store at once."""

from __future__ import annotations

import csv
import io
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from memgauge.cli.main import main
from memgauge.runs.engine import run_suite
from memgauge.runs.options import RunOptions
from memgauge.runs.suite import load_suite
from memgauge.store.suite_runs import SuiteRunStore

DATA = Path(__file__).resolve().parents[1] / "data"
QA = DATA / "suites" / "qa" / "suite.yaml"
SUBJECTS = DATA / "subjects"


@pytest.fixture(autouse=True)
def _importable_subjects(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(SUBJECTS))


def _cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def _last_json(out: str) -> dict[str, Any]:
    return json.loads(out.strip().splitlines()[-1])  # type: ignore[no-any-return]


def _result(doc: dict[str, Any], subject: str, task: str, evaluator: str) -> dict[str, Any]:
    (row,) = [
        r
        for r in doc["results"]
        if (r["subject"], r["task"], r["evaluator"]) == (subject, task, evaluator)
    ]
    return row


def test_qa_suite_runs_every_task_kind_and_records_every_item(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "r.db"
    code, out, _ = _cli(capsys, "run", str(QA), "--store", str(db), "--json")
    assert code == 0
    doc = _last_json(out)
    assert doc["status"] == "completed"
    # 5 items x 2 subjects x 2 item tasks + 1 judged retrieval query for the memory subject
    assert (doc["n_items"], doc["n_completed"], doc["n_failed"]) == (21, 21, 0)
    # the agent answers every recall question with the right fact (and knows what it was told)
    agent = _result(doc, "agent", "answers", "icontains")
    assert (agent["mean"], agent["n_scored"], agent["n_failed"]) == (1.0, 5, 0)
    # the memory answers with its top hit: right for 3 of 5 (the cat and the history question
    # have no memory that says so)
    memory = _result(doc, "memory", "answers", "icontains")
    assert memory["mean"] == pytest.approx(0.6)
    assert _result(doc, "memory", "retrieval", "nDCG@10")["mean"] == 1.0
    # seed 004's script prints 0-100; scale 100 maps it to [0, 1]
    assert _result(doc, "agent", "scripted", "script")["mean"] == 1.0
    # retrieval runs only for the subjects the task names
    assert not [r for r in doc["results"] if (r["subject"], r["task"]) == ("agent", "retrieval")]

    with sqlite3.connect(db) as conn:
        n_outputs = conn.execute("SELECT COUNT(*) FROM suite_run_outputs").fetchone()[0]
        n_scores = conn.execute("SELECT COUNT(*) FROM suite_run_scores").fetchone()[0]
        statuses = {r[0] for r in conn.execute("SELECT status FROM suite_run_items")}
        out_kg = conn.execute(
            "SELECT output_json FROM suite_run_outputs WHERE subject='memory' AND task='answers'"
            " AND item_id='kg'"
        ).fetchone()[0]
    assert n_outputs == 21
    assert n_scores == 5 * 3 * 2 + 5 * 2 + 2  # answers x 3 evaluators, scripted x 1, retrieval x 2
    assert statuses == {"completed"}
    assert json.loads(out_kg) == "The knowledge graph uses an embedded Kuzu database."

    run_id = doc["run_id"]
    code, out, _ = _cli(capsys, "runs", "show", run_id, "--store", str(db), "--json")
    shown = json.loads(out)
    assert code == 0
    assert shown["status"] == "completed"
    assert shown["warning"] is None
    assert shown["provenance"]["memgauge_version"]
    assert shown["provenance"]["datasets"]["answers"]  # sha256 of items.jsonl
    assert shown["results"] == doc["results"]
    assert {t["task"]: t["n_items"] for t in shown["tasks"]} == {
        "answers": 5,
        "scripted": 5,
        "retrieval": 1,
    }

    code, out, _ = _cli(capsys, "runs", "export", run_id, "--store", str(db), "--format", "jsonl")
    records = [json.loads(line) for line in out.splitlines()]
    assert len(records) == 21
    kg = next(
        r for r in records if (r["subject"], r["task"], r["item_id"]) == ("agent", "answers", "kg")
    )
    assert kg["output"] == "We use Kuzu."
    assert kg["expected"] == "Kuzu"
    assert [s["evaluator"] for s in kg["scores"]] == ["icontains", "not-verbatim", "token_f1"]
    assert all(s["reason"] for s in kg["scores"])

    code, out, _ = _cli(
        capsys, "runs", "export", run_id[:17], "--store", str(db), "--format", "csv"
    )
    rows = list(csv.DictReader(io.StringIO(out)))
    assert len(rows) == 21
    assert "icontains.reason" in rows[0]

    code, out, _ = _cli(capsys, "runs", "export", run_id, "--store", str(db), "--format", "json")
    assert len(json.loads(out)["items"]) == 21

    code, out, _ = _cli(capsys, "runs", "list", "--store", str(db), "--json")
    assert [r["run_id"] for r in json.loads(out)] == [run_id]

    # watching a run that has ended shows its state once and returns
    code, out, _ = _cli(capsys, "runs", "watch", run_id, "--store", str(db))
    assert code == 0
    assert f"run {run_id} of suite 'qa-suite': completed; 21 completed" in out


def _suite(tmp_path: Path, agent_kwargs: dict[str, Any], **extra: Any) -> Path:
    """An expected-output suite of `n` generated items over the lookup agent (concurrent unless
    `concurrent=False`: then it has one thread)."""
    n = extra.pop("n", 20)
    concurrent = extra.pop("concurrent", True)
    items = [
        {"id": f"q{i:03d}", "input": f"question {i} about port", "expected": "8080"}
        for i in range(n)
    ]
    (tmp_path / "items.jsonl").write_text("".join(json.dumps(it) + "\n" for it in items))
    suite = {
        "name": "gen",
        "subjects": {
            "agent": {
                "python": {
                    "target": "lookup_agents:LookupAgent",
                    "kwargs": {"answers": {"port": "port 8080"}, **agent_kwargs},
                    "concurrent": concurrent,
                }
            }
        },
        "tasks": [
            {
                "name": "t",
                "kind": "expected-output",
                "dataset": "items.jsonl",
                "evaluators": ["contains", {"token_f1": {"variant": "mem0"}}],
                **extra.pop("task", {}),
            }
        ],
        **extra,
    }
    path = tmp_path / "suite.yaml"
    path.write_text(yaml.safe_dump(suite))
    return path


def test_item_failures_and_timeouts_are_recorded_and_the_run_goes_on(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _suite(
        tmp_path,
        {"fail_on": ["question 3 "], "hang_on": ["question 7 "]},
        task={"timeout": 0.5, "retries": 1},
        max_failure_rate=0.2,
    )
    db = tmp_path / "r.db"
    code, out, _ = _cli(capsys, "run", str(path), "--store", str(db), "--json")
    doc = _last_json(out)
    assert code == 0
    assert doc["status"] == "completed"
    assert (doc["n_completed"], doc["n_failed"]) == (18, 2)
    contains = _result(doc, "agent", "t", "contains")
    # failed items are counted, never scored 0
    assert (contains["mean"], contains["n_scored"], contains["n_failed"]) == (1.0, 18, 2)
    with SuiteRunStore(db) as store:
        failures = store.failures(doc["run_id"])
    by_item = {(f["item_id"], f["attempt"]): f for f in failures}
    # the raising item was retried once, and both attempts are kept
    assert by_item[("q003", 1)]["stage"] == "subject"
    assert by_item[("q003", 1)]["kind"] == "RuntimeError"
    assert "cannot answer" in by_item[("q003", 2)]["message"]
    assert by_item[("q007", 1)]["kind"] == "timeout"


def test_a_timeout_counts_from_when_the_subject_starts_the_item(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # 6 items queued at once for a one-thread subject that takes 0.25 s each: the last waits
    # 1.25 s for the subject (a timeout counted from the queue fails the last two), but each
    # is answered within 0.25 s of being asked
    path = _suite(
        tmp_path, {"delay": 0.25}, n=6, concurrency=6, task={"timeout": 1}, concurrent=False
    )
    code, out, _ = _cli(capsys, "run", str(path), "--store", str(tmp_path / "r.db"), "--json")
    doc = _last_json(out)
    assert (code, doc["n_completed"], doc["n_failed"]) == (0, 6, 0)
    assert _result(doc, "agent", "t", "contains")["mean"] == 1.0

    # a genuinely slow item still times out; the items queued behind it are asked and answer
    slow = tmp_path / "slow"
    slow.mkdir()
    path = _suite(
        slow,
        {"delay": 0.1, "hang_on": ["question 1 "], "hang_for": 2.0},
        n=6,
        concurrency=6,
        task={"timeout": 1},
        concurrent=False,
    )
    code, out, _ = _cli(capsys, "run", str(path), "--store", str(slow / "r.db"), "--json")
    doc = _last_json(out)
    assert (doc["n_completed"], doc["n_failed"]) == (5, 1)
    with SuiteRunStore(slow / "r.db") as store:
        (failure,) = store.failures(doc["run_id"])
    assert (failure["item_id"], failure["kind"]) == ("q001", "timeout")


def test_the_run_stops_as_failed_once_it_cannot_pass(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _suite(tmp_path, {"fail_on": ["question"]}, max_failure_rate=0.1, concurrency=1)
    db = tmp_path / "r.db"
    code, out, _ = _cli(capsys, "run", str(path), "--store", str(db), "--json")
    doc = _last_json(out)
    assert code == 4  # the subject failed: more items than max_failure_rate
    assert doc["status"] == "failed"
    # 20 items, 10% allowed: it stops at the third failure, the rest stays queued
    assert doc["n_failed"] == 3
    assert doc["n_completed"] == 0
    # the count, its rate and the limit, as the rule applies it (more than 10% of 20 = 2)
    assert doc["reason"].startswith(
        "subject agent: 3 of 20 items failed (15%: 3 RuntimeError), more than max_failure_rate"
        " 0.1 allows (10%: at most 2 of 20)"
    )


@pytest.mark.parametrize(
    ("fail_on", "rate", "reason"),
    [
        # issue 27: this read "1 of 4 items failed, more than the max_failure_rate allows
        # (0.4)", the 0.4 being items, not the rate
        (
            ["question 0 "],
            0.1,
            "1 of 4 items failed (25%: 1 RuntimeError), more than max_failure_rate 0.1"
            " allows (10%: at most 0 of 4)",
        ),
        (
            ["question 0 ", "question 1 "],
            0.4,
            "2 of 4 items failed (50%: 2 RuntimeError), more than"
            " max_failure_rate 0.4 allows (40%: at most 1 of 4)",
        ),
    ],
)
def test_the_failure_rate_stop_says_the_count_the_rate_and_the_limit(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    fail_on: list[str],
    rate: float,
    reason: str,
) -> None:
    path = _suite(tmp_path, {"fail_on": fail_on}, n=4, max_failure_rate=rate, concurrent=False)
    code, out, _ = _cli(capsys, "run", str(path), "--store", str(tmp_path / "r.db"), "--json")
    doc = _last_json(out)
    assert (code, doc["status"]) == (4, "failed")
    assert reason in doc["reason"]


def _poll_completed(db: Path, at_least: int, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if db.exists():
            try:
                with sqlite3.connect(db, timeout=5) as conn:
                    n = conn.execute(
                        "SELECT COUNT(*) FROM suite_run_items WHERE status = 'completed'"
                    ).fetchone()[0]
            except sqlite3.OperationalError:
                n = 0
            if n >= at_least:
                return
        time.sleep(0.05)
    raise AssertionError(f"fewer than {at_least} items completed in {timeout} s")


def _env() -> dict[str, str]:
    return {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(SUBJECTS), os.environ.get("PYTHONPATH", "")]),
    }


def _memgauge(*args: str) -> list[str]:
    return [sys.executable, "-m", "memgauge.cli.main", *args]


def _running(suite: Path, db: Path) -> subprocess.Popen[str]:
    """`memgauge run SUITE --store DB` started as its own process (stderr piped, as text)."""
    return subprocess.Popen(
        _memgauge("run", str(suite), "--store", str(db), "--no-progress"),
        env=_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_a_second_ctrl_c_leaves_a_cancelled_run_and_no_traceback(tmp_path: Path) -> None:
    """A second SIGINT a few milliseconds after the first landed in the write that records the
    run as cancelled: the run stayed 'running' with no owner and the command said only
    'aborted'. One sent after the 'interrupted:' line, while the exit waits for the agent's
    call in its worker thread, printed the interpreter's KeyboardInterrupt traceback."""
    path = _suite(tmp_path, {"delay": 1.5}, n=40, concurrency=2)
    for db, after_the_message in ((tmp_path / "a.db", False), (tmp_path / "b.db", True)):
        proc = _running(path, db)
        said = ""
        try:
            _poll_completed(db, 2)
        finally:
            proc.send_signal(signal.SIGINT)
            if after_the_message:
                assert proc.stderr is not None
                while not said.startswith("interrupted:"):
                    said = proc.stderr.readline()
                    assert said, "the command ended without saying it was interrupted"
            else:
                time.sleep(0.005)
            proc.send_signal(signal.SIGINT)
            _, err = proc.communicate(timeout=60)
        err = said + err
        assert proc.returncode == 130, (after_the_message, err)
        assert "Traceback" not in err
        with SuiteRunStore(db) as store:
            (run,) = store.list_runs()
        assert run["status"] == "cancelled"
        assert f"interrupted: run {run['run_id']} is kept as cancelled" in err


@pytest.mark.parametrize("first", [signal.SIGINT, signal.SIGTERM], ids=["ctrl_c", "kill"])
def test_a_kill_just_after_the_interruption_leaves_a_cancelled_run(
    tmp_path: Path, first: signal.Signals
) -> None:
    """SIGTERM stops a run as Ctrl-C does (`kill PID`, 3a29041): one sent a few milliseconds
    after the first signal (a Ctrl-C, then `kill`; or `kill` twice) must not land in the write
    that records the run as cancelled either, which SIGINT alone was kept out of: the run
    stayed 'running' with no owner."""
    path = _suite(tmp_path, {"delay": 1.5}, n=40, concurrency=2)
    db = tmp_path / "r.db"
    proc = _running(path, db)
    try:
        _poll_completed(db, 2)
    finally:
        proc.send_signal(first)
        time.sleep(0.005)
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    # the code of the signal that stopped it, whatever came after: 130 Ctrl-C, 143 kill
    assert proc.returncode == 128 + first, err
    assert "Traceback" not in err
    with SuiteRunStore(db) as store:
        (run,) = store.list_runs()
    assert run["status"] == "cancelled", err
    assert f"interrupted: run {run['run_id']} is kept as cancelled" in err


def test_kill_9_mid_run_then_resume_loses_and_repeats_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _suite(tmp_path, {"delay": 0.01}, n=300, concurrency=4)
    killed_db, clean_db = tmp_path / "killed.db", tmp_path / "clean.db"
    proc = subprocess.Popen(
        _memgauge("run", str(path), "--store", str(killed_db), "--no-progress"),
        env=_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        _poll_completed(killed_db, 60)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.communicate()
    with SuiteRunStore(killed_db) as store:
        (listed,) = store.list_runs()
        run_id = listed["run_id"]
        before = {
            r.item_id: r for r in store.item_records(run_id) if r.status in ("completed", "failed")
        }
        run = store.get_run(run_id)
    assert run is not None
    assert run.status == "running"
    assert 60 <= len(before) < 300

    code, out, _ = _cli(capsys, "runs", "show", run_id, "--store", str(killed_db), "--json")
    assert "is gone" in json.loads(out)["warning"]

    code, out, _ = _cli(
        capsys, "run", str(path), "--store", str(killed_db), "--resume", run_id, "--json"
    )
    resumed = _last_json(out)
    assert code == 0
    assert resumed["status"] == "completed"
    assert resumed["run_id"] == run_id
    with SuiteRunStore(killed_db) as store:
        after = {r.item_id: r for r in store.item_records(run_id)}
        export = list(store.iter_export(run_id))
    assert len(after) == 300
    assert all(r.status == "completed" for r in after.values())
    # nothing finished before the kill was done again
    with sqlite3.connect(killed_db) as conn:
        finished = dict(
            conn.execute(
                "SELECT item_id, finished_at FROM suite_run_items WHERE run_id = ?", (run_id,)
            ).fetchall()
        )
        n_scores = conn.execute("SELECT COUNT(*) FROM suite_run_scores").fetchone()[0]
    assert all(r.attempts == 1 for r in after.values())
    assert n_scores == 300 * 2
    assert len(export) == 300
    assert len({(r["subject"], r["task"], r["item_id"]) for r in export}) == 300
    with SuiteRunStore(killed_db) as store:
        again = {r.item_id: r for r in store.item_records(run_id)}
    assert {i: again[i].score for i in before} == {i: r.score for i, r in before.items()}
    assert all(finished[i] is not None for i in before)

    code, out, _ = _cli(capsys, "run", str(path), "--store", str(clean_db), "--json")
    clean = _last_json(out)
    assert clean["results"] == resumed["results"]


def test_resume_refuses_a_changed_suite(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _suite(tmp_path, {})
    db = tmp_path / "r.db"
    code, out, _ = _cli(capsys, "run", str(path), "--store", str(db), "--json")
    run_id = _last_json(out)["run_id"]
    path.write_text(path.read_text().replace("name: gen", "name: changed"))
    code, _, err = _cli(capsys, "run", str(path), "--store", str(db), "--resume", run_id)
    assert code == 2
    assert "suite (or the command's options) changed" in err


def test_two_processes_write_one_store_at_once(tmp_path: Path) -> None:
    path = _suite(tmp_path, {"delay": 0.002}, n=150, concurrency=4)
    db = tmp_path / "shared.db"
    procs = [
        subprocess.Popen(
            _memgauge("run", str(path), "--store", str(db), "--json", "--no-progress"),
            env=_env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    docs = []
    for p in procs:
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
        docs.append(_last_json(out))
    assert docs[0]["run_id"] != docs[1]["run_id"]
    with sqlite3.connect(db) as conn:
        per_run = dict(
            conn.execute("SELECT run_id, COUNT(*) FROM suite_run_scores GROUP BY run_id").fetchall()
        )
    assert per_run == {d["run_id"]: 300 for d in docs}
    assert docs[0]["results"] == docs[1]["results"]


def test_compare_two_runs_pairs_items(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "r.db"
    good = _suite(tmp_path, {}, n=30)
    _, out, _ = _cli(capsys, "run", str(good), "--store", str(db), "--json")
    a = _last_json(out)["run_id"]
    # the same suite, with an agent that has forgotten the port for a third of the questions
    bad_dir = tmp_path / "bad"
    bad_dir.mkdir()
    bad = _suite(bad_dir, {"fail_on": []}, n=30)
    items = [json.loads(line) for line in (bad_dir / "items.jsonl").read_text().splitlines()]
    for it in items[::3]:
        it["input"] = it["input"].replace("port", "harbour")
    (bad_dir / "items.jsonl").write_text("".join(json.dumps(it) + "\n" for it in items))
    _, out, _ = _cli(capsys, "run", str(bad), "--store", str(db), "--json")
    b = _last_json(out)["run_id"]
    code, out, _ = _cli(capsys, "runs", "compare", a, b, "--store", str(db), "--json")
    rows = {r["evaluator"]: r for r in json.loads(out)["rows"]}
    assert code == 0
    assert rows["contains"]["delta"] == pytest.approx(-10 / 30)
    assert rows["contains"]["n"] == 30
    assert rows["contains"]["p_holm"] < 0.01
    assert rows["contains"]["mark"] == "**"


def test_a_bad_items_file_stops_the_run_before_anything_is_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _suite(tmp_path, {})
    (tmp_path / "items.jsonl").write_text(
        '{"id": "a", "input": "x"}\n{"id": "a", "input": "y"}\n{"input": 3}\n'
    )
    db = tmp_path / "r.db"
    code, _, err = _cli(capsys, "run", str(path), "--store", str(db))
    assert code == 2
    assert "items.jsonl:3: id: required field is missing" in err
    assert "Traceback" not in err
    with SuiteRunStore(db) as store:
        assert store.list_runs() == []


def test_a_tasks_memories_file_that_repeats_an_id_stops_the_run_before_it_starts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Two memories under one id in a task's `memories:` file were ingested, one in place of
    the other, and the run went on; a dataset's memories.jsonl with the same ids is refused.
    Now both are, at the line of the repeat."""
    memories = DATA / "bad" / "memories_duplicate_ids.jsonl"
    suite = {
        "name": "dupmem",
        "subjects": {"lex": {"reference": {"mode": "lexical"}}},
        "tasks": [
            {
                "name": "ask",
                "kind": "expected-output",
                "memories": str(memories),
                "items": [{"id": "q1", "input": "a", "expected": "a"}],
                "evaluators": ["contains"],
            }
        ],
    }
    path = tmp_path / "suite.yaml"
    path.write_text(yaml.safe_dump(suite))
    db = tmp_path / "r.db"
    code, _, err = _cli(capsys, "run", str(path), "--store", str(db))
    assert code == 2
    assert f"{memories}:2: id: duplicate memory id 'm1' (first at line 1)" in err
    with SuiteRunStore(db) as store:
        assert store.list_runs() == []


def test_a_run_stopped_by_an_error_ends_failed_not_running(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An aggregate that refuses the task once its items are done (the ir aggregate on a task
    with no retrieval dataset) left the run `running` for good (issue 27 item 6)."""
    suite = {
        "name": "no-dataset",
        "subjects": {"memory": {"reference": {"mode": "lexical"}}},
        "tasks": [
            {
                "name": "answers",
                "kind": "expected-output",
                "k": 20,
                "items": [{"id": "q1", "input": "which database", "expected": "Kuzu"}],
                "evaluators": ["exact"],
                "aggregates": ["ir"],
            }
        ],
    }
    path = tmp_path / "suite.yaml"
    path.write_text(yaml.safe_dump(suite))
    db = tmp_path / "r.db"
    code, _, err = _cli(capsys, "run", str(path), "--store", str(db))
    assert code == 2
    assert "task 'answers': the ir aggregate needs a retrieval dataset" in err
    with SuiteRunStore(db) as store:
        (run,) = store.list_runs()
        assert run["status"] == "failed"
        stored = store.get_run(run["run_id"])
        assert stored is not None
        assert stored.reason == (
            "stopped by an error: task 'answers': the ir aggregate needs a retrieval dataset"
        )


def test_run_suite_library_call_with_an_in_process_store(tmp_path: Path) -> None:
    suite = load_suite(QA)
    with SuiteRunStore(tmp_path / "lib.db") as store:
        report = run_suite(suite, store, suite_path=QA, options=RunOptions(concurrency=1))
        assert report.status == "completed"
        assert report.summary.n_items == 21
        stored = store.get_run(report.run_id)
        assert stored is not None
        assert stored.summary == report.summary


def test_a_memory_backed_agent_through_import_and_subprocess_agrees(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    qa = QA.parent
    suite = {
        "name": "agents",
        "subjects": {
            "imported": {"python": {"target": "keyword_memory:KeywordMemory"}},
            "child": {
                "subprocess": {
                    "command": [sys.executable, str(SUBJECTS / "keyword_memory.py")],
                    "agent": True,
                }
            },
        },
        "tasks": [
            {
                "name": "answers",
                "kind": "expected-output",
                "dataset": str(qa / "items.jsonl"),
                "memories": str(qa / "memories.jsonl"),
                "evaluators": ["icontains"],
            }
        ],
    }
    path = tmp_path / "suite.yaml"
    path.write_text(yaml.safe_dump(suite))
    code, out, _ = _cli(capsys, "run", str(path), "--store", str(tmp_path / "r.db"), "--json")
    doc = _last_json(out)
    assert code == 0
    imported = _result(doc, "imported", "answers", "icontains")
    child = _result(doc, "child", "answers", "icontains")
    # the memories were ingested before the questions: the agent finds kg, port and deploy
    assert imported["mean"] == pytest.approx(0.6)
    assert {k: v for k, v in imported.items() if k != "subject"} == {
        k: v for k, v in child.items() if k != "subject"
    }


def test_sigterm_cancels_cleanly_and_the_run_resumes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _suite(tmp_path, {"delay": 0.01}, n=300, concurrency=2)
    db = tmp_path / "r.db"
    proc = _running(path, db)
    try:
        _poll_completed(db, 20)
    finally:
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    assert proc.returncode == 143  # 128 + SIGTERM, as a shell reports `kill PID`
    assert "Traceback" not in err
    with SuiteRunStore(db) as store:
        (run,) = store.list_runs()
        stored = store.get_run(run["run_id"])
    assert stored is not None
    assert stored.status == "cancelled"
    assert stored.summary is not None
    assert stored.summary.n_queued > 0
    # the run's id and how to finish it, not click's bare "aborted"
    rid = run["run_id"]
    assert f"interrupted: run {rid} is kept as cancelled; finish it with the same command" in err
    assert f"`--resume {rid}`" in err
    code, out, _ = _cli(capsys, "run", str(path), "--store", str(db), "--resume", run["run_id"])
    assert code == 0
    assert "resumed and finished: completed; 300 completed" in out
