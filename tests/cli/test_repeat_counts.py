"""A run asked `--repeat N` counts the dataset's items as items, and names each repeat by its
dataset id and index, in every place that shows them: `runs show` (text and JSON), the
viewer's run page, `memgauge report`, `evaluate`'s report.html, and `runs export` (jsonl,
json, csv, parquet), whose rows memgauge itself still reads (`judge rejudge`'s loader)."""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from starlette.testclient import TestClient

from memgauge import api
from memgauge.cli.main import main
from memgauge.data.records import repeat_id
from memgauge.view.app import create_app

DATA = Path(__file__).resolve().parents[1] / "data"
ITEMS = ["q0", "q1", "q2"]


@pytest.fixture(autouse=True)
def _subjects(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(DATA / "subjects"))


def _run(tmp_path: Path, capsys: pytest.CaptureFixture[str], *args: str) -> str:
    """A run of a three-item suite by two steady subjects; its id."""
    suite = {
        "name": "rep",
        "subjects": {
            name: {"python": {"target": "repeat_subjects:CoinAgent", "kwargs": {"seed": 7}}}
            for name in ("one", "two")
        },
        "tasks": [
            {
                "name": "t",
                "kind": "expected-output",
                "items": [{"id": i, "input": f"{i} about port", "expected": "8080"} for i in ITEMS],
                "evaluators": ["contains"],
            }
        ],
    }
    path = tmp_path / "suite.yaml"
    path.write_text(yaml.safe_dump(suite))
    assert main(["run", str(path), "--store", str(tmp_path / "r.db"), "--json", *args]) == 0
    run_id = json.loads(capsys.readouterr().out.strip().splitlines()[-1])["run_id"]
    assert isinstance(run_id, str)
    return run_id


def _cli(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    assert main(list(args)) == 0
    return capsys.readouterr().out


def _task_cells(html: str) -> list[str]:
    """The run page's tasks table: the task's row, cell by cell."""
    row = re.search(r"<tr><td>t</td><td>expected-output</td>(.*?)</tr>", html)
    assert row is not None
    return re.findall(r"<td[^>]*>(.*?)</td>", row.group(1))


def test_a_repeated_task_counts_the_datasets_items(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = str(tmp_path / "r.db")
    once = _run(tmp_path, capsys)
    twice = _run(tmp_path, capsys, "--repeat", "2")
    show = _cli(capsys, "runs", "show", twice, "--store", db)
    # the run's progress counts what was done: 3 items x 2 repeats x 2 subjects
    assert "12 completed, 0 failed, 0 to do, of 12" in show
    assert "task t (expected-output): 3 items x 2 repeats (6 item-repeats)\n" in show
    assert "task t (expected-output): 3 items\n" in _cli(
        capsys, "runs", "show", once, "--store", db
    )
    for run_id in (once, twice):
        shown = json.loads(_cli(capsys, "runs", "show", run_id, "--store", db, "--json"))
        assert [(t["task"], t["n_items"]) for t in shown["tasks"]] == [("t", 3)]
    with TestClient(create_app(db)) as client:
        page = client.get(f"/runs/{twice}")
    assert page.status_code == 200
    assert _task_cells(page.text)[-1] == "3"
    _cli(capsys, "report", twice, "--store", db, "--out", str(tmp_path / "run.html"))
    assert _task_cells((tmp_path / "run.html").read_text())[-1] == "3"


def test_evaluates_report_counts_a_repeated_querys_items_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """report.html drawn from the run's records (no store read): one query, asked twice by
    each of two systems, is one item."""
    out = tmp_path / "out"
    args = ["evaluate", str(DATA / "good" / "bundle.yaml"), "-s", "lexical", "-s", "hybrid"]
    code = main([*args, "--repeat", "2", "--out", str(out), "--store", str(tmp_path / "r.db")])
    capsys.readouterr()
    assert code == 0
    html = (out / "report.html").read_text()
    row = re.search(r"<tr><td>retrieval</td><td>retrieval</td>(.*?)</tr>", html)
    assert row is not None
    assert re.findall(r"<td[^>]*>(.*?)</td>", row.group(1))[-1] == "1"


def _export(capsys: pytest.CaptureFixture[str], db: str, run_id: str, fmt: str) -> str:
    return _cli(capsys, "runs", "export", run_id, "--store", db, "--format", fmt)


def test_export_rows_carry_the_datasets_item_id_and_the_repeat(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = str(tmp_path / "r.db")
    run_id = _run(tmp_path, capsys, "--repeat", "2")
    want = [
        (subject, repeat_id(item, r), item, r)
        for subject in ("one", "two")
        for item in ITEMS
        for r in range(2)
    ]
    keys = ("subject", "item_id", "source_id", "repeat")
    lines = [json.loads(x) for x in _export(capsys, db, run_id, "jsonl").splitlines()]
    assert [tuple(x[k] for k in keys) for x in lines] == want
    whole = json.loads(_export(capsys, db, run_id, "json"))["items"]
    assert [tuple(x[k] for k in keys) for x in whole] == want
    table = list(csv.DictReader(io.StringIO(_export(capsys, db, run_id, "csv"))))
    assert list(table[0])[:6] == ["run_id", "subject", "task", "item_id", "source_id", "repeat"]
    assert [(x["subject"], x["item_id"], x["source_id"], int(x["repeat"])) for x in table] == want
    pq = pytest.importorskip("pyarrow.parquet")
    path = tmp_path / "items.parquet"
    assert (
        main(["runs", "export", run_id, "--store", db, "--format", "parquet", "--out", str(path)])
        == 0
    )
    got = pq.read_table(path).select(list(keys)).to_pylist()
    assert [tuple(x[k] for k in keys) for x in got] == want
    assert str(pq.read_table(path).schema.field("repeat").type) == "int64"


def test_memgauge_reads_its_exports_with_and_without_the_new_fields(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`judge rejudge OUTPUTS` reads an export as it read one made before the rows carried
    `source_id` and `repeat`: one output per item-repeat, under the same ids."""
    db = str(tmp_path / "r.db")
    run_id = _run(tmp_path, capsys, "--repeat", "2")
    rows: list[dict[str, Any]] = [
        json.loads(x) for x in _export(capsys, db, run_id, "jsonl").splitlines()
    ]
    new, old = tmp_path / "new.jsonl", tmp_path / "old.jsonl"
    new.write_text("".join(json.dumps(r) + "\n" for r in rows))
    before = [{k: v for k, v in r.items() if k not in ("source_id", "repeat")} for r in rows]
    old.write_text("".join(json.dumps(r) + "\n" for r in before))
    ids = [f"{s}/t/{repeat_id(i, r)}" for s in ("one", "two") for i in ITEMS for r in range(2)]
    assert [o.id for o in api.load_judged(new)] == ids
    assert [o.id for o in api.load_judged(old)] == ids
