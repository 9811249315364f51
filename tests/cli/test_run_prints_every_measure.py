"""`memgauge run` prints a line for every run-level number `runs show` shows: the evaluators'
rows, the aggregates' measures the gate decides on, and their secondary ones (seed 002's
agent-memory metrics of a retrieval task), each with the value, CI and n the run stored."""

from __future__ import annotations

import json
from pathlib import Path

from tests.helpers import last_json
from tests.one_value import cli, disagreements, measures_of, run_views

TASK = "recall"


def test_run_prints_a_line_for_each_secondary_measure(demo_dir: Path, tmp_path: Path) -> None:
    """A retrieval task's agent-memory metrics are secondary (the gate shows them unless a
    target names them): with no primary measure beyond the evaluators' rows, `run` printed no
    line for any of them, nor a count of them, while `runs show` drew every one."""
    suite = {
        "name": "secondary",
        "subjects": {"lexical": {"reference": {"mode": "lexical"}}},
        "tasks": [
            {
                "name": TASK,
                "kind": "retrieval",
                "dataset": str(demo_dir),
                "evaluators": [{"retrieval": "nDCG@10"}],
            }
        ],
    }
    path = tmp_path / "suite.json"
    path.write_text(json.dumps(suite))
    db = str(tmp_path / "r.db")
    text = cli(["run", str(path), "--store", db, "--json"])
    shown = last_json(cli(["runs", "show", last_json(text)["run_id"], "--store", db, "--json"]))
    stored = measures_of(shown["summary"], "ir")
    secondary = sorted({m for _, m in stored} - {"nDCG@10"})
    assert "constitutional_surfacing@5" in secondary
    reference = {k: v for k, v in stored.items() if k[1] in secondary}
    views = run_views(text, "run", TASK, secondary)
    assert disagreements(reference, views) == []
