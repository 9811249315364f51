"""ranx's files (`Qrels.save` / `Run.save`, tests/data/ranx/README.md): its JSON dicts
`{qid: {docid: value}}`, which `evaluate --run-json` writes too, and its TREC files. metrics
refused the JSON ones ("expected 4 columns 'qid iter docid grade', got 8", exit 2)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memgauge.cli.main import main

pytrec_eval = pytest.importorskip("pytrec_eval")

RANX = Path(__file__).resolve().parents[1] / "data" / "ranx"
#: memgauge's name -> trec_eval's, scored on trec_eval's conventions
NAMES = {"AP": "map", "nDCG@10": "ndcg_cut_10", "P@5": "P_5", "RR": "recip_rank"}


def _scores(
    qrels: Path, run: Path, capsys: pytest.CaptureFixture[str]
) -> dict[str, dict[str, float]]:
    flags = [arg for name in NAMES for arg in ("-m", name)]
    argv = ["metrics", "--conventions", "trec_eval", str(qrels), str(run), *flags, "-q", "--json"]
    assert main(argv) == 0
    got: dict[str, dict[str, float]] = json.loads(capsys.readouterr().out)["per_query"]
    return got


def test_ranx_json_files_score_as_its_trec_files_and_as_pytrec_eval(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from_json = _scores(RANX / "qrels.json", RANX / "run.json", capsys)
    assert from_json == _scores(RANX / "qrels.trec", RANX / "run.trec", capsys)
    qrels = json.loads((RANX / "qrels.json").read_text())
    run = json.loads((RANX / "run.json").read_text())
    want = pytrec_eval.RelevanceEvaluator(qrels, set(NAMES.values())).evaluate(run)
    for ours, theirs in NAMES.items():
        for qid, values in want.items():
            assert from_json[qid][ours] == pytest.approx(values[theirs]), (qid, ours)


def test_a_json_file_of_another_shape_is_refused_by_its_pairs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    qrels = tmp_path / "qrels.json"
    qrels.write_text('{"q1": {"d1": 1, "d1": 2, "d2": 1.5, "d3": true}, "q2": [], "q3": {}}')
    run = tmp_path / "run.json"
    run.write_text('{"q1": {"d1": "0.5", "d2": NaN}}')
    assert main(["metrics", str(qrels), str(RANX / "run.json")]) == 2
    err = capsys.readouterr().err
    assert f"{qrels}: q1.d1: is given twice" in err
    assert f"{qrels}: q1.d2: grade must be an integer, got a number 1.5" in err
    assert f"{qrels}: q1.d3: grade must be an integer, got a boolean" in err
    assert f"{qrels}: q2: must be an object {{docid: value}}, got a list" in err
    assert "q3" not in err  # a query given {} holds no judgment, as no TREC line
    assert main(["metrics", str(RANX / "qrels.json"), str(run)]) == 2
    err = capsys.readouterr().err
    assert f"{run}: q1.d1: score must be a number, got a string" in err
    assert f"{run}: q1.d2: NaN is not a number" in err
    run.write_text('{"q1": {}}')
    assert main(["metrics", str(RANX / "qrels.json"), str(run)]) == 2
    assert f"{run}: no document: every query's object is empty" in capsys.readouterr().err
    run.write_text('{"q1": {"d1": 0.5}')
    assert main(["metrics", str(RANX / "qrels.json"), str(run)]) == 2
    assert f"{run}:1: not valid JSON" in capsys.readouterr().err


def test_ranx_binary_files_are_named_with_what_to_save_instead(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """ranx also saves to `.parquet` (`to_dataframe().to_parquet`) and a run to `.lz4` (an LZ4
    frame of CBOR); trec_eval and ir_measures read neither, and memgauge said 'not UTF-8' or
    'expected 6 columns, got 1'."""
    pd = pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    run = json.loads((RANX / "run.json").read_text())
    parquet = tmp_path / "run.parquet"
    rows = [(q, d, s) for q, docs in run.items() for d, s in docs.items()]
    pd.DataFrame(rows, columns=["q_id", "doc_id", "score"]).to_parquet(parquet, index=False)
    lz4 = tmp_path / "run.lz4"  # an LZ4 frame begins with its magic number, 0x184D2204
    lz4.write_bytes(b"\x04\x22\x4d\x18\x64\x40\xa7" + bytes(range(40)))
    for path, what in ((parquet, "a Parquet file"), (lz4, "an LZ4 frame")):
        assert main(["metrics", str(RANX / "qrels.json"), str(path)]) == 2
        err = capsys.readouterr().err
        assert f"{path}: {what} (ranx's" in err
        assert "save it to a .json or .trec path instead" in err


def test_json_lines_of_records_read_as_the_same_trec_lines(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """ir_datasets' `export DATASET qrels --format jsonl` (`JsonlExporter`: one `{query_id,
    doc_id, relevance, iteration}` a line) and `scoreddocs --format jsonl` (`{query_id, doc_id,
    score}`), and a memgauge dataset's judgments.jsonl (`{query_id, memory_id, grade}`): metrics
    said 'not valid JSON: Extra data' on line 2 (then, 01b6aea3..fdd75a24, to export TREC)."""
    qrels = json.loads((RANX / "qrels.json").read_text())
    run = json.loads((RANX / "run.json").read_text())
    irds_qrels = tmp_path / "qrels.jsonl"
    irds_qrels.write_text(
        "".join(
            json.dumps({"query_id": q, "doc_id": d, "relevance": g, "iteration": "0"}) + "\n"
            for q, docs in qrels.items()
            for d, g in docs.items()
        )
    )
    judgments = tmp_path / "judgments.jsonl"  # as api.save_dataset writes a dataset's
    judgments.write_text(
        "".join(
            json.dumps({"query_id": q, "memory_id": d, "grade": g}) + "\n"
            for q, docs in qrels.items()
            for d, g in docs.items()
        )
    )
    scoreddocs = tmp_path / "scoreddocs.jsonl"
    scoreddocs.write_text(
        "".join(
            json.dumps({"query_id": q, "doc_id": d, "score": s}) + "\n"
            for q, docs in run.items()
            for d, s in docs.items()
        )
    )
    want = _scores(RANX / "qrels.trec", RANX / "run.trec", capsys)
    assert _scores(irds_qrels, scoreddocs, capsys) == want
    assert _scores(judgments, RANX / "run.trec", capsys) == want
    bad = tmp_path / "bad.jsonl"
    bad.write_text(
        '{"query_id": "q1", "doc_id": "d1", "relevance": 1}\n'
        '{"query_id": "q1", "doc_id": "d1", "relevance": 2}\n'
        '{"query_id": "q2", "doc_id": 7, "relevance": 1.5}\n'
        '{"query_id": "q3", "doc_id": "d3"}\n'
    )
    assert main(["metrics", str(bad), str(RANX / "run.json")]) == 2
    err = capsys.readouterr().err
    assert f"{bad}:2: query_id: (q1, d1) is given twice" in err
    assert f"{bad}:3: doc_id: needs a non-empty string id (a number)" in err
    assert f"{bad}:4: relevance: missing" in err


def test_a_json_file_nested_too_deep_is_refused_not_a_crash(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """json.loads raises RecursionError past its depth: metrics exited 70 on such a file."""
    deep = tmp_path / "qrels.json"
    deep.write_text('{"q1": ' + "[" * 200_000 + "]" * 200_000 + "}")
    assert main(["metrics", str(deep), str(RANX / "run.json")]) == 2
    assert f"{deep}: not valid JSON: nested too deep" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("qrels.json", '{"q1": {"d1": 1' + "0" * 5000 + "}}"),
        (
            "qrels.jsonl",
            '{"query_id": "q1", "doc_id": "d1", "relevance": 1}\n'
            '{"query_id": "q1", "doc_id": "d2", "relevance": 1' + "0" * 5000 + "}",
        ),
    ],
    ids=["one-document", "json-lines"],
)
def test_a_json_number_of_more_digits_than_python_reads_is_refused_not_a_crash(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, text: str
) -> None:
    """json.loads raises a plain ValueError (not a JSONDecodeError) on an integer of more than
    4300 digits: metrics exited 70 on such a file."""
    bad = tmp_path / name
    bad.write_text(text + "\n")
    assert main(["metrics", str(bad), str(RANX / "run.json")]) == 2
    err = capsys.readouterr().err
    where = f"{bad}:2" if name.endswith(".jsonl") else f"{bad}"
    assert f"{where}: not valid JSON: a number of more than 4300 digits" in err


def test_a_json_run_score_past_the_largest_double_is_infinity_as_in_a_trec_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A score of 400 digits is an infinity in a TREC run (`parse_run_score`); in a JSON run
    float() of it raised OverflowError and metrics exited 70."""
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 d1 1\nq1 0 d2 0\n")
    big = "1" + "0" * 400
    json_run = tmp_path / "run.json"
    json_run.write_text('{"q1": {"d1": ' + big + ', "d2": 1}}')
    trec_run = tmp_path / "run.txt"
    trec_run.write_text(f"q1 Q0 d1 1 {big} t\nq1 Q0 d2 2 1 t\n")
    assert _scores(qrels, json_run, capsys) == _scores(qrels, trec_run, capsys)


def test_a_json_list_of_records_reads_as_its_json_lines(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The records of judgments.jsonl as one JSON list, which `memgauge validate` reads as
    judgments: metrics read it as a TREC file ("expected 4 columns ... got 12"). It now scores
    as the same records a line do, and a bad record is named by its place."""
    qrels = json.loads((RANX / "qrels.json").read_text())
    run = json.loads((RANX / "run.json").read_text())
    judgments = tmp_path / "judgments.json"
    judgments.write_text(
        json.dumps(
            [
                {"query_id": q, "memory_id": d, "grade": g}
                for q, docs in qrels.items()
                for d, g in docs.items()
            ],
            indent=1,
        )
    )
    results = tmp_path / "results.json"
    results.write_text(
        json.dumps(
            [
                {"query_id": q, "doc_id": d, "score": s}
                for q, docs in run.items()
                for d, s in docs.items()
            ]
        )
    )
    assert main(["validate", str(judgments)]) == 0
    capsys.readouterr()
    want = _scores(RANX / "qrels.trec", RANX / "run.trec", capsys)
    assert _scores(judgments, results, capsys) == want
    bad = tmp_path / "bad.json"
    bad.write_text(
        json.dumps(
            [
                {"query_id": "q1", "doc_id": "d1", "relevance": 1},
                {"query_id": "q1", "doc_id": "d1", "relevance": 2},
                {"query_id": "q2", "doc_id": 7, "relevance": 1},
                {"query_id": "q3", "doc_id": "d3"},
                5,
            ]
        )
    )
    assert main(["metrics", str(bad), str(RANX / "run.json")]) == 2
    err = capsys.readouterr().err
    assert f"{bad}: [1].query_id: (q1, d1) is given twice" in err
    assert f"{bad}: [2].doc_id: needs a non-empty string id (a number)" in err
    assert f"{bad}: [3].relevance: missing" in err
    assert f"{bad}: [4]: must be an object, got a number" in err


def test_a_json_list_not_starting_with_a_record_is_refused_as_json_not_as_trec(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A JSON list whose first element is not an object (`[]`, a list of rows, `[1, {...}]`)
    was read as TREC columns ("expected 4 columns 'qid iter docid grade', got 1"). It is
    refused as the JSON list it is, naming the element; a TREC qid `[q1]` is still TREC."""
    rows = RANX.parents[0] / "bad" / "judgments_list_of_rows.json"
    assert main(["metrics", str(rows), str(RANX / "run.json")]) == 2
    err = capsys.readouterr().err
    assert f"{rows}: [0]: must be an object, got a list" in err
    assert "columns" not in err
    empty = tmp_path / "empty.json"
    empty.write_text("[ ]\n")
    assert main(["metrics", str(RANX / "qrels.json"), str(empty)]) == 2
    assert f"{empty}: an empty list: give at least one record" in capsys.readouterr().err
    first = tmp_path / "first.json"
    first.write_text('[1, {"query_id": "q1", "doc_id": "d1", "score": 1}]')
    assert main(["metrics", str(RANX / "qrels.json"), str(first)]) == 2
    assert f"{first}: [0]: must be an object, got a number" in capsys.readouterr().err
    trec = tmp_path / "qrels.txt"
    trec.write_text("[q1] 0 d1 1\n")
    assert main(["metrics", str(trec), str(RANX / "run.json"), "--json"]) == 0


def test_a_grade_of_thousands_of_digits_is_named_shortened_not_written_out(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A grade of 4300 digits (JSON) was written out whole in the message, 4,500 characters;
    one of 5000 (TREC) passed on Python's own advice, `sys.set_int_max_str_digits()`."""
    qrels = tmp_path / "qrels.json"
    qrels.write_text(f'[{{"query_id": "q1", "doc_id": "d1", "relevance": {"9" * 4300}}}]')
    assert main(["metrics", str(qrels), str(RANX / "run.json")]) == 2
    err = capsys.readouterr().err
    assert "grade 999999999999...(4300 digits) is above 1023" in err
    assert len(err) < 500
    trec = RANX.parent / "bad" / "qrels_grade_5000_digits.txt"
    assert main(["metrics", str(trec), str(RANX / "run.json")]) == 2
    err = capsys.readouterr().err
    assert f"{trec}:2: grade: '999999999999...(5000 digits)' is out of range" in err
    assert "set_int_max_str_digits" not in err


def test_json_lines_of_records_keyed_otherwise_say_which_keys_a_record_needs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """JSON lines with PyTerrier's keys, or of one ranx object a line, were read as one JSON
    document: "not valid JSON: Extra data" on line 2, which says nothing of what to write."""
    bad = RANX.parent / "bad" / "qrels_pyterrier_keys.json"
    assert main(["metrics", str(bad), str(RANX / "run.json")]) == 2
    err = capsys.readouterr().err
    assert f"{bad}:2: a second JSON value: JSON lines are read as one record a line with" in err
    assert "query_id, doc_id (or memory_id) and relevance or grade; the first line has qid" in err
    run = tmp_path / "run.json"
    run.write_text('{"q1": {"d1": 1.5}}\n{"q2": {"d2": 0.5}}\n')
    assert main(["metrics", str(RANX / "qrels.json"), str(run)]) == 2
    err = capsys.readouterr().err
    assert f"{run}:2: a second JSON value" in err
    assert "and score; the first line has q1. Rename those keys, or write one object" in err
