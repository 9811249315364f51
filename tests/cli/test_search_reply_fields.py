"""A search hit whose fields are of the wrong type (docs/contracts.md: `channels` a list of
names, ...) fails its query with a message naming the hit, the field and what to give, through
`memgauge evaluate`: never read as something else and scored."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.helpers import run_memgauge

SUBJECTS = Path(__file__).resolve().parents[1] / "data" / "subjects"


@pytest.fixture(scope="session")
def dataset(demo_dir: Path) -> Path:
    return demo_dir


@pytest.mark.parametrize(
    ("target", "says"),
    [
        (
            "ChannelWordMemory",
            "has 'channels' 'lexical', a str: give a list of the channels' names",
        ),
        (
            "NoneIdMemory",
            "search hit 1 has 'id' None, a NoneType: give the id of the memory as it was "
            "ingested (str)",
        ),
        ("TextScoreMemory", ".0', a str: give a number, or no 'score'"),
        ("ListMetadataMemory", "has 'metadata' ['pinned'], a list: give a dict, or no 'metadata'"),
    ],
)
def test_a_hit_field_of_the_wrong_type_fails_each_query_naming_it(
    target: str, says: str, dataset: Path, tmp_path: Path
) -> None:
    out = tmp_path / "o"
    args = ["evaluate", str(dataset), "-s", f"python:mistakes:{target}@mine", "--no-store"]
    done = run_memgauge(*args, "--out", str(out), "--quiet", env={"PYTHONPATH": str(SUBJECTS)})
    assert done.returncode == 4, done.stdout[-2000:] + done.stderr[-2000:]
    assert "Traceback" not in done.stderr
    (system,) = json.loads((out / "result.json").read_text())["systems"]
    errors = [q["error"] for q in system["per_query"]]
    assert errors
    assert all(says in e for e in errors), errors[0]
    assert system["metrics"]["nDCG@10"]["value"] is None  # n/a, never a number


def test_numpy_scores_are_kept_as_numbers(dataset: Path, tmp_path: Path) -> None:
    """A vector library's float32 score is a number: kept (in `runs export`), not dropped."""
    db = str(tmp_path / "r.db")
    args = ["evaluate", str(dataset), "-s", "python:mistakes:NumpyScoreMemory@mine"]
    done = run_memgauge(
        *args, "--store", db, "--out", str(tmp_path / "o"), env={"PYTHONPATH": str(SUBJECTS)}
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    (run_id,) = [x.split()[2] for x in done.stdout.splitlines() if x.startswith("recorded run ")]
    export = tmp_path / "rows.jsonl"
    assert run_memgauge("runs", "export", run_id, "--store", db, "--format", "jsonl", "--out",
                        str(export)).returncode == 0  # fmt: skip
    text = export.read_text()
    assert '"score": 2.0' in text, text[:2000]


def test_a_search_result_holding_dicts_is_read_as_the_same_list_of_dicts(
    dataset: Path, tmp_path: Path
) -> None:
    """memgauge's SearchResult with dicts for Hits scores as the list of those dicts does,
    not 'AttributeError: dict object has no attribute id' on every query."""
    values = {}
    for target in ("DictsInAResultMemory", "TextlessMemory"):
        out = tmp_path / target
        args = ["evaluate", str(dataset), "-s", f"python:mistakes:{target}@mine", "--no-store"]
        done = run_memgauge(*args, "--out", str(out), env={"PYTHONPATH": str(SUBJECTS)})
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
        (system,) = json.loads((out / "result.json").read_text())["systems"]
        values[target] = system["metrics"]["nDCG@10"]["value"]
    assert values["DictsInAResultMemory"] == values["TextlessMemory"] is not None
