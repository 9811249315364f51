"""Issue 18 item 2: a judge that fails under `on_failure: neutral` (seed 000's 0.5) reaches the
item's combined score, flagged as a fallback; by default a failed judge stays a recorded
failure and the combined score n/a. Through `memgauge run`, the judge behind the fake
OpenAI-compatible server, whose every reply ("OK") is not a verdict."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from memgauge import api
from memgauge.cli.main import main

SUBJECTS = Path(__file__).resolve().parents[1] / "data" / "subjects"


def _suite(on_failure: str | None) -> dict[str, Any]:
    judge: dict[str, Any] = {"rubric": {"prompt": "Is {{output}} right for {{input}}?"}}
    if on_failure:
        judge["rubric"]["on_failure"] = on_failure
    answers = {f"code {i}?": f"C{i}" for i in range(3)}
    return {
        "name": "fallback",
        "max_failure_rate": 1.0,
        "subjects": {
            "agent": {
                "python": {"target": "lookup_agents:LookupAgent", "kwargs": {"answers": answers}}
            }
        },
        "tasks": [
            {
                "name": "qa",
                "kind": "expected-output",
                "items": [
                    {"id": f"q{i}", "input": f"What is code {i}?", "expected": f"C{i}"}
                    for i in range(3)
                ],
                "evaluators": ["icontains", {"spec": judge, "weight": 1.0}],
            }
        ],
    }


def test_a_neutral_judge_failure_reaches_the_combined_score_flagged(
    llm_server: Any,
    run_suite_json: Any,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.syspath_prepend(str(SUBJECTS))
    code, out = run_suite_json(_suite("neutral"))
    assert code == 0
    summary = api.read_run(out["run_id"], store=tmp_path / "r.db").summary.model_dump()  # type: ignore[union-attr]
    (task,) = summary["tasks"]
    # icontains 1.0 and the judge's stand-in 0.5, weighted equally: 0.75 on every item
    assert task["score"]["mean"] == pytest.approx(0.75)
    assert task["score"]["n_scored"] == 3
    assert task["score"]["n_fallback"] == 3
    rubric = next(e for e in summary["evaluators"] if e["evaluator"] == "rubric")
    # the number the user opted into, counted and flagged, one value wherever it is shown
    assert (rubric["mean"], rubric["n_scored"], rubric["n_fallback"]) == (0.5, 3, 3)
    assert rubric["mean_without_fallback"] is None  # no real verdict at all
    (gated,) = [
        m
        for m in api.read_run(out["run_id"], store=tmp_path / "r.db").summary.measures()  # type: ignore[union-attr]
        if m.name == "rubric"
    ]
    assert (gated.value, gated.n_scored, gated.n_fallback) == (0.5, 3, 3)
    row = next(r for r in out["results"] if r["evaluator"] == "rubric")
    assert (row["mean"], row["n_scored"], row["n_fallback"]) == (0.5, 3, 3)
    run_id = out["run_id"]
    assert main(["runs", "show", run_id, "--store", str(tmp_path / "r.db")]) == 0
    shown = capsys.readouterr().out
    assert "3 items' combined score includes a judge's neutral 0.5 stand-in" in shown
    assert "0.500 (3 fallbacks)" in shown
    from memgauge.store.suite_runs import SuiteRunStore

    with SuiteRunStore(tmp_path / "r.db") as store:
        items = store.item_records(run_id)
    assert [it.score for it in items] == [pytest.approx(0.75)] * 3
    assert all(it.fallback for it in items)
    assert all(it.verdict("rubric").fallback for it in items)  # type: ignore[union-attr]


def test_by_default_a_failed_judge_is_a_failure_and_the_combined_score_na(
    llm_server: Any, run_suite_json: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.syspath_prepend(str(SUBJECTS))
    code, out = run_suite_json(_suite(None))
    summary = api.read_run(out["run_id"], store=tmp_path / "r.db").summary.model_dump()  # type: ignore[union-attr]
    (task,) = summary["tasks"]
    assert task["score"]["mean"] is None
    assert "n_fallback" not in task["score"]
    rubric = next(e for e in summary["evaluators"] if e["evaluator"] == "rubric")
    assert (rubric["mean"], rubric.get("n_fallback")) == (None, None)
    assert code == 0  # (the suite allows every item to fail: max_failure_rate 1.0)
    from memgauge.store.suite_runs import SuiteRunStore

    with SuiteRunStore(tmp_path / "r.db") as store:
        items = store.item_records(out["run_id"])
    assert [it.score for it in items] == [None] * 3
    assert all(f.kind == "rubric" for it in items for f in it.failures)
    assert all(it.verdict("rubric").error for it in items)  # type: ignore[union-attr]
