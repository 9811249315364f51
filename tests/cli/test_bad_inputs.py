"""Malformed inputs of the write-path and A/B commands: exit 2, file and place named, no
traceback, nothing written."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
from pathlib import Path

import pytest
from tests.helpers import finished

from memgauge.cli.main import main

BAD = Path(__file__).resolve().parents[1] / "data" / "bad"
DATA = BAD.parent


@pytest.mark.parametrize(
    ("args", "text"),
    [
        (
            [
                "extraction",
                str(BAD / "extraction_replaces_unknown.json"),
                "--outputs",
                str(BAD.parent / "extraction" / "trace.jsonl"),
            ],
            "not in existing_memory",
        ),
        (
            [
                "extraction",
                str(BAD / "extraction_duplicate_fact.json"),
                "--outputs",
                str(BAD.parent / "extraction" / "trace.jsonl"),
            ],
            "list each fact once",
        ),
        (
            [
                "operations",
                str(BAD / "operations_missing_expected.json"),
                "--decider",
                "{heuristic: {}}",
            ],
            "expected",
        ),
    ],
)
def test_bad_case_files_exit_2(
    args: list[str], text: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(args) == 2
    err = capsys.readouterr().err
    assert text in err
    assert Path(args[1]).name in err
    assert "Traceback" not in err


def test_bad_ab_pairs_exit_2_and_change_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = str(tmp_path / "r.db")
    assert main(["ab", "create", "t", "--delta", "0.1", "--store", db]) == 0
    assert (
        main(["ab", "add", "t", str(BAD / "ab_pairs_missing_treatment.jsonl"), "--store", db]) == 2
    )
    err = capsys.readouterr().err
    assert "ab_pairs_missing_treatment.jsonl:2" in err
    assert main(["ab", "status", "t", "--store", db, "--json"]) == 0
    assert '"n_pairs": 0' in capsys.readouterr().out


def test_bad_memories_for_the_golden_set_exit_2_and_write_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from memgauge.online.querylog import QueryLog

    log = QueryLog(tmp_path / "log.db")
    log.query("a question", session_id="s", result_ids=["m1"])
    log.close()
    out = tmp_path / "golden"
    bad = BAD / "memories_wrong_types.jsonl"
    args = ["logs", "export", str(tmp_path / "log.db"), "--out", str(out), "--memories", str(bad)]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "memories_wrong_types.jsonl:" in err
    assert "Traceback" not in err
    assert not out.exists()


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("annotations_truncated.jsonl", "annotations_truncated.jsonl:2"),
        ("annotations_fractional_grade.jsonl", "grade"),
        ("annotations_boolean_grade.jsonl", "grade"),
        ("annotations_missing_query_id.jsonl", "query_id"),
        ("annotations_mapping.yaml", "expected a list"),
    ],
)
def test_bad_annotation_files_exit_2_and_store_nothing(
    name: str, text: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import sqlite3

    from memgauge.online.querylog import QueryLog

    db = tmp_path / "log.db"
    log = QueryLog(db)
    log.query("a question", session_id="s", result_ids=["m1"], query_id="q1")
    log.close()
    assert main(["logs", "import-annotations", str(db), str(BAD / name)]) == 2
    err = capsys.readouterr().err
    assert text in err
    assert name in err
    assert "Traceback" not in err
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT COUNT(*) FROM eval_judgments").fetchone() == (0,)
    good = tmp_path / "unknown.jsonl"
    good.write_text('{"query_id": "q-typo", "candidates": [{"memory_id": "m1", "grade": 2}]}\n')
    assert main(["logs", "import-annotations", str(db), str(good)]) == 2
    assert "'q-typo' is not a logged query" in capsys.readouterr().err


@pytest.mark.parametrize(
    "command",
    [
        ["import", "memaudit", "{sample}", "--out", "{blocked}/dataset"],
        ["demo", "--out", "{blocked}/demo", "--store", "{store}"],
        ["evaluate", "{bundle}", "-s", "lexical", "--out", "{blocked}/r", "--store", "{store}"],
        ["synth", "{memories}", "--out", "{blocked}/synth"],
    ],
)
def test_an_output_path_that_cannot_be_used_exits_2_without_a_traceback(
    command: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An output directory under an existing file is the user's path, not a bug in memgauge:
    refused as the command line is read, before anything runs (an evaluate once ran and
    recorded the whole run, then failed writing its reports)."""
    blocked = tmp_path / "a-file"
    blocked.write_text("not a directory\n", encoding="utf-8")
    store = tmp_path / "store.db"
    sample = Path(__file__).resolve().parents[3] / "shared" / "datasets" / "memaudit-sample.json"
    places = {
        "blocked": blocked,
        "sample": sample,
        "store": store,
        "bundle": DATA / "good" / "bundle.yaml",
        "memories": DATA / "good" / "memories_bom.jsonl",
    }
    args = [a.format(**places) for a in command]
    code = main(args)
    err = capsys.readouterr().err
    assert code == 2, err
    assert "Traceback" not in err
    assert f"{str(blocked)!r} is not a directory, so no directory can be made under it" in err
    assert blocked.read_text(encoding="utf-8") == "not a directory\n"
    assert not store.exists()  # nothing ran: no run recorded


# --- issue 27 item 7: a --store that cannot be used ------------------------------------------


def _newer_store(tmp_path: Path) -> str:
    """A store written by a newer memgauge: its Alembic revision is one this one lacks."""
    import sqlite3

    from memgauge import api

    db = tmp_path / "newer.db"
    api.open_store(db).close()
    # closed here, not when collected: an open connection keeps the store's -wal / -shm files,
    # which then vanish (or not) in the middle of the test's "nothing written" comparison
    with contextlib.closing(sqlite3.connect(db)) as conn, conn:
        conn.execute("UPDATE alembic_version SET version_num = '9999'")
    return str(db)


def _directory(tmp_path: Path) -> str:
    (tmp_path / "stores").mkdir()
    return str(tmp_path / "stores")


# --store value -> the words its refusal holds
STORES = {
    "directory": (_directory, "stores: is a directory; give the store's file"),
    "unclosed-bracket": (
        lambda tmp: "postgresql://memgauge:secret@[::1/memgauge",
        "postgresql://memgauge:***@[::1/memgauge: not a valid server URL (Invalid IPv6 URL)",
    ),
    "port-not-a-number": (
        lambda tmp: "postgresql://memgauge:secret@db:54x2/memgauge",
        "not a valid server URL (Port could not be cast to integer value as '54x2')",
    ),
    "newer": (_newer_store, "written by a newer memgauge (revision 9999 is unknown here)"),
}
# every command that opens the results store, reading or recording
STORE_COMMANDS = {
    "runs list": ["runs", "list"],
    "runs show": ["runs", "show", "r1"],
    "runs export": ["runs", "export", "r1", "--format", "bundle"],
    "runs compare": ["runs", "compare", "r1", "r2"],
    "runs upgrade": ["runs", "upgrade"],
    "history": ["history", "suite"],
    "gate": ["gate", "r1", "--no-learn"],
    "health": ["health"],
    "ab status": ["ab", "status"],
    "ab create": ["ab", "create", "t", "--delta", "0.1"],
    "flags list": ["flags", "list"],
    "flags create": ["flags", "create", "f"],
    "shadow summary": ["shadow", "summary"],
    "optimize list": ["optimize", "list"],
    "report": ["report", "r1", "--out", "{tmp}/r.html"],
    "view": ["view", "--port", "0"],
    "evaluate": [
        *("evaluate", str(BAD.parent / "good" / "bundle.yaml"), "-s", "lexical"),
        *("--quiet", "--out", "{tmp}/out"),
    ],
}


@pytest.mark.parametrize("command", list(STORE_COMMANDS))
@pytest.mark.parametrize("store", list(STORES))
def test_a_store_that_cannot_be_used_exits_2_naming_it(
    store: str, command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A directory, a server URL that does not parse, a store of a newer memgauge: exit 2 with
    the store named (its password masked), for every command, and nothing written."""
    make, words = STORES[store]
    where = make(tmp_path)
    before = sorted(p.name for p in tmp_path.rglob("*"))
    args = [a.format(tmp=tmp_path) for a in STORE_COMMANDS[command]]
    capsys.readouterr()
    assert main([*args, "--store", where]) == 2
    err = capsys.readouterr().err
    assert words in err, err
    assert "Traceback" not in err
    assert "secret" not in err
    assert sorted(p.name for p in tmp_path.rglob("*")) == before
    if store == "newer":
        import sqlite3

        with contextlib.closing(sqlite3.connect(where)) as conn:
            assert conn.execute("SELECT version_num FROM alembic_version").fetchall() == [("9999",)]


@pytest.mark.parametrize("command", ["runs list", "evaluate"])
@pytest.mark.parametrize("store", ["directory", "unclosed-bracket"])
def test_a_store_the_environment_names_is_named_by_its_variable(
    store: str,
    command: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """MEMGAUGE_STORE on a directory was refused as `--store DIR: ...`, an option the user
    never gave (fuzzC-6)."""
    make, words = STORES[store]
    where = make(tmp_path)
    monkeypatch.setenv("MEMGAUGE_STORE", where)
    args = [a.format(tmp=tmp_path) for a in STORE_COMMANDS[command]]
    assert main(args) == 2
    err = capsys.readouterr().err
    shown = where.replace(":secret@", ":***@")
    assert f"MEMGAUGE_STORE={shown}: " in err, err
    assert words in err
    assert "--store" not in err.split(words)[0]


READING = ["runs list", "runs show", "runs export", "runs compare", "history", "gate"]
READING += ["health", "ab status", "flags list", "shadow summary", "optimize list", "report"]
READING += ["view", "runs upgrade"]


@pytest.mark.parametrize("command", READING)
def test_a_command_that_reads_never_creates_a_store(
    command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--store /typo/x.db` is refused, saying how to make one; no directory, no file."""
    typo = tmp_path / "typo" / "x.db"
    args = [a.format(tmp=tmp_path) for a in STORE_COMMANDS[command]]
    assert main([*args, "--store", str(typo)]) == 2
    err = capsys.readouterr().err
    assert f"no results store at {typo}" in err, err
    assert "or give the right one with --store" in err
    assert not (tmp_path / "typo").exists()


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["runs", "list", "--store"], "nothing has been recorded there yet (run `memgauge run"),
        (["flags", "list", "--store"], "no flag has been created there yet (`memgauge flags crea"),
        (["logs", "outcome", "--session", "s", "--success"], "no search has been logged there"),
    ],
)
def test_a_store_not_there_yet_is_said_to_lack_what_the_command_reads(
    args: list[str], says: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`flags list` and `logs outcome` on a store not there yet told the user to run `memgauge
    run` first, which records no flag and logs no search."""
    typo = str(tmp_path / "typo.db")
    given = [*args, typo] if args[-1] == "--store" else [*args[:2], typo, *args[2:]]
    assert main(given) == 2
    err = capsys.readouterr().err
    assert f"no results store at {typo}: {says}" in err, err
    assert not (tmp_path / "typo.db").exists()


@pytest.mark.parametrize(
    ("args", "how"),
    [
        (["logs", "judgments", "{typo}"], "as the STORE argument"),
        (["logs", "import-annotations", "{typo}", "pool.jsonl"], "as the STORE argument"),
        (["watch", "{typo}"], "as the STORE argument"),
        (["runs", "list", "--store", "{typo}"], "with --store"),
    ],
)
def test_a_store_not_there_yet_is_asked_for_the_way_its_command_takes_it(
    args: list[str], how: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`logs` and `watch` take the store as their STORE argument: "give the right one with
    --store" named an option they do not have. A command with --store still names it."""
    assert main([a.format(typo=tmp_path / "typo.db") for a in args]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert f"or give the right one {how}" in err, err


def test_flags_on_a_store_not_there_yet_says_no_flag_was_created(tmp_path: Path) -> None:
    from memgauge.errors import UsageError
    from memgauge.online.flags import Flags

    with pytest.raises(UsageError, match="no flag has been created there yet"):
        Flags(tmp_path / "typo.db", refresh_s=0)


def test_a_store_of_another_program_is_not_read_as_an_empty_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`runs list` on someone else's SQLite file neither lists "no runs" nor adds our tables."""
    import sqlite3

    other = tmp_path / "app.db"
    with sqlite3.connect(other) as conn:
        conn.execute("CREATE TABLE orders (id INTEGER)")
    for args in (["runs", "list"], ["history", "suite"], ["runs", "show", "r1"]):
        assert main([*args, "--store", str(other)]) == 2
        assert "not a memgauge results store" in capsys.readouterr().err
    with sqlite3.connect(other) as conn:
        names = conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()
    assert names == [("orders",)]


def test_a_reading_command_leaves_an_older_store_as_it_is_and_names_the_upgrade(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A read does not migrate a store (a shared one least of all): it is refused with the
    command that does, and that command makes it readable."""
    import hashlib
    import json
    import shutil

    db = tmp_path / "older.db"
    shutil.copy(BAD.parent / "stores" / "integ-0011.db", db)  # made by an earlier memgauge
    digest = hashlib.sha256(db.read_bytes()).hexdigest()
    for args in (["runs", "list"], ["history", "qa"], ["runs", "show", "2"]):
        assert main([*args, "--store", str(db)]) == 2
        err = capsys.readouterr().err
        assert "older schema" in err
        assert "memgauge runs upgrade --store PATH" in err
    assert hashlib.sha256(db.read_bytes()).hexdigest() == digest
    assert main(["runs", "upgrade", "--store", str(db)]) == 0
    capsys.readouterr()
    assert main(["runs", "list", "--store", str(db), "--json", "--limit", "100"]) == 0
    assert len(json.loads(capsys.readouterr().out)) == 7


@pytest.mark.parametrize(
    ("path", "words"),
    [
        ("{tmp}", "is a directory; give the path of a SQLite file"),
        ("{tmp}/no/such/dir/memory.db", "cannot be opened as a SQLite file"),
        ("{tmp}/fifo", "not a regular file (a FIFO or device); give the path of a SQLite file"),
    ],
)
def test_a_reference_memory_path_that_cannot_be_a_file_exits_2(
    path: str, words: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every SQLite file memgauge opens goes through `store.connection.connect`: SQLite's
    "unable to open database file" was exit 70, naming nothing; on a FIFO, its "disk I/O
    error" failed every item (exit 4, reports written) or was exit 70 (`gate --learnings
    FIFO`, `learnings query --learn-into reference:path=FIFO`)."""
    where = path.format(tmp=tmp_path)
    if where.endswith("fifo"):
        os.mkfifo(where)
        assert main(["learnings", "query", "x", "--learn-into", f"reference:path={where}"]) == 2
        assert f"{where}: {words}" in capsys.readouterr().err
        # read as "no failure has been stored" (exit 0) before it was refused
        assert main(["learnings", "query", "x", "--learnings", where]) == 2
        assert f"{where}: {words}" in capsys.readouterr().err
    db = tmp_path / "r.db"
    bundle = str(BAD.parent / "good" / "bundle.yaml")
    args = ["evaluate", bundle, "-s", f"reference:mode=lexical,path={where}", "--quiet"]
    assert main([*args, "--out", str(tmp_path / "out"), "--store", str(db)]) == 2
    err = capsys.readouterr().err
    assert f"{where}: {words}" in err, err
    assert "Traceback" not in err
    assert not (tmp_path / "no").exists()
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("name", "hint"),
    [
        ("conversations.jsonl", "audit conversations with `memgauge audit FILE`"),
        ("memories_bom.jsonl", "give the directory that holds memories.jsonl"),
        ("suite.yaml", "run a suite with `memgauge run FILE`"),
        ("qrels.txt", "`memgauge metrics QRELS RUN`"),
    ],
)
def test_evaluate_on_a_file_of_another_kind_says_what_it_is(
    name: str, hint: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Read as a bundle, these failed as 'not valid JSON' at their second line."""
    path = DATA / "good" / name
    args = ["evaluate", str(path), "-s", "lexical", "--no-store", "--out", str(tmp_path / "o")]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert f"{path}: a " in err
    assert "file (by its content), not a retrieval dataset" in err
    assert hint in err
    assert not (tmp_path / "o").exists()


def test_the_good_suite_runs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """tests/data/good/suite.yaml is a suite that runs, not only one that validates (its
    retrieval task named the conversations file)."""
    args = ["run", str(DATA / "good" / "suite.yaml"), "--store", str(tmp_path / "r.db")]
    assert main(args) == 0, capsys.readouterr().err


def _run_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str], task: str) -> str:
    """`memgauge run` on a one-task suite (`task`: its lines after the kind): exit 2, no
    traceback; the error text."""
    suite = tmp_path / "suite.yaml"
    suite.write_text(
        "name: s\n"
        "subjects:\n  lexical: {reference: {mode: lexical}}\n"
        "tasks:\n"
        "  - name: answers\n    kind: expected-output\n" + task
    )
    assert main(["run", str(suite), "--store", str(tmp_path / "r.db")]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return err


def test_only_items_naming_an_unknown_id_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A mistyped id in `only: {items: [...]}` ran nothing and exited 0 (as a corpus would)."""
    err = _run_refused(
        tmp_path,
        capsys,
        "    items: [{id: q1, input: x, expected: y}, {id: q2, input: z, expected: w}]\n"
        "    only: {items: [q2, nope]}\n"
        "    evaluators: [exact]\n",
    )
    assert "only.items: no item of its dataset has the id 'nope' (its 2 items: 'q1', 'q2')" in err


def test_a_damaged_store_is_exit_2_for_the_commands_that_write_to_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A store whose pages are overwritten with garbage (a disk or copy gone wrong) was an
    internal error (exit 70, SQLAlchemy's traceback) when a run opened it to record."""
    store = tmp_path / "r.db"
    bundle = DATA / "good" / "bundle.yaml"
    first = ["evaluate", str(bundle), "-s", "lexical", "--quiet", "--out", str(tmp_path / "a")]
    assert main([*first, "--store", str(store)]) == 0
    data = bytearray(store.read_bytes())
    for i in range(4096, min(len(data), 4096 * 6)):  # every page after the header's
        data[i] = (i * 7919) % 256
    store.write_bytes(bytes(data))
    capsys.readouterr()
    for args in (
        ["evaluate", str(bundle), "-s", "lexical", "--out", str(tmp_path / "b")],
        ["run", str(DATA / "good" / "suite.yaml")],
    ):
        assert main([*args, "--store", str(store)]) == 2
        err = capsys.readouterr().err
        assert "Traceback" not in err
        assert "internal error" not in err
        assert f"{store}: cannot be read as a memgauge store (" in err
        assert "the file is damaged" in err
    assert not (tmp_path / "b").exists()


def test_an_interrupted_run_in_memory_says_there_is_nothing_to_resume() -> None:
    """(A stored run's message is checked with a real SIGTERM in tests/runs/test_suite_run.py.)"""
    from memgauge.cli.main import _interrupted
    from memgauge.errors import RunInterrupted

    said = _interrupted(RunInterrupted("r1", resumable=False))
    assert said == "interrupted: run r1 was kept in memory only (--no-store): nothing to resume"
    assert _interrupted(KeyboardInterrupt()) is None  # not a run's: main says "interrupted"


def test_ctrl_c_inside_a_pydantic_serializer_is_an_interruption_not_a_bug(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Ctrl-C while `runs export` dumped a run: pydantic-core turns the KeyboardInterrupt raised
    in a serializer into a PydanticSerializationError, which was exit 70 with a traceback
    ("internal error ... a bug"); it is exit 130, said as an interruption."""
    from pydantic import BaseModel, model_serializer

    from memgauge.cli import runs as runs_cli
    from memgauge.store.suite_runs import SuiteRunStore

    class Pressed(BaseModel):
        @model_serializer
        def _dump(self) -> dict[str, object]:
            raise KeyboardInterrupt  # the user's Ctrl-C, arriving in the serializer

    store = tmp_path / "r.db"
    SuiteRunStore(store).close()
    out = tmp_path / "x.json"
    args = ["runs", "export", "r1", "--format", "json", "--out", str(out), "--store", str(store)]
    # model_dump keeps the KeyboardInterrupt as the error's cause; model_dump_json (`runs
    # import` storing a summary) only in its message
    for dump in (Pressed().model_dump, Pressed().model_dump_json):
        monkeypatch.setattr(runs_cli, "_load", lambda store, given, dump=dump: dump())
        assert main(args) == 130
        err = capsys.readouterr().err
        assert "Traceback" not in err
        assert "internal error" not in err
        assert "interrupted" in err
        assert not out.exists()


def test_ab_create_without_delta_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--delta` is required; its explicit `default=None` made click 8.3+ take it as given, and
    the SPRT got None (TypeError, exit 70)."""
    assert main(["ab", "create", "t1", "--store", str(tmp_path / "r.db")]) == 2
    err = capsys.readouterr().err
    assert "Missing option '--delta'" in err
    assert "Traceback" not in err


@pytest.mark.parametrize("name", ["", " "])
def test_ab_create_with_an_empty_name_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    """`flags create ''` was refused but `ab create ''` made a test with no name (exit 0),
    which `ab status` then listed as a blank row."""
    db = str(tmp_path / "r.db")
    assert main(["ab", "create", name, "--delta", "0.1", "--store", db]) == 2
    assert "an A/B test needs a name" in capsys.readouterr().err
    assert not Path(db).exists()  # nothing written: not even an empty store


def test_no_required_option_has_a_default() -> None:
    """click 8.3 and later take an explicit default (None included) as the value of a required
    option that was not given: every required option of every command has none."""
    import click

    from memgauge.cli.main import cli

    def unset(value: object) -> bool:  # click >= 8.3 marks "no default" with Sentinel.UNSET
        return getattr(value, "name", None) == "UNSET"

    marks_unset = unset(click.Option(["--x"]).default)
    found = []

    def walk(cmd: click.Command, path: str) -> None:
        if isinstance(cmd, click.Group):
            for name in cmd.list_commands(click.Context(cmd)):
                sub = cmd.get_command(click.Context(cmd), name)
                assert sub is not None
                walk(sub, f"{path} {name}")
            return
        for p in cmd.params:
            if not isinstance(p, click.Option) or not p.required or unset(p.default):
                continue
            if p.default is not None or marks_unset:
                found.append(f"{path} --{p.name}: default {p.default!r}")

    walk(cli, "memgauge")
    assert not found


def test_a_task_with_no_inline_items_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`items: []` ran a 0-item run and exited 0, where an empty items file is refused."""
    err = _run_refused(tmp_path, capsys, "    items: []\n    evaluators: [exact]\n")
    suite = tmp_path / "suite.yaml"
    assert f"{suite}:7: tasks.0.items: List should have at least 1 item" in err


def test_evaluate_on_a_json_lines_file_of_no_known_kind_says_it_is_no_dataset(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Read as a bundle, A/B pairs failed as 'not valid JSON: Extra data' at line 2."""
    path = BAD / "ab_pairs_infinite.jsonl"
    args = ["evaluate", str(path), "-s", "lexical", "--no-store", "--out", str(tmp_path / "o")]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert f"{path}: a JSON-lines file, not a retrieval dataset" in err


@pytest.mark.parametrize(
    ("command", "role"), [("extraction", "extractor"), ("operations", "decider")]
)
def test_a_write_path_command_with_no_subject_asks_for_one(
    command: str, role: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """With neither --extractor/--decider nor --outputs it said '..., not both'."""
    cases = DATA / command / "cases.json"
    assert main([command, str(cases), "--no-store"]) == 2
    err = capsys.readouterr().err
    assert f"give --{role} SPEC (a live {role}) or --outputs TRACE.jsonl, one of them" in err


@pytest.mark.parametrize("kind", ["file", "fifo"])
def test_memgauge_home_on_a_file_is_named_and_demo_leaves_nothing(
    kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """MEMGAUGE_HOME on a file was 'cannot use HOME: File exists', and `demo` left the dataset
    it had written under --out (found by a black-box pass); then 'cannot use HOME: ...; check
    the path (an output path must be ...)', an output path's advice. The variable is named with
    its value as given, as every path variable is (`env_path`)."""
    home = tmp_path / "home-here"
    if kind == "fifo":
        os.mkfifo(home)
    else:
        home.write_text("not a directory\n")
    given = str(tmp_path / "." / "home-here")
    monkeypatch.setenv("MEMGAUGE_HOME", given)
    out = tmp_path / "demo"
    assert main(["demo", "--out", str(out)]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert f"MEMGAUGE_HOME={given}: is " in err, err
    assert "point it at a directory (made if missing), or unset it for ~/.memgauge" in err
    assert "output path" not in err
    assert "Traceback" not in err
    assert not out.exists()


def test_run_on_a_directory_says_it_is_not_a_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`run DIR` said 'no such suite file' of a path that is there (fuzzB's pass)."""
    assert main(["run", str(tmp_path), "--store", str(tmp_path / "r.db")]) == 2
    err = capsys.readouterr().err
    assert f"{tmp_path}: not a regular file (a directory, FIFO or device)" in err


def test_an_empty_run_id_names_no_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """'' is the first characters of every run id: with one run in the store, `gate ''`,
    `runs show ''` and `run SUITE --resume ''` took that run (exit 0) instead of refusing."""
    store = str(tmp_path / "r.db")
    suite = str(DATA / "good" / "suite.yaml")
    assert main(["run", suite, "--store", store]) == 0
    for args in (
        ["gate", "", "--store", store],
        ["runs", "show", "", "--store", store],
        ["runs", "export", "", "--store", store],
        ["run", suite, "--resume", "", "--store", store],
    ):
        capsys.readouterr()
        assert main(args) == 2, args
        err = capsys.readouterr().err
        assert "no run ''" in err, args
        assert "Traceback" not in err


def test_a_fifo_or_device_as_a_dataset_is_refused_before_anything_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`bench systems --dataset FIFO` started benchmarking every installed system and then
    blocked opening the FIFO; `evaluate /dev/null` said 'no such file or directory'."""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    assert main(["bench", "systems", "--dataset", str(fifo), "--no-discover"]) == 2
    err = capsys.readouterr().err
    assert f"dataset {fifo}: not a regular file or directory (a FIFO or device)" in err
    out = tmp_path / "report"
    assert main(["evaluate", "/dev/null", "--out", str(out), "--no-store"]) == 2
    err = capsys.readouterr().err
    assert "/dev/null: not a regular file or directory (a FIFO or device)" in err
    assert "Traceback" not in err
    assert not out.exists()


@pytest.mark.parametrize(
    "args",
    [
        ["validate", "{fifo}"],
        ["evaluate", "{fifo}", "-s", "lexical", "--no-store", "--out", "{tmp}/report"],
        ["audit", "{fifo}", "--scoring", "offline", "--output", "{tmp}/report", "--no-store"],
        ["synth", "{fifo}", "--out", "{tmp}/report"],
    ],
    ids=["validate", "evaluate", "audit", "synth"],
)
def test_a_fifo_whose_kind_is_detected_is_refused_not_waited_on(
    args: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Detecting a file's kind opened a FIFO to read its first bytes and blocked there until
    something wrote to it: `validate FIFO`, `evaluate FIFO`, `audit FIFO` and `synth FIFO`
    never ended (fuzzC-5)."""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    argv = [a.format(fifo=fifo, tmp=tmp_path) for a in args]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert f"{fifo}: not a regular file or directory (a FIFO or device)" in err
    assert "Traceback" not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fifo"]


@pytest.mark.parametrize(
    "option",
    [
        ["--run-out", "{blocked}/run.txt"],
        ["--run-json", "{blocked}/run.json"],
        ["--junit", "{blocked}/junit.xml"],
    ],
    ids=["run-out", "run-json", "junit"],
)
def test_a_side_file_under_a_file_is_refused_before_the_run(
    option: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`evaluate --run-out FILE/x` (or --run-json, --junit) ran the whole evaluation, wrote
    --out's three reports and recorded the run, then exited 2 failing to write the side file."""
    blocked = tmp_path / "a-file"
    blocked.write_text("not a directory\n", encoding="utf-8")
    out, store = tmp_path / "report", tmp_path / "store.db"
    flag, value = option[0], option[1].format(blocked=blocked)
    args = ["evaluate", str(DATA / "good" / "bundle.yaml"), "-s", "lexical", "--out", str(out)]
    assert main([*args, "--store", str(store), flag, value]) == 2
    err = capsys.readouterr().err
    assert f"{str(blocked)!r} is not a directory, so no file can be made under it" in err
    assert "Traceback" not in err
    assert not out.exists()
    assert not store.exists()


@pytest.mark.parametrize(
    ("options", "says"),
    [
        (["--run-out", ""], "Invalid value for '--run-out': an empty path names no file"),
        (["--out", ""], "Invalid value for '--out': an empty path names no directory"),
        (["--run-out", "{t}/r.txt", "--run-json", "{t}/r.txt"], "--run-out and --run-json both"),
        (["--out", "{t}/rep", "--run-out", "{t}/rep"], "--out and --run-out both name"),
        (["--run-out", "{t}/j.xml", "--junit", "{t}/j.xml"], "--run-out and --junit both name"),
        (["--run-json", "{t}/store.db"], "the results store and --run-json both name"),
    ],
    ids=[
        "empty-run-out",
        "empty-out",
        "run-out-is-run-json",
        "run-out-is-out",
        "run-out-is-junit",
        "run-json-is-the-store",
    ],
)
def test_output_options_that_name_nothing_or_the_same_path_are_refused_before_the_run(
    options: list[str],
    says: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`--run-out ''` ran the evaluation, then os.replace'd its file onto "." (a traceback,
    exit 70); `--out ''` spilled the reports into the current directory; two options naming
    one path wrote the second over the first (or failed on the report directory, after the
    reports were written). Each is exit 2 before the run, nothing recorded."""
    monkeypatch.chdir(tmp_path)  # where `--out ''` wrote
    store = tmp_path / "store.db"
    given = [o.format(t=tmp_path) for o in options]
    args = ["evaluate", str(DATA / "good" / "bundle.yaml"), "-s", "lexical", "--quiet"]
    if "--out" not in given:
        given += ["--out", str(tmp_path / "report")]
    assert main([*args, "--store", str(store), *given]) == 2
    err = capsys.readouterr().err
    assert says in err
    assert "Traceback" not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_a_script_evaluator_whose_program_is_missing_is_refused_before_the_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A suite's `script` evaluator naming a program that does not exist ran the run and
    failed every item (exit 4); it is a mistake in the suite: exit 2, no run recorded."""
    suite = tmp_path / "suite.yaml"
    store = tmp_path / "r.db"
    for command, says in (
        ("no-such-program-here --flag", "'no-such-program-here': no such program on PATH"),
        ("./check.sh {output_file}", f"'./check.sh': no executable file at {tmp_path}/check.sh"),
    ):
        suite.write_text(
            "name: s\nsubjects:\n  lexical: {reference: {mode: lexical}}\ntasks:\n"
            "  - {name: answers, kind: expected-output, k: 1,"
            " items: [{id: q1, input: 'What database?', expected: Kuzu}],"
            f" evaluators: [{{script: {{command: '{command}', via: file}}}}]}}\n"
        )
        assert main(["run", str(suite), "--store", str(store)]) == 2
        err = capsys.readouterr().err
        assert f"script: cannot run {says}" in err
        assert "Traceback" not in err
        assert main(["runs", "list", "--store", str(store), "--json"]) == 0
        assert json.loads(capsys.readouterr().out) == []
    # found beside the suite (a relative path is read from its directory), the run goes
    (tmp_path / "check.sh").write_text("#!/bin/sh\nexit 0\n")
    (tmp_path / "check.sh").chmod(0o755)
    assert main(["run", str(suite), "--store", str(store)]) == 0


def test_gate_on_a_suite_file_that_is_not_there_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`gate nosuch.yaml` (a mistyped suite path) said "no run 'nosuch.yaml' in this store"."""
    store = str(tmp_path / "r.db")
    assert main(["run", str(DATA / "good" / "suite.yaml"), "--store", store]) == 0
    capsys.readouterr()
    missing = str(tmp_path / "suites" / "nightly.yaml")
    assert main(["gate", missing, "--store", store]) == 2
    err = capsys.readouterr().err
    assert f"{missing}: no such suite file (gate names a suite file or a run)" in err


def test_history_of_a_mistyped_suite_names_the_closest(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`history good-suit` said only 'no completed run of suite'; the store has good-suite."""
    store = str(tmp_path / "r.db")
    assert main(["run", str(DATA / "good" / "suite.yaml"), "--store", store]) == 0
    capsys.readouterr()
    assert main(["history", "good-suit", "--store", store]) == 2
    err = capsys.readouterr().err
    assert "no completed run of suite 'good-suit'; did you mean 'good-suite'?" in err
    assert main(["history", "zzz", "--store", store]) == 2
    assert "suite 'zzz'; see `memgauge runs list`" in capsys.readouterr().err


def test_a_task_naming_a_subject_twice_or_none_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`subjects: [lexical, lexical]` was exit 70 (the store refused the second row of each item,
    a traceback); `subjects: []` ran every subject, as if the key were left out."""
    suite = tmp_path / "suite.yaml"
    tail = "    items: [{id: q1, input: x, expected: y}]\n    evaluators: [exact]\n"
    err = _run_refused(tmp_path, capsys, tail + "    subjects: [lexical, lexical]\n")
    assert f"{suite}:9: tasks.0.subjects: subject 'lexical' listed more than once" in err
    err = _run_refused(tmp_path, capsys, tail + "    subjects: []\n")
    assert f"{suite}:9: tasks.0.subjects: List should have at least 1 item" in err
    assert finished(tmp_path / "r.db") == (None, 0)


def test_a_suite_target_that_is_not_one_is_refused_before_the_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`targets: {exact: high}` was read once the items were run: exit 2 with no line, and a
    failed run left in the store."""
    err = _run_refused(
        tmp_path,
        capsys,
        "    items: [{id: q1, input: x, expected: y}]\n"
        "    evaluators: [exact]\n"
        "    targets:\n"
        "      exact: 0.5\n"
        "      token_f1: high\n",
    )
    suite = tmp_path / "suite.yaml"
    assert f"{suite}:11: tasks.0.targets: token_f1: 'high' is not a target" in err
    assert finished(tmp_path / "r.db") == (None, 0)


def test_a_suite_target_naming_no_measure_is_an_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A target on a measure the task does not have (a typo) never decided anything: the run
    exited 0. Like a --fail-under typo it is exit 2 once the measures exist (the run kept)."""
    err = _run_refused(
        tmp_path,
        capsys,
        "    items: [{id: q1, input: x, expected: x}]\n"
        "    evaluators: [exact]\n"
        "    targets: {exatc: 0.5}\n",
    )
    assert "the suite's targets: answers/exatc: no such measure in this run" in err
    assert "it has lexical/answers/exact" in err


def test_a_sample_that_keeps_no_item_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`only: {sample: 0.000001}` on a small dataset ran a run of 0 items and exited 0 (an empty
    table), as `items: []` did."""
    err = _run_refused(
        tmp_path,
        capsys,
        "    items: [{id: q1, input: x, expected: x}, {id: q2, input: y, expected: y}]\n"
        "    only: {sample: 0.000001}\n"
        "    evaluators: [exact]\n",
    )
    assert "task 'answers': only.sample: a share of 1e-06 keeps none of the 2 items" in err
    assert finished(tmp_path / "r.db") == (None, 0)


@pytest.mark.parametrize(
    "args",
    [
        ["schema", "--out", ""],
        ["runs", "export", "r1", "--format", "json", "--out", ""],
        ["gate", "r1", "--markdown", ""],
        ["gate", "r1", "--junit", ""],
        [
            "evaluate",
            str(DATA / "good" / "bundle.yaml"),
            "-s",
            "lexical",
            "--no-store",
            "--out",
            "",
        ],
        ["validate", ""],
    ],
    ids=lambda a: "-".join(x for x in a[:2] if not x.startswith("/")),
)
def test_an_empty_path_is_refused(
    args: list[str],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An empty path was Path(''), the current directory: a file option's write replaced `.`
    (exit 70, a traceback), a directory option wrote its reports there."""
    monkeypatch.chdir(tmp_path)
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "an empty path names" in err
    assert "Traceback" not in err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["schema", "--out", ""], "Invalid value for '--out': an empty path names no file"),
        (["report", "x", "--out", ""], "Invalid value for '--out': an empty path names no file"),
        (["validate", ""], "Invalid value for 'FILES...': an empty path names nothing"),
        (["metrics", "", "run.txt"], "Invalid value for 'QRELS': an empty path names no file"),
    ],
    ids=["schema-out", "report-out", "validate", "metrics"],
)
def test_an_empty_path_is_refused_by_every_path_option(
    args: list[str],
    says: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """click lets "" through its Path type (os.stat("") fails: a path not made yet), and
    Path("") is the current directory: `schema --out ''` os.replace'd its file onto "." (a
    traceback, exit 70); `validate ''` checked the current directory as a dataset."""
    monkeypatch.chdir(tmp_path)
    assert main(args) == 2
    err = capsys.readouterr().err
    assert says in err
    assert "Traceback" not in err
    assert list(tmp_path.iterdir()) == []


def test_an_empty_suite_name_names_no_suite(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`health --suite ''` reported the latest runs of every suite (exit 0) and `runs list
    --suite ''` listed every run, where `history ''` and a suite no run has are refused or
    list nothing: '' was read as no filter at all."""
    store = str(tmp_path / "r.db")
    assert main(["run", str(DATA / "good" / "suite.yaml"), "--store", store]) == 0
    capsys.readouterr()
    assert main(["health", "--suite", "", "--store", store]) == 2
    assert "no completed run of suite ''" in capsys.readouterr().err
    assert main(["runs", "list", "--suite", "", "--json", "--store", store]) == 0
    assert json.loads(capsys.readouterr().out) == []


@pytest.mark.parametrize(
    "junit", ["out/result.json", "out/summary.md", "out", "out/../out/result.json"]
)
def test_a_junit_file_that_is_a_report_or_the_out_directory_is_refused(
    junit: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`evaluate --out out --junit out/result.json` replaced the report's result.json by the
    JUnit XML (exit 0, "wrote out/result.json"); `--junit out` ended in exit 2 once the reports
    were written. Both are refused before the run; a file of its own in --out is fine."""
    monkeypatch.chdir(tmp_path)
    bundle = str(DATA / "good" / "bundle.yaml")
    args = ["evaluate", bundle, "-s", "lexical", "--no-store", "--out", "out"]
    assert main([*args, "--junit", junit]) == 2
    assert "the command's reports go there (out)" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()
    assert main([*args, "--junit", "out/junit.xml"]) == 0
    assert (tmp_path / "out" / "result.json").read_text().startswith("{")
    assert (tmp_path / "out" / "junit.xml").read_text().startswith("<?xml")


@pytest.mark.parametrize(
    "command",
    [
        ["evaluate", str(DATA / "good" / "bundle.yaml"), "-s", "lexical", "--out", "out"],
        [
            *["audit", str(DATA / "memaudit" / "sample.jsonl"), "--agent", "extractive"],
            *["--output", "out", "--format", "markdown"],
        ],
    ],
    ids=["evaluate", "audit-markdown"],
)
def test_a_junit_file_named_as_another_command_s_report_is_not_refused(
    command: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`evaluate --out out --junit out/report.md` (evaluate writes no report.md) and `audit
    --format markdown --output out --junit out/results.json` were refused, exit 2, as if the
    JUnit XML would replace a report: every command was checked against every command's file
    names (the audit's, the demo's dataset). Each command now refuses only what it writes."""
    monkeypatch.chdir(tmp_path)
    junit = "out/results.json" if command[0] == "audit" else "out/report.md"
    assert main([*command, "--no-store", "--junit", junit]) == 0
    assert (tmp_path / junit).read_text().startswith("<?xml")
    report = "report.md" if command[0] == "audit" else "result.json"
    assert (tmp_path / "out" / report).stat().st_size > 0


_CASES = {
    "operations": [
        "operations",
        str(DATA / "operations" / "cases.json"),
        "--decider",
        "{heuristic: {}}",
        "--no-targets",
    ],
    "audit": ["audit", str(DATA / "memaudit" / "sample.jsonl"), "--agent", "extractive"],
}


@pytest.mark.parametrize("command", ["operations", "audit"])
@pytest.mark.parametrize("clash", ["under-a-file", "same-as-junit"])
def test_output_under_a_file_or_named_by_junit_is_refused_before_the_run(
    command: str, clash: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`operations --output FILE/x` ran every case and recorded the run, then could not make
    the directory (extraction's and operations' --output took any path); `--output D --junit
    D` (audit, extraction, operations) wrote D's files, then failed to write the JUnit file
    over the directory. Both are exit 2 before the run, nothing written."""
    blocked = tmp_path / "a-file"
    blocked.write_text("not a directory\n", encoding="utf-8")
    store = tmp_path / "store.db"
    if clash == "under-a-file":
        given, says = ["--output", str(blocked / "out")], "is not a directory, so no directory"
    else:
        out = str(tmp_path / "out")
        given, says = ["--output", out, "--junit", out], f"--junit {out}: the command's reports go"
    assert main([*_CASES[command], "--store", str(store), *given]) == 2
    err = capsys.readouterr().err
    assert says in err
    assert "Traceback" not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a-file"]


def test_operations_junit_is_checked_against_the_file_its_output_gets(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`operations --output o --junit o/operations.json` replaced the cases' document by the
    JUnit XML (exit 0), while `--junit o/result.json` (a file operations never writes) was
    refused: --junit was checked against evaluate's report names, not the command's own."""
    monkeypatch.chdir(tmp_path)
    args = [*_CASES["operations"], "--no-store", "--output", "o"]
    assert main([*args, "--junit", "o/operations.json"]) == 2
    assert "--junit o/operations.json: the command's reports go there" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()
    assert main([*args, "--junit", "o/result.json"]) == 0
    assert (tmp_path / "o" / "operations.json").read_text().startswith("{")
    assert (tmp_path / "o" / "result.json").read_text().startswith("<?xml")


def test_a_copy_of_a_store_without_its_wal_file_says_what_is_missing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A store copied while a command wrote it, without its -wal file, holds no table: it was
    'not a memgauge results store' and nothing said where the rest of it was."""
    import shutil
    import sqlite3

    from memgauge import api

    live, copy = tmp_path / "live.db", tmp_path / "copy.db"
    with api.open_store(live):  # in use: its schema is still in live.db-wal
        shutil.copy(live, copy)
    assert main(["runs", "list", "--store", str(copy)]) == 2
    err = capsys.readouterr().err
    assert "not a memgauge results store" in err
    assert "keeps its newest writes in copy.db-wal: a copy needs that file beside it" in err
    # another program's SQLite file in WAL mode, with tables of its own: no such hint
    other = tmp_path / "other.db"
    with contextlib.closing(sqlite3.connect(other)) as conn:
        conn.execute("PRAGMA journal_mode=wal")
        conn.execute("CREATE TABLE t (x)")
        conn.commit()
    assert main(["runs", "list", "--store", str(other)]) == 2
    err = capsys.readouterr().err
    assert "not a memgauge results store" in err
    assert "-wal" not in err


def test_a_bug_met_while_a_ctrl_c_is_handled_is_shown_as_a_bug(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Only a library's wrapping of the Ctrl-C itself is an interruption: an error raised while
    a Ctrl-C was being handled (a cleanup's bug) was said as 'interrupted', exit 130, and its
    traceback hidden."""
    from memgauge.cli import runs as runs_cli
    from memgauge.store.suite_runs import SuiteRunStore

    def cleanup_with_a_bug(store: object, given: str) -> None:
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt:
            raise AttributeError("the cleanup's own bug") from None

    store = tmp_path / "r.db"
    SuiteRunStore(store).close()
    monkeypatch.setattr(runs_cli, "_load", cleanup_with_a_bug)
    assert main(["runs", "export", "r1", "--format", "json", "--store", str(store)]) == 70
    err = capsys.readouterr().err
    assert "the cleanup's own bug" in err
    assert "internal error" in err


def test_comparing_a_run_with_itself_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`runs compare A A` (the same run twice, however its id is spelled) printed a table of
    zero deltas and exited 0; it is a typo for two different runs: exit 2 saying so."""
    store = str(tmp_path / "r.db")
    assert main(["run", str(DATA / "good" / "suite.yaml"), "--store", store, "--json"]) == 0
    run_id = json.loads(capsys.readouterr().out.strip().splitlines()[-1])["run_id"]
    for given in ([run_id, run_id], [run_id, run_id[:12]], [run_id, run_id, "--json"]):
        assert main(["runs", "compare", *given, "--store", store]) == 2, given
        captured = capsys.readouterr()
        assert f"names run {run_id} twice" in captured.err, given
        assert "give two different runs" in captured.err
        assert "Traceback" not in captured.err
        assert captured.out == ""


@pytest.mark.parametrize(
    ("system", "says"),
    [
        ("pyhton:keyword_memory:KeywordMemory", "unknown system 'pyhton' (did you mean 'python'?)"),
        ("hybird", "unknown system 'hybird' (did you mean 'hybrid'?)"),
        ("subproces:python mem.py", "unknown system 'subproces' (did you mean 'subprocess'?)"),
        (
            str(Path(__file__).parents[1] / "data" / "bad" / "subject_kind_misspelt.yaml"),
            "subject_kind_misspelt.yaml:2: 'pyhton' is no subject kind (did you mean 'python'?)",
        ),
    ],
)
def test_a_misspelt_system_is_answered_with_the_nearest_form(
    system: str, says: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`-s pyhton:...` was told to use lexical, dense, hybrid or reference (the forms it meant
    were not even listed); a spec file's `pyhton:` got the list of kinds only."""
    out = tmp_path / "out"
    code = main(["evaluate", str(tmp_path), "-s", system, "--no-store", "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 2, err
    assert says in " ".join(err.split())
    assert "Traceback" not in err
    assert not out.exists()


def test_a_store_not_there_yet_names_no_flag_to_a_python_caller(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """From Python (`Flags(where)`, `api.require_store(store)`, the viewer's `create_app`), a
    store not there yet said "give the right one with --store": a flag the caller has no way
    to give. A command still names its flag, and a call after a command in the same process
    does not."""
    from memgauge import api
    from memgauge.errors import UsageError
    from memgauge.online.flags import Flags
    from memgauge.view.app import create_app

    typo = tmp_path / "typo.db"
    assert main(["flags", "list", "--store", str(typo)]) == 2
    assert "no flag has been created there yet" in capsys.readouterr().err
    with pytest.raises(UsageError) as flags:
        Flags(typo, refresh_s=0)
    with pytest.raises(UsageError) as runs:
        api.require_store(typo)
    with pytest.raises(UsageError) as viewer:
        create_app(typo)
    assert str(flags.value).endswith("), or give the right one as Flags(PATH)"), flags.value
    for said in (str(runs.value), str(viewer.value)):
        assert said.endswith("), or give the right one with store=PATH"), said
    assert not typo.exists()


@pytest.mark.parametrize(
    ("kind", "source", "name"),
    [
        ("memaudit", DATA / "memaudit" / "sample.jsonl", "conversations.json"),
        ("csv-items", DATA / "csv" / "items.csv", "items.jsonl"),
        ("locomo", DATA / "locomo" / "normalisations.json", "import_report.json"),
        ("beir", DATA / "beir" / "mini", "."),
    ],
)
def test_an_import_never_replaces_the_file_it_reads(
    kind: str, source: Path, name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`import memaudit d/conversations.json --out d` replaced the user's memaudit file with
    its conversion (exit 0), and `import beir D --out D` the BEIR directory's queries.jsonl
    with the native one. Exit 2 naming the file and what to do, nothing written."""
    if source.is_dir():
        src = tmp_path / "beir"
        shutil.copytree(source, src)
        out = src
    else:
        out = tmp_path / "d"
        out.mkdir()
        src = out / name
        shutil.copyfile(source, src)
    before = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    assert main(["import", kind, str(src), "--out", str(out)]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert f"--out {out} would replace" in err, err
    assert "it is what the import reads: give another --out" in err, err
    assert {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()} == before


@pytest.mark.parametrize(
    ("source", "command"),
    [
        ("traces/langsmith_runs.json", ["logs", "import-traces", "IN", "--out", "IN"]),
        (
            "good/bundle.yaml",
            [
                *("bench", "systems", "--dataset", "IN", "--no-discover", "-s", "lexical"),
                *("--write-suite", "IN"),
            ],
        ),
    ],
    ids=["import-traces", "bench-write-suite"],
)
def test_an_output_over_the_file_the_command_reads_is_refused(
    source: str, command: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`logs import-traces T --out T` replaced the user's trace export with its conversion,
    and `bench systems --dataset b.yaml --write-suite b.yaml` the dataset with a suite: exit 0,
    the file gone. Exit 2 naming both; the file kept."""
    read = tmp_path / Path(source).name
    shutil.copyfile(DATA / source, read)
    kept = read.read_bytes()
    assert main([str(read) if a == "IN" else a for a in command]) == 2
    err = " ".join(capsys.readouterr().err.split())
    flag = command[-2]
    assert f"{flag} names {read}, the " in err, err
    assert f"the command reads: give {flag} a file of its own" in err, err
    assert read.read_bytes() == kept


@pytest.mark.parametrize(
    ("source", "name", "command"),
    [
        (
            "extraction/cases.json",
            "extraction.json",
            ["extraction", "IN", "--extractor", "{python: {target: 'extractors:NaiveExtractor'}}"],
        ),
        ("memaudit/sample.jsonl", "results.json", ["audit", "IN"]),
    ],
    ids=["extraction", "audit"],
)
def test_a_report_over_the_file_the_command_reads_is_refused_before_the_run(
    source: str,
    name: str,
    command: list[str],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`extraction d/extraction.json --output d` ran and recorded the run, then wrote its
    report over the cases it read (exit 0; `audit d/results.json --output d` alike). Exit 2
    before the run, naming the file and the argument; the file kept, nothing recorded."""
    monkeypatch.syspath_prepend(str(DATA / "subjects"))
    out = tmp_path / "d"
    out.mkdir()
    read = out / name
    shutil.copyfile(DATA / source, read)
    kept = read.read_bytes()
    db = tmp_path / "r.db"
    argv = [str(read) if a == "IN" else a for a in command]
    assert main([*argv, "--output", str(out), "--store", str(db)]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert f"--output names {read}, the " in err, err
    assert "the command reads: give --output another directory" in err, err
    assert read.read_bytes() == kept
    assert not db.exists()
