"""A study keeps going through a bad candidate (issue 27 item 6): a candidate the task or the
subject refuses is a failed candidate with its reason (no run, or none left `running`), the
study goes on, and a space holding no value the task takes is refused before the first run,
naming the flag."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from memgauge import api
from memgauge.cli.main import main
from memgauge.store.suite_runs import SuiteRunStore

ROOT = Path(__file__).resolve().parents[2]
BUNDLE = ROOT / "tests" / "data" / "good" / "bundle.yaml"


def _suite(tmp_path: Path, block: dict[str, Any]) -> Path:
    """A retrieval task measured at Recall@10 (so k must be 10 or more)."""
    suite = {
        "name": "deep",
        "subjects": {"memory": {"reference": {"mode": "lexical"}}},
        "tasks": [
            {
                "name": "recall",
                "kind": "retrieval",
                "dataset": str(BUNDLE),
                "evaluators": [{"retrieval": "Recall@10"}],
            }
        ],
        "optimization": {"holdout": 0, **block},
    }
    path = tmp_path / "suite.yaml"
    path.write_text(yaml.safe_dump(suite, sort_keys=False))
    return path


def _hook(tmp_path: Path, ks: list[int]) -> list[str]:
    """A code hook proposing k = ks[step - 1] (the last one from then on)."""
    script = tmp_path / "next_k.py"
    script.write_text(
        "import json, sys\n"
        f"ks = {ks!r}\n"
        "step = json.load(sys.stdin)['step']\n"
        "print(json.dumps({'params': {'k': ks[min(step, len(ks)) - 1]}}))\n"
    )
    return [sys.executable, str(script)]


def _runs(db: Path) -> list[dict[str, Any]]:
    with SuiteRunStore(db) as store:
        return store.list_runs()


def _last_json(capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    out: dict[str, Any] = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    return out


@pytest.mark.parametrize(
    "flag", ["k=int:-5..0", "k=int:1..9", "k=choice:3,5", "k=int:2000..3000", "k=float:0.5..0.9"]
)
def test_a_k_space_with_no_value_the_task_takes_is_refused_before_any_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], flag: str
) -> None:
    """`k=int:-5..0` ended in exit 70; `k=int:1..9` ran two candidates, left one run
    `running`, and exited 2 naming no flag."""
    db = tmp_path / "r.db"
    code = main(["optimize", str(_suite(tmp_path, {})), "--store", str(db), "--space", flag])
    err = capsys.readouterr().err
    assert code == 2
    assert "Traceback" not in err
    dim = flag.removeprefix("k=")
    assert f"--space '{flag}': no value of {dim} is a k task 'recall' takes" in err
    assert "from 10 (the largest cutoff, of Recall@10) to 1000" in err
    assert not db.exists()  # refused before a store, a study or a run exists


def test_a_k_space_partly_below_the_cutoff_is_searched_where_the_task_takes_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "r.db"
    path = _suite(tmp_path, {"strategy": "random", "seed": 2})
    argv = ["optimize", str(path), "--store", str(db), "--space", "k=int:3..13"]
    assert main([*argv, "--max-iterations", "4", "--json"]) == 0
    data = _last_json(capsys)
    assert data["notices"] == [
        "space k: int:3..13 is searched as int:10..13, the values the task takes (k is a whole "
        "number of hits from 10 (the largest cutoff, of Recall@10) to 1000)"
    ]
    assert [it["status"] for it in data["iterations"]] == ["completed"] * 5
    base, *proposed = data["iterations"]
    assert base["params"]["k"] == 20  # a retrieval task's default depth, as evaluate's
    assert all(10 <= it["params"]["k"] <= 13 for it in proposed)
    assert {r["status"] for r in _runs(db)} == {"completed"}


def test_a_candidate_the_task_refuses_is_a_failed_candidate_and_the_study_goes_on(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """k=-1 ended the study in exit 70; k=4 (below @10) scored every query, then exited 2
    with the study failed and the candidate's run left `running`."""
    block = {"targets": ["code"], "hook": _hook(tmp_path, [-1, 4, 12]), "maxIterations": 3}
    db = tmp_path / "r.db"
    assert main(["optimize", str(_suite(tmp_path, block)), "--store", str(db), "--json"]) == 0
    data = _last_json(capsys)
    assert data["status"] == "completed"
    assert data["stopped_because"] == "max-iterations"
    base, negative, shallow, deep = data["iterations"]
    assert [it["params"].get("k") for it in (negative, shallow, deep)] == [-1, 4, 12]
    for refused in (negative, shallow):
        assert refused["status"] == "failed"
        assert refused["note"] == "refused before its run"
        assert refused["run_id"] is None  # refused before a run was created
        assert refused["score"] is None
        assert refused["accepted"] is False
    assert negative["reason"] == (
        "the candidate's suite: tasks.0.k: Input should be greater than or equal to 1 (got -1)"
    )
    assert shallow["reason"] == (
        "task 'recall': search depth k=4 is below the largest cutoff @10 (Recall@10); use k: 10 "
        "or more"
    )
    assert base["status"] == deep["status"] == "completed"
    assert deep["score"] == base["score"] == 1.0
    # only the scored candidates are runs, and none is left running
    runs = _runs(db)
    assert sorted(r["run_id"] for r in runs) == sorted([base["run_id"], deep["run_id"]])
    assert {r["status"] for r in runs} == {"completed"}
    # `optimize show` prints each failure's reason beside it
    assert main(["optimize", "show", data["id"], "--store", str(db)]) == 0
    rows = [line.split("│") for line in capsys.readouterr().out.splitlines()]
    notes = " ".join(cells[-2].strip() for cells in rows if len(cells) == 10)  # a wrapped cell
    assert (
        "refused before its run; task 'recall': search depth k=4 is below the largest cutoff "
        "@10 (Recall@10); use k: 10 or more"
    ) in notes


def test_every_candidate_refused_is_bad_input_naming_what_proposed_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    block = {"targets": ["code"], "hook": _hook(tmp_path, [4]), "maxIterations": 2}
    db = tmp_path / "r.db"
    code = main(["optimize", str(_suite(tmp_path, block)), "--store", str(db)])
    err = " ".join(capsys.readouterr().err.split())
    assert code == 2
    assert "Traceback" not in err
    assert (
        "the candidates proposed for code: the task or the subject refused each of the 2 "
        "candidate(s) the search proposed (the first: task 'recall': search depth k=4 is below "
        "the largest cutoff @10 (Recall@10); use k: 10 or more)"
    ) in err
    (study,) = api.optimizations(store=db)
    assert study["status"] == "failed"
    assert study["stopped_because"].startswith("the candidates proposed for code: the task")
    assert {r["status"] for r in _runs(db)} == {"completed"}  # the baseline's, and no other
