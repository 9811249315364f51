"""The other side of the refusals of outputs (tests/cli/test_bad_inputs.py): what a user
legitimately gives is not refused. A device two outputs both name, a file beside the input that
is not the input, a rerun over the command's own outputs."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from memgauge.cli.main import main

DATA = Path(__file__).resolve().parents[1] / "data"


def test_two_outputs_sent_to_dev_null_are_not_one_file_overwritten(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`evaluate --run-json /dev/null --junit /dev/null` (a CI job that wants neither today)
    was refused as two outputs naming one file: a device is written, never replaced."""
    args = ["evaluate", str(DATA / "good" / "bundle.yaml"), "-s", "lexical", "--quiet"]
    args += ["--out", str(tmp_path / "report"), "--store", str(tmp_path / "r.db")]
    assert main([*args, "--run-json", "/dev/null", "--junit", "/dev/null"]) == 0
    assert "both name" not in capsys.readouterr().err
    assert (tmp_path / "report" / "result.json").is_file()


def test_an_import_into_a_directory_under_its_source_runs_again(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`import beir D --out D/native`, run a second time, was refused: "--out D/native would
    replace D/native/dataset.yaml with the import, and it is what the import reads". A BEIR
    directory's import reads corpus.jsonl, queries.jsonl and qrels/, never D/native: the
    rerun writes its own files again, the same."""
    src = tmp_path / "mini"
    shutil.copytree(DATA / "beir" / "mini", src)
    args = ["import", "beir", str(src), "--out", str(src / "native"), "--split", "dev"]
    assert main(args) == 0
    first = {p.name: p.read_bytes() for p in (src / "native").iterdir()}
    assert main(args) == 0, capsys.readouterr().err
    assert {p.name: p.read_bytes() for p in (src / "native").iterdir()} == first


def test_ab_create_run_again_keeps_its_test_and_its_pairs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """docs/commands.md's A/B block, run a second time in the same directory (a notebook or CI
    job run again), stopped at its first line: "an A/B test called 'reranker' exists; pick
    another name", though `ab add` of the same file adds nothing. The test of the same
    settings is kept, its pairs as they were; one of other settings is still refused."""
    db = str(tmp_path / "r.db")
    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text(
        '{"query_id": "q1", "control": 0.5, "treatment": 1.0}\n'
        '{"query_id": "q2", "control": 1.0, "treatment": 1.0}\n',
        encoding="utf-8",
    )
    for _ in range(2):
        assert main(["ab", "create", "reranker", "--delta", "0.05", "--store", db]) == 0
        assert main(["ab", "add", "reranker", str(pairs), "--store", db]) == 0
    out = capsys.readouterr().out
    assert out.startswith("created A/B test 'reranker'"), out
    assert "\nkept A/B test 'reranker' on MRR (sprt): delta 0.05" in out, out
    assert "(it exists with these settings, its pairs kept)" in out
    assert main(["ab", "create", "reranker", "--delta", "0.1", "--store", db]) == 2
    # named by its flag on the command line (it said `delta 0.05`, the Python keyword)
    assert "exists with --delta 0.05, not 0.1; pick another name" in capsys.readouterr().err
    assert main(["ab", "status", "reranker", "--store", db, "--json"]) == 0
    (report,) = json.loads(capsys.readouterr().out)
    assert report["n_pairs"] == 2


def test_evaluate_keeps_its_dataset_directory_and_reruns_into_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`evaluate D --run-json D/queries.jsonl` replaced the dataset's queries with the run's
    rankings (exit 0): a directory argument's files were not among those the command reads.
    Its part files are now; its other files are not, so `evaluate D --out D`, run again over
    the reports it wrote there, still runs."""
    from memgauge.data.demo import demo_dataset
    from memgauge.data.io import save_retrieval_dataset

    ds = tmp_path / "ds"
    save_retrieval_dataset(demo_dataset(), ds)
    queries = (ds / "queries.jsonl").read_bytes()
    args = ["evaluate", str(ds), "-s", "lexical", "--quiet", "--no-store"]
    assert main([*args, "--out", str(ds / "reports"), "--run-json", str(ds / "queries.jsonl")]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert f"--run-json names {ds / 'queries.jsonl'}, the DATASET the command reads" in err, err
    assert (ds / "queries.jsonl").read_bytes() == queries
    for _ in range(2):
        assert main([*args, "--out", str(ds), "--run-json", str(ds / "run.json")]) == 0
    assert (ds / "result.json").is_file()
    assert (ds / "queries.jsonl").read_bytes() == queries


def test_bench_systems_keeps_a_dataset_directory_it_reads(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`bench systems --dataset D --write-suite D/queries.jsonl` replaced the dataset's
    queries with the suite (exit 0), as `evaluate D --run-json D/queries.jsonl` did; a suite
    written beside D's files is still written."""
    from memgauge.data.demo import demo_dataset
    from memgauge.data.io import save_retrieval_dataset

    ds = tmp_path / "ds"
    save_retrieval_dataset(demo_dataset(), ds)
    queries = (ds / "queries.jsonl").read_bytes()
    args = ["bench", "systems", "--dataset", str(ds), "--no-discover", "-s", "lexical"]
    assert main([*args, "--no-store", "--write-suite", str(ds / "queries.jsonl")]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert f"--write-suite names {ds / 'queries.jsonl'}, the --dataset the" in err, err
    assert (ds / "queries.jsonl").read_bytes() == queries
    # beside D's files, not one of them: written, and again over the suite written there
    for _ in range(2):
        assert main([*args, "--no-store", "--write-suite", str(ds / "suite.yaml")]) == 0
    assert "dataset" in (ds / "suite.yaml").read_text(encoding="utf-8")
    assert (ds / "queries.jsonl").read_bytes() == queries
