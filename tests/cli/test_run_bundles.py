"""`memgauge runs export ID --format bundle` and `memgauge runs import FILE` move runs between
stores (a SQLite file to SQLite or PostgreSQL); `memgauge gate --baseline FILE` gates a run in
a fresh store against runs exported earlier."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from memgauge.cli.main import main
from memgauge.data.demo import demo_dataset
from memgauge.data.io import save_retrieval_dataset
from memgauge.store.suite_runs import SuiteRunStore

BAD = Path(__file__).resolve().parents[1] / "data" / "bad"


def _evaluate(data: Path, out: Path, store: str) -> None:
    assert (
        main(
            ["evaluate", str(data), "-s", "lexical", "--store", store, "--out", str(out), "--quiet"]
        )
        == 0
    )


def _export(run_id: str, store: str, bundle: Path) -> None:
    """`runs export RUN_ID --format bundle` from `store` to `bundle`, exit 0."""
    args = ["runs", "export", run_id, "--format", "bundle", "--store", store, "--out", str(bundle)]
    assert main(args) == 0


def _exported_run(
    tmp_path: Path, name: str, capsys: pytest.CaptureFixture[str]
) -> tuple[str, str, Path]:
    """One lexical evaluate of the demo dataset in the store `name`.db, exported as the bundle
    `name`.json: (the store, the run id, the bundle)."""
    data = tmp_path / "demo"
    save_retrieval_dataset(demo_dataset(), data)
    store = str(tmp_path / f"{name}.db")
    _evaluate(data, tmp_path / f"{name}-out", store)
    [run_id] = _ids(store, capsys)
    bundle = tmp_path / f"{name}.json"
    _export(run_id, store, bundle)
    return store, run_id, bundle


def _ids(store: str, capsys: pytest.CaptureFixture[str]) -> list[str]:
    capsys.readouterr()
    assert main(["runs", "list", "--store", store, "--json"]) == 0
    return [r["run_id"] for r in json.loads(capsys.readouterr().out)]


def test_a_bundle_moves_a_run_to_another_store_as_it_was(
    tmp_path: Path, store_where: str, capsys: pytest.CaptureFixture[str]
) -> None:
    source, run_id, bundle = _exported_run(tmp_path, "source", capsys)
    assert main(["runs", "import", str(bundle), "--store", store_where]) == 0
    assert run_id in capsys.readouterr().out
    with SuiteRunStore(source) as a, SuiteRunStore(store_where) as b:
        assert b.get_run(run_id) == a.get_run(run_id)
        assert b.item_records(run_id) == a.item_records(run_id)
        assert b.tasks(run_id) == a.tasks(run_id)
    # a second import would record the run twice: refused, nothing written
    assert main(["runs", "import", str(bundle), "--store", store_where]) == 2
    assert "already in this store" in capsys.readouterr().err
    assert _ids(store_where, capsys) == [run_id]


def test_gate_against_exported_runs_on_a_fresh_store(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "demo"
    save_retrieval_dataset(demo_dataset(), data)
    shared = str(tmp_path / "earlier.db")
    for i in range(3):
        _evaluate(data, tmp_path / f"o{i}", shared)
    bundles = []
    for n, run_id in enumerate(_ids(shared, capsys)):
        bundles += ["--baseline", str(tmp_path / f"b{n}.json")]
        _export(run_id, shared, Path(bundles[-1]))
    fresh = str(tmp_path / "runner.db")  # CI's ephemeral runner: nothing but the new run
    _evaluate(data, tmp_path / "new", fresh)
    [new] = _ids(fresh, capsys)
    assert main(["gate", new, "--store", fresh, "--no-learn", "--json"]) == 0
    alone = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert alone["n_history"] == 0
    assert alone["baseline_runs"] == []
    assert main(["gate", new, "--store", fresh, "--no-learn", "--json", *bundles]) == 0
    gated = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert gated["n_history"] == 3
    assert sorted(gated["baseline_runs"]) == sorted(_ids(shared, capsys))
    assert gated["status"] == "pass"
    assert all(m["baseline"] is not None for m in gated["metrics"])


def test_a_file_that_is_not_a_bundle_is_refused_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = BAD / "not_a_bundle.json"
    assert main(["runs", "import", str(bad), "--store", str(tmp_path / "r.db")]) == 2
    err = capsys.readouterr().err
    assert "not_a_bundle.json" in err
    assert "format" in err
    assert "Traceback" not in err


def test_a_fifo_as_a_bundle_is_refused_not_waited_on(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`runs import FIFO` and `gate RUN --baseline FIFO` blocked reading it until something
    wrote to it (fuzzC-5)."""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    store = str(tmp_path / "r.db")
    save_retrieval_dataset(demo_dataset(), tmp_path / "demo")
    _evaluate(tmp_path / "demo", tmp_path / "o", store)
    [run_id] = _ids(store, capsys)
    for args in (
        ["runs", "import", str(fifo), "--store", str(tmp_path / "other.db")],
        ["gate", run_id, "--store", store, "--no-learn", "--baseline", str(fifo)],
    ):
        assert main(args) == 2, args
        err = capsys.readouterr().err
        assert f"{fifo}: not a regular file (a directory, FIFO or device); pass a bundle" in err
    assert not (tmp_path / "other.db").exists()


def test_a_bad_item_in_a_bundle_is_named_by_its_place(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An item's problem was reported as `runs.0.score`, as if the field were the run's, and a
    non-object entry as "missing 'int' object is not subscriptable": now its JSON path."""
    store = tmp_path / "r.db"
    assert (
        main(["runs", "import", str(BAD / "run_bundle_bad_item.json"), "--store", str(store)]) == 2
    )
    err = capsys.readouterr().err
    assert "run_bundle_bad_item.json: runs.0.items.1.score: Input should be a valid number" in err
    assert not store.exists()
    entry = tmp_path / "entry.json"
    entry.write_text('{"format": "memgauge-run-bundle", "schema_version": 1, "runs": [5]}')
    assert main(["runs", "import", str(entry), "--store", str(store)]) == 2
    err = capsys.readouterr().err
    assert "entry.json: runs.0.run: missing" in err
    assert "object is not subscriptable" not in err


def test_a_run_given_twice_in_a_bundle_is_refused_naming_the_second(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A bundle holding one run twice was imported until the second copy hit the store's
    UNIQUE constraint: exit 70 with SQLAlchemy's traceback (fuzzC-6)."""
    store = tmp_path / "r.db"
    bundle = BAD / "run_bundle_duplicate_run.json"
    assert main(["runs", "import", str(bundle), "--store", str(store)]) == 2
    err = capsys.readouterr().err
    assert "run_bundle_duplicate_run.json: runs.1.run.run_id: run 20261129-024226-10534ee0" in err
    assert "is also runs.0: a bundle holds each run once" in err
    assert "Traceback" not in err
    assert not store.exists()


@pytest.mark.parametrize(
    ("part", "value", "says"),
    [
        ("gate", "maybe", "runs.0.gate: Input should be 'pass', 'fail' or 'accepted'"),
        ("usage", {"m": {"calls": -1}}, "runs.0.usage.m.calls: Input should be greater than"),
        ("usage", "x", "runs.0.usage: Input should be a valid dictionary"),
        ("run_failures", [{"x": 1}], "runs.0.run_failures.0.subject: Field required"),
        ("subjects", ["lexical"], "runs.0.subjects: Input should be a valid dictionary"),
        ("tasks", [{"kind": "retrieval"}], "runs.0.tasks.0.task: Field required"),
    ],
)
def test_a_bundles_gate_usage_failures_subjects_and_tasks_are_read_before_import(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], part: str, value: object, says: str
) -> None:
    """Only a run's record and items were validated: the rest went into the store unread, and
    a gate of "maybe" or a usage row of another shape ended the import in the database's
    error, exit 70 (fuzzC-6)."""
    bad = BAD / "run_bundle_unknown_gate.json"
    data = json.loads(bad.read_text(encoding="utf-8"))
    data["runs"][0]["gate"] = "pass"
    data["runs"][0][part] = value
    bundle = tmp_path / "edited.json"
    bundle.write_text(json.dumps(data), encoding="utf-8")
    store = tmp_path / "r.db"
    for given in (bad, bundle) if part == "gate" else (bundle,):
        assert main(["runs", "import", str(given), "--store", str(store)]) == 2
        err = capsys.readouterr().err
        assert f"{given.name}: " in err
        assert "Traceback" not in err
        if given == bundle:
            assert says in err, err
        else:  # the file in tests/data/bad
            assert "runs.0.gate: Input should be 'pass', 'fail' or 'accepted'" in err
    assert not store.exists()


@pytest.mark.parametrize("run_id", ["", "../../etc", "-r", "a b", ".", ".."])
def test_a_bundles_run_id_no_run_may_have_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], run_id: str
) -> None:
    """A run id of "" or "../../etc" was imported as it was: a run `runs show` cannot name
    ("" names none), whose id goes into a viewer's URL and an export's file name."""
    data = json.loads((BAD / "run_bundle_unknown_gate.json").read_text(encoding="utf-8"))
    data["runs"][0]["gate"] = "pass"
    data["runs"][0]["run"]["run_id"] = run_id
    bundle = tmp_path / "edited.json"
    bundle.write_text(json.dumps(data), encoding="utf-8")
    store = tmp_path / "r.db"
    assert main(["runs", "import", str(bundle), "--store", str(store)]) == 2
    err = capsys.readouterr().err
    assert f"edited.json: runs.0.run.run_id: {run_id!r} cannot be a run id:" in err
    assert "letters, digits, '.', '_' and '-', starting with a letter or digit" in err
    assert not store.exists()


@pytest.mark.parametrize(
    ("edit", "says"),
    [
        (
            lambda run: run["items"].append(run["items"][0]),
            "runs.0.items.2.item_id: item 'kg' of agent/answers is also runs.0.items.0",
        ),
        (
            lambda run: run["tasks"].append(run["tasks"][0]),
            "runs.0.tasks.2.task: task 'answers' is also runs.0.tasks.0",
        ),
        (
            lambda run: run.update(usage={"m": {"calls": 10**30}}),
            "runs.0.usage.m.calls: Input should be less than or equal to 9223372036854775807",
        ),
        (
            lambda run: run["run"].update(pid=2**63),
            "runs.0.run.pid: 9223372036854775808 is more than the store's integer columns",
        ),
        (
            lambda run: run["items"][1].update(seq=-(2**63) - 1),
            "runs.0.items.1.seq: -9223372036854775809 is less than the store's integer columns",
        ),
    ],
)
def test_a_bundle_whose_rows_the_store_cannot_hold_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], edit: Any, says: str
) -> None:
    """An item or a task given twice in a run, or a count past 64 bits, ended the import in
    the store's UNIQUE constraint or an integer overflow: exit 70 (fuzzC-6)."""
    data = json.loads((BAD / "run_bundle_unknown_gate.json").read_text(encoding="utf-8"))
    data["runs"][0]["gate"] = None
    edit(data["runs"][0])
    bundle = tmp_path / "edited.json"
    bundle.write_text(json.dumps(data), encoding="utf-8")
    store = tmp_path / "r.db"
    assert main(["runs", "import", str(bundle), "--store", str(store)]) == 2
    err = capsys.readouterr().err
    assert f"edited.json: {says}" in err, err
    assert "Traceback" not in err
    assert not store.exists()


def test_a_bundle_of_a_newer_memgauge_says_to_upgrade(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A bundle of schema_version 2 was told to be exported "again with this version", which
    an older memgauge cannot do (fuzzC-6)."""
    data = json.loads((BAD / "run_bundle_unknown_gate.json").read_text(encoding="utf-8"))
    data["schema_version"] = 2
    bundle = tmp_path / "newer.json"
    bundle.write_text(json.dumps(data), encoding="utf-8")
    store = tmp_path / "r.db"
    assert main(["runs", "import", str(bundle), "--store", str(store)]) == 2
    err = capsys.readouterr().err
    assert (
        "newer.json: schema_version: version 2 was written by a newer memgauge (this one reads"
        " 1); upgrade memgauge to read it"
    ) in err
    assert not store.exists()


@pytest.mark.parametrize(
    ("edit", "says"),
    [
        (
            lambda run: run.update(usage={"m": {"prompt_tokens": 2**31}}),
            "runs.0.usage.m.prompt_tokens: 2147483648 is more than",
        ),
        (
            lambda run: run["tasks"][0].update(n_items=2**31),
            "runs.0.tasks.0.n_items: 2147483648 is more than",
        ),
        (lambda run: run["run"].update(n_items=2**31), "runs.0.run.n_items: 2147483648 is"),
        (lambda run: run["run"].update(pid=2**31), "runs.0.run.pid: 2147483648 is more than"),
        (
            lambda run: run["items"][0].update(attempts=2**31),
            "runs.0.items.0.attempts: 2147483648 is more than",
        ),
        (
            lambda run: run["items"][0].update(seq=2**31),
            "runs.0.items.0.seq: 2147483648 is more than",
        ),
    ],
)
def test_a_count_past_32_bits_is_refused_by_a_postgresql_store(
    pg_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], edit: Any, says: str
) -> None:
    """A bundle's count is read as at most 2^63 - 1, what SQLite holds; PostgreSQL's INTEGER
    columns hold 2^31 - 1, and a larger count ended its import in "integer out of range":
    exit 70. The store that cannot hold it names it, nothing imported."""
    data = json.loads((BAD / "run_bundle_unknown_gate.json").read_text(encoding="utf-8"))
    data["runs"][0]["gate"] = None
    edit(data["runs"][0])
    bundle = tmp_path / "edited.json"
    bundle.write_text(json.dumps(data), encoding="utf-8")
    assert main(["runs", "import", str(bundle), "--store", pg_url]) == 2
    err = capsys.readouterr().err
    assert f"edited.json: {says}" in err, err
    assert "Traceback" not in err
    with SuiteRunStore(pg_url) as opened:  # the bundle read before the store: nothing in it
        assert opened.list_runs() == []


def test_a_baseline_bundle_of_another_suite_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A --baseline of another suite's runs counted for nothing and the gate passed with no
    baseline (exit 0): in CI the wrong file made a gate that could never fail."""
    _, _, bundle = _exported_run(tmp_path, "other", capsys)
    store = str(tmp_path / "runner.db")
    assert main(["run", str(BAD.parent / "good" / "suite.yaml"), "--store", store]) == 0
    [new] = _ids(store, capsys)
    assert main(["gate", new, "--store", store, "--no-learn", "--baseline", str(bundle)]) == 2
    err = capsys.readouterr().err
    assert f"--baseline {bundle}: it holds no run of suite" in err
    assert "Traceback" not in err
    with SuiteRunStore(store) as opened:
        assert opened.gate_verdict(new) is None  # nothing recorded


def test_a_baseline_bundle_with_no_completed_run_of_the_suite_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A bundle of a run of the suite that failed (or was cancelled) counted for nothing, and
    the gate passed with "No earlier run to compare with" (exit 0): main's failed run kept as
    the baseline made every pull request's gate pass."""
    _, run_id, bundle = _exported_run(tmp_path, "main", capsys)
    doc = json.loads(bundle.read_text())
    doc["runs"][0]["run"]["status"] = "failed"
    bundle.write_text(json.dumps(doc))
    _evaluate(tmp_path / "demo", tmp_path / "pr-out", str(tmp_path / "pr.db"))
    [new] = _ids(str(tmp_path / "pr.db"), capsys)
    args = ["gate", new, "--store", str(tmp_path / "pr.db"), "--no-learn", "--baseline"]
    assert main([*args, str(bundle)]) == 2
    err = capsys.readouterr().err
    assert f"--baseline {bundle}: it holds no completed run of suite" in err
    assert f"({run_id} failed)" in err
    assert "Traceback" not in err
    with SuiteRunStore(str(tmp_path / "pr.db")) as opened:
        assert opened.gate_verdict(new) is None  # nothing recorded


def test_a_baseline_bundle_of_a_failed_gate_is_said_to_be_left_out(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A bundle whose run had failed its gate where it was made was dropped unsaid: the gate
    passed with "0 in history" and "No earlier run to compare with", as if no baseline had
    been given. It is left out as in its own store, and named."""
    _, run_id, bundle = _exported_run(tmp_path, "main", capsys)
    doc = json.loads(bundle.read_text())
    doc["runs"][0]["gate"] = "fail"
    bundle.write_text(json.dumps(doc))
    pr = str(tmp_path / "pr.db")
    _evaluate(tmp_path / "demo", tmp_path / "pr-out", pr)
    [new] = _ids(pr, capsys)
    md = tmp_path / "gate.md"
    args = ["gate", new, "--store", pr, "--no-learn", "--baseline", str(bundle)]
    assert main([*args, "--json", "--markdown", str(md)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert (out["n_history"], out["baseline_runs"], out["excluded"]) == (1, [], [run_id])
    text = md.read_text()
    assert f"Left out of the baseline as failed gates: {run_id}" in text
    assert "No earlier run counts in the baseline (each failed its gate)" in text
    assert "No earlier run to compare with" not in text


def test_an_import_stopped_before_its_projection_leaves_nothing_and_the_next_one_works(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Ctrl-C after the bundle's rows were committed but before seed 002's `eval_results`
    projection (a second transaction) left the run in the store without it, and the next
    import was refused: 'already in this store; nothing was imported'. All or nothing now."""
    import sqlite3

    from memgauge.store import suite_runs

    _, run_id, bundle = _exported_run(tmp_path, "source", capsys)
    target = tmp_path / "target.db"
    args = ["runs", "import", str(bundle), "--store", str(target)]
    projection = suite_runs.replace_eval_results

    def pressed(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt  # the user's Ctrl-C as the projection is written

    monkeypatch.setattr(suite_runs, "replace_eval_results", pressed)
    assert main(args) == 130
    monkeypatch.setattr(suite_runs, "replace_eval_results", projection)
    assert _ids(str(target), capsys) == []
    assert main(args) == 0, capsys.readouterr().err
    assert _ids(str(target), capsys) == [run_id]
    with sqlite3.connect(target) as conn:
        (n,) = conn.execute(
            "SELECT COUNT(*) FROM eval_results WHERE run_id = ?", (run_id,)
        ).fetchone()
    assert n == 1  # the lexical system's row


def test_the_usage_counters_have_one_home() -> None:
    """A run's LLM usage counters were spelled three times (the tally in `llm.usage`, the
    store's `suite_run_usage` columns, a bundle's usage fields), kept equal by hand: the store
    and the tally read `data.records.USAGE_COUNTERS`, and a bundle's fields, which validate a
    usage row, are those names."""
    from memgauge.data.records import USAGE_COUNTERS
    from memgauge.llm.usage import UsageMeter
    from memgauge.store.bundle import BundleUsage
    from memgauge.store.tables import suite_run_usage

    assert tuple(BundleUsage.model_fields) == USAGE_COUNTERS
    assert [c.name for c in suite_run_usage.columns][2:] == list(USAGE_COUNTERS)
    meter = UsageMeter()
    meter.sent("m")
    assert tuple(meter.snapshot()["m"]) == (*USAGE_COUNTERS, "cost_usd")


def test_a_stored_run_id_the_import_refuses_is_still_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The run-id rule checked every RunRecord read back, so a store holding a run an earlier
    memgauge imported as `my run` ended `runs show`, `report` and `runs export` in a
    ValidationError (exit 70). The rule is the import's: what is stored is read as it is."""
    import sqlite3

    store, run_id, _ = _exported_run(tmp_path, "old", capsys)
    with sqlite3.connect(store) as conn:
        conn.execute("PRAGMA foreign_keys = OFF")
        tables = [t for (t,) in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        for table in tables:
            if any(c[1] == "run_id" for c in conn.execute(f"PRAGMA table_info({table})")):
                conn.execute(f"UPDATE {table} SET run_id = 'my run' WHERE run_id = ?", (run_id,))
    conn.close()
    assert _ids(store, capsys) == ["my run"]
    assert main(["runs", "show", "my", "--store", store]) == 0
    assert "my run" in capsys.readouterr().out
    assert main(["report", "my", "--store", store, "--out", str(tmp_path / "r.md")]) == 0
    assert (tmp_path / "r.md").is_file()


def test_a_run_still_being_written_is_not_bundled(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A run exported while its process still wrote it: the bundle held the items done so far
    with status `running` and the owner's pid, and the store it was imported into showed it
    running, driven by a process that drove it elsewhere (`--resume` there was refused as
    "process N on this host is driving this run")."""
    import socket
    import sqlite3

    from memgauge._util.process import process_start

    store, run_id, _ = _exported_run(tmp_path, "main", capsys)
    me = os.getpid()
    with sqlite3.connect(store) as conn:  # still going: this process writes it
        conn.execute(
            "UPDATE suite_runs SET status = 'running', owner = 't', finished_at = NULL,"
            " pid = ?, host = ?, pid_start = ? WHERE run_id = ?",
            (me, socket.gethostname(), process_start(me), run_id),
        )
    bundle = tmp_path / "running.json"
    args = ["runs", "export", run_id, "--format", "bundle", "--store", store, "--out", str(bundle)]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert f"run {run_id} is running: a bundle holds runs that have ended" in err
    assert f"`memgauge runs watch {run_id}`" in err
    assert "Traceback" not in err
    assert not bundle.exists()
