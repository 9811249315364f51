"""`memgauge optimize` searches the reference memory's fusion: a choice over methods (strings),
their weights, and a normalization that only the score methods take (issue 28 item 6)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from memgauge import api
from memgauge.cli.main import main
from memgauge.errors import UsageError
from memgauge.optimize import resolve_config
from memgauge.runs.suite import Suite

METHODS = ["rrf", "combsum", "combmnz", "wsum", "isr", "log_isr", "rbc"]


def _suite(space: dict[str, Any], memory: dict[str, Any] | None = None) -> Suite:
    return Suite.model_validate(
        {
            "name": "s",
            "subjects": {"m": {"reference": memory or {"mode": "hybrid"}}},
            "tasks": [
                {
                    "name": "t",
                    "kind": "expected-output",
                    "items": [{"id": "a", "input": "q", "expected": "x"}],
                    "evaluators": ["contains"],
                }
            ],
            "optimization": {"space": space},
        }
    )


def test_a_normalization_searched_with_score_fusions_is_part_of_the_space() -> None:
    # on its own, normalization=min-max is refused by the starting spec (fusion rrf); beside
    # the space's own fusions it fits every one of them
    resolved = resolve_config(
        _suite(
            {"fusion": "choice:combsum,combmnz,wsum", "normalization": "choice:min-max,z-score"}
        ),
        {},
    )
    assert resolved.space["normalization"].choices == ["min-max", "z-score"]
    assert resolved.notices == []


def test_a_space_with_points_the_subject_refuses_says_so_before_the_study() -> None:
    resolved = resolve_config(
        _suite({"fusion": "choice:rrf,combsum", "normalization": "choice:min-max,max"}), {}
    )
    (notice,) = resolved.notices
    assert "fusion='rrf', normalization='min-max'" in notice
    assert "reads ranks only" in notice
    assert "refused candidate" in notice


def test_a_value_no_point_of_the_space_takes_is_refused() -> None:
    with pytest.raises(UsageError) as caught:
        resolve_config(_suite({"fusion": "choice:rrf,isr", "normalization": "choice:max"}), {})
    assert "space normalization: subject 'm' refuses normalization='max'" in str(caught.value)
    assert "reads ranks only" in str(caught.value)
    with pytest.raises(UsageError, match="refuses fusion='borda'"):
        resolve_config(_suite({"fusion": "choice:rrf,borda"}), {})


def _write(tmp_path: Path, name: str, memory: dict[str, Any], block: dict[str, Any] | None) -> Path:
    data = tmp_path / "data"
    if not data.exists():
        api.save_dataset(api.demo_dataset(), data)
    task: dict[str, Any] = {
        "name": "recall",
        "kind": "retrieval",
        "dataset": str(data),
        "k": 10,
        "evaluators": [{"retrieval": "Recall@5"}],
    }
    suite: dict[str, Any] = {"name": name, "subjects": {"memory": {"reference": memory}}}
    suite["tasks"] = [task]
    if block is not None:
        suite["optimization"] = block
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(suite, sort_keys=False))
    return path


def test_a_study_over_fusion_methods_runs_each_as_its_own_spec(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMGAUGE_MINILM", "numpy")
    block = {
        "subject": "memory",
        "objective": "recall/Recall@5",
        "strategy": "random",
        "maxIterations": 6,
        "holdout": 0,
        "seed": 2,
        "space": {"fusion": "choice:" + ",".join(METHODS)},
    }
    path = _write(tmp_path, "tune", {"mode": "hybrid"}, block)
    db = tmp_path / "r.db"
    assert main(["optimize", str(path), "--store", str(db), "--json"]) == 0
    study = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    tried: dict[str, float] = {}
    for it in study["iterations"]:
        run = api.read_run(it["run_id"], store=db)
        assert run.status == "completed"
        spec = run.suite["subjects"]["memory"]["reference"]
        assert spec.get("fusion", "rrf") == it["params"].get("fusion", "rrf")
        tried[spec.get("fusion", "rrf")] = it["score"]
    assert len(tried) >= 3  # the baseline (rrf) and at least two other methods
    # each candidate scored what an ordinary run of its spec scores
    for method, score in tried.items():
        alone = _write(tmp_path, f"alone-{method}", {"mode": "hybrid", "fusion": method}, None)
        report = api.run_suite(alone, store=tmp_path / "alone.db")
        found = [it.verdict("Recall@5") for it in report.items]
        values = [v.value for v in found if v is not None and v.value is not None]  # n/a: out
        assert score == pytest.approx(sum(values) / len(values), abs=1e-12), method
    assert len(set(tried.values())) >= 2  # the methods rank the demo's memories differently
