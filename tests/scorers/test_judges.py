"""The LLM judges, through a scripted client: what they ask, how replies become scores, and
that a judge that cannot answer never produces a number (unless neutral is opted into)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable

import pytest

from memgauge.errors import LLMError, UsageError
from memgauge.llm import ChatRequest, ScriptedClient, configure
from memgauge.llm.config import LLMConfig
from memgauge.llm.usage import UsageMeter
from memgauge.scorers import EvalContext, evaluator_from_spec, to_spec
from memgauge.scorers.judges import TEMPLATES, RubricJudge, fact_scores
from memgauge.scorers.judges.facts import FactsVerdict


def _use(
    replies: Iterable[str | LLMError] = (), rule: Callable[[ChatRequest], str] | None = None
) -> ScriptedClient:
    client = ScriptedClient(replies, rule=rule)

    def factory(cfg: LLMConfig, _meter: UsageMeter) -> ScriptedClient:
        client._model = cfg.model  # answers as the configured model
        return client

    configure(factory=factory)
    return client


@pytest.fixture(autouse=True)
def _model(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMGAUGE_MODEL", "judge-model")


CTX = EvalContext(output="Paris", expected="Paris", input="Capital of France?")


def test_rubric_scores_issues_and_strengths_and_records_the_prompt() -> None:
    client = _use(['{"score": 85, "issues": ["terse"], "strengths": ["correct"]}'])
    judge = evaluator_from_spec({"rubric": "Is the answer right?"})
    score = judge.evaluate(CTX)
    assert score.value == pytest.approx(0.85)
    assert score.passed is True  # seed 000's 70% threshold
    assert "terse" in score.reason
    assert "correct" in score.reason
    d = score.detail
    # the hash covers the judge's own words: another prompt is another template
    assert d["template_hash"] == judge.template.hash  # type: ignore[attr-defined]
    assert d["template"] == "rubric"
    assert d["template_hash"] != TEMPLATES["rubric"].hash
    assert d["template_hash"] != RubricJudge(prompt="Is it kind?").template.hash
    assert d["route"] == "json_schema/direct"
    assert d["model"] == "judge-model"
    prompt = client.requests[0].messages[-1].content
    assert "Is the answer right?" in prompt
    assert "Capital of France?" in prompt


def test_seed_004_placeholders_in_the_judge_prompt_are_filled_per_item() -> None:
    client = _use(['{"score": 70}'])
    prompt = "Score 0-100: does {{output}} answer {{input}} as {{expected}} does?"
    RubricJudge(prompt=prompt).evaluate(CTX)
    sent = client.requests[0].messages[-1].content
    assert "does Paris answer Capital of France? as Paris does?" in sent


def test_weighted_criteria_are_combined_in_code() -> None:
    _use(['{"score": 99, "criteria": {"completeness": 100, "coherence": 50, "conciseness": 0}}'])
    score = RubricJudge(preset="merge-quality").evaluate(CTX)
    assert score.value == pytest.approx(0.5 * 1.0 + 0.3 * 0.5 + 0.2 * 0.0)
    assert score.detail["judge_overall"] == 99
    _use(['{"score": 80, "criteria": {"completeness": 100}}'])
    missing = RubricJudge(preset="merge-quality").evaluate(CTX)
    assert missing.value is None
    assert "missing criteria" in (missing.error or "")


def test_a_judge_that_cannot_answer_fails_and_never_scores() -> None:
    _use(["I refuse", "still not json"])
    score = RubricJudge().evaluate(CTX)
    assert score.value is None
    assert score.error is not None
    assert "unparsable after one repair" in score.error
    _use([LLMError("rate_limit", "slow down", attempts=5)])
    down = RubricJudge().evaluate(CTX)
    assert down.value is None
    assert "rate_limit" in (down.error or "")


@pytest.mark.parametrize("reply", ['{"score": true}', '{"score": "80"}', '{"score": 101}'])
def test_a_score_must_really_be_a_number_from_0_to_100(reply: str) -> None:
    _use([reply, reply])
    assert RubricJudge().evaluate(CTX).value is None
    _use(
        ['{"score": 50, "criteria": {"completeness": true, "coherence": 1, "conciseness": 1}}'] * 2
    )
    assert RubricJudge(preset="merge-quality").evaluate(CTX).value is None


def test_neutral_fallback_is_opt_in_and_flagged() -> None:
    _use(["garbage", "garbage"])
    score = RubricJudge(on_failure="neutral").evaluate(CTX)
    assert score.value == 0.5
    assert score.error is None
    assert score.detail["fallback"] is True
    assert "judge_error" in score.detail
    with pytest.raises(UsageError):
        RubricJudge(on_failure="zero")  # type: ignore[arg-type]


def test_placeholders_in_the_output_are_shown_not_expanded() -> None:
    client = _use(['{"score": 10}'])
    RubricJudge().evaluate(
        EvalContext(output="{{expected}} hack", expected="SECRET-REF", input="q")
    )
    prompt = client.requests[0].messages[-1].content
    assert "{{expected}} hack" in prompt
    assert prompt.count("SECRET-REF") == 1


@pytest.mark.parametrize(
    ("metadata", "template"),
    [
        ({"question_type": "temporal-reasoning"}, "qa/longmemeval/temporal-reasoning"),
        ({"question_type": "knowledge-update"}, "qa/longmemeval/knowledge-update"),
        (
            {"question_type": "single-session-preference"},
            "qa/longmemeval/single-session-preference",
        ),
        ({"question_type": "multi-session"}, "qa/longmemeval"),
        ({"item_id": "q7_abs", "question_type": "multi-session"}, "qa/longmemeval/abstention"),
    ],
)
def test_longmemeval_preset_follows_the_question_type(
    metadata: dict[str, str], template: str
) -> None:
    client = _use(['{"reasoning": "same", "label": "yes"}'])
    ctx = EvalContext(output="19 days", expected="18 days", input="How long?", metadata=metadata)
    score = evaluator_from_spec({"qa-judge": "longmemeval"}).evaluate(ctx)
    assert (score.value, score.passed) == (1.0, True)
    assert score.detail["template"] == template
    assert client.requests[0].messages[-1].content.count("How long?") == 1


def test_mem0_preset_is_labelled_lenient() -> None:
    _use(['{"reasoning": "different", "label": "WRONG"}'])
    score = evaluator_from_spec({"qa-judge": "mem0-locomo"}).evaluate(CTX)
    assert (score.value, score.passed) == (0.0, False)
    assert score.detail["lenient"] is True
    assert score.detail["template"] == "qa/mem0-locomo-lenient"
    _use(['{"label": "maybe"}', '{"label": "perhaps"}'])
    bad = evaluator_from_spec({"qa-judge": "strict"}).evaluate(CTX)
    assert bad.value is None


def test_fact_enumeration_scores_are_computed_from_the_lists() -> None:
    lists = {
        "conversation_facts": ["a", "b", "c", "d"],
        "extracted_facts": ["a", "b", "x"],
        "missed_facts": ["c", "d"],
        "hallucinated_facts": ["x"],
    }
    _use([json.dumps(lists)])
    score = evaluator_from_spec({"facts": {"metric": "precision", "threshold": 0.95}}).evaluate(
        EvalContext(output="- a\n- b\n- x", input="user: ...", metadata={"existing_memory": "m"})
    )
    assert score.value == pytest.approx(2 / 3)
    assert score.passed is False
    assert score.detail["recall"] == pytest.approx(0.5)
    assert score.detail["f1"] == pytest.approx(2 * (2 / 3) * 0.5 / (2 / 3 + 0.5))
    assert fact_scores(FactsVerdict.model_validate({k: [] for k in lists})) == {
        "tp": 0,
        "fp": 0,
        "fn": 0,
        "precision": 1.0,
        "recall": 1.0,
        "f1": 1.0,
    }
    _use([json.dumps({**lists, "hallucinated_facts": ["x", "y", "z", "w"]})])
    contradiction = evaluator_from_spec("facts").evaluate(CTX)
    assert contradiction.value is None
    assert "contradict" in (contradiction.error or "")


def _pairwise_rule(prefer: str | None) -> Callable[[ChatRequest], str]:
    """Prefer the response containing `prefer`; None: always say A (position bias)."""

    def rule(req: ChatRequest) -> str:
        text = req.messages[-1].content
        a = re.search(r"RESPONSE A:\n(.*?)\n\nRESPONSE B:", text, re.S)
        assert a is not None
        if prefer is None:
            return '{"winner": "A"}'
        return '{"winner": "A"}' if prefer in a.group(1) else '{"winner": "B"}'

    return rule


def test_pairwise_asks_both_orders_and_calls_disagreement_a_tie() -> None:
    ctx = EvalContext(output="new answer", expected="old answer", input="q")
    client = _use(rule=_pairwise_rule("new"))
    better = evaluator_from_spec("pairwise").evaluate(ctx)
    assert (better.value, better.detail["consistent"]) == (1.0, True)
    assert len(client.requests) == 2
    _use(rule=_pairwise_rule(None))
    biased = evaluator_from_spec("pairwise").evaluate(ctx)
    assert (better.passed, biased.value, biased.detail["consistent"]) == (True, 0.5, False)
    assert "position bias" in biased.reason


def test_panel_deliberates_and_shows_peers_their_verdicts() -> None:
    seen: list[str] = []

    def rule(req: ChatRequest) -> str:
        text = req.messages[-1].content
        seen.append(text)
        if "Other judges" in text:
            return '{"score": 80}'  # persuaded in round 2
        return '{"score": 90}' if "strictness A" in req.messages[-1].content else '{"score": 40}'

    _use(rule=rule)
    panel = evaluator_from_spec(
        {
            "panel": {
                "judges": [
                    {"rubric": "strictness A"},
                    {"rubric": "strictness B"},
                    {"rubric": {"prompt": "strictness B, other model", "model": "m2"}},
                ],
                "rounds": 2,
            }
        }
    )
    score = panel.evaluate(CTX)
    assert score.value == pytest.approx(0.8)
    assert score.detail["panel_passed"] == [True, True, True]
    first = [v for v in score.detail["votes"] if v["round"] == 1]
    assert [v["value"] for v in first] == [0.9, 0.4, 0.4]
    peers = [t for t in seen if "Other judges" in t]
    assert len(peers) == 3
    assert "Judge 2" in peers[0]
    assert "You (previous round)" in peers[0]
    assert len(to_spec(panel)["panel"]["judges"]) == 3
    with pytest.raises(UsageError, match="at least two"):
        evaluator_from_spec({"panel": {"judges": ["rubric"]}})
    with pytest.raises(UsageError, match="not an LLM judge"):
        evaluator_from_spec({"panel": {"judges": ["rubric", "exact"]}})


def test_panel_vote_and_members_that_fail() -> None:
    answers = iter(['{"score": 90}', "x", "x", '{"score": 20}'])
    _use(rule=lambda _req: next(answers))
    panel = evaluator_from_spec(
        {"panel": {"judges": ["rubric", "rubric", "rubric"], "rounds": 1, "decision": "vote"}}
    )
    score = panel.evaluate(CTX)
    # one member could not answer (twice unparsable): two votes remain, 1 pass of 2
    assert score.detail["n_answered"] == 2
    assert (score.value, score.passed) == (0.5, False)


def test_the_spec_uses_the_configured_endpoint(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[LLMConfig] = []

    def factory(cfg: LLMConfig, meter: UsageMeter) -> ScriptedClient:
        seen.append(cfg)
        return ScriptedClient(['{"score": 50}'])

    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:1/v1")
    configure(factory=factory)
    evaluator_from_spec({"rubric": {"model": "special", "threshold": None}}).evaluate(CTX)
    assert (seen[0].model, seen[0].base_url) == ("special", "http://127.0.0.1:1/v1")


@pytest.mark.parametrize(
    ("error", "retryable"),
    [
        (LLMError("server", "status 503", attempts=5), True),
        (LLMError("rate_limit", "slow down", attempts=5), True),
        (LLMError("timeout", "no response within 60 s", attempts=5), True),
        (LLMError("connection", "ServerDisconnectedError", attempts=5), True),
        (LLMError("bad_request", "400: no such model"), False),
    ],
)
def test_a_judge_failure_says_whether_asking_again_may_help(
    error: LLMError, retryable: bool
) -> None:
    for spec in ("rubric", "pairwise", {"panel": {"judges": ["rubric", "rubric"], "rounds": 1}}):
        _use(rule=lambda _req, e=error: (_ for _ in ()).throw(e))  # every call fails so
        score = evaluator_from_spec(spec).evaluate(CTX)
        assert score.value is None
        assert score.detail.get("retryable", False) is retryable, spec


def test_an_unparsable_verdict_is_retryable() -> None:
    # a failure, but not the cache's final answer: asking again asks the model
    _use(["no json here", "still none"])
    score = evaluator_from_spec("rubric").evaluate(CTX)
    assert score.value is None
    assert score.detail["retryable"] is True
