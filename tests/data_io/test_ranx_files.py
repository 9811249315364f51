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


def test_ir_datasets_json_lines_say_to_export_trec(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """ir_datasets' `export DATASET qrels --format jsonl` (`JsonlExporter`: one `{query_id,
    doc_id, relevance, iteration}` a line) was 'not valid JSON: Extra data' on line 2, or
    'must be an object {docid: value}, got a string' when it held one judgment."""
    lines = [
        {"query_id": "1048585", "doc_id": "7187158", "relevance": 1, "iteration": "0"},
        {"query_id": "2", "doc_id": "1000", "relevance": 1, "iteration": "0"},
    ]
    for n in (2, 1):
        qrels = tmp_path / f"qrels{n}.jsonl"
        qrels.write_text("".join(json.dumps(line) + "\n" for line in lines[:n]))
        assert main(["metrics", str(qrels), str(RANX / "run.json")]) == 2
        err = capsys.readouterr().err
        assert f"{qrels}: JSON lines of records ({{query_id, doc_id, relevance}}" in err
        assert "export with --format trec" in err


def test_a_json_file_nested_too_deep_is_refused_not_a_crash(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """json.loads raises RecursionError past its depth: metrics exited 70 on such a file."""
    deep = tmp_path / "qrels.json"
    deep.write_text('{"q1": ' + "[" * 200_000 + "]" * 200_000 + "}")
    assert main(["metrics", str(deep), str(RANX / "run.json")]) == 2
    assert f"{deep}: not valid JSON: nested too deep" in capsys.readouterr().err
