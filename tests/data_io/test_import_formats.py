"""`memgauge import beir` and `memgauge import csv-items`: what each file becomes, what is
normalised or dropped (counted in import_report.json), and that the result runs."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from memgauge import api
from memgauge.cli.main import main
from memgauge.data.io import load_items

DATA = Path(__file__).resolve().parents[1] / "data"
BEIR = DATA / "beir" / "mini"


def _report(out: Path) -> dict[str, object]:
    return dict(json.loads((out / "import_report.json").read_text()))


def test_beir_test_split_becomes_a_retrieval_dataset(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "beir"
    assert main(["import", "beir", str(BEIR), "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "queries_not_in_split: 1" in printed
    ds = api.load_dataset(out)
    assert [q.id for q in ds.queries] == ["q1", "q2", "q3"]  # q4 is judged in dev only
    memories = {m.id: m for m in ds.memories}
    assert memories["d1"].text == (
        "Vitamin D Vitamin D deficiency is linked to weaker bones in older adults."
    )
    assert memories["d1"].metadata == {"year": 2019, "title": "Vitamin D"}
    assert memories["d2"].text == "Regular exercise lowers resting heart rate."  # no title
    assert "4" in memories  # a numeric id becomes text
    # BEIR relevant (>= 1) is memgauge relevant (>= 2): 1 -> 2, 2 -> 3; -1 -> 0; 0 stays
    assert ds.qrels() == {
        "q1": {"d1": 2, "d5": 3, "d6": 0},
        "q2": {"4": 2, "d2": 0},
        "q3": {"d3": 2},
    }
    assert ds.protocol is not None
    assert ds.protocol.name == "beir-test"
    report = _report(out)
    counts = report["counts"]
    assert isinstance(counts, dict)
    assert counts["corpus_numeric_ids_as_text"] == 1
    assert counts["grades_shifted"] == 4
    assert counts["negative_grades_judged_0"] == 1
    assert counts["judgments_dropped_document"] == 1
    assert counts["judgments_dropped_query"] == 1
    assert counts["judgments"] == 6
    assert report["dropped"] == [
        {"line": 8, "query": "q3", "document": "d99", "why": "document not in corpus.jsonl"},
        {"line": 9, "query": "q9", "document": "d1", "why": "query not in queries.jsonl"},
    ]


def test_beir_split_and_grades_options(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "dev"
    assert main(["import", "beir", str(BEIR), "--split", "dev", "--out", str(out)]) == 0
    assert [q.id for q in api.load_dataset(out).queries] == ["q4"]
    keep = tmp_path / "keep"
    assert main(["import", "beir", str(BEIR), "--grades", "keep", "--out", str(keep)]) == 0
    assert api.load_dataset(keep).qrels()["q1"] == {"d1": 1, "d5": 2, "d6": 0}
    capsys.readouterr()
    assert (
        main(["import", "beir", str(BEIR), "--split", "train", "--out", str(tmp_path / "x")]) == 2
    )
    err = capsys.readouterr().err
    assert "no split 'train': it has dev, test; pick one with --split" in err
    assert not (tmp_path / "x").exists()


def test_an_imported_beir_dataset_evaluates(tmp_path: Path) -> None:
    out = tmp_path / "beir"
    api.import_dataset("beir", BEIR, out)
    report = api.evaluate(out, ["lexical"], measures=("nDCG@10", "Recall@5"), store=False)
    assert report.status == "completed"
    ir = report.summary.aggregate("ir")
    assert ir is not None


def test_csv_items_become_task_items(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "items"
    assert main(["import", "csv-items", str(DATA / "csv" / "items.csv"), "--out", str(out)]) == 0
    capsys.readouterr()
    items = load_items(out / "items.jsonl")
    assert [(i.id, i.input, i.expected, i.category) for i in items] == [
        ("c1", "What colour is the boat?", "blue", "colour"),  # " blue " trimmed
        ("row-3", "Where do they live?", ["Oslo", "Bergen"], "place"),
        ("c3", "A question, with a comma", "42", None),  # a cell is text
        ("c4", "Has no reference", None, None),
    ]
    assert items[0].metadata == {"source": "sheet"}
    assert items[1].metadata == {}
    counts = _report(out)["counts"]
    assert counts == {
        "items": 4,
        "cells_trimmed": 1,
        "ids_generated": 1,
        "items_with_alternatives": 1,
        "items_without_expected": 1,
        "blank_rows_skipped": 1,
    }


def test_a_sheet_pandas_wrote_with_its_index_is_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """pandas' `to_csv` writes its index first under an empty name; that column was refused as
    '(empty): unknown column' with exit 2. Its cells are row labels: ignored, counted."""
    sheet = DATA / "csv" / "items_pandas_index.csv"
    out = tmp_path / "items"
    assert main(["import", "csv-items", str(sheet), "--out", str(out)]) == 0
    capsys.readouterr()
    items = load_items(out / "items.jsonl")
    assert [(i.id, i.input, i.expected, i.category) for i in items] == [
        ("p1", "What colour is the boat?", "blue", "colour"),
        ("p2", "Where do they live?", "Oslo", None),
    ]
    assert _report(out)["counts"] == {"items": 2, "index_cells_ignored": 2}
    assert main(["validate", str(sheet)]) == 0
    # a second unnamed column is still an unknown one
    twice = tmp_path / "twice.csv"
    twice.write_text(",input,\n0,a,b\n")
    assert main(["import", "csv-items", str(twice), "--out", str(tmp_path / "no")]) == 2
    assert "twice.csv:1: (empty): unknown column" in capsys.readouterr().err


def _answer(where: Path, dataset: str, memory: str, max_failure_rate: float = 0.1) -> api.RunReport:
    """Run the items of `dataset` against one memory holding `memory`, scored by icontains."""
    (where / "memories.jsonl").write_text(json.dumps({"id": "m1", "text": memory}) + "\n")
    suite = where / "suite.yaml"
    suite.write_text(
        f"name: sheet\nmax_failure_rate: {max_failure_rate}\nsubjects:\n"
        "  memory: {reference: {mode: lexical}}\ntasks:\n"
        f"  - {{name: answers, kind: expected-output, dataset: {dataset},"
        " memories: memories.jsonl, k: 1, evaluators: [icontains]}\n"
    )
    return api.run_suite(suite, store=False)


def test_csv_items_run_as_an_expected_output_task(tmp_path: Path) -> None:
    api.import_dataset("csv-items", DATA / "csv" / "items.csv", tmp_path)
    report = _answer(tmp_path, "items.jsonl", "the boat is blue", max_failure_rate=0.5)
    assert report.status == "completed"
    verdicts = {i.item_id: i.scores[0] for i in report.items}
    assert verdicts["c1"].value == 1.0  # the trimmed "blue" is in the top memory
    assert verdicts["row-3"].value == 0.0
    # an item the sheet gives no reference cannot be scored: a failure, not a 0
    assert verdicts["c4"].value is None
    assert "no expected value" in str(verdicts["c4"].error)


@pytest.mark.parametrize(
    ("body", "line", "words"),
    [
        ("", None, "file is empty"),
        ("id,expected\nc1,blue\n", 1, "no `input` column"),
        ("id,input,input\nc1,a,b\n", 1, "column appears twice"),
        ("id,input\nc1,\n", 2, "empty: each item needs its question"),
        ("id,input\nc1,a\nc1,b\n", 3, "id 'c1' repeats line 2"),
        ("id,input\n", None, "no items below the header"),
    ],
)
def test_malformed_csv_sheets(
    body: str, line: int | None, words: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sheet = tmp_path / "sheet.csv"
    sheet.write_text(body)
    assert main(["import", "csv-items", str(sheet), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert words in err
    assert f"sheet.csv:{line}:" in err if line is not None else "sheet.csv:" in err
    assert not (tmp_path / "out").exists()


def test_a_suite_and_validate_read_a_csv_sheet_directly(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sheet = tmp_path / "sheet.csv"
    sheet.write_text("input,expected\nwhat colour is the boat,blue\n")
    assert main(["validate", str(sheet)]) == 0
    assert "1 item" in capsys.readouterr().out
    report = _answer(tmp_path, "sheet.csv", "a blue boat")
    assert [(i.item_id, i.scores[0].value) for i in report.items] == [("row-2", 1.0)]


@pytest.mark.parametrize("command", ["import", "validate", "evaluate"])
def test_a_directory_of_beir_datasets_names_them_and_how_to_import_one(
    command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """BEIR ships CQADupStack as one BEIR dataset per forum (`cqadupstack/android/corpus.jsonl`,
    ...), scored one by one and averaged. Its root was 'no split test: there is no qrels/*.tsv'
    (import) or a memgauge dataset missing queries.jsonl and judgments.jsonl (validate,
    evaluate)."""
    root = tmp_path / "cqadupstack"
    for forum in ("android", "english"):
        shutil.copytree(BEIR, root / forum)
    args = {
        "import": ["import", "beir", str(root), "--out", str(tmp_path / "out")],
        "validate": ["validate", str(root)],
        "evaluate": [
            "evaluate",
            str(root),
            "-s",
            "lexical",
            "--no-store",
            "--out",
            str(tmp_path / "out"),
        ],
    }[command]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert f"{root}: a directory of BEIR datasets (android, english), not one" in err
    assert f"`memgauge import beir {root / 'android'} --out DIR`" in err
    assert "1 problem found" in err
    assert not (tmp_path / "out").exists()
    assert main(["import", "beir", str(root / "android"), "--out", str(tmp_path / "out")]) == 0


def test_an_excel_sheet_saved_with_semicolons_reads_as_its_comma_twin(tmp_path: Path) -> None:
    """Excel saves CSV with `;` between cells where the comma is the decimal mark; the sheet
    was refused: 'id;input;expected;category: unknown column', 'no `input` column'."""
    sheet = DATA / "csv" / "items_excel_semicolon.csv"
    items = load_items(sheet)
    assert [(i.id, i.input, i.expected, i.category) for i in items] == [
        ("q1", "How long is the walk?", "3,5 km", "distance"),
        ("q2", 'Who said "hi; there"?', "Ann", None),
    ]
    assert main(["import", "csv-items", str(sheet), "--out", str(tmp_path / "o")]) == 0
    notes = _report(tmp_path / "o")["notes"]
    assert isinstance(notes, list)
    assert any("';' between cells" in n for n in notes)
