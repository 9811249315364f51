"""Reasoning models over real HTTP: the fake server rejects `temperature` and `max_tokens` with
OpenAI's own 400 bodies; the client asks again once, worded as the model takes it, remembers
that per model and says so. And the requests-per-minute cap, on an injected clock."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from pydantic import BaseModel

from memgauge.errors import LLMError, UsageError
from memgauge.llm import ChatRequest, FakeOpenAIServer, Fault, LLMConfig, Message, UsageMeter
from memgauge.llm.cache import CachingClient
from memgauge.llm.context import LLMContext, llm_context
from memgauge.llm.limiter import RequestRate
from memgauge.llm.openai import OpenAIClient, rejected_parameter
from memgauge.llm.structured import Structured, acomplete_structured
from memgauge.scorers import EvalContext, evaluator_from_spec
from memgauge.store.llm_cache import SQLiteResponseCache

REQ = ChatRequest.of([{"role": "user", "content": "hello"}], max_tokens=50)


def _client(server: FakeOpenAIServer, model: str = "o3-mini", **kw: object) -> OpenAIClient:
    cfg = {"model": model, "base_url": server.base_url, "api_key": "k", "backoff": 0.01, **kw}
    return OpenAIClient(LLMConfig(**cfg), meter=UsageMeter({}))  # type: ignore[arg-type]


def test_a_reasoning_model_is_asked_again_without_what_it_rejects_and_remembered() -> None:
    with FakeOpenAIServer() as server:
        server.reasoning("o3-mini")
        client = _client(server, max_retries=0)  # the rewording is no retry of a failure
        try:
            first = client.complete(REQ)
            second = client.complete(REQ)
        finally:
            client.close()
        bodies = [r["json"] for r in server.requests]
    # first call: max_tokens rejected, then temperature 0 rejected, then accepted
    assert [
        sorted(k for k in b if k in ("temperature", "max_tokens", "max_completion_tokens"))
        for b in bodies
    ] == [
        ["max_tokens", "temperature"],
        ["max_completion_tokens", "temperature"],
        ["max_completion_tokens"],
        ["max_completion_tokens"],  # the second call goes out right the first time
    ]
    assert bodies[-1]["max_completion_tokens"] == 50
    assert (first.attempts, second.attempts) == (3, 1)
    assert first.adapted == second.adapted == ("max_completion_tokens", "no_temperature")
    assert client.adapted == {"o3-mini": frozenset({"max_completion_tokens", "no_temperature"})}
    assert client.meter is not None
    assert client.meter.adaptations() == {"o3-mini": ["max_completion_tokens", "no_temperature"]}
    assert client.meter.snapshot()["o3-mini"]["requests"] == 4


def test_other_models_of_the_same_client_are_not_changed() -> None:
    with FakeOpenAIServer() as server:
        server.reasoning("o3-mini")
        client = _client(server, model="gpt-4o-mini")
        try:
            client.complete(REQ)
            r = client.complete(ChatRequest.of([{"role": "user", "content": "x"}], model="o3-mini"))
            client.complete(REQ)
        finally:
            client.close()
        bodies = [r["json"] for r in server.requests]
    assert r.adapted == ("no_temperature",)  # no max_tokens was asked for
    for unchanged in (bodies[0], bodies[-1]):
        assert (unchanged["temperature"], unchanged["max_tokens"]) == (0.0, 50)
    assert client.adapted == {"o3-mini": frozenset({"no_temperature"})}


def test_an_endpoint_that_names_no_param_is_read_from_its_message() -> None:
    with FakeOpenAIServer() as server:
        server.reasoning("r1", name_param=False)
        client = _client(server, model="r1")
        try:
            r = client.complete(REQ)
        finally:
            client.close()
    assert r.adapted == ("max_completion_tokens", "no_temperature")


def test_the_same_400_twice_fails_as_a_bad_request() -> None:
    rejected = (
        '{"error": {"message": "Unsupported value: \'temperature\' does not support 0 with this'
        ' model.", "type": "invalid_request_error", "param": "temperature", "code":'
        ' "unsupported_value"}}'
    )
    with FakeOpenAIServer() as server:
        server.fail(Fault(400, rejected), Fault(400, rejected))
        client = _client(server, model="m")
        try:
            with pytest.raises(LLMError) as err:
                client.complete(REQ)
        finally:
            client.close()
        assert len(server.requests) == 2
        assert "temperature" not in server.requests[1]["json"]
    assert err.value.kind == "bad_request"
    assert "Unsupported value" in str(err.value)


@pytest.mark.parametrize(
    ("body", "fix"),
    [
        (
            b'{"error": {"param": "max_tokens", "code": "unsupported_parameter"}}',
            "max_completion_tokens",
        ),
        (b'{"error": {"param": "temperature", "code": "unsupported_value"}}', "no_temperature"),
        (
            b'{"error": {"message": "Unsupported parameter: \'temperature\' is not supported"}}',
            "no_temperature",
        ),
        (b'{"error": {"param": "messages", "code": "invalid_value"}}', None),
        (b'{"error": {"param": "temperature", "code": "invalid_type"}}', None),
        (b"not json", None),
        (b'{"error": "text"}', None),
    ],
)
def test_which_400s_are_a_rejected_parameter(body: bytes, fix: str | None) -> None:
    assert rejected_parameter(body) == fix


# --- requests per minute ------------------------------------------------------------------


class _Clock:
    """A clock that moves only when someone sleeps on it."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)


def test_the_rpm_cap_spaces_starts_evenly() -> None:
    clock = _Clock()
    rate = RequestRate(120, clock=clock, sleep=clock.sleep)  # one start per 0.5 s

    async def burst() -> None:
        await asyncio.gather(*(rate.acquire() for _ in range(4)))

    asyncio.run(burst())
    assert clock.sleeps == [0.5, 1.0, 1.5]  # the first starts at once
    clock.now += 10.0  # idle long enough: no debt carried over
    assert rate.reserve() == 0.0
    clock.now += 0.2
    assert rate.reserve() == pytest.approx(0.3)
    assert rate.waited == pytest.approx(3.3)


def test_no_minute_holds_more_than_rpm_starts() -> None:
    clock = _Clock()
    rate = RequestRate(7, clock=clock, sleep=clock.sleep)
    starts = []
    for i in range(40):
        clock.now = 1000.0 + i * 0.37  # callers arrive faster than the cap
        starts.append(clock.now + rate.reserve())
    assert all(sum(s <= t < s + 60 for t in starts) <= 7 for s in starts)


def test_rpm_goes_through_the_client_and_the_config() -> None:
    with FakeOpenAIServer() as server:
        client = _client(server, model="m", rpm=6000)
        assert client.rate is not None
        clock = _Clock()
        client.rate.clock, client.rate.sleep = clock, clock.sleep
        try:
            for _ in range(3):
                client.complete(REQ)
        finally:
            client.close()
        assert len(server.requests) == 3
    # the clock stood still: the second and third starts are one and two intervals out
    assert clock.sleeps == pytest.approx([0.01, 0.02])


def test_rpm_from_the_environment_and_its_validation(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMGAUGE_MODEL", "m")
    monkeypatch.setenv("MEMGAUGE_LLM_RPM", "30")
    assert LLMConfig.from_env().rpm == 30.0
    assert LLMConfig.from_env(rpm=5).rpm == 5
    monkeypatch.delenv("MEMGAUGE_LLM_RPM")
    assert LLMConfig.from_env().rpm is None
    with pytest.raises(UsageError, match="rpm must be positive"):
        LLMConfig(model="m", rpm=0)
    # two caps are two clients
    ctx = LLMContext()
    assert ctx.client(rpm=5) is not ctx.client(rpm=6)
    ctx.close()


def test_structured_output_through_the_cache_on_a_reasoning_model(tmp_path: Path) -> None:
    """Both memories at once: the JSON mode a model takes, and the parameters it rejects; a
    replay from the cache keeps what the call was changed to."""

    class Verdict(BaseModel):
        score: int

    with FakeOpenAIServer() as server:
        server.reasoning("o3-mini")
        server.respond(lambda _request: '{"score": 3}')
        inner = _client(server)
        client = CachingClient(inner, SQLiteResponseCache(tmp_path / "c.db"))
        msgs = [Message("user", "grade it")]

        async def twice() -> tuple[Structured[Verdict], Structured[Verdict]]:
            try:
                first = await acomplete_structured(client, msgs, Verdict, max_tokens=20)
                return first, await acomplete_structured(client, msgs, Verdict, max_tokens=20)
            finally:
                await inner.aclose()

        got, again = asyncio.run(twice())
        assert len(server.requests) == 3
    assert got.value == again.value == Verdict(score=3)
    assert got.route == "json_schema/direct"
    assert client.adapted == {"o3-mini": frozenset({"max_completion_tokens", "no_temperature"})}
    assert [r.adapted for r in (*got.responses, *again.responses)] == [
        ("max_completion_tokens", "no_temperature")
    ] * 2
    assert again.responses[0].cached


def test_a_judge_on_a_reasoning_model_says_it_was_asked_without_temperature(
    llm_server: FakeOpenAIServer,
) -> None:
    llm_server.reasoning("o3-mini")
    llm_server.respond(lambda _request: '{"grade": 2, "reason": "on topic"}')
    judge = evaluator_from_spec({"relevance": {"model": "o3-mini"}})
    with llm_context().hold():  # a judge used by hand: its pool closes when we are done
        score = judge.evaluate(EvalContext(output="the boat is blue", input="boat colour"))
        again = judge.evaluate(EvalContext(output="the car is red", input="boat colour"))
    assert score.value == pytest.approx(2 / 3)
    assert score.detail["adapted"] == ["no_temperature"]
    assert score.detail["requests"] == 2  # the 400, then the call without temperature
    assert again.detail["requests"] == 1  # remembered for the model
    assert again.detail["adapted"] == ["no_temperature"]
    assert [("temperature" in r["json"]) for r in llm_server.requests] == [True, False, False]
