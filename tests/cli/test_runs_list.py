"""`memgauge runs list` says what started each run: a suite file (`run`), `evaluate`,
`extraction`, `operations` (and `demo`, `audit`), in its table and in `--json`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from memgauge.cli.main import main
from memgauge.data.demo import demo_dataset
from memgauge.data.io import save_retrieval_dataset

DATA = Path(__file__).resolve().parents[1] / "data"


def _suite(tmp_path: Path) -> Path:
    items = [{"id": f"q{i}", "input": f"question {i}", "expected": "8080"} for i in range(3)]
    agent = {
        "python": {
            "target": "lookup_agents:LookupAgent",
            "kwargs": {"answers": {"question": "8080"}},
        }
    }
    path = tmp_path / "suite.yaml"
    path.write_text(
        yaml.safe_dump(
            {
                "name": "kinds",
                "subjects": {"agent": agent},
                "tasks": [
                    {
                        "name": "t",
                        "kind": "expected-output",
                        "items": items,
                        "evaluators": ["contains"],
                    }
                ],
            }
        )
    )
    return path


def test_runs_list_shows_what_started_each_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.syspath_prepend(str(DATA / "subjects"))
    db = str(tmp_path / "r.db")
    data = tmp_path / "demo"
    save_retrieval_dataset(demo_dataset(), data)
    commands = {
        "suite": ["run", str(_suite(tmp_path)), "--store", db],
        "evaluate": [
            *("evaluate", str(data), "-s", "lexical", "-m", "RR@10", "--quiet"),
            *("--out", str(tmp_path / "out"), "--store", db),
        ],
        "extraction": [
            *("extraction", str(DATA / "extraction" / "cases.json"), "--store", db),
            *("--extractor", "{python: {target: 'extractors:NaiveExtractor'}}"),
            *("--match", "exact", "--no-targets"),
        ],
        "operations": [
            *("operations", str(DATA / "operations" / "cases.json"), "--store", db),
            *("--decider", "{heuristic: {}}", "--no-targets"),
        ],
    }
    for argv in commands.values():
        assert main(argv) == 0, argv
    capsys.readouterr()

    assert main(["runs", "list", "--store", db, "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    # newest first: the order the commands ran, reversed
    assert [r["kind"] for r in rows] == list(reversed(commands))
    by_kind = {r["kind"]: r for r in rows}
    assert by_kind["suite"]["suite"] == "kinds"
    assert by_kind["evaluate"]["status"] == "completed"

    assert main(["runs", "list", "--store", db]) == 0
    table = capsys.readouterr().out
    header = next(line for line in table.splitlines() if "run" in line and "status" in line)
    assert "kind" in header
    for row in rows:
        (line,) = [line for line in table.splitlines() if row["run_id"] in line]
        assert f" {row['kind']} " in line
