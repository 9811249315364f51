"""Malformed inputs of the write-path and A/B commands: exit 2, file and place named, no
traceback, nothing written."""

from __future__ import annotations

from pathlib import Path

import pytest

from memgauge.cli.main import main

BAD = Path(__file__).resolve().parents[1] / "data" / "bad"


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
        ["demo", "--out", "{blocked}/demo", "--no-store"],
    ],
)
def test_an_output_path_that_cannot_be_used_exits_2_without_a_traceback(
    command: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An output directory under an existing file is the user's path, not a bug in memgauge."""
    blocked = tmp_path / "a-file"
    blocked.write_text("not a directory\n", encoding="utf-8")
    sample = Path(__file__).resolve().parents[3] / "shared" / "datasets" / "memaudit-sample.json"
    args = [a.format(blocked=blocked, sample=sample) for a in command]
    code = main(args)
    err = capsys.readouterr().err
    assert code == 2, err
    assert "Traceback" not in err
    assert str(blocked) in err
    assert "check the path" in err
    assert blocked.read_text(encoding="utf-8") == "not a directory\n"
