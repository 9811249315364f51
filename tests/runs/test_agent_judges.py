"""Issue 18 item 7: any agent subject judges (seed 004's `judgeAgentId`): as the judge of
`rubric`, and as a member of a deliberation panel, in a suite run through the CLI."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from memgauge import api
from memgauge.cli.main import main

DATA = Path(__file__).resolve().parents[1] / "data"
PROMPT = (
    "Score 0-100: Did the agent's answer correctly use recalled memory rather than "
    "hallucinating?\nAgent answer: {{output}}\nProvide a score and one-sentence reasoning."
)


def _suite(calls: Path, judge: Any = "quality-judge") -> dict[str, Any]:
    json_judge = {"python": {"target": "judge_agents:JsonJudge", "kwargs": {"keyword": "Kuzu"}}}
    return {
        "name": "agent-judges",
        "subjects": {
            "answerer": {
                "python": {
                    "target": "lookup_agents:LookupAgent",
                    "kwargs": {"answers": {"database": "The knowledge graph uses Kuzu."}},
                }
            },
            "quality-judge": {
                "python": {
                    "target": "judge_agents:KeywordJudge",
                    "kwargs": {"keyword": "Kuzu", "calls_file": str(calls)},
                }
            },
        },
        "tasks": [
            {
                "name": "recall",
                "kind": "expected-output",
                "subjects": ["answerer"],
                "items": [
                    {"id": "kg", "input": "What database do we use?", "expected": "Kuzu"},
                    {"id": "other", "input": "Who owns billing?", "expected": "Ana"},
                ],
                "evaluators": [
                    {"rubric": {"prompt": PROMPT, "agent": judge}, "label": "agent-judge"},
                    {
                        "panel": {
                            "judges": [
                                {"rubric": {"prompt": PROMPT, "agent": judge}},
                                {"rubric": {"prompt": PROMPT, "agent": json_judge}},
                            ],
                            "rounds": 2,
                        },
                        "label": "deliberation",
                    },
                ],
            }
        ],
    }


@pytest.fixture(autouse=True)
def _subjects(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(DATA / "subjects"))


def _verdicts(store: Path) -> dict[tuple[str, str], Any]:
    [run] = api.history("agent-judges", store=store)
    with api.open_store(store) as opened:
        items = opened.item_records(run.run_id)
    return {(it.item_id, s.evaluator): s for it in items for s in it.scores}


def test_an_agent_subject_judges_a_rubric_and_sits_on_a_panel(
    tmp_path: Path, run_suite_json: Any
) -> None:
    calls = tmp_path / "calls.jsonl"
    code, summary = run_suite_json(_suite(calls))
    assert code == 0, summary
    verdicts = _verdicts(tmp_path / "r.db")
    kg, other = verdicts[("kg", "agent-judge")], verdicts[("other", "agent-judge")]
    assert (kg.value, other.value) == (0.9, 0.1)
    assert kg.reason.startswith("90/100. Score: 90. The answer names Kuzu")
    assert kg.detail["route"] == "agent/text"
    assert kg.detail["agent"]["python"]["target"] == "judge_agents:KeywordJudge"
    # the panel: round 1 KeywordJudge 90 / JsonJudge 70; in round 2 JsonJudge, shown its
    # peer's 90, moves to 80: mean 0.85 (the other item: 10 and (20 + 10) / 2 = 15)
    panel = verdicts[("kg", "deliberation")]
    assert panel.value == pytest.approx(0.85)
    assert [v["value"] for v in panel.detail["votes"]] == [0.9, 0.7, 0.9, 0.8]
    assert verdicts[("other", "deliberation")].value == pytest.approx(0.125)
    # the judge agent is asked the judge's prompts only, never the task's items
    asked = [json.loads(line) for line in calls.read_text().splitlines()]
    assert len(asked) == 6  # 2 items x (1 rubric + 2 panel rounds)
    assert all(("OUTPUT:" in q and "Agent answer: The knowledge graph" in q) or
               "Agent answer: I don't know" in q for q in asked)  # fmt: skip


def test_an_agent_that_gives_no_verdict_is_a_recorded_failure(
    tmp_path: Path, run_suite_json: Any
) -> None:
    suite = _suite(tmp_path / "calls.jsonl", judge={"python": {"target": "judge_agents:Unhelpful"}})
    suite["max_failure_rate"] = 1.0
    code, summary = run_suite_json(suite)
    assert code == 0, summary
    verdict = _verdicts(tmp_path / "r.db")[("kg", "agent-judge")]
    assert verdict.value is None
    assert "no verdict in the agent's answer" in (verdict.error or "")


def test_an_unknown_judge_agent_is_named_before_anything_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = DATA / "bad" / "suite_judge_agent_unknown.yaml"
    assert main(["validate", str(bad)]) == 2
    err = capsys.readouterr().err
    assert f"{bad}:14" in err
    assert "no subject called 'qualty-judge'" in err
    assert main(["run", str(bad), "--store", str(tmp_path / "r.db")]) == 2
    assert not (tmp_path / "r.db").exists()
    capsys.readouterr()
    path = tmp_path / "suite.yaml"
    path.write_text(yaml.safe_dump(_suite(tmp_path / "c", judge={"python": {"targt": "x:y"}})))
    assert main(["validate", str(path)]) == 2
    err = capsys.readouterr().err
    assert "suite.yaml:17: tasks.0.evaluators.0" in err
    assert "did you mean 'target'" in err
