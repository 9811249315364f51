"""`memgauge runs export ID --format parquet`: the CSV's table with typed columns, read back
with pyarrow; without pyarrow, exit 3 saying what to install."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from memgauge.cli.main import main

pq = pytest.importorskip("pyarrow.parquet")


def _run(tmp_path: Path, capsys: pytest.CaptureFixture[str], recall_suite: Any) -> tuple[str, str]:
    items = [
        {"id": "i0", "input": "what colour is the boat", "expected": "blue", "category": "c1"},
        {"id": "i1", "input": "where do they live", "expected": ["Oslo", "Bergen"]},
        {"id": "i2", "input": "nothing matches zzz", "expected": "none"},
    ]
    memories = [{"id": "m0", "text": "the boat is blue"}, {"id": "m1", "text": "they live in Oslo"}]
    path = recall_suite(items, memories, ["exact", "icontains"])
    db = str(tmp_path / "r.db")
    assert main(["run", str(path), "--store", db, "--json"]) == 0
    run_id = json.loads(capsys.readouterr().out.strip().splitlines()[-1])["run_id"]
    return run_id, db


def test_parquet_holds_every_item_with_typed_columns(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], recall_suite: Any
) -> None:
    run_id, db = _run(tmp_path, capsys, recall_suite)
    out = tmp_path / "items.parquet"
    assert (
        main(["runs", "export", run_id, "--store", db, "--format", "parquet", "--out", str(out)])
        == 0
    )
    assert f"wrote {out} (3 items)" in capsys.readouterr().err
    assert main(["runs", "export", run_id, "--store", db, "--format", "jsonl"]) == 0
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines()]

    table = pq.read_table(out)
    types = {f.name: str(f.type) for f in table.schema}
    assert types["attempts"] == "int64"
    assert types["score"] == types["exact"] == types["icontains"] == "double"
    assert types["exact.passed"] == "bool"
    assert types["exact.reason"] == types["output"] == "string"
    meta = json.loads(table.schema.metadata[b"memgauge.run"])
    assert meta["run_id"] == run_id
    assert meta["status"] == "completed"

    rows = {r["item_id"]: r for r in table.to_pylist()}
    assert set(rows) == {x["item_id"] for x in lines}
    for item in lines:
        row = rows[item["item_id"]]
        assert row["status"] == item["status"]
        assert row["category"] == item["category"]  # None stays null
        assert row["input"] == item["input"]["text"]
        expected = item["expected"]
        assert row["expected"] == (expected if isinstance(expected, str) else json.dumps(expected))
        for score in item["scores"]:
            assert row[score["evaluator"]] == score["value"]
            assert row[f"{score['evaluator']}.passed"] is score["passed"]
    assert rows["i0"]["category"] == "c1"
    assert rows["i1"]["category"] is None


def test_parquet_without_pyarrow_exits_3_and_says_what_to_install(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    recall_suite: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    run_id, db = _run(tmp_path, capsys, recall_suite)
    monkeypatch.setitem(sys.modules, "pyarrow", None)  # `import pyarrow` raises ImportError
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)
    out = tmp_path / "items.parquet"
    code = main(["runs", "export", run_id, "--store", db, "--format", "parquet", "--out", str(out)])
    assert code == 3
    assert "pip install 'memgauge[parquet]'" in capsys.readouterr().err
    assert not out.exists()


def test_parquet_to_stdout_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], recall_suite: Any
) -> None:
    run_id, db = _run(tmp_path, capsys, recall_suite)
    assert main(["runs", "export", run_id, "--store", db, "--format", "parquet"]) == 2
    assert "give --out FILE.parquet" in capsys.readouterr().err
