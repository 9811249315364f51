"""One options object per run: every evaluating command turns its shared options into one
`api.RunConfig`, which reaches the engine as it is; a bad `--fail-under` is refused before
anything (a store) is written."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from tests.helpers import gated_suite

from memgauge import api
from memgauge.cli.main import main
from memgauge.data.demo import demo_dataset
from memgauge.data.io import save_retrieval_dataset
from memgauge.errors import UsageError

DATA = Path(__file__).resolve().parents[1] / "data"
QA = DATA / "suites" / "qa" / "suite.yaml"


class _StopError(Exception):
    """Raised by the stand-in engine once it has seen the run's options."""


@pytest.fixture
def seen(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """What each run handed the engine (the run itself is not made)."""
    calls: list[dict[str, Any]] = []

    def engine(suite: object, recorder: object, **given: Any) -> None:
        calls.append(given)
        raise _StopError

    monkeypatch.setattr("memgauge.api._runs._run_suite", engine)
    monkeypatch.syspath_prepend(str(DATA / "subjects"))
    return calls


def _commands(tmp: Path) -> dict[str, list[str]]:
    data = tmp / "demo"
    save_retrieval_dataset(demo_dataset(), data)
    return {
        "run": ["run", str(QA)],
        "evaluate": ["evaluate", str(data), "-s", "lexical", "--out", str(tmp / "o")],
        "demo": ["demo", "--out", str(tmp / "d")],
        "extraction": [
            "extraction",
            str(DATA / "extraction" / "cases.json"),
            "--extractor",
            "{python: {target: 'extractors:NaiveExtractor'}}",
            "--no-targets",
        ],
        "operations": [
            "operations",
            str(DATA / "operations" / "cases.json"),
            "--decider",
            "{heuristic: {}}",
            "--no-targets",
        ],
        "audit": ["audit", str(DATA / "memaudit" / "sample.jsonl"), "--output", str(tmp / "a")],
    }


@pytest.mark.parametrize(
    "command", ["run", "evaluate", "demo", "extraction", "operations", "audit"]
)
def test_every_evaluating_command_hands_the_engine_one_run_config(
    command: str, tmp_path: Path, seen: list[dict[str, Any]]
) -> None:
    db = str(tmp_path / "r.db")
    shared = ["--store", db, "--by", "ci-upper", "--fail-under", "memory/answers/score=0.5"]
    assert main([*_commands(tmp_path)[command], *shared]) == 70  # the stand-in's _StopError
    (given,) = seen
    options = given["options"]
    assert type(options) is api.RunConfig
    assert options.store == db
    assert options.by == "ci-upper"
    assert options.fail_under == ("memory/answers/score=0.5",)
    assert [(r.subject, r.task, r.name) for r in options.requirements] == [
        ("memory", "answers", "score")
    ]
    assert options.seed_targets is (command not in ("extraction", "operations"))
    assert (options.resume, options.force, options.workers, options.executor) == (
        None,
        False,
        1,
        None,
    )
    # nothing of the run's options goes beside the object
    assert not {"resume", "force", "fail_under", "by", "workers", "pool"} & set(given)


def test_no_store_and_workers_reach_the_engine_in_the_object(
    tmp_path: Path, seen: list[dict[str, Any]]
) -> None:
    args = [*_commands(tmp_path)["evaluate"], "--no-store", "--workers", "2", "--executor", "x"]
    assert main(args) == 70
    options = seen[0]["options"]
    assert (options.store, options.workers, options.executor) == (False, 2, "x")


def test_run_concurrency_is_a_run_option(tmp_path: Path, seen: list[dict[str, Any]]) -> None:
    args = ["run", str(QA), "--store", str(tmp_path / "r.db"), "--concurrency", "3"]
    assert main(args) == 70
    options = seen[0]["options"]
    assert (options.concurrency, options.retry_failed, options.resume) == (3, False, None)


@pytest.mark.parametrize("command", ["run", "evaluate", "extraction"])
def test_a_bad_fail_under_is_refused_before_a_store_is_written(
    command: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.syspath_prepend(str(DATA / "subjects"))
    db = tmp_path / "new.db"
    code = main([*_commands(tmp_path)[command], "--store", str(db), "--fail-under", "Recall@10"])
    assert code == 2
    assert "--fail-under 'Recall@10': write MEASURE=VALUE" in capsys.readouterr().err
    assert not db.exists()


@pytest.mark.parametrize("target", ["Recall@5==0.5", "Recall@5<=0.5", "lexical/Recall@5!=0.5"])
def test_a_doubled_operator_is_refused_before_a_store_is_written(
    target: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`Recall@5==0.5` was a measure called `Recall@5=` (`Recall@5<=0.5` one called
    `Recall@5<`), refused only once every item had run, the run's measures listed as if the
    name were a typo; the pytest plug-in's `{"Recall@5<=": 0.5}` alike."""
    db = tmp_path / "new.db"
    code = main([*_commands(tmp_path)["evaluate"], "--store", str(db), "--fail-under", target])
    assert code == 2
    err = capsys.readouterr().err
    name = target.removesuffix("=0.5")
    assert f"--fail-under {target!r}: {name!r} ends in an operator" in err
    assert not db.exists()
    with pytest.raises(UsageError, match=r"threshold: 'Recall@5<=' ends in an operator"):
        api.requirement("Recall@5<=", 0.5, where="threshold")


@pytest.mark.parametrize(
    ("target", "advice"),
    [
        ("Recall@5==0.5", "write Recall@5===0.5 (exactly 0.5) with --fail-under"),
        ("Recall@5<=0.5", "write Recall@5=<=0.5 (at most 0.5) with --fail-under"),
        ("h/Recall@5>=0.5", "write h/Recall@5=>=0.5 (at least 0.5) with --fail-under"),
        ("Recall@5!=0.5", "'!=' is no target's operator"),
    ],
)
def test_a_doubled_operator_is_told_what_to_write_for_that_operator(
    target: str, advice: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--fail-under Recall@5==0.5` was told to write `Recall@10=>= 0.6` (at least 0.6): the
    advice of `>=` for a target of exactly 0.5. It says what to write for the operator given,
    and what it writes is read as that operator."""
    from memgauge.aggregates.targets import parse_fail_under

    args = [*_commands(tmp_path)["evaluate"], "--store", str(tmp_path / "r.db")]
    assert main([*args, "--fail-under", target]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert advice in err, err
    if advice.startswith("write"):
        assert parse_fail_under(advice.split()[1]).target.op == target.split("@5")[1][:2]


@pytest.mark.parametrize(
    ("target", "op"), [("Recall@5=>0.5", ">"), ("retrieval/Recall@5=<0.5", "<")]
)
def test_an_operator_written_backwards_is_refused_in_every_target(
    target: str, op: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--fail-under Recall@5=>0.5` was read as `> 0.5` (strictly more), where `=>` most
    likely meant at least: refused, saying what to write, before a store is written; a suite's
    target and the pytest plug-in's threshold `'=>0.5'` are refused the same way."""
    db = tmp_path / "new.db"
    code = main([*_commands(tmp_path)["evaluate"], "--store", str(db), "--fail-under", target])
    assert code == 2
    err = " ".join(capsys.readouterr().err.split())
    least = "at least" if op == ">" else "at most"
    name = target.split("=")[0]
    assert (
        f"--fail-under {target!r}: '={op}' is no operator: write {name}={op}=0.5 ({least})" in err
    )
    assert f"or '{name}= {op} 0.5' (strictly" in err
    assert not db.exists()
    said = re.escape(f"'={op}' is no operator: write {op}= 0.5 ({least}) or {op} 0.5 (strictly")
    from memgauge.aggregates.targets import parse_target

    with pytest.raises(UsageError, match=rf"tasks.recall.targets.Recall@5: {said}"):
        parse_target(f"={op}0.5", where="tasks.recall.targets.Recall@5", measure="Recall@5")
    with pytest.raises(UsageError, match=rf"threshold: {said}"):
        api.requirement("Recall@5", f"={op} 0.5", where="threshold")


@pytest.mark.parametrize("target", ["Recall@5=>0.5", "Recall@5= => 0.5", "Recall@5 = =>0.5"])
def test_what_a_backwards_operator_advises_is_read_as_meant(target: str) -> None:
    """`--fail-under 'Recall@5= => 0.5'` (a space after the separator) advised
    `Recall@5==>=0.5` and `'Recall@5== > 0.5'`: the measure taken with its separator, so the
    forms advised named a measure `Recall@5=`. Each form advised reads as Recall@5."""
    from memgauge.aggregates.targets import parse_fail_under

    with pytest.raises(UsageError) as refused:
        parse_fail_under(target)
    least, strict = re.findall(
        r"write (\S+) \(at least\) or '([^']+)' \(strictly", str(refused.value)
    )[0]
    assert (least, strict) == ("Recall@5=>=0.5", "Recall@5= > 0.5"), str(refused.value)
    for advised, op in ((least, ">="), (strict, ">")):
        got = parse_fail_under(advised)
        assert (got.name, got.target.op, got.target.value) == ("Recall@5", op, 0.5)


@pytest.mark.parametrize("target", ["Recall@5@3=0.5", "lexical/nDCG@10@10=0.5", "P@5@=0.5"])
def test_a_measure_with_two_cutoffs_is_refused_before_a_store_is_written(
    target: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`Recall@5@3` was a measure of that name, refused only once every item had run ("no
    such measure in this run", the run recorded); the pytest plug-in's thresholds and gate
    --measure alike. An IR measure's name with a second '@' is refused up front."""
    db = tmp_path / "new.db"
    code = main([*_commands(tmp_path)["evaluate"], "--store", str(db), "--fail-under", target])
    assert code == 2
    err = " ".join(capsys.readouterr().err.split())
    name = target.split("/")[-1].removesuffix("=0.5")
    assert f"--fail-under {target!r}: measure {name!r}: " in err, err
    assert "is not a cutoff (@K, a whole number from 1)" in err
    assert not db.exists()
    with pytest.raises(UsageError, match=r"^threshold: measure 'Recall@5@3': Recall is a measure"):
        api.requirement("Recall@5@3", 0.5, where="threshold")


@pytest.mark.parametrize(
    ("target", "says"),
    [
        ("RR@5=1.5", "a target of 1.5 would never be met; write a share as a fraction"),
        ("lexical/nDCG@10=60", "a target of 60 would never be met"),
        ("Recall@10= < -0.1", "a target of -0.1 would never be met"),
        ("RR@5=-0.2", "a target of -0.2 would always be met"),
    ],
)
def test_a_target_outside_a_measures_range_is_refused_before_a_store_is_written(
    target: str, says: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "new.db"
    code = main([*_commands(tmp_path)["evaluate"], "--store", str(db), "--fail-under", target])
    assert code == 2
    err = capsys.readouterr().err
    assert f"--fail-under {target!r}:" in err
    assert "lies between 0 and 1" in err
    assert says in err
    assert not db.exists()


def test_a_suite_target_outside_its_measures_range_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "demo"
    save_retrieval_dataset(demo_dataset(), data)
    suite = tmp_path / "suite.yaml"
    suite.write_text(
        "name: ranges\nsubjects:\n  memory: {reference: {mode: lexical}}\ntasks:\n"
        f"  - name: search\n    kind: retrieval\n    dataset: {data}\n"
        "    evaluators: [{retrieval: RR@5}]\n    targets: {RR@5: 1.2}\n"
    )
    db = tmp_path / "r.db"
    assert main(["run", str(suite), "--store", str(db)]) == 2
    err = capsys.readouterr().err
    assert "suite.yaml:9: tasks.0.targets: RR@5: RR@5 lies between 0 and 1" in err
    assert "Traceback" not in err
    assert not db.exists()


def test_counts_and_unknown_scales_take_any_target() -> None:
    """Counts (NumRel) and measures memgauge cannot place (an evaluator's score) take any
    number."""
    from memgauge.aggregates.targets import parse_fail_under

    assert parse_fail_under("NumRel=5").target.value == 5.0
    assert parse_fail_under("memory/answers/score=3").target.value == 3.0


@pytest.mark.parametrize(
    ("text", "op", "value"),
    [
        ("recall_accuracy=0.6", ">=", 0.6),
        ("hallucinated_memory_rate= < 0.1", "<", 0.1),
        ("hallucinated_memory_rate=<= 0.1", "<=", 0.1),
        ("agent/audit/recall_accuracy=>= 0.6", ">=", 0.6),
        ("recall_accuracy= >0.6", ">", 0.6),
        ("conflict_resolution_accuracy=== 1", "==", 1.0),
    ],
)
def test_a_threshold_with_any_operator_names_its_measure(text: str, op: str, value: float) -> None:
    """The pytest plug-in's thresholds (`{"hallucinated_memory_rate": "<= 0.1"}`) reach the
    run as `MEASURE=TARGET`: the measure is what comes before the target's operator, never
    `hallucinated_memory_rate=<` (which no run has, so the test failed on a target it met)."""
    from memgauge.aggregates.targets import parse_fail_under

    requirement = parse_fail_under(text)
    assert requirement.name == text.split("=")[0].split("/")[-1]
    assert (requirement.target.op, requirement.target.value) == (op, value)


def test_a_suite_built_in_code_has_its_targets_read_before_the_run(tmp_path: Path) -> None:
    """A `Suite` made in Python skips the file's checks: its targets were read only when the run
    was summarized, after every item had run and been recorded."""
    from memgauge.errors import UsageError
    from memgauge.runs.suite import Suite

    data = tmp_path / "demo"
    save_retrieval_dataset(demo_dataset(), data)
    suite = Suite.model_validate(
        {
            "name": "in-code",
            "subjects": {"memory": {"reference": {"mode": "lexical"}}},
            "tasks": [
                {
                    "name": "search",
                    "kind": "retrieval",
                    "dataset": str(data),
                    "evaluators": [{"retrieval": "RR@5"}],
                    "targets": {"RR@5": "> high"},
                }
            ],
        }
    )
    db = tmp_path / "r.db"
    with pytest.raises(UsageError, match=r"tasks\.search\.targets\.RR@5: '> high' is not a target"):
        api.run_suite(suite, store=str(db))
    with api.open_store(db) as store:
        assert store.list_runs() == []


_IGNORED = [
    (["--force"], "--force needs --resume ID"),
    (["--no-store", "--store", "{db}"], "--store {db} and --no-store contradict each other"),
]


@pytest.mark.parametrize(
    ("command", "options", "says"),
    [
        (command, options, says)
        for command in ("evaluate", "demo", "extraction", "operations", "audit", "run")
        for options, says in _IGNORED
        if not (command == "run" and "--no-store" in options)  # run has no --no-store
    ],
)
def test_options_a_run_would_ignore_are_refused_on_every_evaluating_command(
    command: str,
    options: list[str],
    says: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """`--force` (take over a resumed run) without --resume, and --store beside --no-store,
    were ignored by every evaluating command but `run` (which refused --force alone): the
    run went on as if they had not been given. Exit 2, nothing written."""
    monkeypatch.syspath_prepend(str(DATA / "subjects"))
    db = tmp_path / "given.db"
    given = [o.format(db=db) for o in options]
    assert main([*_commands(tmp_path)[command], *given]) == 2
    assert says.format(db=db) in capsys.readouterr().err
    assert not db.exists()
    assert not {"o", "d", "a"} & {p.name for p in tmp_path.iterdir()}


def test_a_name_holding_a_slash_is_named_by_fail_under_and_gate() -> None:
    """Names hold '/' (a Hugging Face model id as a subject, `long/term` as a task, a label
    `hit/rate`): `[SUBJECT/][TASK/]NAME` split them where they are not split, and the
    measure could not be named at all ('MEASURE is [SUBJECT/][TASK/]NAME')."""
    from memgauge.aggregates.targets import parse_fail_under, parse_measure_ref
    from memgauge.data.records import MeasureValue

    hf = "sentence-transformers/all-MiniLM-L6-v2"
    mine = MeasureValue(subject=hf, task="long/term", name="hit/rate", value=0.5)
    other = MeasureValue(subject="plain", task="long/term", name="hit/rate", value=0.5)
    plain = MeasureValue(subject="plain", task="recall", name="RR@5", value=0.5)
    for text, named in [
        (f"{hf}/long/term/hit/rate", [mine]),
        ("long/term/hit/rate", [mine, other]),
        ("plain/long/term/hit/rate", [other]),
        ("hit/rate", [mine, other]),
        ("plain/recall/RR@5", [plain]),  # the '/'-free forms as they were
        ("recall/RR@5", [plain]),
        ("RR@5", [plain]),
        ("nope/long/term/hit/rate", []),
    ]:
        ref = parse_measure_ref(text, where="--measure")
        assert [m for m in (mine, other, plain) if ref.matches(m)] == named, text
        assert ref.text() == text
        requirement = parse_fail_under(f"{text}=0.1")
        assert [m for m in (mine, other, plain) if requirement.matches(m)] == named, text


@pytest.mark.parametrize("command", ["operations", "evaluate"])
def test_a_junit_file_over_the_results_store_is_refused_before_the_run(
    command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`operations CASES --store r.db --junit r.db` recorded the run, then wrote the JUnit XML
    over the store (exit 0): every run in it lost; `run` and the other evaluating commands
    alike. Exit 2 before the run; nothing written."""
    db = tmp_path / "r.db"
    code = main([*_commands(tmp_path)[command], "--store", str(db), "--junit", str(db)])
    assert code == 2
    err = " ".join(capsys.readouterr().err.split())
    assert f"the results store and --junit both name {db}" in err, err
    assert not db.exists()


def test_a_junit_file_over_the_results_store_s_journal_is_refused_before_the_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--junit r.db-wal --store r.db` ran, recorded the run, and only then was refused the
    write beside the store it had just made (exit 2 after the run): refused before it, as
    `--junit r.db` is."""
    db = tmp_path / "r.db"
    journal = tmp_path / "r.db-wal"
    code = main([*_commands(tmp_path)["operations"], "--store", str(db), "--junit", str(journal)])
    assert code == 2
    err = " ".join(capsys.readouterr().err.split())
    assert f"the results store's journal and --junit both name {journal}" in err, err
    assert not db.exists()


@pytest.mark.parametrize(
    "command",
    [
        ["runs", "export", "RUN", "--out", "STORE"],
        ["runs", "export", "RUN", "--format", "csv", "--out", "STORE"],
        ["report", "RUN", "--out", "STORE"],
    ],
    ids=["export-json", "export-csv", "report"],
)
def test_no_report_or_export_replaces_a_sqlite_store(
    command: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`runs export ID --out r.db --store r.db` wrote the run's JSON over the store it read
    (exit 0, 'wrote r.db'), every run lost; a report alike. A file that holds a SQLite
    database is never replaced by what memgauge writes: exit 2, the store kept."""
    db = tmp_path / "r.db"
    assert main([*_commands(tmp_path)["operations"], "--store", str(db), "--json"]) in (0, 1)
    run_id = json.loads(capsys.readouterr().out.strip().splitlines()[-1])["run_id"]
    kept = db.read_bytes()
    argv = [{"RUN": run_id, "STORE": str(db)}.get(a, a) for a in command]
    assert main([*argv, "--store", str(db)]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert f"cannot use {db}: it holds a SQLite database (a results store?)" in err, err
    # the refusal says what to do; not followed by the hint of an output directory
    assert err.endswith("give another file"), err
    assert db.read_bytes() == kept


@pytest.mark.parametrize("sidecar", ["-wal", "-shm", "-journal"])
@pytest.mark.parametrize("through", ["name", "symlink"])
def test_no_export_replaces_a_sqlite_stores_journal(
    sidecar: str, through: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`runs export ID --out r.db-wal` (or a link to it) replaced the store's write-ahead log
    (exit 0, 'wrote r.db-wal'): the runs not yet checkpointed into r.db lost, a writer's open
    log replaced under it. The files SQLite keeps beside a database are never replaced: exit 2,
    naming the database, while another process holds them open as a viewer does."""
    import sqlite3

    db = tmp_path / "r.db"
    assert main([*_commands(tmp_path)["operations"], "--store", str(db), "--json"]) in (0, 1)
    run_id = json.loads(capsys.readouterr().out.strip().splitlines()[-1])["run_id"]
    journal = Path(f"{db}{sidecar}")
    out = journal if through == "name" else tmp_path / "link.json"
    if through == "symlink":
        out.symlink_to(journal)
    reader = sqlite3.connect(db)  # holds the -wal and -shm while open, as a viewer does
    try:
        reader.execute("SELECT count(*) FROM suite_runs").fetchone()
        kept = journal.read_bytes() if journal.exists() else None
        assert main(["runs", "export", run_id, "--out", str(out), "--store", str(db)]) == 2
        err = " ".join(capsys.readouterr().err.split())
        assert f"cannot use {out}: it is the journal of the SQLite database {db}" in err, err
        # the refusal says what to do; not followed by the hint of an output directory
        assert err.endswith("give another file"), err
        assert (journal.read_bytes() if journal.exists() else None) == kept
    finally:
        reader.close()


@pytest.mark.parametrize("through", ["name", "symlink"])
@pytest.mark.parametrize(
    "command",
    [
        ["run", "SUITE", "--junit", "OUT"],
        ["gate", "SUITE", "--no-learn", "--markdown", "OUT"],
        ["gate", "SUITE", "--no-learn", "--junit", "OUT"],
        ["evaluate", "BUNDLE", "-s", "lexical", "--junit", "OUT"],
    ],
    ids=["run-junit", "gate-markdown", "gate-junit", "evaluate-junit"],
)
def test_no_output_replaces_the_file_the_command_reads(
    command: list[str],
    through: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`gate suite.yaml --markdown suite.yaml` (or `run ... --junit`, `evaluate b.yaml --junit
    b.yaml`, or a link to the file) wrote the summary over the suite or dataset it read: exit
    0, the user's file gone. Exit 2, naming the file and the argument that reads it."""
    monkeypatch.syspath_prepend(str(DATA / "subjects"))
    db = tmp_path / "r.db"
    suite = gated_suite(tmp_path, right=6)
    assert main(["run", str(suite), "--store", str(db)]) == 0
    bundle = tmp_path / "bundle.yaml"
    bundle.write_bytes((DATA / "good" / "bundle.yaml").read_bytes())
    read = bundle if "BUNDLE" in command else suite
    out = read if through == "name" else tmp_path / "out.xml"
    if through == "symlink":
        out.symlink_to(read)
    kept = read.read_bytes()
    argv = [
        {"SUITE": str(suite), "BUNDLE": str(bundle), "OUT": str(out)}.get(a, a) for a in command
    ]
    capsys.readouterr()
    assert main([*argv, "--store", str(db)]) == 2
    err = " ".join(capsys.readouterr().err.split())
    flag = command[-2]
    label = (
        "DATASET" if "BUNDLE" in command else "SUITE_OR_RUN" if "gate" in command else "SUITE_FILE"
    )
    assert (
        f"{flag} names {out}, the {label} the command reads: give {flag} a file of its own" in err
    )
    assert read.read_bytes() == kept


@pytest.mark.parametrize("blocker", ["directory", "read-only"])
@pytest.mark.parametrize("command", ["evaluate", "demo", "audit"])
def test_a_report_that_cannot_be_written_fails_before_the_run(
    command: str, blocker: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`evaluate ... --out d` where d/report.html is a directory (or d/result.json is
    read-only) ran and recorded the run, wrote result.json and summary.md, then failed on
    the rename of a temporary file it named (`d/.report.html.1a2b.tmp -> d/report.html: Is a
    directory`): half the reports written. Exit 2 before the run, naming the report."""
    argv = _commands(tmp_path)[command]
    flag = "--output" if command == "audit" else "--out"
    out = Path(argv[argv.index(flag) + 1])
    name = "results.json" if command == "audit" else "result.json"
    out.mkdir()
    if blocker == "directory":
        (out / name).mkdir()
    else:
        (out / name).write_text("mine")
        (out / name).chmod(0o444)
    db = tmp_path / "r.db"
    assert main([*argv, "--store", str(db)]) == 2
    err = " ".join(capsys.readouterr().err.split())
    why = "it is a directory" if blocker == "directory" else "it is read-only"
    assert f"{flag} {out}: cannot write {out / name}: {why}" in err, err
    assert sorted(p.name for p in out.iterdir()) == [name]
    assert not db.exists()


def test_demo_writes_its_dataset_into_the_directory_an_earlier_demo_left(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The check of the reports before the run took demo's `dataset` (a directory it writes
    into) for a report file: a second `demo --out d` was refused ("d/dataset: it is a
    directory"). The directory passes; a report file that is one is still refused."""
    argv = _commands(tmp_path)["demo"]
    out = Path(argv[argv.index("--out") + 1])
    (out / "dataset").mkdir(parents=True)
    db = tmp_path / "r.db"
    # the check after the reports' stops the command before its run
    assert main([*argv, "--store", str(db), "--junit", str(db)]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "it is a directory" not in err, err
    assert f"the results store and --junit both name {db}" in err, err
    (out / "result.json").mkdir()
    assert main([*argv, "--no-store"]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert f"cannot write {out / 'result.json'}: it is a directory" in err, err


@pytest.mark.parametrize("command", ["evaluate", "demo", "audit"])
def test_a_junit_file_that_cannot_be_written_fails_before_the_run(
    command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--junit j.xml` where j.xml is read-only: the command ran, recorded the run and wrote
    its reports, then failed on the XML (exit 2 after the work,
    as the reports in --out did before they were checked first). Exit 2 before the run."""
    argv = _commands(tmp_path)[command]
    xml = tmp_path / "j.xml"
    xml.write_text("mine")
    xml.chmod(0o444)
    db = tmp_path / "r.db"
    assert main([*argv, "--store", str(db), "--junit", str(xml)]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert f"--junit {xml}: cannot write {xml}: it is read-only" in err, err
    assert not db.exists()
    assert xml.read_text() == "mine"


def test_a_gate_report_that_cannot_be_written_fails_before_the_verdict(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`gate --markdown g.md` with g.md read-only recorded the verdict, then failed on the
    summary (exit 2 with the run gated). Exit 2 before, the run not gated."""
    from memgauge.store.run_pages import RunReader

    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parents[1] / "data" / "subjects"))
    db = str(tmp_path / "r.db")
    assert main(["run", str(gated_suite(tmp_path, right=6)), "--store", db, "--json"]) == 0
    run_id = json.loads(capsys.readouterr().out.strip().splitlines()[-1])["run_id"]
    md = tmp_path / "g.md"
    md.write_text("mine")
    md.chmod(0o444)
    assert main(["gate", run_id, "--store", db, "--no-learn", "--markdown", str(md)]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert f"--markdown {md}: cannot write {md}: it is read-only" in err, err
    reader = RunReader(db)
    try:
        assert reader.gate_verdict(run_id) is None
    finally:
        reader.close()
