"""Memory-operation scoring (seed 000) and `memgauge operations`: tiers, checks, mem0's
vocabulary, recorded decisions, the LLM decider and the merge-quality judge over HTTP."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from memgauge.cli.main import main
from memgauge.data.jsonio import read_records
from memgauge.data.models import OperationCase
from memgauge.llm import FakeOpenAIServer
from memgauge.scorers.operations import (
    decision_of,
    heuristic_checks,
    normalize_action,
    operation_check,
)

CASES = Path(__file__).resolve().parents[1] / "data" / "operations" / "cases.json"


def _cases() -> dict[str, OperationCase]:
    return {c.id: c for c in read_records(CASES, OperationCase, key="cases")}


def test_mem0_vocabulary_maps_onto_ours() -> None:
    assert [normalize_action(a) for a in ("ADD", "none", "Update", "DELETE")] == [
        "CREATE",
        "NOOP",
        "UPDATE",
        "DELETE",
    ]
    assert decision_of({"event": "ADD", "text": "x"}) == {
        "event": "ADD",
        "text": "x",
        "action": "CREATE",
        "content": "x",
    }
    assert decision_of('{"action": "none"}')["action"] == "NOOP"


def test_decisions_in_the_shapes_models_send() -> None:
    assert (
        decision_of('```json\n{"action": "update", "id": "m1", "content": "x"}\n```')["action"]
        == "UPDATE"
    )
    assert decision_of("UPDATE: mem_2")["id"] == "mem_2"
    assert decision_of("NOOP")["action"] == "NOOP"
    assert decision_of("I think we should keep both")["action"] == "I"  # unreadable: not an action


def test_heuristic_checks() -> None:
    cases = _cases()
    dup = cases["dup-2"]  # identical but for case and spacing
    good = heuristic_checks(dup, decision_of({"action": "NOOP"}))
    assert good["exact-noop"] == (True, "identical content kept as NOOP")
    bad = heuristic_checks(
        dup, decision_of({"action": "UPDATE", "id": "<memory-id>", "content": "x"})
    )
    assert bad["exact-noop"] is not None
    assert bad["exact-noop"][0] is False
    assert bad["no-placeholders"] == (False, "placeholder '<memory-id>' left in the output")
    missing = heuristic_checks(cases["para-1"], decision_of({"action": "UPDATE"}))
    assert missing["required-fields"] == (False, "missing id, content")
    # content of zero-width characters alone is no content (as an incoming memory's is refused)
    invisible = decision_of({"action": "CREATE", "content": "\u200b\u2060"})
    assert heuristic_checks(cases["para-1"], invisible)["required-fields"] == (
        False,
        "missing content",
    )
    assert missing["exact-noop"] is None  # not an exact duplicate: does not apply


def test_the_operation_must_be_expected_and_aimed_right() -> None:
    cases = _cases()
    assert operation_check(cases["contra-1"], decision_of({"action": "DELETE", "id": "mem_7"}))[0]
    assert operation_check(
        cases["contra-1"], decision_of({"action": "UPDATE", "id": "mem_7", "content": "x"})
    )[0]
    wrong_target = operation_check(
        cases["para-1"], decision_of({"action": "UPDATE", "id": "mem_9", "content": "x"})
    )
    assert wrong_target == (False, "UPDATE of 'mem_9' (not a stored memory), expected 'mem_2'")
    two = _cases()["para-1"].model_copy(
        update={"existing": [*cases["para-1"].existing, *cases["dup-2"].existing]}
    )
    aimed_wrong = operation_check(
        two, decision_of({"action": "UPDATE", "id": "mem_9", "content": "x"})
    )
    assert aimed_wrong == (False, "UPDATE of 'mem_9', expected 'mem_2'")
    false_match = operation_check(
        cases["topic-1"], decision_of({"action": "UPDATE", "id": "mem_3", "content": "x"})
    )
    assert false_match == (False, "UPDATE, expected CREATE")


def test_an_update_or_delete_of_a_memory_that_is_not_stored_is_wrong(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A case whose gold says DELETE without naming the memory took a DELETE of 'mem_404',
    which the store does not hold, as right ("DELETE as expected"): the operation tier counted
    a decision that changes nothing stored."""
    case = {
        "id": "ghost",
        "existing": [{"id": "mem_1", "content": "The office is in Lisbon"}],
        "incoming": {"content": "We closed the Lisbon office"},
        "expected": {"action": ["DELETE", "UPDATE"]},
    }
    cases = tmp_path / "cases.json"
    cases.write_text(json.dumps({"cases": [case]}))
    trace = tmp_path / "trace.jsonl"
    trace.write_text(json.dumps({"case_id": "ghost", "output": "DELETE: mem_404"}) + "\n")
    code = main(["operations", str(cases), "--outputs", str(trace), "--no-targets"])
    out = " ".join(capsys.readouterr().out.split())
    assert code == 0, out
    assert "│ action │ operation │ 0.0% [0.0%, 79.3%] (n=1) │" in out
    assert "DELETE of 'mem_404' (not a stored memory)" in out


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict[str, Any], str]:
    code = main(["operations", str(CASES), *args, "--json"])
    cap = capsys.readouterr()
    lines = cap.out.strip().splitlines()
    return (
        code,
        json.loads(lines[-1]) if lines and lines[-1].startswith("{") else {},
        cap.out + cap.err,
    )


def test_the_no_llm_baseline_through_the_tiers(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, text = _run(capsys, "--decider", "{heuristic: {}}")
    assert code == 0, text
    tiers = out["tiers"]
    assert tiers["heuristic"]["pass_rate"] == 1.0
    assert tiers["heuristic"]["target"] == 0.95
    assert out["checks"]["action"]["n"] == 9
    assert out["checks"]["similarity"]["n"] == 7  # the pairs marked expect_similar
    assert tiers["judge"]["pass_rate"] is None  # no judge asked: n/a, not 0
    assert out["checks"]["exact-noop"]["n"] == 2
    assert "n/a (0 scored)" in text


def test_recorded_decisions_with_a_failure_and_a_bad_decision(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    trace = tmp_path / "trace.jsonl"
    lines = [
        {"case_id": "dup-1", "output": {"event": "NONE"}},
        {"case_id": "dup-2", "output": {"action": "ADD", "content": "deploys go out on tuesdays"}},
        {
            "case_id": "para-1",
            "output": {
                "action": "UPDATE",
                "id": "mem_2",
                "content": "tokens refresh 5 minutes early",
            },
        },
    ]
    trace.write_text("".join(json.dumps(x) + "\n" for x in lines))
    code, out, _ = _run(capsys, "--outputs", str(trace), "--output", str(tmp_path))
    assert code == 4  # 6 of 9 cases have no decision: more than max_failure_rate (10%)
    code, out, _ = _run(
        capsys,
        "--outputs",
        str(trace),
        "--output",
        str(tmp_path),
        "--max-failure-rate",
        "1",
        "--no-targets",
    )
    assert code == 0
    assert out["n_failed"] == 6  # cases with no recorded decision
    assert out["checks"]["exact-noop"] == {
        "tier": "heuristic",
        "pass_rate": 0.5,
        "n": 2,
        "passed": 1,
        "ci95": pytest.approx(out["checks"]["exact-noop"]["ci95"]),
        "n_failed": 0,
    }
    assert out["checks"]["action"]["passed"] == 2
    assert out["checks"]["similarity"]["passed"] == 1
    assert (
        json.loads((tmp_path / "operations.json").read_text())["per_case"][0]["decision"]["action"]
        == "NOOP"
    )


def test_llm_decider_and_merge_quality_judge_over_http(
    llm_server: FakeOpenAIServer, capsys: pytest.CaptureFixture[str]
) -> None:
    def rule(payload: dict[str, Any]) -> str:
        text = payload["messages"][-1]["content"]
        if "Decide what to do" in text:
            first = text.split("STORED MEMORIES (id: content):\n", 1)[1].split(":", 1)[0]
            new = text.split("NEW MEMORY:\n", 1)[1].split("\n", 1)[0]
            return json.dumps({"action": "UPDATE", "id": first, "content": new, "reason": "same"})
        return json.dumps(
            {"score": 60, "criteria": {"completeness": 90, "coherence": 80, "conciseness": 50}}
        )

    llm_server.respond(rule)
    code, out, text = _run(capsys, "--decider", "{llm: {}}", "--judge")
    assert code == 1, text  # it merges everything: the operation tier misses its target
    judge = out["tiers"]["judge"]
    # 0.5*0.9 + 0.3*0.8 + 0.2*0.5 = 0.79 >= 0.7 on every UPDATE
    assert judge["n"] == 9
    assert judge["pass_rate"] == 1.0
    assert out["checks"]["action"]["passed"] == 4  # only the paraphrases and contradictions
    # it merges everything: similar pairs right (4), different topics wrongly merged (3)
    assert (out["checks"]["similarity"]["passed"], out["checks"]["similarity"]["n"]) == (4, 7)


@pytest.mark.parametrize(
    ("command", "flag", "target"),
    [
        ("operations", "--decider", "flaky_decider:keep_duplicates_out"),
        ("extraction", "--extractor", "extractors:unchanged"),
        # its second parameter has a default: it was called as a factory with no argument,
        # and the error said to give `conversation` under kwargs
        ("extraction", "--extractor", "extractors:unchanged_or_nothing"),
    ],
)
def test_a_write_function_given_as_the_target_itself(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    command: str,
    flag: str,
    target: str,
) -> None:
    """docs/contracts.md: a decider is an object with decide(existing, incoming) "or such a
    function". `target: mod:decide` was called as a factory with no argument, and the error
    said to give `existing` and `incoming` under kwargs; the function is now used as is."""
    monkeypatch.syspath_prepend(str(CASES.parents[1] / "subjects"))
    cases = CASES if command == "operations" else CASES.parents[1] / "extraction" / "cases.json"
    spec = f"{{python: {{target: '{target}'}}}}"
    code = main([command, str(cases), flag, spec, "--no-targets", "--json"])
    cap = capsys.readouterr()
    assert code == 0, cap.err
    out = json.loads(cap.out.strip().splitlines()[-1])
    assert out["n_failed"] == 0
    assert out["n_cases"] > 0
