"""A file's kind comes from its content; its name only breaks a tie (issue 28 item 4). Every
command that decides what a file is (validate, audit, extraction, evaluate, and a suite's task
through `dataset_kind:`) takes `--kind`, defined once."""

from __future__ import annotations

import gzip
import json
import re
import shutil
from pathlib import Path

import pytest
import yaml

from memgauge.cli.main import main
from memgauge.data.detect import detect_kind, kinds_by_content

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data"
MEMAUDIT = DATA / "memaudit" / "memorybench-locomo.json"  # memaudit's data/real/ file's name
LOCOMO = DATA / "locomo" / "normalisations.json"
SUITE = DATA / "good" / "suite.yaml"


def _copy(src: Path, tmp_path: Path, name: str) -> Path:
    dst = tmp_path / name
    shutil.copy(src, dst)
    return dst


def _validate(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = main(["validate", *args])
    cap = capsys.readouterr()
    return code, cap.out + cap.err


@pytest.mark.parametrize("name", ["nightly.yaml", "nul.yaml", "memories.yaml", "judge-queries.yml"])
def test_a_suite_is_a_suite_whatever_its_name(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = _copy(SUITE, tmp_path, name)
    shutil.copy(DATA / "good" / "bundle.yaml", tmp_path)  # the suite's dataset
    code, out = _validate(capsys, str(suite))
    assert code == 0, out
    assert out.startswith(f"ok  {suite}  (suite: suite 'good-suite': 1 subject, 2 tasks)")


@pytest.mark.parametrize(
    ("src", "name", "kind"),
    [
        (MEMAUDIT, "memorybench-locomo.json", "conversations"),  # memaudit's, ends in locomo
        (MEMAUDIT, "locomo10.json", "conversations"),
        (LOCOMO, "conversations.json", "locomo"),
        (LOCOMO, "extraction.json", "locomo"),
        (DATA / "good" / "bundle.yaml", "suite.yaml", "bundle"),
        (DATA / "good" / "conversations.jsonl", "queries.jsonl", "conversations"),
        (DATA / "good" / "qrels.txt", "run.txt", "qrels"),
        (DATA / "memaudit" / "sample.jsonl", "longmemeval.jsonl", "conversations"),
    ],
)
def test_content_outweighs_the_name(
    src: Path, name: str, kind: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _copy(src, tmp_path, name)
    assert detect_kind(path) == kind
    code, out = _validate(capsys, str(path))
    assert code == 0, out
    assert f"({kind}: " in out


def test_the_name_breaks_a_tie_the_content_leaves(tmp_path: Path) -> None:
    line = json.dumps({"id": "x1", "text": "Deploys go out on Tuesdays"}) + "\n"
    for name, kind in [("memories.jsonl", "memories"), ("queries.jsonl", "queries")]:
        (tmp_path / name).write_text(line)
        assert kinds_by_content(tmp_path / name) == ("queries", "memories")
        assert detect_kind(tmp_path / name) == kind
    (tmp_path / "notes.jsonl").write_text(line)
    assert detect_kind(tmp_path / "notes.jsonl") == "queries"  # the content's first guess


def test_a_tie_the_name_leaves_is_said_with_how_to_read_it_the_other_way(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`{id, text}` lines under a name that picks neither were read as queries without a
    word: a memories file was validated as queries, and `evaluate` called it a queries file.
    `validate` says which it took and how to say the other; a name or --kind that decides
    leaves nothing to say."""
    notes = tmp_path / "notes.jsonl"
    notes.write_text(json.dumps({"id": "x1", "text": "Deploys go out on Tuesdays"}) + "\n")
    code, out = _validate(capsys, str(notes))
    assert code == 0
    assert (
        "(queries: 1 record; it fits memories as well: --kind memories or a name like"
        " memories.jsonl reads it so)"
    ) in out
    code, out = _validate(capsys, str(notes), "--kind", "memories")
    assert (code, "(memories: 1 record)") == (0, out.split("  ")[-1].strip())
    named = _copy(notes, tmp_path, "queries.jsonl")
    code, out = _validate(capsys, str(named))
    assert (code, "(queries: 1 record)") == (0, out.split("  ")[-1].strip())
    assert main(["evaluate", str(notes), "--store", str(tmp_path / "r.db")]) == 2
    assert f"{notes}: a queries or memories file (by its content)" in capsys.readouterr().err


def test_the_name_decides_when_the_content_says_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    empty = tmp_path / "memories.jsonl"
    empty.write_text("")
    assert kinds_by_content(empty) == ()
    code, out = _validate(capsys, str(empty))
    assert code == 2
    assert "no records" in out  # the memories reader's message
    (tmp_path / "plain.jsonl").write_text("")
    code, out = _validate(capsys, str(tmp_path / "plain.jsonl"))
    assert code == 2
    assert "--kind" in out


def test_kind_overrides_both(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = _validate(capsys, "--kind", "locomo", str(MEMAUDIT))
    assert code == 2
    assert "LoCoMo is a JSON list of samples" in out
    code, out = _validate(capsys, "--kind", "conversations", str(MEMAUDIT))
    assert code == 0, out


def _audit(capsys: pytest.CaptureFixture[str], tmp_path: Path, *args: str) -> tuple[int, str]:
    out = tmp_path / "audit"
    code = main(["audit", *args, "--scoring", "offline", "--output", str(out), "--no-store"])
    cap = capsys.readouterr()
    return code, cap.out + cap.err


def test_audit_reads_by_content_and_takes_kind(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("MEMGAUGE_MODEL", "MEMAUDIT_MODEL", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    code, out = _audit(capsys, tmp_path, str(MEMAUDIT))
    assert code == 0, out
    results = json.loads((tmp_path / "audit" / "results.json").read_text())
    assert (results["format"], results["dataset"]) == ("memaudit", "memorybench-sample-0-test")
    locomo = _copy(LOCOMO, tmp_path, "conversations.json")
    code, out = _audit(capsys, tmp_path, str(locomo))
    assert code == 0, out
    assert json.loads((tmp_path / "audit" / "results.json").read_text())["format"] == "locomo"
    code, out = _audit(capsys, tmp_path, "--kind", "locomo", str(MEMAUDIT))
    assert code == 2
    assert "LoCoMo is a JSON list of samples" in out
    code, out = _audit(capsys, tmp_path, "--kind", "suite", str(MEMAUDIT))
    assert code == 2
    assert "'suite' is not one of 'conversations', 'locomo', 'longmemeval'" in out


def test_evaluate_reads_a_locomo_file_as_its_import(tmp_path: Path) -> None:
    """`evaluate FILE` on a LoCoMo file scores what `import locomo` then `evaluate DIR` scores."""
    locomo = _copy(LOCOMO, tmp_path, "dataset.json")  # a name that says bundle
    assert main(["import", "locomo", str(locomo), "--out", str(tmp_path / "imported")]) == 0
    means = []
    for dataset, extra in (
        (locomo, []),
        (tmp_path / "imported", []),
        (locomo, ["--kind", "locomo"]),
    ):
        out = tmp_path / f"r{len(means)}"
        argv = [
            "evaluate",
            str(dataset),
            "-s",
            "lexical",
            "--quiet",
            "--no-store",
            "--out",
            str(out),
        ]
        assert main([*argv, *extra]) == 0
        doc = json.loads((out / "result.json").read_text())
        means.append({m: v["value"] for m, v in doc["systems"][0]["metrics"].items()})
    assert means[0] == means[1] == means[2]
    assert means[0]["nDCG@10"] > 0
    assert main(["evaluate", str(locomo), "--kind", "bundle", "-s", "lexical", "--quiet",
                 "--no-store", "--out", str(tmp_path / "x")]) == 2  # fmt: skip


def test_extraction_reads_locomo_by_content_and_takes_kind(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.syspath_prepend(str(DATA / "subjects"))
    cases = _copy(DATA / "extraction" / "cases.json", tmp_path, "locomo.json")
    argv = ["extraction", str(cases), "--match", "exact", "--no-store", "--no-targets"]
    argv += ["--extractor", "{python: {target: 'extractors:NaiveExtractor'}}"]
    assert main([*argv, "--output", str(tmp_path / "x")]) == 0, capsys.readouterr()
    doc = json.loads((tmp_path / "x" / "extraction.json").read_text())
    assert doc["cases"], doc  # read as extraction cases, not as LoCoMo, despite the name
    capsys.readouterr()
    assert main([*argv, "--kind", "locomo"]) == 2
    assert "LoCoMo is a JSON list of samples" in capsys.readouterr().err


def test_every_kind_option_is_the_one_definition() -> None:
    import click

    from memgauge.cli.audit import audit
    from memgauge.cli.evaluate import evaluate
    from memgauge.cli.extraction import extraction
    from memgauge.cli.validate import validate

    helps = {}
    for command, kinds in [
        (validate, None),
        (audit, ["conversations", "locomo", "longmemeval"]),
        (extraction, ["extraction", "locomo"]),
        (evaluate, ["dataset-dir", "bundle", "locomo", "longmemeval"]),
    ]:
        (option,) = [p for p in command.params if p.name == "kind"]
        assert isinstance(option, click.Option)
        assert isinstance(option.type, click.Choice)
        if kinds is not None:
            assert list(option.type.choices) == kinds
        helps[command.name] = (option.help or "").split(" is (", 1)[1]
    assert len(set(helps.values())) == 1, helps


def test_a_suite_task_names_its_dataset_kind(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _copy(LOCOMO, tmp_path, "memories.json")  # a name that says something else
    base = {"name": "k", "subjects": {"lexical": {"reference": {"mode": "lexical"}}}}
    task = {"name": "recall", "kind": "retrieval", "dataset": "memories.json"}
    task["evaluators"] = [{"retrieval": "nDCG@10"}]
    suite = tmp_path / "suite.yaml"
    suite.write_text(yaml.safe_dump({**base, "tasks": [task]}))
    assert main(["run", str(suite), "--store", str(tmp_path / "r.db")]) == 0, capsys.readouterr()
    suite.write_text(yaml.safe_dump({**base, "tasks": [{**task, "dataset_kind": "locomo"}]}))
    assert main(["run", str(suite), "--store", str(tmp_path / "r.db")]) == 0, capsys.readouterr()
    capsys.readouterr()
    suite.write_text(yaml.safe_dump({**base, "tasks": [{**task, "dataset_kind": "conversations"}]}))
    code, out = _validate(capsys, str(suite))
    assert code == 2
    assert (
        "tasks.0.dataset_kind: a retrieval task reads dataset-dir, bundle, locomo, longmemeval"
        in out
    )


def test_a_gzipped_file_is_sniffed_by_columns_only_when_it_is_no_json(tmp_path: Path) -> None:
    """A compressed TREC file is told by its columns (metrics reads it); a compressed JSON
    lines file is not, or its seven words would make it a run with a bad score."""
    run = tmp_path / "results.test.gz"
    run.write_bytes(gzip.compress(b"q1 Q0 d1 1 2.0 tag\n"))
    memories = tmp_path / "memories.jsonl.gz"
    memories.write_bytes(gzip.compress(b'{"id": "m1", "text": "a b c d e f g"}\n'))
    assert kinds_by_content(run) == ("run",)
    assert kinds_by_content(memories) == ()
    assert detect_kind(memories) == "memories"


def test_ms_marcos_tsv_qrels_and_runs_are_trec_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """MS MARCO names its TREC qrels `qrels.dev.small.tsv` (tests/data/msmarco/README.md):
    validate took every `.tsv` for a sheet of task items ('1048585: unknown column')."""
    marco = DATA / "msmarco"
    qrels, run = marco / "qrels.dev.small.tsv", marco / "run.dev.small.trec.tsv"
    assert (detect_kind(qrels), detect_kind(run)) == ("qrels", "run")
    code, out = _validate(capsys, str(qrels), str(run))
    assert code == 0, out
    assert "(qrels: 3 queries, 3 judgments)" in out
    assert "(run: 3 queries, 5 results)" in out
    items = tmp_path / "items.tsv"  # a sheet's header names its `input` column: still items
    items.write_text("id\tinput\texpected\tcategory\nq1\tWho?\tAnn\tsingle-hop\n")
    assert detect_kind(items) == "items"
    assert _validate(capsys, str(items))[0] == 0


def test_ranx_json_is_a_qrels_or_a_run_whatever_its_name(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """ranx's and pytrec_eval's `{qid: {docid: number}}` (tests/data/ranx), which metrics reads:
    named other than qrels/run, validate read it as a dataset bundle ('q1: unknown field')."""
    ranx = DATA / "ranx"
    run = _copy(ranx / "run.json", tmp_path, "bm25.json")
    qrels = _copy(ranx / "qrels.json", tmp_path, "judged.json")
    assert (detect_kind(run), detect_kind(qrels)) == ("run", "qrels")
    code, out = _validate(capsys, str(run), str(qrels))
    assert code == 0, out
    assert "(run: 3 queries, 9 results)" in out  # a score of 0.5 is no grade
    assert "(qrels: 3 queries, 6 judgments; it fits run as well: --kind run" in out
    ints = tmp_path / "run.json"  # a run whose scores are integers: its name says run
    ints.write_text('{"q1": {"d1": 3, "d2": 2}}')
    assert detect_kind(ints) == "run"
    subject = tmp_path / "subject.json"  # another kind's name outweighs the shape
    subject.write_text('{"lexical": {"candidates": 50}}')
    assert detect_kind(subject) == "subject"


@pytest.mark.parametrize(
    "text",
    [
        '{"q1": {"d1": 0.5, "d2": 2}}',  # a run: a qrels grade is an integer
        '{"q1": {"d1": 1.0}}',
        '{"q1": {"d1": 3, "d2": 2}}',  # qrels, or a run whose scores are integers
        '{"id": "x1", "text": "Deploys go out on Tuesdays"}\n',
    ],
)
def test_the_other_reading_a_note_offers_reads_the_file(
    text: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """validate said a ranx run of scores like 0.5 "fits qrels as well: --kind qrels", and
    --kind qrels then refused it (a grade must be an integer): a note offers only a reading
    that reads the file, and that reading, as written, does."""
    path = tmp_path / ("notes.jsonl" if text.endswith("\n") else "scores.json")
    path.write_text(text)
    code, out = _validate(capsys, str(path))
    assert code == 0, out
    for other in re.findall(r"it fits \w+ as well: --kind (\w+)", out):
        code, again = _validate(capsys, str(path), "--kind", other)
        assert code == 0, again
        assert f"({other}: " in again


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("mine.yaml", "python:\n  target: mymemory:make\n"),  # the quick start's own spec
        ("slow.yml", "subprocess:\n  command: [python, my_memory.py]\n  timeout: 60\n"),
        ("service.json", '{"http": {"base_url": "http://127.0.0.1:8000", "max_retries": 1}}'),
    ],
)
def test_a_subject_spec_is_a_subject_whatever_its_name(
    name: str, text: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A subject spec file is one key, the subject's kind, over its arguments: read as a
    subject by its content, not as a dataset bundle with an unknown field."""
    path = tmp_path / name
    path.write_text(text)
    assert detect_kind(path) == "subject"
    code, out = _validate(capsys, str(path))
    assert code == 0, out
    assert f"ok  {path}  (subject: " in out


def test_a_bundle_with_one_misspelled_part_is_still_read_as_a_bundle(tmp_path: Path) -> None:
    path = tmp_path / "data.yaml"
    path.write_text("memoires:\n  - id: m1\n    text: Deploys go out on Tuesdays\n")
    assert detect_kind(path) == "bundle"


def test_one_key_over_numbers_is_a_one_query_run_unless_the_key_is_a_subject_kind(
    tmp_path: Path,
) -> None:
    """A subject spec is one key over its arguments, and so is a run of one query: the key
    tells them apart (a subject kind memgauge has), then the file's name."""
    run = tmp_path / "bm25.json"
    run.write_text('{"q1": {"d1": 1.5, "d2": 0.5}}')
    assert detect_kind(run) == "run"
    qrels = tmp_path / "judged.json"
    qrels.write_text('{"q1": {"d1": 1}}')
    assert detect_kind(qrels) == "qrels"
    spec = tmp_path / "mine.json"
    spec.write_text('{"hybrid": {"candidates": 50}}')
    assert detect_kind(spec) == "subject"
    named = tmp_path / "subject.json"  # a plug-in's kind, named as what it is
    named.write_text('{"my-memory": {"size": 3}}')
    assert detect_kind(named) == "subject"
