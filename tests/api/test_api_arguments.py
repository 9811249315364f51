"""`memgauge.evaluate`, `run_suite` and `load_dataset` called the way docs/api.md shows, with a
wrong argument: a TypeError (wrong type) or UsageError (wrong value) that names the argument,
raised before a store is opened, never an AttributeError, a pydantic ValidationError or a
comparison of str and int met deep in the engine. Before these checks, `systems="lexical"`
evaluated a system named 'l', `measures="nDCG@10"` a measure named 'n', `store=1` failed
with "'int' object has no attribute 'create_run'", `k="10"` with "'<' not supported",
`systems=[]` and `sampling_rate=0` with a raw ValidationError of the suite, and
`concurrency=-1` reached ThreadPoolExecutor; `concurrency=0` ran at the suite's width and
`measures=[]` ran with no measure at all."""

from __future__ import annotations

import math
import os
import re
import sys
from pathlib import Path
from typing import Any

import pytest

import memgauge
from memgauge import api
from memgauge.cli.main import main
from memgauge.data.demo import demo_dataset
from memgauge.runs.suite import Suite

ROOT = Path(__file__).resolve().parents[2]
SUITE = ROOT / "tests/data/suites/qa/suite.yaml"


def _evaluate(db: Path, **kw: Any) -> Any:
    given: dict[str, Any] = {"dataset": demo_dataset(), "systems": ["lexical"], "store": db}
    given.update(kw)
    return memgauge.evaluate(given.pop("dataset"), given.pop("systems"), **given)


@pytest.mark.parametrize(
    ("kw", "error", "says"),
    [
        ({"systems": "lexical"}, TypeError, "systems takes a list or a mapping"),
        ({"systems": None}, TypeError, "systems takes a list or a mapping"),
        ({"systems": []}, memgauge.UsageError, "systems: give at least one system"),
        ({"systems": {1: "lexical"}}, TypeError, "a system's name is a string, got 1"),
        ({"systems": {"a": None}}, TypeError, "systems: a is None"),
        ({"dataset": None}, TypeError, "dataset takes a path or a RetrievalDataset"),
        ({"dataset": ""}, memgauge.UsageError, "dataset '': give a path"),
        ({"measures": "nDCG@10"}, TypeError, "measures takes a list of names"),
        ({"measures": []}, memgauge.UsageError, "measures: give at least one"),
        ({"bogus": 1}, TypeError, "evaluate() got an unexpected keyword argument 'bogus'; its"),
        ({"corpora": "conv-26"}, TypeError, "corpora takes a list of corpus ids, e.g. ['conv-26']"),
        ({"measures": [5]}, TypeError, "measures: a measure is a name such as 'Recall@5', got int"),
        (
            {"measures": 5},
            TypeError,
            "measures takes a list of names, e.g. ['Recall@5'], got int 5",
        ),
        ({"k": "10"}, TypeError, "k takes a whole number, got str '10'"),
        ({"resamples": None}, TypeError, "resamples takes a whole number"),
        ({"sampling_rate": 0}, memgauge.UsageError, "sampling_rate 0: give a share above 0"),
        ({"sampling_rate": "0.5"}, TypeError, "sampling_rate takes a number"),
        ({"workers": "2"}, TypeError, "workers takes a whole number"),
        ({"by": "x"}, memgauge.UsageError, "by 'x': give 'point' or 'ci-upper'"),
        ({"fail_under": "Recall@10=0.5"}, TypeError, "fail_under takes a list of targets"),
        ({"fail_under": [1]}, TypeError, "fail_under: a target is a 'MEASURE=VALUE' string"),
        ({"store": 1}, TypeError, "store takes a path or URL, a Recorder, False"),
        ({"options": {"store": False}}, TypeError, "options takes a RunConfig, got dict"),
        ({"progress": 1}, TypeError, "progress takes an object with start, phase and advance"),
        ({"kind": "bogus"}, memgauge.UsageError, "kind 'bogus': give one of suite, evaluate,"),
        # each named the command line's flag (--system 'nope', --k 20) to a Python caller
        ({"systems": ["nope"]}, memgauge.UsageError, "systems 'nope': unknown system 'nope';"),
        (
            {"k": 5},
            memgauge.UsageError,
            "search depth k=5 is below the largest cutoff @20; use k=20",
        ),
        (
            {"pool_judge": "relevance"},
            memgauge.UsageError,
            "pool_judge grades a pool: give pool_de",
        ),
        ({"no_relevant": "x"}, memgauge.UsageError, "no_relevant 'x': use one of zero, one, skip"),
        # read as False: the system searched as it stood
        (
            {"ingest": "no"},
            memgauge.UsageError,
            "ingest: give true or false, not a text (got 'no')",
        ),
        # each was pydantic's ValidationError of a suite the caller never wrote (fuzzC-6)
        ({"k": 10**12}, memgauge.UsageError, "k: Input should be less than or equal to 1000"),
        ({"seed": -1}, memgauge.UsageError, "seed: Input should be greater than or equal to 0"),
        ({"timeout": float("nan")}, memgauge.UsageError, "timeout: Input should be a finite"),
        ({"limit": 0}, memgauge.UsageError, "limit: Input should be greater than or equal to 1"),
        ({"concurrency": 10**6}, memgauge.UsageError, "concurrency: Input should be less than"),
        ({"max_failure_rate": 2}, memgauge.UsageError, "max_failure_rate: Input should be less"),
    ],
)
def test_evaluate_names_the_wrong_argument(
    tmp_path: Path, kw: dict[str, Any], error: type[Exception], says: str
) -> None:
    if "options" in kw:
        kw = {**kw, "store": None}  # the settings go in options alone
    with pytest.raises(error) as raised:
        _evaluate(tmp_path / "results.db", **kw)
    assert says in str(raised.value)
    assert not (tmp_path / "results.db").exists()  # refused before a store was opened


def test_evaluate_reads_measures_given_as_a_generator_once(tmp_path: Path) -> None:
    """The check of each measure's type must not empty a generator before the run reads it."""
    report = _evaluate(tmp_path / "results.db", measures=(m for m in ["Recall@5"]), store=False)
    assert "Recall@5" in {m.name for m in report.summary.measures()}
    assert "nDCG@10" not in {m.name for m in report.summary.measures()}


@pytest.mark.parametrize("delta", [float("nan"), float("inf")])
def test_evaluate_refuses_a_minimum_effect_that_is_no_number(tmp_path: Path, delta: float) -> None:
    """nan and inf passed the check of `sprt_delta <= 0`: each comparison recorded a
    sequential decision with no delta (fuzzC-6). Refused before any run is recorded."""
    db = tmp_path / "results.db"
    with pytest.raises(memgauge.UsageError, match=f"sprt_delta {delta}: the minimum effect"):
        _evaluate(db, systems=["lexical", "dense"], sprt_delta=delta)
    with api.open_store(db) as store:
        assert store.list_runs() == []


@pytest.mark.parametrize(
    ("kw", "error", "says"),
    [
        ({"suite": None}, TypeError, "suite takes a path or a Suite, got NoneType"),
        ({"concurrency": 0}, memgauge.UsageError, "concurrency 0: give 1 or more"),
        ({"concurrency": -1}, memgauge.UsageError, "concurrency -1: give 1 or more"),
        ({"concurrency": "2"}, TypeError, "concurrency takes a whole number"),
        ({"repeat": 2.5}, TypeError, "repeat takes a whole number"),
        ({"subjects": ["x"]}, TypeError, "subjects takes a mapping"),
        # each was accepted: a run of a kind no command starts, an object never called
        ({"kind": "bogus"}, memgauge.UsageError, "kind 'bogus': give one of suite, evaluate,"),
    ],
)
def test_run_suite_names_the_wrong_argument(
    tmp_path: Path, kw: dict[str, Any], error: type[Exception], says: str
) -> None:
    store = tmp_path / "results.db"
    suite = kw.pop("suite", SUITE)
    with pytest.raises(error) as raised:
        memgauge.run_suite(suite, store=store, **kw)
    assert says in str(raised.value)
    assert not store.exists()


def test_run_suite_names_a_live_object_the_suite_never_calls(tmp_path: Path) -> None:
    """An object of `subjects=` the suite names no `{live: {name}}` for was never called,
    and the run said nothing (a typo of the name ran the suite without the caller's agent)."""
    task = {"name": "qa", "kind": "expected-output", "items": [{"id": "q", "input": "?"}]}
    task["evaluators"] = ["contains"]
    suite = Suite.model_validate(
        {"name": "s", "subjects": {"a": {"live": {"name": "mine"}}}, "tasks": [task]}
    )
    store = tmp_path / "results.db"
    with pytest.raises(memgauge.UsageError) as raised:
        memgauge.run_suite(suite, store=store, subjects={"mine": object(), "mien": object()})
    assert str(raised.value) == (
        "subjects: suite 's' has no {live: {name: 'mien'}}; give those it names: mine"
    )
    assert not store.exists()


def test_load_dataset_names_its_argument() -> None:
    with pytest.raises(TypeError, match="path takes a path, got NoneType None"):
        api.load_dataset(None)  # type: ignore[arg-type]


class _FsPath(os.PathLike[str]):
    """An os.PathLike that is not a pathlib.Path (as py.path.local, pytest's tmpdir, is)."""

    def __init__(self, path: Path | str) -> None:
        self.path = str(path)

    def __fspath__(self) -> str:
        return self.path


def test_any_os_pathlike_is_taken_as_a_path(tmp_path: Path) -> None:
    """`Path` takes any os.PathLike, and so did `load_dataset`, `evaluate` and `run_suite`
    until their argument check admitted only str and pathlib.Path: a py.path.local was
    "TypeError: dataset takes a path, got LocalPath". An empty one is still refused."""
    bundle = ROOT / "tests/data/good/bundle.yaml"
    assert api.load_dataset(_FsPath(bundle)).queries
    report = memgauge.evaluate(_FsPath(bundle), ["lexical"], store=False)
    assert report.summary.n_items > 0
    suite = ROOT / "tests/data/good/suite.yaml"
    assert memgauge.run_suite(_FsPath(suite), store=tmp_path / "r.db").summary.n_items > 0
    with pytest.raises(memgauge.UsageError, match="path '': give a path"):
        api.load_dataset(_FsPath(""))


def test_score_trec_run_takes_paths_as_text_and_measures_by_name() -> None:
    # before: "'str' object has no attribute 'name'" for either
    data = ROOT / "tests/data/good"
    from memgauge.metrics import MetricConfig, parse_measure

    by_name = api.score_trec_run(
        str(data / "qrels.txt"), str(data / "run.txt"), ["nDCG@10"], MetricConfig()
    )
    parsed = [parse_measure("nDCG@10")]
    as_given = api.score_trec_run(data / "qrels.txt", data / "run.txt", parsed, MetricConfig())
    assert by_name.aggregate() == as_given.aggregate()
    with pytest.raises(TypeError, match="measures takes a list of measures"):
        api.score_trec_run(data / "qrels.txt", data / "run.txt", "nDCG@10", MetricConfig())  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("n", "sigma", "says"),
    [
        (10**30, 0.15, "n=1000000000000000000000000000000 is more than 2,147,483,647 queries"),
        (20, float("nan"), "sigma=nan is no finite number"),
        (20, float("inf"), "sigma=inf is no finite number"),
    ],
)
def test_minimum_detectable_effect_refuses_what_no_test_has(
    n: int, sigma: float, says: str
) -> None:
    """Each ran without end (fuzzC-6); `sample-size --per-group` stops at 2**31 - 1 too."""
    with pytest.raises(memgauge.UsageError, match=re.escape(says)):
        api.minimum_detectable_effect(n, sigma)


def test_validate_file_takes_text_and_names_an_unknown_kind() -> None:
    # before: "'str' object has no attribute 'exists'", and a KeyError for the kind
    qrels = str(ROOT / "tests/data/good/qrels.txt")
    assert api.validate_file(qrels)[0] == "qrels"
    with pytest.raises(memgauge.UsageError, match="kind 'nosuch': use one of dataset-dir"):
        api.validate_file(qrels, "nosuch")


def test_json_schema_names_an_unknown_kind() -> None:
    with pytest.raises(memgauge.UsageError, match="kind 'nope': use one of suite, subject"):
        api.json_schema("nope")  # before: KeyError 'nope'


def test_read_run_and_export_runs_name_a_wrong_run_id(tmp_path: Path) -> None:
    db = tmp_path / "results.db"
    run_id = memgauge.evaluate(demo_dataset(), ["lexical"], store=db).run.run_id
    with pytest.raises(TypeError, match="run_id takes a run's id"):
        memgauge.read_run(1, store=db)  # type: ignore[arg-type]  # before: SQLAlchemy's TypeError
    with pytest.raises(TypeError, match="run_ids takes a list of run ids"):
        api.export_runs(run_id, store=db)  # before: "no run '2'" (the id's first character)
    # fuzzC-6: SQLAlchemy's "String value expected", an empty bundle, pathlib's TypeError
    with pytest.raises(TypeError, match="run_ids: a run id is a string, got int 5"):
        api.export_runs([5], store=db)  # type: ignore[list-item]
    with pytest.raises(memgauge.UsageError, match="run_ids: give at least one run id"):
        api.export_runs([], store=db)
    with pytest.raises(TypeError, match="path takes a path, got NoneType"):
        api.import_runs(None, store=db)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("call", "error", "says"),
    [
        (lambda db: memgauge.api.history("s", store=db, last=0), memgauge.UsageError, "last 0"),
        (lambda db: memgauge.api.history("s", store=db, last=-1), memgauge.UsageError, "last -1"),
        (lambda db: memgauge.api.history("s", store=db, last="5"), TypeError, "last takes"),
        (lambda db: memgauge.api.history(None, store=db), TypeError, "suite takes"),
        (lambda db: memgauge.api.gate(None, store=db), TypeError, "target takes a run id"),
        # fuzzC-6: each read letter by letter, the bundle `/` and the measures R, e, c, a, ...
        (
            lambda db: memgauge.api.gate("r1", store=db, baseline="b.json"),
            TypeError,
            "baseline takes a list, e.g. ['b.json'], not one path",
        ),
        (
            lambda db: memgauge.api.gate("r1", store=db, measures="Recall@5"),
            TypeError,
            "measures takes a list, e.g. ['Recall@5'], not one name",
        ),
    ],
)
def test_history_and_gate_name_the_wrong_argument(
    tmp_path: Path, call: Any, error: type[Exception], says: str
) -> None:
    """`history(last=-1)` dropped the oldest run and `last=0` gave every run; `gate(None)` was
    pathlib's TypeError from deep inside."""
    db = str(tmp_path / "r.db")
    memgauge.api.open_store(db).close()
    with pytest.raises(error, match=re.escape(says)):
        call(db)


def test_history_and_gate_take_a_suite_file_as_any_os_pathlike(tmp_path: Path) -> None:
    """`history` and `gate` read a suite file given as a path, and Path takes any os.PathLike;
    their argument check admitted only str and pathlib.Path, so a py.path.local (pytest's
    tmpdir) suite file was a TypeError where it had named the suite's runs."""
    db = str(tmp_path / "r.db")
    suite = ROOT / "tests/data/good/suite.yaml"
    run = memgauge.run_suite(suite, store=db)
    (listed,) = memgauge.api.history(_FsPath(suite), store=db)  # type: ignore[arg-type]
    assert listed.run_id == run.run.run_id
    result, _ = memgauge.api.gate(_FsPath(suite), store=db, learn=False)  # type: ignore[arg-type]
    assert result.run_id == run.run.run_id


@pytest.mark.parametrize(
    ("call", "says"),
    [
        (lambda db: _evaluate(db, systems=[]), "give at least one system"),
        (lambda db: _evaluate(db, measures=["nDCG@x"]), "'@x' is not a cutoff"),
        (lambda db: _evaluate(db, systems=["nope"]), "unknown system 'nope'"),
        (lambda db: memgauge.run_suite(SUITE, store=db, concurrency=0), "give 1 or more"),
        (lambda db: api.sample_size(delta=-1.0, sigma=1.0), "must be positive"),
    ],
    ids=["no-system", "bad-measure", "unknown-system", "concurrency-0", "negative-delta"],
)
def test_a_wrong_value_is_a_value_error_a_caller_can_catch(
    call: Any, says: str, tmp_path: Path
) -> None:
    """A Python caller catches a wrong value as ValueError, as the standard library raises it
    (and a wrong type as TypeError): memgauge's UsageError was neither, so `except ValueError`
    around `memgauge.evaluate(...)` let it through. It still is a UsageError (the CLI's exit
    2) and a MemgaugeError."""
    with pytest.raises(ValueError, match=re.escape(says)) as raised:
        call(tmp_path / "results.db")
    assert isinstance(raised.value, memgauge.UsageError)
    assert isinstance(raised.value, memgauge.MemgaugeError)


def test_a_missing_store_is_named_as_the_caller_gives_it(tmp_path: Path) -> None:
    """From Python, a store that does not exist was to be given "with --store", a flag no
    Python caller has (and a directory was "--store DIR"): the message names `store=`, as the
    command line's keeps `--store`."""
    missing = tmp_path / "none.db"
    for call in (
        lambda: memgauge.read_run("x", store=missing),
        lambda: api.gate("x", store=missing, learn=False),
        lambda: api.history("suite", store=missing),
    ):
        with pytest.raises(memgauge.UsageError) as raised:
            call()
        said = str(raised.value)
        assert said.startswith(f"no results store at {missing}"), said
        assert said.endswith("or give the right one with store=PATH"), said
        assert "--store" not in said
    with pytest.raises(memgauge.UsageError, match=f"^store={re.escape(str(tmp_path))}: is a dir"):
        memgauge.read_run("x", store=tmp_path)
    assert not missing.exists()


def test_a_server_store_without_its_driver_is_named_as_the_caller_gives_it(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The PostgreSQL driver's absence said "--store URL" to a Python caller too."""
    monkeypatch.setitem(sys.modules, "psycopg", None)  # `import psycopg` raises ImportError
    url = "postgresql://u:secret@127.0.0.1:1/db"
    shown = "postgresql://u:***@127.0.0.1:1/db"
    with pytest.raises(memgauge.UnavailableError) as raised:
        memgauge.read_run("x", store=url)
    assert str(raised.value).startswith(f"store={shown}: PostgreSQL needs its driver")
    assert main(["runs", "list", "--store", url]) == 3
    assert f"--store {shown}: PostgreSQL needs its driver" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("call", "says"),
    [
        (lambda db: api.record_outcome(db, ""), "session='': an empty one names nothing"),
        (lambda db: api.record_outcome(db, "s", task_id=""), "task_id='': an empty one"),
        (lambda db: api.record_outcome(db, "s"), "an outcome needs success or score"),
        (
            lambda db: api.record_outcome(db, "s", score=float("nan")),
            "score must be a finite number, not nan",
        ),
        (lambda db: api.review_labels(db, kind="hits"), "kind: one of hit, verdict,"),
        (lambda db: api.read_memories(db, kind="memory"), "kind='memory': one of "),
    ],
)
def test_from_python_a_wrong_value_names_the_keyword_not_a_flag(
    call: Any, says: str, tmp_path: Path
) -> None:
    """record_outcome, review_labels and read_memories named the command's flags (`--session
    ''`, `--success / --failure or --score`, `--kind`) to a Python caller, who has none."""
    from memgauge.errors import UsageError

    with pytest.raises(UsageError) as refused:
        call(tmp_path / "log.db")
    said = str(refused.value)
    assert said.startswith(says), said
    assert "--" not in said, said


@pytest.mark.parametrize(
    ("keywords", "says"),
    [
        ({"rate": 2.0}, "rate=2.0: give a share in (0, 1]"),
        ({"measures": ("precision",)}, "measures=precision: choose from "),
        ({"webhook": "ftp://x"}, "webhook='ftp://x': give an http:// or https:// URL"),
    ],
)
def test_a_watch_configured_from_python_names_its_fields(
    keywords: dict[str, Any], says: str, tmp_path: Path
) -> None:
    """WatchConfig's checks named `--sample`, `--measure` and `--webhook`, the command's
    flags, to a Python caller who set `rate`, `measures` and `webhook`."""
    from memgauge.errors import UsageError

    where = api.store_url(tmp_path / "log.db")
    with pytest.raises(UsageError) as refused:
        api.WatchConfig(store=where, state=tmp_path / "state.json", **keywords)
    assert str(refused.value).startswith(says), str(refused.value)
    assert "--" not in str(refused.value)


def test_gate_from_python_names_learn_into_and_measures(tmp_path: Path) -> None:
    """api.gate read `learn_into` and `measures` naming them `--learn-into` and `--measure`."""
    from memgauge.errors import UsageError

    db = tmp_path / "r.db"
    run_id = _evaluate(db).run.run_id
    with pytest.raises(UsageError) as learn:
        api.gate(run_id, store=db, learn_into="nosuch-kind")
    with pytest.raises(UsageError) as measure:
        api.gate(run_id, store=db, measures=["Recall@"])
    with pytest.raises(UsageError) as empty:
        api.gate(run_id, store=db, measures=[""])
    for said in (str(learn.value), str(measure.value), str(empty.value)):
        assert "--" not in said, said
    assert "learn_into" in str(learn.value)
    assert str(measure.value).startswith("measures Recall@: no such measure in this run")
    assert str(empty.value).startswith("measures='': MEASURE is [SUBJECT/][TASK/]NAME")


@pytest.mark.parametrize(
    ("call", "says"),
    [
        (lambda: api.judge_from_spec(""), "text='': give a judge, e.g. text='{qa-judge: strict}'"),
        (lambda: api.judge_from_spec("{a: ["), "text: not a spec ("),
        (lambda: api.judge_from_spec("contains"), "text: 'contains' is not an LLM judge"),
        (lambda: api.bench_systems_plan(skip=["nosuch"]), "skip=nosuch: not a system found here"),
    ],
)
def test_judge_specs_and_skipped_systems_from_python_name_keywords(call: Any, says: str) -> None:
    """judge_from_spec and bench_systems_plan said `--judge` and `--skip` to a Python caller,
    who gave `text` and `skip`."""
    with pytest.raises(memgauge.UsageError) as refused:
        call()
    assert str(refused.value).startswith(says), str(refused.value)
    assert "--" not in str(refused.value)


def test_accept_gate_from_python_names_run(tmp_path: Path) -> None:
    """accept_gate(run) refused a run not completed naming `--accept`."""
    import sqlite3

    db = tmp_path / "r.db"
    run_id = _evaluate(db).run.run_id
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE suite_runs SET status = 'cancelled'")
    conn.close()
    with pytest.raises(memgauge.UsageError) as refused:
        api.accept_gate(run_id[:8], store=db)
    said = str(refused.value)
    assert said.startswith(f"run={run_id[:8]}: run {run_id} is cancelled"), said


def test_write_path_subject_names_its_keywords(tmp_path: Path) -> None:
    """From Python, "give --extractor SPEC ... or --outputs TRACE.jsonl" and "--outputs PATH:
    no such file" named flags; the keywords `spec` and `recorded` are named instead."""
    missing = tmp_path / "none.jsonl"
    with pytest.raises(memgauge.UsageError) as raised:
        api.write_path_subject("extractor", None, None)
    assert str(raised.value) == (
        "give spec=SPEC (a live extractor) or recorded=TRACE.jsonl, one of them"
    )
    with pytest.raises(memgauge.UsageError, match=f"^recorded={re.escape(str(missing))}: no such"):
        api.write_path_subject("decider", None, missing)
    with pytest.raises(memgauge.UsageError, match=r"^spec: unknown kind 'nope'"):
        api.write_path_subject("decider", "{nope: {}}", None)


def test_import_dataset_takes_paths_as_text_and_names_a_wrong_one(tmp_path: Path) -> None:
    """`api.import_dataset("memaudit", "d.json", "out")`, str paths as the other functions
    take them, was "'str' object has no attribute 'is_dir'"; a number for a path is a
    TypeError naming its keyword."""
    src = ROOT / "tests/data/memaudit/fixture-dataset.json"
    imported = api.import_dataset("memaudit", str(src), str(tmp_path / "m"))
    assert (tmp_path / "m" / "conversations.json").is_file()
    assert imported.files[-1] == tmp_path / "m" / "import_report.json"
    with pytest.raises(TypeError, match=r"^out_dir takes a path, got int 3$"):
        api.import_dataset("memaudit", str(src), 3)  # type: ignore[arg-type]
    with pytest.raises(memgauge.UsageError, match=r"^src '': give a path$"):
        api.import_dataset("memaudit", "", tmp_path)


def test_an_import_over_its_own_file_names_the_keyword_from_python(tmp_path: Path) -> None:
    """`api.import_dataset("memaudit", "d/conversations.json", "d")` was refused with "--out d
    would replace ...: give another --out", a flag Python has not."""
    src = tmp_path / "conversations.json"
    src.write_bytes((ROOT / "tests/data/memaudit/fixture-dataset.json").read_bytes())
    with pytest.raises(memgauge.DataError) as refused:
        api.import_dataset("memaudit", src, tmp_path)
    said = str(refused.value)
    assert f"out_dir={tmp_path} would replace {src} with the import" in said, said
    assert said.endswith("give another out_dir"), said
    assert "--out" not in said


def test_the_functions_that_take_a_path_take_it_as_text(tmp_path: Path) -> None:
    """A str where these took a Path ("tests/data/operations/cases.json", as load_dataset and
    run_suite take one) was "'str' object has no attribute 'resolve'" (or 'is_file',
    'parent', "unsupported operand type(s) for /"); a number is a TypeError naming the
    keyword."""
    from memgauge.metrics import MetricConfig, parse_measure

    data = ROOT / "tests/data"
    reference: dict[str, Any] = {"reference": {}}
    memaudit = str(data / "memaudit/fixture-dataset.json")
    assert api.audit_suite(memaudit, reference, "exact", name="a").tasks
    assert api.plan_audit(memaudit, agent="extractive", scoring="offline").suite.tasks
    assert api.operations_suite(str(data / "operations/cases.json"), reference).tasks
    cases, trace = str(data / "extraction/cases.json"), str(data / "extraction/trace.jsonl")
    assert api.extraction_suite(cases, reference, trace=trace).tasks
    qrels, run = str(data / "good/qrels.txt"), str(data / "good/run.txt")
    evaluations, _ = api.compare_trec_runs(qrels, [run], [parse_measure("RR")], MetricConfig())
    assert evaluations[0].per_query
    assert api.write_path_subject("extractor", None, trace)[0]["recorded"]
    api.write_judgments([{"query_id": "q", "memory_id": "m", "grade": 1}], str(tmp_path / "j"))
    assert (tmp_path / "j").read_text(encoding="utf-8").strip()
    suite = ROOT / "tests/data/good/suite.yaml"
    assert memgauge.run_suite(suite, base=str(suite.parent), store=False).summary.n_items > 0
    with pytest.raises(TypeError, match=r"^runs takes a list of paths, got str"):
        api.compare_trec_runs(qrels, run, [parse_measure("RR")], MetricConfig())  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"^cases takes a path, got int 1$"):
        api.operations_suite(1, reference)  # type: ignore[arg-type]
    with pytest.raises(memgauge.UsageError, match=r"^recorded '': give a path$"):
        api.write_path_subject("decider", None, "")


def test_an_ab_test_or_flag_setting_of_the_wrong_type_is_named_and_not_stored(
    tmp_path: Path,
) -> None:
    """`create_ab_test("t", delta=0.1, min_samples="5")` stored "5", and every later
    `ab_test_reports` failed with "'<' not supported between instances of 'int' and 'str'";
    `delta="0.1"` was "must be real number, not str", a Path for the name "'PosixPath' object
    has no attribute 'strip'". Each is a TypeError naming the keyword, nothing stored; an int
    for a float is a number."""
    db = tmp_path / "r.db"
    wrong: list[tuple[dict[str, Any], str]] = [
        ({"min_samples": "5"}, "min_samples takes a whole number, got str '5'"),
        ({"min_samples": 2.5}, "min_samples takes a whole number, got float 2.5"),
        ({"alpha": "0.05"}, "alpha takes a number, got str '0.05'"),
        ({"improvement": None}, "improvement takes a number, got NoneType None"),
    ]
    for given, says in wrong:
        with pytest.raises(TypeError) as raised:
            api.create_ab_test("t", delta=0.1, store=db, **given)
        assert str(raised.value) == says
    with pytest.raises(TypeError, match=r"^delta takes a number, got str '0.1'$"):
        api.create_flag("f", delta="0.1", store=db)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"^rollout_percent takes a number, got str '10'$"):
        api.create_flag("f", {"rollout_percent": "10"}, store=db)
    with pytest.raises(TypeError, match=r"^name takes a string, got PosixPath"):
        api.create_ab_test(Path("t"), delta=0.1, store=db)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"^name takes a string, got PosixPath"):
        api.create_flag(Path("f"), store=db)  # type: ignore[arg-type]
    assert not db.exists()
    api.create_ab_test("t", delta=1, alpha=0.05, min_samples=5, store=db)
    api.create_flag("f", {"rollout_percent": 10}, store=db)
    assert sorted(r["name"] for r in api.ab_test_reports(store=db)) == ["f", "t"]


def test_plan_audit_names_its_keywords(monkeypatch: pytest.MonkeyPatch) -> None:
    """From Python, `plan_audit(d, agent="chat")` with no model known said "--agent chat needs
    a model: give --model", flags Python has not; `agent="memory"` without a subject said
    "needs --subject", and a judge model beside offline scoring "--judge-model X ... --scoring
    offline". The keywords are named instead."""
    for name in ("MEMGAUGE_MODEL", "MEMAUDIT_MODEL", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    memaudit = ROOT / "tests/data/memaudit/fixture-dataset.json"
    said = []
    for given in (
        {"agent": "chat"},
        {"agent": "memory", "model": "gpt-x"},
        {"scoring": "offline", "judge_model": "gpt-x"},
        {"scoring": "judge"},
    ):
        with pytest.raises(memgauge.UsageError) as refused:
            api.plan_audit(memaudit, **given)
        said.append(str(refused.value))
    assert said[0].startswith("agent=chat needs a model: give model, set MEMGAUGE_MODEL"), said
    assert said[0].endswith("agent=extractive runs without one"), said
    assert said[1].startswith("agent=memory needs subject (e.g. hybrid"), said
    assert said[2].startswith("judge_model=gpt-x names the QA judge's model, and"), said
    assert "scoring=offline judges nothing: drop one of them (scoring=judge uses" in said[2]
    assert said[3].startswith("scoring=judge needs a model: judge_model, model,"), said
    assert not any("--" in s for s in said), said


class _BytesPath(os.PathLike[bytes]):
    """An os.PathLike of bytes (as `os.DirEntry(b"...")` is), which `Path` refuses."""

    def __fspath__(self) -> bytes:
        return b"/tmp/x"


@pytest.mark.parametrize(
    ("call", "says"),
    [
        (lambda db, p: api.validate_file(p), "path"),
        (lambda db, p: api.score_trec_run(p, "run.txt", ["RR"], _config()), "qrels"),
        (lambda db, p: api.score_trec_run("qrels.txt", p, ["RR"], _config()), "run"),
        (lambda db, p: api.add_ab_pairs("t", p, store=db), "pairs_file"),
        (lambda db, p: api.import_traces(p), "path"),
        (lambda db, p: api.import_traces("t.jsonl", out=p), "out"),
        (lambda db, p: api.import_spans(p, store=db), "path"),
        (lambda db, p: api.import_runs(p, store=db), "path"),
        (lambda db, p: api.fill_annotation_pool(p, [], "out.jsonl"), "pool"),
        (lambda db, p: api.fill_annotation_pool("pool.jsonl", [], p), "out"),
        (lambda db, p: api.load_dataset(p), "path"),
        (lambda db, p: api.synth(p, "out"), "memories"),
        (lambda db, p: api.synth("memories.jsonl", p), "out_dir"),
        (lambda db, p: api.optimize(p), "suite"),
    ],
)
def test_every_path_taken_from_python_is_checked_by_its_keyword(
    tmp_path: Path, call: Any, says: str
) -> None:
    """These read or wrote before they named what they took: a number was pathlib's
    "expected str, bytes or os.PathLike object, not int" (import_runs had its own check);
    an os.PathLike of bytes passed `check_path` and met `Path`'s TypeError, naming no
    argument; a str `out` of fill_annotation_pool was "'str' object has no attribute
    'parent'" once the pool was read."""
    db = tmp_path / "r.db"
    with pytest.raises(TypeError, match=rf"^{says} takes a path, got int 7$"):
        call(db, 7)
    with pytest.raises(TypeError, match=rf"^{says} takes a path of text, got bytes"):
        call(db, _BytesPath())
    with pytest.raises(memgauge.UsageError, match=rf"^{says} '': give a path$"):
        call(db, "")
    assert not db.exists()


def _config() -> Any:
    from memgauge.metrics import MetricConfig

    return MetricConfig()


def test_fill_annotation_pool_writes_to_an_out_given_as_text(tmp_path: Path) -> None:
    pool = tmp_path / "pool.jsonl"
    pool.write_text(
        '{"query_id": "q1", "query": "where", "candidates": [{"memory_id": "m1"}]}\n',
        encoding="utf-8",
    )
    row = {"query_id": "q1", "memory_id": "m1", "grade": 2}
    assert api.fill_annotation_pool(str(pool), [row], str(tmp_path / "o.jsonl")) == (1, 0)
    assert '"grade":2' in (tmp_path / "o.jsonl").read_text(encoding="utf-8").replace(" ", "")


def test_an_ab_test_or_flag_of_settings_no_test_takes_leaves_nothing_behind(
    tmp_path: Path,
) -> None:
    """A rule or bounds no test has, or a delta or alpha no SPRT takes, was refused once
    `create_ab_test` had made the results store; `create_flag` stored the flag and then
    failed to create its test (`delta=nan`: a flag whose test is None). From Python the
    rule was named as `--rule`, a flag Python has not. The numbers `ab create`'s options
    bound went unchecked from Python: `min_samples=-1` stored, `improvement=nan` a NOT NULL
    error of the store's, `min_samples=10**20` an OverflowError."""
    db = tmp_path / "r.db"
    for given, error, says in [
        ({"rule": "nope"}, memgauge.UsageError, "rule='nope': one of sprt, beta-binomial"),
        ({"bounds": "nope"}, memgauge.UsageError, "bounds='nope': one of ville, wald"),
        ({"delta": float("nan")}, ValueError, "delta (the minimum detectable effect) must be"),
        ({"alpha": 2.0}, ValueError, "alpha and beta must be between 0 and 1"),
        # stored as given (a NaN in the test's JSON), or a NOT NULL or overflow error
        ({"improvement": math.nan}, memgauge.UsageError, "improvement=nan: a finite"),
        ({"max_latency_increase": -0.1}, memgauge.UsageError, "max_latency_increase=-0.1: a"),
        ({"prob_threshold": math.nan}, memgauge.UsageError, "prob_threshold=nan: more than"),
        ({"prob_threshold": 1.0}, memgauge.UsageError, "prob_threshold=1.0: more than 0.5"),
        ({"min_samples": -1}, memgauge.UsageError, "min_samples=-1: from 2 to 2,147,483,647"),
        ({"min_samples": 10**20}, memgauge.UsageError, "min_samples=100000000000000000000"),
    ]:
        with pytest.raises(error) as raised:
            api.create_ab_test("t", **{"delta": 0.1, **given}, store=db)
        assert str(raised.value).startswith(says)
        if {"delta", "alpha"} & given.keys():
            with pytest.raises(error, match=re.escape(says)):
                api.create_flag("f", **given, store=db)
        assert not db.exists(), given


def test_configure_llm_names_a_cache_that_is_no_path() -> None:
    """`configure_llm(llm_cache=7)` was pathlib's "expected str, bytes or os.PathLike
    object", naming no argument (raised before the process's cache is changed)."""
    with pytest.raises(TypeError, match=r"^llm_cache takes a path, got int 7$"):
        api.configure_llm(llm_cache=7)  # type: ignore[arg-type]
