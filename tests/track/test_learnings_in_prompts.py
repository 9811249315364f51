"""Issue 18 item 3: learnings go into prompts (seed 000's last step). A regression the gate
stores comes back, within its budget, in the prompts of memgauge's own LLM decider, extractor,
judges and agents (`learnings: {query, k, budget}`), and the stored text has the seed's content:
false-positive and false-negative counts, the common failure pattern, a suggested action.
LLM calls go to the fake OpenAI-compatible server."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memgauge import relevant_learnings
from memgauge.cli.main import main
from memgauge.data.models import Memory, Turn
from memgauge.llm import FakeOpenAIServer
from memgauge.llm.context import llm_context
from memgauge.scorers import EvalContext, evaluator_from_spec, to_spec
from memgauge.subjects.learnings import Learnings, learnings_memory
from memgauge.subjects.registry import build_subject
from memgauge.track.gate import MetricCheck
from memgauge.track.learning import failure_memory

CASES = Path(__file__).resolve().parents[1] / "data" / "operations" / "cases.json"


@pytest.fixture(autouse=True)
def _llm_held() -> Iterator[None]:
    """Deciders, extractors, agents and judges are used by hand here, outside any run: the
    test holds the LLM context as a run would, so their connection pools close at its end."""
    with llm_context().hold():
        yield


def _merge_everything(payload: dict[str, Any]) -> str:
    text = payload["messages"][-1]["content"]
    first = text.split("STORED MEMORIES (id: content):\n", 1)[1].split(":", 1)[0]
    new = text.split("NEW MEMORY:\n", 1)[1].split("\n", 1)[0]
    return json.dumps({"action": "UPDATE", "id": first, "content": new, "reason": "same words"})


def _operations(capsys: pytest.CaptureFixture[str], db: Path, decider: str) -> str:
    code = main(
        ["operations", str(CASES), "--decider", decider, "--store", str(db), "--no-targets"]
    )
    assert code == 0
    capsys.readouterr()
    runs = main(["runs", "list", "--store", str(db), "--json"])
    assert runs == 0
    return str(json.loads(capsys.readouterr().out)[0]["run_id"])


def test_a_stored_regression_reaches_the_next_deciders_prompt(
    llm_server: FakeOpenAIServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db, learned = tmp_path / "r.db", tmp_path / "learnings.db"
    _operations(capsys, db, "{heuristic: {}}")  # every similarity check right
    llm_server.respond(_merge_everything)  # then a decider that merges every pair
    run = _operations(capsys, db, "{llm: {}}")
    code = main(["gate", run, "--store", str(db), "--learnings", str(learned)])
    assert code == 1
    capsys.readouterr()
    # the seed's stored text: counts, pattern, action
    assert main(["learnings", "query", "operations similarity", "--learnings", str(learned)]) == 0
    text = capsys.readouterr().out
    assert 'Eval "operations:cases/operations/operation-checks" regression detected' in text
    assert "False positives: 3 (treated different topics as similar)" in text
    assert "False negatives: 0 (missed paraphrases)" in text
    assert "Action: Review decider's prompt for operations: it over-matches" in text
    assert "Common pattern in failures: 'UPDATE: failed action, similarity'" in text
    # the next decider is told, within its budget
    spec = {"llm": {"learnings": {"query": "operations similarity", "path": str(learned)}}}
    before = len(llm_server.requests)
    _operations(capsys, db, json.dumps(spec))
    prompts = [r["json"]["messages"][-1]["content"] for r in llm_server.requests[before:]]
    assert len(prompts) == 9
    assert all("Past evaluation failures relevant to this task" in p for p in prompts)
    assert all("False positives: 3 (treated different topics as similar)" in p for p in prompts)
    assert all(p.index("NEW MEMORY:") < p.index("Past evaluation failures") for p in prompts)
    small = {"llm": {"learnings": {"query": "similarity", "path": str(learned), "budget": 40}}}
    before = len(llm_server.requests)
    _operations(capsys, db, json.dumps(small))
    prompt = llm_server.requests[before]["json"]["messages"][-1]["content"]
    section = prompt.split("\n\n")[-1] if "Past evaluation" in prompt else ""
    assert section.startswith("Past evaluation failures")
    assert len(section) <= 40 * 4


def _memory(tmp_path: Path) -> Path:
    path = tmp_path / "learnings.db"
    memory = learnings_memory(path)
    check = MetricCheck(
        "agent", "recall", "qa-judge", 0.4, None, 0.9, [0.9], 0.55, 0.2, True, None, "worse"
    )
    memory.ingest(
        [
            failure_memory(
                check,
                suite="s",
                run_id="r1",
                scorer_context="qa-judge: answers invented the user's employer",
            )
        ]
    )
    memory.close()
    return path


@pytest.mark.parametrize("kind", ["llm-extractor", "chat", "memory-agent"])
def test_extractor_and_agents_take_learnings(
    kind: str, llm_server: FakeOpenAIServer, tmp_path: Path
) -> None:
    learnings = {"query": "recall qa-judge invented employer", "path": str(_memory(tmp_path))}
    llm_server.respond(lambda _p: '{"memory": ["job: engineer"]}')
    if kind == "memory-agent":
        spec: dict[str, Any] = {
            kind: {"memory": {"reference": {"mode": "lexical"}}, "learnings": learnings}
        }
    else:
        spec = {kind: {"learnings": learnings}}
    subject = build_subject(spec)
    if kind == "llm-extractor":
        subject.extract([Turn(role="user", content="I work at Acme")], [])
    else:
        subject.ingest([Memory(id="m1", text="I work at Acme")])
        subject.answer("Where does the user work?")
    (request,) = llm_server.requests
    sent = "\n".join(m["content"] for m in request["json"]["messages"])
    assert "answers invented the user's employer" in sent
    # asked again: the section is fetched once per component, not per call
    learned = Path(learnings["path"])
    learned.unlink()
    if kind == "llm-extractor":
        subject.extract([Turn(role="user", content="I work at Acme")], [])
    else:
        subject.answer("Where does the user work?")
    assert (
        "answers invented the user's employer"
        in llm_server.requests[-1]["json"]["messages"][0]["content"]
        + llm_server.requests[-1]["json"]["messages"][-1]["content"]
    )


def test_a_judge_takes_learnings_and_records_that_it_did(
    llm_server: FakeOpenAIServer, tmp_path: Path
) -> None:
    path = _memory(tmp_path)
    llm_server.respond(lambda _p: '{"score": 80, "issues": [], "strengths": []}')
    spec = {
        "rubric": {
            "prompt": "Is it right?",
            "learnings": {"query": "qa-judge invented employer", "path": str(path), "k": 1},
        }
    }
    judge = evaluator_from_spec(spec)
    score = judge.evaluate(EvalContext(output="Acme", expected="Acme", input="Employer?"))
    assert score.value == pytest.approx(0.8)
    system = llm_server.requests[0]["json"]["messages"][0]
    assert system["role"] == "system"
    # after the judge's own system prompt
    assert system["content"].index("Past evaluation failures") > 0
    assert "answers invented the user's employer" in system["content"]
    assert len(score.detail["learnings_hash"]) == 16
    assert to_spec(judge)["rubric"]["learnings"] == spec["rubric"]["learnings"]
    plain = evaluator_from_spec({"rubric": {"prompt": "Is it right?"}})
    assert "learnings_hash" not in plain.evaluate(EvalContext(output="a", input="b")).detail


def test_no_learnings_stored_reads_and_creates_nothing(
    llm_server: FakeOpenAIServer, tmp_path: Path
) -> None:
    where = tmp_path / "none.db"
    decider = build_subject({"llm-decider": {"learnings": {"query": "x", "path": str(where)}}})
    llm_server.script(['{"action": "CREATE", "content": "a"}'])
    decider.decide([], {"content": "a"})
    assert (
        "Past evaluation failures" not in llm_server.requests[0]["json"]["messages"][-1]["content"]
    )
    assert not where.exists()


def test_a_query_of_an_empty_learnings_file_leaves_it_empty(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A 0-byte file is SQLite's empty database: nothing is stored there, and a query, which
    only reads, must not write a schema into it (it did: 32 KiB)."""
    empty = tmp_path / "empty.db"
    empty.touch()
    assert main(["learnings", "query", "x", "--learnings", str(empty)]) == 0
    assert "no failure has been stored in" in capsys.readouterr().out
    assert Learnings.model_validate({"query": "x", "path": str(empty)}).fetch() == ""
    assert empty.stat().st_size == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["empty.db"]


def test_relevant_learnings_is_the_sdk_function(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert relevant_learnings(None, "anything") == ""  # nothing stored: '' and no file made
    path = _memory(tmp_path)
    monkeypatch.setenv("MEMGAUGE_HOME", str(tmp_path))
    section = relevant_learnings(None, "invented employer", k=1, token_budget=200)
    assert section.startswith("Past evaluation failures relevant to this task")
    assert "answers invented the user's employer" in section
    memory = learnings_memory(path)
    try:
        assert relevant_learnings(memory, "invented employer", k=1, token_budget=200) == section
        short = relevant_learnings(memory, "invented employer", k=1, token_budget=40)
        assert len(short) <= 160
    finally:
        memory.close()


def test_bad_learnings_in_a_suite_exit_2_naming_file_line_and_field(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    bad = Path(__file__).resolve().parents[1] / "data" / "bad"
    code = main(
        ["run", str(bad / "suite_learnings_unknown_key.yaml"), "--store", str(tmp_path / "r.db")]
    )
    err = capsys.readouterr().err
    assert code == 2
    assert "suite_learnings_unknown_key.yaml:5" in err
    assert "learnings.topk: unknown key" in err
    assert "Traceback" not in err
    assert not (tmp_path / "r.db").exists()  # nothing half-written


def test_operations_judge_takes_learnings_from_the_cli(
    llm_server: FakeOpenAIServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`operations --judge --judge-learnings`: the merge judge's system prompt carries the
    stored failures, and each judged check records the section's hash."""
    path = _memory(tmp_path)
    crit = {"completeness": 80, "coherence": 80, "conciseness": 80}
    llm_server.respond(lambda _p: json.dumps({"score": 80, "criteria": crit}))
    out = tmp_path / "out"
    spec = json.dumps({"query": "qa-judge invented employer", "path": str(path), "k": 1})
    args = ["operations", str(CASES), "--decider", "{heuristic: {}}", "--judge"]
    args += ["--judge-learnings", spec, "--no-store", "--no-targets", "--output", str(out)]
    assert main(args) == 0
    capsys.readouterr()
    systems = [r["json"]["messages"][0] for r in llm_server.requests]
    assert systems, "the heuristic decider merges some pairs, so the judge is asked"
    assert all(s["role"] == "system" for s in systems)
    assert all("answers invented the user's employer" in s["content"] for s in systems)
    cases = json.loads((out / "operations.json").read_text())["per_case"]
    judged = [c["checks"]["merge-quality"] for c in cases if "merge-quality" in c.get("checks", {})]
    assert judged
    assert all(j["passed"] is not None and len(j["learnings_hash"]) == 16 for j in judged)
    # a plain query works too; without --judge the flag is refused (exit 2)
    before = len(llm_server.requests)
    plain = ["operations", str(CASES), "--decider", "{heuristic: {}}", "--judge", "--no-store"]
    assert main([*plain, "--no-targets", "--judge-learnings", "anything at all"]) == 0
    assert len(llm_server.requests) > before
    capsys.readouterr()
    bad = ["operations", str(CASES), "--decider", "{heuristic: {}}", "--no-store"]
    assert main([*bad, "--judge-learnings", "x"]) == 2
    assert "--judge-learnings needs --judge" in capsys.readouterr().err
    assert main([*plain, "--judge-learnings", "{query: x, topk: 2}"]) == 2
    err = capsys.readouterr().err
    assert "topk" in err
    assert "Traceback" not in err
