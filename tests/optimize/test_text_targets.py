"""A prompt target against the fake LLM server: the optimizer model (scripted) rewrites the LLM
decider's prompt template, and the rewrite is scored as runs like any candidate (issue 15)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from memgauge import api
from memgauge.cli.main import main
from memgauge.optimize.proposers import reply_text
from memgauge.subjects.deciders import DECIDE_PROMPT

RULE = "A memory that repeats a stored one is NOOP."


def _cases(n: int = 6) -> list[dict[str, Any]]:
    return [
        {
            "id": f"dup-{i}",
            "scenario": "exact duplicate",
            "existing": [{"id": f"mem_{i}", "content": f"fact number {i}"}],
            "incoming": {"content": f"fact number {i}"},
            "expected": {"action": "NOOP"},
        }
        for i in range(n)
    ]


def _replies(request: dict[str, Any]) -> str | None:
    """The optimizer appends RULE to the text it is shown; the decider says NOOP only when its
    prompt has RULE (a model that follows its instructions)."""
    text = request["messages"][-1]["content"]
    if text.startswith("You improve"):
        shown = re.search(r"<<<\n(.*)\n>>>", text, re.S)
        assert shown is not None
        return json.dumps({"text": shown.group(1) + "\n" + RULE})
    action = "NOOP" if RULE in text else "CREATE"
    return json.dumps({"action": action, "id": None, "content": "x", "reason": "scripted"})


def _decider_suite(tmp_path: Path, block: dict[str, Any], n_cases: int, **extra: Any) -> Path:
    (tmp_path / "cases.json").write_text(json.dumps({"cases": _cases(n_cases)}))
    suite = {
        "name": "decider",
        "subjects": {"decider": {"llm-decider": {"model": "fake"}}},
        "tasks": [
            {
                "name": "ops",
                "kind": "operations",
                "dataset": "cases.json",
                "evaluators": ["operation-checks"],
            }
        ],
        **extra,
        "optimization": {"targets": ["prompts"], "texts": ["prompt"], **block},
    }
    path = tmp_path / "suite.yaml"
    path.write_text(yaml.safe_dump(suite, sort_keys=False))
    return path


def test_the_optimizer_model_rewrites_the_deciders_prompt(
    tmp_path: Path, llm_server: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    llm_server.respond(_replies)
    block = {"holdout": 0.3, "maxIterations": 3, "targetScore": 1.0, "optimizer": {"model": "fake"}}
    path = _decider_suite(tmp_path, block, 6)
    db = tmp_path / "r.db"
    assert main(["optimize", str(path), "--store", str(db), "--json"]) == 0
    data = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    base, best = data["baseline"], data["best"]
    assert base["texts"]["prompt"] == DECIDE_PROMPT
    assert best["texts"]["prompt"] == DECIDE_PROMPT + "\n" + RULE
    assert best["score"] > base["score"]
    assert data["stopped_because"] == "target-score"
    assert data["holdout"]["best"] > data["holdout"]["baseline"]
    # the rewritten template is what the candidate's run used
    run = api.read_run(best["run_id"], store=db)
    assert run.suite["subjects"]["decider"]["llm-decider"]["prompt"].endswith(RULE)
    # show --diff prints the change as a unified diff
    assert main(["optimize", "show", data["id"], "--store", str(db), "--diff", "0", "1"]) == 0
    out = capsys.readouterr().out
    assert f"+{RULE}" in out
    assert "--- prompt @ 0" in out
    # the summary names the texts a prompts target ran with (it said "with " and nothing)
    assert main(["optimize", "show", data["id"], "--store", str(db)]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert f"baseline: {base['score']:.3f} with the prompt text of step 0" in out
    assert f"with the prompt text of step {best['step']} (step {best['step']})" in out


def test_a_rewrite_that_breaks_the_template_is_a_recorded_failure(
    tmp_path: Path, llm_server: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    llm_server.respond(
        lambda r: (
            json.dumps({"text": "Decide {nonsense}"})
            if r["messages"][-1]["content"].startswith("You improve")
            else json.dumps({"action": "CREATE", "content": "x"})
        )
    )
    path = _decider_suite(tmp_path, {"holdout": 0, "maxIterations": 1}, 4, max_failure_rate=1.0)
    assert main(["optimize", str(path), "--store", str(tmp_path / "r.db"), "--json"]) == 0
    data = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    step = data["iterations"][1]
    assert step["status"] == "failed"
    assert step["score"] is None
    assert step["accepted"] is False
    assert data["best"]["step"] == 0


def test_the_optimizer_models_spend_counts_toward_the_cost_budget(
    tmp_path: Path, llm_server: Any, capsys: pytest.CaptureFixture[str], monkeypatch: Any
) -> None:
    """Issue 15 item 7: the candidates' decider is unpriced, so only the optimizer model's
    own calls (USD 1 a token here) can reach maxCost; they are recorded on the study, and its
    usage listener is gone once the study ends."""
    from memgauge.llm import context

    prices = tmp_path / "prices.yaml"
    prices.write_text(yaml.safe_dump({"opt-model": {"input": 1e6, "output": 1e6}}))
    monkeypatch.setenv("MEMGAUGE_PRICES", str(prices))
    context.reset()  # a fresh meter reads the price table, as a new process would
    llm_server.respond(
        lambda r: (
            json.dumps({"text": "Decide well. {existing} {incoming}"})
            if r["messages"][-1]["content"].startswith("You improve")
            else json.dumps({"action": "CREATE", "content": "x", "reason": "never improves"})
        )
    )
    block = {"holdout": 0, "maxIterations": 5, "maxCost": 1.0, "optimizer": {"model": "opt-model"}}
    path = _decider_suite(tmp_path, block, 4)
    listening = len(context.llm_context().meter._listeners)
    assert main(["optimize", str(path), "--store", str(tmp_path / "r.db"), "--json"]) == 0
    data = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert data["stopped_because"] == "cost-budget"
    assert [i["step"] for i in data["iterations"]] == [0, 1]
    (proposer,) = [r for r in llm_server.requests if r["json"]["model"] == "opt-model"]
    used = data["optimizer_usage"]["opt-model"]
    assert used["calls"] == 1
    assert used["prompt_tokens"] > 0
    assert used["cost_usd"] == pytest.approx(used["prompt_tokens"] + used["completion_tokens"])
    assert "fake" not in data["optimizer_usage"]  # the candidates' spend is their runs'
    assert proposer["json"]["messages"][-1]["content"].startswith("You improve")
    # recorded on the study: `optimize show` reads it back
    assert main(["optimize", "show", data["id"], "--store", str(tmp_path / "r.db"), "--json"]) == 0
    shown = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert shown["optimizer_usage"] == data["optimizer_usage"]
    # the study's listener was detached when it ended
    assert len(context.llm_context().meter._listeners) == listening


def _optimizer_says(reply: str | None) -> Any:
    """The optimizer model replies `reply` (None: appends RULE as JSON, as `_replies`); the
    decider answers as in `_replies`."""

    def respond(request: dict[str, Any]) -> str | None:
        if reply is not None and request["messages"][-1]["content"].startswith("You improve"):
            return reply
        return _replies(request)

    return respond


def test_a_plain_text_reply_is_the_new_prompt(
    tmp_path: Path, llm_server: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    """It ended in exit 70 (no JSON in the reply), and `--resume` replayed the cached reply
    into the same crash."""
    plain = f"Decide what to do with a new memory.\nStored: {{existing}}\nNew: {{incoming}}\n{RULE}"
    llm_server.respond(_optimizer_says(plain))
    block = {"holdout": 0, "maxIterations": 2, "targetScore": 1.0}
    db = tmp_path / "r.db"
    assert main(["optimize", str(_decider_suite(tmp_path, block, 4)), "--store", str(db)]) == 0
    (study,) = api.optimizations(store=db)
    data = api.optimization(study["study_id"], store=db)
    assert data["best"]["texts"]["prompt"] == plain
    assert data["best"]["score"] == 1.0
    assert data["stopped_because"] == "target-score"


@pytest.mark.parametrize(
    ("reply", "text"),
    [
        ('{"text": "Decide. {existing}"}', "Decide. {existing}"),
        ("Decide. {existing}\n", "Decide. {existing}"),
        ('```json\n{"text": "Decide."}\n```', "Decide."),
        ("```\nDecide. {existing}\n```", "Decide. {existing}"),
        # a prompt that quotes JSON in its prose is prose
        (
            'Decide.\nReply with only {"action": "NOOP"}',
            'Decide.\nReply with only {"action": "NOOP"}',
        ),
    ],
)
def test_reply_text_takes_json_text_or_plain_text(reply: str, text: str) -> None:
    assert reply_text(reply) == text


@pytest.mark.parametrize(
    ("reply", "why"),
    [
        ('{"prompt": "Decide."}', 'a JSON reply without a "text" string (its keys are prompt)'),
        ('{"text": 3}', 'a JSON reply without a "text" string ("text" is a int)'),
        ('```json\n{"answer": "x"}\n```', 'without a "text" string (its keys are answer)'),
        ('["Decide."]', 'a JSON reply is {"text": "..."}, not a list'),
        ('{"text": "  "}', 'the reply\'s "text" is empty'),
        ("   ", "the reply is empty"),
    ],
)
def test_reply_text_refuses_json_without_text(reply: str, why: str) -> None:
    with pytest.raises(ValueError, match=re.escape(why)):
        reply_text(reply)


def test_a_json_reply_without_text_is_a_failed_candidate_and_is_not_cached(
    tmp_path: Path, llm_server: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    """`{"prompt": ...}` was used as the decider's prompt (every item failed on it); now the
    candidate fails with the reason, and the next ask goes to the model again."""
    llm_server.respond(_optimizer_says(json.dumps({"prompt": DECIDE_PROMPT + RULE})))
    block = {"holdout": 0, "maxIterations": 1}
    path = _decider_suite(tmp_path, block, 4)
    db = tmp_path / "r.db"
    assert main(["optimize", str(path), "--store", str(db), "--json"]) == 0
    data = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert data["status"] == "completed"
    base, step = data["iterations"]
    assert step["status"] == "failed"
    assert step["note"] == "proposal refused"
    assert step["reason"].startswith(
        'the optimizer model\'s reply could not be used: a JSON reply without a "text" string '
        "(its keys are prompt): "
    )
    assert step["texts"] == base["texts"]  # never used as the prompt
    assert step["run_id"] is None
    assert data["best"]["step"] == 0
    # the same study again, the model now answering: its reply is asked for and used
    asked = sum(1 for r in llm_server.requests if "You improve" in str(r["json"]["messages"]))
    llm_server.respond(_replies)
    assert main(["optimize", str(path), "--store", str(db), "--json"]) == 0
    again = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    now = sum(1 for r in llm_server.requests if "You improve" in str(r["json"]["messages"]))
    assert now == asked + 1
    assert again["iterations"][1]["status"] == "completed"
    assert again["iterations"][1]["texts"]["prompt"] == DECIDE_PROMPT + "\n" + RULE


def test_resume_after_an_unusable_reply_finishes_the_study(
    tmp_path: Path,
    llm_server: Any,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Step 1's reply cannot be used; the study is interrupted while step 2's candidate is
    proposed; `--resume` keeps step 1 as it failed and finishes the study."""
    from memgauge.optimize.proposers import TextProposer

    replies = iter([json.dumps({"prompt": "x"}), None])
    llm_server.respond(
        lambda r: (
            next(replies) or _replies(r)
            if r["messages"][-1]["content"].startswith("You improve")
            else _replies(r)
        )
    )
    propose = TextProposer.propose

    def interrupted(self: Any, target: str, current: Any, ev: Any, n: int, step: int) -> Any:
        if step == 2:
            raise KeyboardInterrupt
        return propose(self, target, current, ev, n, step)

    monkeypatch.setattr(TextProposer, "propose", interrupted)
    block = {"holdout": 0, "maxIterations": 2, "targetScore": 1.0}
    path = _decider_suite(tmp_path, block, 4)
    db = tmp_path / "r.db"
    assert main(["optimize", str(path), "--store", str(db)]) == 130
    (study,) = api.optimizations(store=db)
    assert study["status"] == "cancelled"
    monkeypatch.setattr(TextProposer, "propose", propose)
    assert main(["optimize", "--resume", study["study_id"], "--store", str(db), "--json"]) == 0
    data = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert data["status"] == "completed"
    assert [it["status"] for it in data["iterations"]] == ["completed", "failed", "completed"]
    assert data["iterations"][1]["note"] == "proposal refused"
    assert data["best"]["texts"]["prompt"] == DECIDE_PROMPT + "\n" + RULE


def test_a_study_whose_starting_configuration_fails_is_an_error(
    tmp_path: Path, llm_server: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    """Nothing can be compared with a baseline that scored nothing: the study fails with the
    subject's exit code (4) instead of completing with exit 0."""
    llm_server.respond(lambda r: "no JSON from the decider")
    path = _decider_suite(tmp_path, {"holdout": 0, "maxIterations": 2}, 4)
    db = tmp_path / "r.db"
    assert main(["optimize", str(path), "--store", str(db)]) == 4
    err = " ".join(capsys.readouterr().err.split())
    assert (
        "subject failed: the starting configuration failed: subject decider: 4 of 4 items failed"
        in err
    )
    (study,) = api.optimizations(store=db)
    assert study["status"] == "failed"
    assert study["stopped_because"].startswith("the starting configuration failed: ")
    assert study["n_iterations"] == 0
