"""Issue 17: `memgauge optimize` takes `--workers N` and `--executor` like run and evaluate, and
each candidate's run goes in shards on one pool for the study; the runs it stores score exactly
as a serial study's do."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
import yaml
from tests.shards.runs_alike import summary_view

from memgauge import api
from memgauge.cli.main import main


def _suite(tmp_path: Path, dataset: Path, pids: Path) -> Path:
    pids.mkdir()
    memory = {"python": {"target": "shard_subjects:PidMemory", "kwargs": {"pids": str(pids)}}}
    suite = {
        "name": "tune",
        "subjects": {"memory": memory},
        "tasks": [
            {
                "name": "recall",
                "kind": "retrieval",
                "dataset": str(dataset),
                "k": 10,
                "evaluators": [{"retrieval": "Recall@5"}, {"retrieval": "RR@5"}],
                "optimization": {
                    "subject": "memory",
                    "objective": "recall/Recall@5",
                    "strategy": "best-of-n",
                    "candidates": 2,
                    "maxIterations": 2,
                    "holdout": 0.3,
                    "seed": 3,
                    "space": {"k": "int:5..10"},
                },
            }
        ],
    }
    path = tmp_path / "suite.yaml"
    path.write_text(yaml.safe_dump(suite, sort_keys=False))
    return path


def _optimize(
    path: Path, db: Path, capsys: pytest.CaptureFixture[str], *extra: str
) -> dict[str, Any]:
    assert main(["optimize", str(path), "--store", str(db), "--json", *extra]) == 0
    data: dict[str, Any] = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    return data


def _runs(data: dict[str, Any], db: Path) -> list[Any]:
    ids = [i["run_id"] for i in data["iterations"]]
    ids += [data["holdout"]["best_run_id"], data["holdout"]["baseline_run_id"]]
    return [api.read_run(i, store=db) for i in ids if i]


def test_optimize_with_workers_stores_the_runs_a_serial_study_stores(
    locomo_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pids = tmp_path / "pids"
    path = _suite(tmp_path, locomo_dir, pids)
    serial = _optimize(path, tmp_path / "serial.db", capsys)
    assert {p.name for p in pids.iterdir()} == {str(os.getpid())}  # all in this process
    for p in pids.iterdir():
        p.unlink()
    sharded = _optimize(path, tmp_path / "sharded.db", capsys, "--workers", "2")
    # the candidates' corpora went to worker processes (one pool for the study: at most 2)
    workers = {p.name for p in pids.iterdir()}
    assert str(os.getpid()) not in workers
    assert 1 <= len(workers) <= 2
    keys = ("step", "candidate", "params", "score", "ci_low", "ci_high", "accepted")
    assert [{k: i[k] for k in keys} for i in sharded["iterations"]] == [
        {k: i[k] for k in keys} for i in serial["iterations"]
    ]
    assert len(serial["iterations"]) >= 3  # the baseline and at least one step of two
    assert sharded["stopped_because"] == serial["stopped_because"]
    assert sharded["best"]["score"] == serial["best"]["score"]
    assert sharded["holdout"]["delta"] == serial["holdout"]["delta"]
    for one, two in zip(
        _runs(serial, tmp_path / "serial.db"), _runs(sharded, tmp_path / "sharded.db"), strict=True
    ):
        assert one.summary is not None
        assert two.summary is not None
        assert summary_view(two.summary) == summary_view(one.summary)


def test_optimize_takes_workers_and_executor(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["optimize", "run", "--help"]) == 0
    text = capsys.readouterr().out
    assert "--workers" in text
    assert "--executor" in text
