"""Repeats (`repeat: N`, `--repeat N`, issue 32): every item goes through each subject N times,
each repeat a stored item; the repeats aggregate's spread, pass@k / pass^k, RBO, cluster CI and
nondeterminism flag, checked against the stored records by hand."""

from __future__ import annotations

import hashlib
import json
import math
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml
from starlette.testclient import TestClient

from memgauge import api
from memgauge.aggregates.repeats import RepeatsAggregate
from memgauge.cli.main import main
from memgauge.data.demo import demo_dataset
from memgauge.data.records import ItemRecord, RunRecord
from memgauge.metrics.rbo import rbo_ext
from memgauge.report.cost import cost_markdown, cost_tables
from memgauge.runs.suite import suite_json_schema
from memgauge.stats.repeats import cluster_bootstrap_ci, pass_at_k, pass_hat_k
from memgauge.store.run_pages import RunReader
from memgauge.store.suite_runs import SuiteRunStore
from memgauge.view.app import create_app

SUBJECTS = Path(__file__).resolve().parents[1] / "data" / "subjects"
ITEMS = [{"id": f"q{i}", "input": f"question {i} about port", "expected": "8080"} for i in range(5)]


@pytest.fixture(autouse=True)
def _subjects(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(SUBJECTS))


def _suite(tmp_path: Path, **spec: Any) -> Path:
    task = {
        "name": "t",
        "kind": "expected-output",
        "items": ITEMS,
        "evaluators": ["contains"],
        **spec.pop("task", {}),
    }
    suite = {
        "name": "rep",
        "subjects": {
            "coin": {"python": {"target": "repeat_subjects:CoinAgent"}},
            "fixed": {"python": {"target": "repeat_subjects:CoinAgent", "kwargs": {"seed": 7}}},
        },
        "tasks": [task],
        **spec,
    }
    path = tmp_path / "suite.yaml"
    path.write_text(yaml.safe_dump(suite))
    return path


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict[str, Any], str]:
    code = main(["run", *args, "--json"])
    out, err = capsys.readouterr()
    lines = out.strip().splitlines()
    return code, json.loads(lines[-1]) if lines else {}, out + err


def _read(db: Path, run_id: str) -> tuple[RunRecord, list[ItemRecord]]:
    with SuiteRunStore(db) as store:
        run = store.get_run(run_id)
        assert run is not None
        return run, store.item_records(run_id)


def _by_item(items: list[ItemRecord], subject: str) -> dict[str, list[ItemRecord]]:
    out: dict[str, list[ItemRecord]] = {}
    for it in sorted(items, key=lambda r: (r.seq, r.repeat)):
        if it.subject == subject:
            out.setdefault(it.source_id, []).append(it)
    return out


def test_each_item_goes_through_the_subject_n_times_each_repeat_stored(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    calls = tmp_path / "calls.txt"
    path = _suite(tmp_path, repeat=4)
    spec = yaml.safe_load(path.read_text())
    spec["subjects"]["coin"]["python"]["kwargs"] = {"calls_file": str(calls)}
    path.write_text(yaml.safe_dump(spec))
    db = tmp_path / "r.db"
    code, out, _ = _run(capsys, str(path), "--store", str(db))
    assert code == 0
    assert out["n_items"] == 2 * 5 * 4
    # the subject itself was asked every time, not only the judge
    asked = calls.read_text().splitlines()
    assert sorted(asked) == sorted(it["input"] for it in ITEMS for _ in range(4))
    run, items = _read(db, out["run_id"])
    coin = _by_item(items, "coin")
    assert list(coin) == [f"q{i}" for i in range(5)]
    for source, reps in coin.items():
        assert [r.repeat for r in reps] == [0, 1, 2, 3]
        assert [r.item_id for r in reps] == [source, f"{source}#r1", f"{source}#r2", f"{source}#r3"]
    # the task's evaluator is the mean over every item-repeat, its CI resampling items
    assert run.summary is not None
    got = {(m.subject, m.name): m for m in run.summary.measures() if m.task == "t"}
    values = [[r.scores[0].value for r in reps] for reps in coin.values()]
    ci = cluster_bootstrap_ci(values, seed=0)
    m = got[("coin", "contains")]
    assert (m.source, m.value, m.ci_low, m.ci_high, m.n_scored) == (
        "repeats",
        pytest.approx(float(np.mean(values))),
        ci.low,
        ci.high,
        5,
    )
    (row,) = [r for r in out["results"] if r["subject"] == "coin"]
    assert (row["mean"], row["ci_low"], row["ci_high"]) == (m.value, m.ci_low, m.ci_high)
    # pass@k and pass^k by the unbiased estimators over the stored verdicts
    passed = [sum(v == 1.0 for v in vals) for vals in values]
    for k in (1, 2, 4):
        assert got[("coin", f"contains.pass@{k}")].value == pytest.approx(
            np.mean([pass_at_k(4, c, k) for c in passed])
        )
        assert got[("coin", f"contains.pass^{k}")].value == pytest.approx(
            np.mean([pass_hat_k(4, c, k) for c in passed])
        )
    # the spread of each item, as its page shows it, and the mean sd as the measure
    for (source, reps), vals in zip(coin.items(), values, strict=True):
        spread = RepeatsAggregate().item_entry(source, reps, ["contains"])["values"]["contains"]
        assert (spread["min"], spread["max"]) == (min(vals), max(vals))
        assert spread["sd"] == pytest.approx(float(np.std(vals, ddof=1)))
    sds = [float(np.std(v, ddof=1)) for v in values]
    assert got[("coin", "contains.sd")].value == pytest.approx(np.mean(sds))
    # the seeded subject is the same every time: sd 0, pass^4 = pass@4 = 1
    assert got[("fixed", "contains.sd")].value == 0.0
    assert got[("fixed", "contains.pass^4")].value == 1.0


def test_a_random_subject_is_flagged_nondeterministic_a_seeded_one_is_not(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # 5 items x 8 repeats of a fair coin: all 40 the same has chance 2 * 2^-40
    path = _suite(tmp_path, repeat=8)
    db = tmp_path / "r.db"
    code, out, text = _run(capsys, str(path), "--store", str(db))
    assert code == 0
    run, _ = _read(db, out["run_id"])
    assert run.summary is not None
    (flag,) = run.summary.nondeterminism()
    assert (flag.subject, flag.task, flag.n_items) == ("coin", "t", 5)
    assert out["nondeterministic"] == [flag.model_dump(mode="json")]
    assert flag.n_varied >= 1
    assert "coin / t: nondeterministic: outputs differed across repeats" in text
    assert "fixed / t: nondeterministic" not in text
    got = {(m.subject, m.name): m.value for m in run.summary.measures()}
    assert got[("fixed", "output_varied")] == 0.0
    assert got[("coin", "output_varied")] == flag.n_varied / 5
    # the report draws the flag with the settings: a seed in the spec makes variance a defect
    md_path, html_path = tmp_path / "rep.md", tmp_path / "rep.html"
    for where in (md_path, html_path):
        code = main(["report", out["run_id"], "--store", str(db), "--out", str(where)])
        capsys.readouterr()
        assert code == 0
    md = md_path.read_text()
    assert "Nondeterminism across repeats" in md
    assert "| fixed | deterministic | 0.0% (n=5) | n/a (no rankings) | seed 7 |" in md
    html = html_path.read_text()
    assert 'id="repeats-nondeterminism"' in html
    assert "nondeterministic: outputs differed across repeats on" in html


def test_a_tasks_repeat_wins_over_the_suites_and_the_flag_over_both(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _suite(tmp_path, repeat=3, task={"repeat": 2})
    code, out, _ = _run(capsys, str(path), "--store", str(tmp_path / "a.db"))
    assert (code, out["n_items"]) == (0, 2 * 5 * 2)
    code, out, _ = _run(capsys, str(path), "--store", str(tmp_path / "b.db"), "--repeat", "3")
    assert (code, out["n_items"]) == (0, 2 * 5 * 3)
    # the Python API takes it too
    report = api.run_suite(path, store=tmp_path / "c.db", repeat=4)
    assert len(report.items) == 2 * 5 * 4
    assert sorted({it.repeat for it in report.items}) == [0, 1, 2, 3]


def test_without_repeats_nothing_changes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _suite(tmp_path)
    code, out, _ = _run(capsys, str(path), "--store", str(tmp_path / "r.db"))
    assert (code, out["n_items"]) == (0, 10)
    run, items = _read(tmp_path / "r.db", out["run_id"])
    assert run.summary is not None
    assert {it.repeat for it in items} == {0}
    assert [a.aggregate for a in run.summary.aggregates] == []
    assert "nondeterministic" not in out
    # the suite hashes as it did before `repeat` existed: a run started then resumes now
    before = {k: v for k, v in run.suite.items() if k != "repeat"}
    before["tasks"] = [{k: v for k, v in t.items() if k != "repeat"} for t in before["tasks"]]
    canonical = json.dumps(before, sort_keys=True, separators=(",", ":"))
    assert run.suite_sha256 == hashlib.sha256(canonical.encode("utf-8")).hexdigest()
    code, out, _ = _run(capsys, str(path), "--store", str(tmp_path / "r.db"), "--repeat", "1")
    assert (code, out["n_items"]) == (0, 10)


@pytest.mark.parametrize("given", ["0", "101", "two"])
def test_a_bad_repeat_flag_is_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], given: str
) -> None:
    code = main(
        ["run", str(_suite(tmp_path)), "--store", str(tmp_path / "r.db"), "--repeat", given]
    )
    err = capsys.readouterr().err
    assert code == 2
    assert "--repeat" in err
    assert not (tmp_path / "r.db").exists()


@pytest.mark.parametrize(
    ("name", "where"),
    [
        (
            "suite_repeat_zero.yaml",
            ":8: tasks.0.repeat: Input should be greater than or equal to 1",
        ),
        ("suite_repeat_too_many.yaml", ":2: repeat: Input should be less than or equal to 100"),
    ],
)
def test_a_bad_repeat_in_a_suite_file_is_exit_2_with_its_file_and_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, where: str
) -> None:
    bad = Path(__file__).resolve().parents[1] / "data" / "bad" / name
    code = main(["run", str(bad), "--store", str(tmp_path / "r.db")])
    err = capsys.readouterr().err
    assert code == 2
    assert f"{name}{where}" in err
    assert "Traceback" not in err
    assert not (tmp_path / "r.db").exists()


def test_the_schema_has_repeat_on_a_suite_and_a_task() -> None:
    schema = suite_json_schema()
    suite, task = schema["properties"]["repeat"], schema["$defs"]["TaskSpec"]["properties"]
    assert (suite["minimum"], suite["maximum"], suite["default"]) == (1, 100, 1)
    assert any(s.get("maximum") == 100 for s in task["repeat"]["anyOf"])


def test_a_dead_subject_with_repeats_is_exit_4(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "suite.yaml"
    path.write_text(
        yaml.safe_dump(
            {
                "name": "dead",
                "repeat": 3,
                "subjects": {
                    "agent": {
                        "python": {
                            "target": "lookup_agents:LookupAgent",
                            "kwargs": {"fail_on": ["port"]},
                        }
                    }
                },
                "tasks": [
                    {
                        "name": "t",
                        "kind": "expected-output",
                        "items": ITEMS,
                        "evaluators": ["contains"],
                    }
                ],
            }
        )
    )
    code, out, _ = _run(capsys, str(path), "--store", str(tmp_path / "r.db"))
    assert code == 4
    assert out["status"] == "failed"
    # every repeat asked failed (the subject was stopped past its rate), none was scored
    run, items = _read(tmp_path / "r.db", out["run_id"])
    assert {it.status for it in items} == {"failed", "queued"}
    assert all(it.score is None for it in items)
    assert run.summary is not None
    contains = next(m for m in run.summary.measures() if m.name == "contains")
    assert (contains.value, contains.n_scored, contains.n_failed) == (None, 0, 5)


def test_the_subjects_llm_calls_skip_the_cache_on_repeats(
    llm_server: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "suite.yaml"
    items = [{"id": f"i{n}", "input": f"say hello number {n}", "expected": "OK"} for n in range(2)]
    path.write_text(
        yaml.safe_dump(
            {
                "name": "chat",
                "repeat": 3,
                "subjects": {"agent": {"chat": {"model": "fake"}}},
                "tasks": [
                    {
                        "name": "t",
                        "kind": "expected-output",
                        "items": items,
                        "evaluators": ["contains"],
                    }
                ],
            }
        )
    )
    db = str(tmp_path / "r.db")
    code, out, _ = _run(capsys, str(path), "--store", db)
    assert code == 0
    # 2 items x 3 repeats: every repeat went to the model, identical prompts and all
    assert llm_server.n_requests == 6
    # again: the first repeat's answers come from the cache, the repeats go to the model
    code, out, _ = _run(capsys, str(path), "--store", db)
    assert (code, llm_server.n_requests) == (0, 6 + 4)
    # a replay makes no call: each repeat's answer was stored under a key of its own
    code, replay, _ = _run(capsys, str(path), "--store", db, "--cache-only")
    assert (code, llm_server.n_requests) == (0, 10)
    assert replay["results"] == out["results"]
    # without repeats the cache answers every call, as it always did
    code, _, _ = _run(capsys, str(path), "--store", db, "--repeat", "1")
    assert (code, llm_server.n_requests) == (0, 10)


def test_rankings_spread_as_rank_biased_overlap(tmp_path: Path) -> None:
    # the flip memory swaps a query's two best hits on every second search: RBO 0.9 exactly
    # (X_1 = 0, X_d = d after: (1-p)/p * sum_{d>=2} p^d + p^L = p)
    dataset = demo_dataset()
    report = api.evaluate(
        dataset,
        {"flip": "python:repeat_subjects:FlipMemory", "lexical": "lexical"},
        repeat=2,
        concurrency=1,
        store=tmp_path / "r.db",
    )
    assert report.summary is not None
    got = {(m.subject, m.name): m for m in report.summary.measures()}
    flip = _by_item(report.items, "flip")
    per_item = [rbo_ext(*[[h["id"] for h in r.output] for r in reps]) for reps in flip.values()]
    # a query whose text another query shares is searched 4 times: some pairs are not flipped
    assert sum(v == pytest.approx(0.9) for v in per_item) >= 30
    assert got[("flip", "rbo")].value == pytest.approx(float(np.mean(per_item)))
    assert got[("flip", "rbo")].n_scored == len(flip) == 37
    assert got[("lexical", "rbo")].value == pytest.approx(1.0)
    assert got[("lexical", "output_varied")].value == 0.0
    flags = report.summary.nondeterminism()
    assert [f.subject for f in flags] == ["flip"]
    # the ir aggregate (and a TREC run file) read the first repeat: the numbers of a run
    # without repeats
    once = api.evaluate(dataset, {"lexical": "lexical"}, store=tmp_path / "once.db")
    assert once.summary is not None
    ir_once = {m.name: m.value for m in once.summary.aggregate("ir").measures}  # type: ignore[union-attr]
    ir = report.summary.aggregate("ir")
    assert ir is not None
    assert {m.name: m.value for m in ir.measures if m.subject == "lexical"} == ir_once


def test_runs_compare_pairs_items_not_item_repeats(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _suite(tmp_path, repeat=4)
    db = str(tmp_path / "r.db")
    _, a, _ = _run(capsys, str(path), "--store", db)
    _, b, _ = _run(capsys, str(path), "--store", db)
    code = main(["runs", "compare", a["run_id"], b["run_id"], "--store", db, "--json"])
    rows = json.loads(capsys.readouterr().out)
    assert code == 0
    coin = next(
        r for r in (rows["rows"] if isinstance(rows, dict) else rows) if r["subject"] == "coin"
    )
    # 5 items, each the mean of its 4 repeats: the mean is the item-repeats' mean
    _, items = _read(Path(db), a["run_id"])
    values = [r.scores[0].value for r in items if r.subject == "coin"]
    assert coin["n"] == 5
    assert coin["mean_a"] == pytest.approx(np.mean(values))
    # the values the store keeps for the viewer's compare page are the same items' means
    with RunReader(db) as reader:
        stored = reader.measure_values(a["run_id"])
    ids, kept = stored[("coin", "t", "contains")]
    means = {
        k: float(np.mean([r.scores[0].value for r in v]))
        for k, v in _by_item(items, "coin").items()
    }
    assert list(ids) == sorted(means)
    assert list(kept) == pytest.approx([means[i] for i in sorted(means)])


def test_the_gate_reads_the_repeat_aware_interval(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _suite(tmp_path, repeat=4)
    db = str(tmp_path / "r.db")
    _run(capsys, str(path), "--store", db)  # the baseline
    _, b, _ = _run(capsys, str(path), "--store", db)
    code = main(["gate", b["run_id"], "--store", db, "--json"])
    gate = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert code in (0, 1)
    check = next(
        c for c in gate["metrics"] if (c["subject"], c["evaluator"]) == ("coin", "contains")
    )
    _, items = _read(Path(db), b["run_id"])
    values = [[r.scores[0].value for r in reps] for reps in _by_item(items, "coin").values()]
    ci = cluster_bootstrap_ci(values, seed=0)
    assert check["current"] == pytest.approx(float(np.mean(values)))
    assert check["ci"] == [ci.low, ci.high]
    assert (check["n_scored"], check["deciding"]) == (5, True)  # items, not item-repeats


def test_the_viewer_shows_an_items_spread(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _suite(tmp_path, repeat=3)
    db = tmp_path / "r.db"
    _, out, _ = _run(capsys, str(path), "--store", str(db))
    _, items = _read(db, out["run_id"])
    reps = _by_item(items, "coin")["q2"]
    with TestClient(create_app(db)) as client:
        for shown in ("q2", "q2#r2"):  # any repeat's page shows them all
            html = client.get(
                f"/runs/{out['run_id']}/item",
                params={"subject": "coin", "task": "t", "item": shown},
            ).text
            assert "Across 3 repeats (coin)" in html
            table = html[html.index('id="item-repeats"') :]
            row = table[table.index("<th>contains</th>") :]
            row = row[: row.index("</tr>")]
            cells = [c.split(">")[-1] for c in row.split("</td>")[:-1]]
            values = [r.scores[0].value for r in reps]
            assert [float(c) for c in cells[:3]] == values
            assert float(cells[3]) == min(values)
            assert float(cells[4]) == max(values)
            sd = float(np.std(values, ddof=1))
            assert math.isclose(float(cells[5]), sd, abs_tol=5e-4)
        # the run page draws the repeats aggregate as every other: no template of its own
        html = client.get(f"/runs/{out['run_id']}").text
        assert 'id="repeats"' in html
        assert 'id="repeats-nondeterminism"' in html


def _completed(db: Path) -> int:
    if not db.exists():
        return 0
    try:
        with sqlite3.connect(db, timeout=5) as conn:
            return int(
                conn.execute(
                    "SELECT COUNT(*) FROM suite_run_items WHERE status = 'completed'"
                ).fetchone()[0]
            )
    except sqlite3.OperationalError:
        return 0


def test_kill_9_then_resume_finishes_each_repeat_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    items = [
        {"id": f"q{i:03d}", "input": f"question {i} about port", "expected": "8080"}
        for i in range(80)
    ]
    path = tmp_path / "suite.yaml"
    path.write_text(
        yaml.safe_dump(
            {
                "name": "killed",
                "repeat": 3,
                "concurrency": 4,
                "subjects": {
                    "agent": {
                        "python": {
                            "target": "lookup_agents:LookupAgent",
                            "kwargs": {"answers": {"port": "port 8080"}, "delay": 0.01},
                            "concurrent": True,
                        }
                    }
                },
                "tasks": [
                    {
                        "name": "t",
                        "kind": "expected-output",
                        "items": items,
                        "evaluators": ["contains"],
                    }
                ],
            }
        )
    )
    db = tmp_path / "r.db"
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(SUBJECTS), os.environ.get("PYTHONPATH", "")]),
    }
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "memgauge.cli.main",
            "run",
            str(path),
            "--store",
            str(db),
            "--no-progress",
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 60
        while _completed(db) < 40 and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.communicate()
    with SuiteRunStore(db) as store:
        (listed,) = store.list_runs()
        run_id = listed["run_id"]
        before = {r.item_id: r for r in store.item_records(run_id) if r.status == "completed"}
    assert 40 <= len(before) < 240
    code, out, _ = _run(capsys, str(path), "--store", str(db), "--resume", run_id)
    assert (code, out["status"], out["run_id"]) == (0, "completed", run_id)
    with SuiteRunStore(db) as store:
        after = store.item_records(run_id)
    # each item's three repeats, each done once: the finished ones kept as they were
    assert len(after) == 240
    assert sorted((r.source_id, r.repeat) for r in after) == sorted(
        (it["id"], n) for it in items for n in range(3)
    )
    assert all(r.status == "completed" and r.attempts == 1 for r in after)
    kept = {r.item_id: r for r in after}
    assert {i: kept[i].finished_at for i in before} == {i: r.finished_at for i, r in before.items()}
    # the resumed run's summary is the uninterrupted one's: every repeat, items as clusters
    run, _ = _read(db, run_id)
    assert run.summary is not None
    contains = next(m for m in run.summary.measures() if m.name == "contains")
    assert (contains.source, contains.value, contains.n_scored) == ("repeats", 1.0, 80)


def test_an_item_id_a_repeat_would_take_is_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    items = [
        {"id": "q1", "input": "a", "expected": "a"},
        {"id": "q1#r1", "input": "b", "expected": "b"},
    ]
    path = _suite(tmp_path, repeat=2, task={"items": items})
    code = main(["run", str(path), "--store", str(tmp_path / "r.db")])
    err = capsys.readouterr().err
    assert code == 2
    assert "item id 'q1#r1' is also the id a repeat of 'q1' is stored under" in err
    with SuiteRunStore(tmp_path / "r.db") as store:
        assert store.list_runs() == []  # nothing written


def test_repeats_that_partly_fail_give_one_value_and_count_items(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Items with different numbers of scored repeats: each item weighs one (the mean of its
    scored repeats) in the evaluator's row, the gate's measure, runs compare and the values the
    viewer's compare page reads; the row counts items, not item-repeats."""
    path = _suite(tmp_path, repeat=3, max_failure_rate=1.0)
    suite = yaml.safe_load(path.read_text())
    suite["subjects"] = {"flaky": {"python": {"target": "repeat_subjects:FlakyAgent"}}}
    path.write_text(yaml.safe_dump(suite))
    db = str(tmp_path / "r.db")
    _, a, _ = _run(capsys, str(path), "--store", db)
    _, b, _ = _run(capsys, str(path), "--store", db)
    _, items = _read(Path(db), a["run_id"])
    per_item = {
        k: [r.scores[0].value for r in v if r.scores and r.scores[0].value is not None]
        for k, v in _by_item(items, "flaky").items()
    }
    counts = sorted(len(v) for v in per_item.values())
    assert counts[0] < counts[-1]  # some items lost more repeats than others
    means = [float(np.mean(v)) for v in per_item.values() if v]
    (row,) = [r for r in a["results"] if r["subject"] == "flaky"]
    assert row["mean"] == pytest.approx(float(np.mean(means)))
    assert (row["n_scored"], row["n_failed"]) == (len(means), len(per_item) - len(means))
    main(["runs", "compare", a["run_id"], b["run_id"], "--store", db, "--json"])
    rows = json.loads(capsys.readouterr().out)
    (cmp,) = [
        r for r in (rows["rows"] if isinstance(rows, dict) else rows) if r["subject"] == "flaky"
    ]
    assert cmp["mean_a"] == pytest.approx(row["mean"])
    with RunReader(db) as reader:
        _ids, kept = reader.measure_values(a["run_id"])[("flaky", "t", "contains")]
    assert float(np.nanmean(list(kept))) == pytest.approx(row["mean"])


def test_the_cost_tables_accuracy_is_the_one_beside_its_costs(tmp_path: Path) -> None:
    # the cost aggregate reads the first repeat: its table's accuracy row is that repeat's
    # RR@5, the y of its dots and the numerator of RR@5_per_1k_tokens, not the repeats
    # aggregate's mean over both repeats (which the flip memory makes another number)
    report = api.evaluate(
        demo_dataset(),
        {"flip": "python:repeat_subjects:FlipMemory"},
        measures=["RR@5"],
        repeat=2,
        concurrency=1,
        store=tmp_path / "r.db",
    )
    assert report.summary is not None
    repeats = report.summary.aggregate("repeats")
    assert repeats is not None
    dots = [s for c in cost_tables(report.summary) for ch in c.charts for _n, s in ch.dots]
    first = report.summary.aggregate("ir").measures[0]  # type: ignore[union-attr]
    over_both = next(m for m in repeats.measures if m.name == "RR@5")
    assert first.name == "RR@5"
    assert over_both.value != pytest.approx(first.value)
    [table] = cost_tables(report.summary)
    row = dict(table.rows)["RR@5"]
    shown = f"{first.value:.3f} [{first.ci_low:.3f}, {first.ci_high:.3f}]"
    assert row == [shown]
    assert all(s.split(" ", 1)[1].startswith(shown) for s in dots)
    assert shown in cost_markdown(report.summary)


def test_every_repeats_measure_counts_the_items_it_could_not_use(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An item with no scored repeat has no mean, one with a single scored repeat no sd and no
    varied output: each measure counts the items it left out (n_failed), so that every row of
    the repeats aggregate accounts for the task's 5 items, in --json as on the viewer's page."""
    path = _suite(tmp_path, repeat=3, max_failure_rate=1.0)
    suite = yaml.safe_load(path.read_text())
    suite["subjects"] = {"losing": {"python": {"target": "repeat_subjects:LosingAgent"}}}
    path.write_text(yaml.safe_dump(suite))
    db = str(tmp_path / "r.db")
    _, run, _ = _run(capsys, str(path), "--store", db, "--concurrency", "1")
    assert main(["runs", "show", run["run_id"], "--store", db, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    [repeats] = [a for a in out["summary"]["aggregates"] if a["aggregate"] == "repeats"]
    counts = {m["name"]: (m["n_scored"], m["n_failed"]) for m in repeats["measures"]}
    assert counts["contains"] == (4, 1)
    assert counts["contains.sd"] == (3, 2)
    assert counts["output_varied"] == (3, 2)
    assert all(scored + failed == len(ITEMS) for scored, failed in counts.values())


def test_the_combined_score_is_over_every_repeat_as_the_evaluators_rows(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """With one evaluator the task's combined score is that evaluator's number: with repeat: 3
    both are the mean over items of their scored repeats, with the interval over items and the
    count of items, in `runs show --json` and the table; not the first repeat's alone."""
    path = _suite(tmp_path, repeat=3, max_failure_rate=1.0)
    suite = yaml.safe_load(path.read_text())
    suite["subjects"] = {"flaky": {"python": {"target": "repeat_subjects:FlakyAgent"}}}
    path.write_text(yaml.safe_dump(suite))
    db = str(tmp_path / "r.db")
    _, run, _ = _run(capsys, str(path), "--store", db)
    assert main(["runs", "show", run["run_id"], "--store", db, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    [row] = [r for r in out["results"] if r["subject"] == "flaky"]
    [task] = [t for t in out["summary"]["tasks"] if t["subject"] == "flaky"]
    _, items = _read(Path(db), run["run_id"])
    first = [
        r.score for r in items if r.subject == "flaky" and r.repeat == 0 and r.score is not None
    ]
    assert row["mean"] != pytest.approx(float(np.mean(first)))  # the repeats tell otherwise
    score = task["score"]
    assert (score["mean"], score["ci_low"], score["ci_high"]) == (
        row["mean"],
        row["ci_low"],
        row["ci_high"],
    )
    assert (score["n_scored"], score["n_failed"]) == (row["n_scored"], row["n_failed"])


def test_a_run_still_going_shows_its_rows_as_the_finished_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`runs show` and the viewer read a run still going (or killed) through
    `api.interim_summary`: with repeat: 3 its rows are items, each the mean of its repeats, as
    the finished run's, not a mean of item-repeats counted as items. Given every record of a
    finished run, the two agree."""
    path = _suite(tmp_path, repeat=3, max_failure_rate=1.0)
    suite = yaml.safe_load(path.read_text())
    suite["subjects"] = {"flaky": {"python": {"target": "repeat_subjects:FlakyAgent"}}}
    path.write_text(yaml.safe_dump(suite))
    db = tmp_path / "r.db"
    _, out, _ = _run(capsys, str(path), "--store", str(db))
    run, items = _read(db, out["run_id"])
    assert run.summary is not None
    interim = api.interim_summary(run, items, {})

    def rows(summary: Any) -> list[tuple[Any, ...]]:
        return [
            (e.subject, e.evaluator, e.mean, e.ci_low, e.ci_high, e.n_scored, e.n_failed)
            for e in summary.evaluators
        ]

    assert rows(interim) == rows(run.summary)
    assert [t.score for t in interim.tasks] == [t.score for t in run.summary.tasks]
