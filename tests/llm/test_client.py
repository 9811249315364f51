"""The OpenAI-compatible client over real HTTP against the fake server: retries, backoff on
429, bounded attempts, errors that say what happened, accounting, and keys kept secret."""

from __future__ import annotations

import asyncio
import json
import re
import socket
import subprocess
import sys
import urllib.request
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from tests.helpers import run_memgauge

from memgauge.errors import LLMError, UsageError
from memgauge.llm import (
    ChatRequest,
    FakeOpenAIServer,
    Fault,
    FaultRates,
    LLMClient,
    LLMConfig,
    UsageMeter,
)
from memgauge.llm.openai import OpenAIClient
from memgauge.llm.usage import Price

REQ = ChatRequest.of([{"role": "user", "content": "hello"}])


def _client(server: FakeOpenAIServer, **kw: object) -> OpenAIClient:
    cfg = {"model": "m", "base_url": server.base_url, "api_key": "k", "backoff": 0.01, **kw}
    return OpenAIClient(LLMConfig(**cfg), meter=UsageMeter({"m": Price(1.0, 2.0)}))  # type: ignore[arg-type]


def test_transient_failures_are_retried_and_counted() -> None:
    with FakeOpenAIServer() as server:
        server.script(["fine"])
        server.fail(
            Fault(truncate=True),
            Fault(429, headers=(("retry-after", "0.01"),)),
            Fault(503),
        )
        client = _client(server)
        try:
            r = client.complete(REQ)
        finally:
            client.close()
        assert (r.content, r.attempts, r.cached) == ("fine", 4, False)
        assert len(server.requests) == 4
        assert client.meter is not None
        row = client.meter.snapshot()["m"]
        assert row["calls"] == 1
        assert row["requests"] == 4
        assert row["cost_usd"] == pytest.approx(
            (row["prompt_tokens"] * 1.0 + row["completion_tokens"] * 2.0) / 1e6
        )


def test_every_request_is_counted_before_it_is_sent() -> None:
    seen: list[tuple[int, dict[str, int]]] = []
    with FakeOpenAIServer() as server:
        server.fail(Fault(503))
        client = _client(server)
        assert client.meter is not None
        client.meter.listen(lambda _model, delta: seen.append((server.n_requests, dict(delta))))
        try:
            client.complete(REQ)
        finally:
            client.close()
    # each request was told to the listener before the server had it; the tokens after
    assert [(n, sorted(d)) for n, d in seen] == [
        (0, ["requests"]),
        (1, ["requests"]),
        (2, ["calls", "completion_tokens", "prompt_tokens"]),
    ]


def test_retries_are_bounded_and_the_error_names_the_kind() -> None:
    with FakeOpenAIServer() as server:
        server.fail(*[Fault(500)] * 10)
        client = _client(server, max_retries=2)
        with pytest.raises(LLMError) as err:
            client.complete(REQ)
        client.close()
        assert err.value.kind == "server"
        assert err.value.attempts == 3
        assert len(server.requests) == 3


@pytest.mark.parametrize(
    ("fault", "kind"),
    [(Fault(401), "auth"), (Fault(400, '{"error": {"message": "bad model"}}'), "bad_request")],
)
def test_client_errors_are_not_retried(fault: Fault, kind: str) -> None:
    with FakeOpenAIServer() as server:
        server.fail(fault, fault, fault)
        client = _client(server)
        with pytest.raises(LLMError) as err:
            client.complete(REQ)
        client.close()
        assert err.value.kind == kind
        assert len(server.requests) == 1


def test_timeouts_and_refused_connections() -> None:
    with FakeOpenAIServer(faults=FaultRates(timeout=1.0, timeout_delay=2.0)) as server:
        client = _client(server, timeout=0.2, max_retries=1)
        with pytest.raises(LLMError) as err:
            client.complete(REQ)
        client.close()
        assert err.value.kind == "timeout"
        assert err.value.attempts == 2
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    cfg = LLMConfig(model="m", base_url=f"http://127.0.0.1:{port}/v1", max_retries=1, backoff=0.01)
    client = OpenAIClient(cfg)
    with pytest.raises(LLMError) as err:
        client.complete(REQ)
    client.close()
    assert err.value.kind == "connection"


def test_a_garbled_200_is_retried_as_a_bad_response() -> None:
    with FakeOpenAIServer() as server:
        server.fail(Fault(200, body='{"choices": []}'), Fault(200, body="not json"))
        server.script(["ok"])
        client = _client(server)
        r = client.complete(REQ)
        client.close()
        assert r.content == "ok"
        assert r.attempts == 3


def test_429_halves_concurrency_and_it_recovers() -> None:
    async def main(server: FakeOpenAIServer) -> tuple[int, int, int]:
        client = _client(server, concurrency=8)
        server.fail(*[Fault(429, headers=(("retry-after", "0"),))] * 4)
        await asyncio.gather(*(client.acomplete(REQ) for _ in range(8)))
        limiter = client.limiter
        lowest = limiter.lowest
        # enough successes in a row grow it back to the maximum
        for _ in range(6):
            await asyncio.gather(*(client.acomplete(REQ) for _ in range(8)))
        limit, cuts = limiter.limit, limiter.cuts
        await client.aclose()
        return lowest, limit, cuts

    with FakeOpenAIServer() as server:
        lowest, limit, cuts = asyncio.run(main(server))
    assert cuts >= 1
    assert lowest <= 4
    assert limit == 8


def test_configuration_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("MEMGAUGE_MODEL", "MEMAUDIT_MODEL", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(UsageError, match="MEMGAUGE_MODEL"):
        LLMConfig.from_env()
    monkeypatch.setenv("MEMAUDIT_MODEL", "audit-model")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-SECRET-value")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1/")
    cfg = LLMConfig.from_env(timeout=5)
    assert (cfg.model, cfg.base_url, cfg.timeout) == ("audit-model", "http://127.0.0.1:9/v1", 5)
    assert "SECRET" not in repr(cfg)
    assert "SECRET" not in repr(OpenAIClient(cfg))
    assert "api_key" not in cfg.identity()
    monkeypatch.setenv("MEMGAUGE_MODEL", "mine")
    assert LLMConfig.from_env().model == "mine"
    monkeypatch.setenv("MEMGAUGE_LLM_TIMEOUT", "soon")
    with pytest.raises(UsageError, match="MEMGAUGE_LLM_TIMEOUT"):
        LLMConfig.from_env()


def test_an_argument_overrides_a_knob_the_environment_sets_badly(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The environment's knob was read (and refused) even where an argument replaces it:
    explicit argument > environment, as the module says."""
    for var in ("MEMGAUGE_LLM_TIMEOUT", "MEMGAUGE_LLM_CONCURRENCY", "MEMGAUGE_LLM_RETRIES"):
        monkeypatch.setenv(var, "-1")
    cfg = LLMConfig.from_env(model="m", timeout=5, concurrency=2, max_retries=0)
    assert (cfg.timeout, cfg.concurrency, cfg.max_retries) == (5, 2, 0)


@pytest.mark.parametrize(
    ("var", "value", "says"),
    [
        ("MEMGAUGE_LLM_CONCURRENCY", "nan", "not a finite number"),
        ("MEMGAUGE_LLM_RETRIES", "1e999", "not a finite number"),
        ("MEMGAUGE_LLM_TIMEOUT", "nan", "not a finite number"),
        ("MEMGAUGE_LLM_TIMEOUT", "inf", "not a finite number"),
        ("MEMGAUGE_LLM_RPM", "inf", "not a finite number"),
        ("MEMGAUGE_LLM_CONCURRENCY", "2.5", "not a whole number"),
    ],
)
def test_a_non_finite_or_fractional_llm_knob_is_bad_input(
    tmp_path: Path, var: str, value: str, says: str
) -> None:
    """nan and inf passed the range checks (a timeout of nan) or broke int() with a
    traceback (exit 70); a fractional count was cut to a whole one without a word."""
    outputs = tmp_path / "outputs.jsonl"
    outputs.write_text('{"id": "a", "input": "q", "output": "x"}\n', encoding="utf-8")
    env = {"MEMGAUGE_MODEL": "fake", "OPENAI_BASE_URL": "http://127.0.0.1:9/v1", var: value}
    done = run_memgauge("judge", "rejudge", str(outputs), "--judge", "rubric", "-k", "2", env=env)
    assert done.returncode == 2, done.stderr
    assert f"{var}={value!r} is {says}" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize(
    ("var", "value", "says"),
    [
        (
            "MEMGAUGE_LLM_CONCURRENCY",
            "0",
            "set it to a whole number, at least 1, or unset it for the default (16)",
        ),
        (
            "MEMGAUGE_LLM_TIMEOUT",
            "-1",
            "set it to seconds, more than 0, or unset it for the default (60)",
        ),
        (
            "MEMGAUGE_LLM_TIMEOUT",
            "0",
            "set it to seconds, more than 0, or unset it for the default (60)",
        ),
        (
            "MEMGAUGE_LLM_RETRIES",
            "-1",
            "set it to a whole number, at least 0, or unset it for the default (4)",
        ),
        (
            "MEMGAUGE_LLM_RPM",
            "-5",
            "set it to requests per minute (0: no cap), or unset it for the default (0)",
        ),
    ],
)
def test_an_llm_knob_out_of_range_is_named_by_its_variable(
    monkeypatch: pytest.MonkeyPatch, var: str, value: str, says: str
) -> None:
    """A negative timeout was 'LLM timeout must be positive', naming no variable: the user
    had set MEMGAUGE_LLM_TIMEOUT, not a timeout anywhere memgauge showed them (fuzzC-6)."""
    monkeypatch.setenv(var, value)
    with pytest.raises(UsageError) as caught:
        LLMConfig.from_env(model="m")
    assert str(caught.value) == f"environment variable {var}={value!r} is out of range: {says}"


def test_random_fault_rates_hit_at_about_the_configured_rate() -> None:
    rates = FaultRates(rate_limit=0.1, server_error=0.1, malformed=0.1, retry_after=0, seed=3)
    with FakeOpenAIServer(faults=rates) as server:
        client = _client(server, concurrency=20, max_retries=8)

        async def main() -> list[str]:
            rs = await asyncio.gather(*(client.acomplete(REQ) for _ in range(300)))
            await client.aclose()
            return [r.content for r in rs]

        contents = asyncio.run(main())
    counts = server.fault_counts
    n = len(server.requests)
    for kind in ("rate_limit", "server_error", "malformed"):
        assert 0.05 * n < counts[kind] < 0.16 * n, (kind, counts, n)
    # malformed content arrives as a normal 200: the client returns it, the judge layer rejects it
    assert sum(c.startswith("Sure!") for c in contents) == counts["malformed"]


def test_anthropic_messages_through_the_sdk() -> None:
    pytest.importorskip("anthropic")
    from memgauge.llm.anthropic import AnthropicClient

    with FakeOpenAIServer(api_key="ak") as server:
        server.script(["bonjour"])
        cfg = LLMConfig(
            model="claude-x", base_url=server.base_url, api_key="ak", provider="anthropic"
        )
        client = AnthropicClient(cfg, meter=UsageMeter({}))
        req = ChatRequest.of(
            [{"role": "system", "content": "be brief"}, {"role": "user", "content": "hi"}]
        )
        r = client.complete(req)
        client.close()
        assert r.content == "bonjour"
        assert client.meter is not None
        # the SDK's request, seen through its HTTP client's hook
        assert client.meter.snapshot()["claude-x"]["requests"] == len(server.requests) == 1
        assert r.usage.prompt_tokens > 0
        sent = server.requests[-1]
        assert sent["path"] == "/v1/messages"
        assert sent["json"]["system"] == "be brief"
        assert sent["json"]["messages"] == [{"role": "user", "content": "hi"}]


def test_the_fake_server_runs_on_its_own() -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "memgauge.llm", "--reply", "standalone"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        base = proc.stdout.readline().strip()
        client = OpenAIClient(LLMConfig(model="m", base_url=base))
        assert client.complete(REQ).content == "standalone"
        client.close()
        with urllib.request.urlopen(base.removesuffix("/v1") + "/_stats") as resp:
            assert json.loads(resp.read())["requests"] == 1
    finally:
        proc.terminate()
        proc.communicate(timeout=10)


def test_a_retry_after_beyond_the_limit_fails_at_once() -> None:
    with FakeOpenAIServer() as server:
        server.fail(Fault(429, headers=(("retry-after", "86400"),)))
        client = _client(server)
        with pytest.raises(LLMError, match="86400") as err:
            client.complete(REQ)
        client.close()
        assert err.value.kind == "rate_limit"
        assert len(server.requests) == 1


@pytest.mark.parametrize(
    ("fault", "hint"),
    [
        (Fault(401, '{"error": {"message": "invalid api key"}}'), "check OPENAI_API_KEY"),
        (
            Fault(404, '{"error": {"message": "The model `gpt-4o-mni` does not exist"}}'),
            "check the model id",
        ),
        (Fault(500), "try again later (a call it answered replays from the LLM cache)"),
        (None, "is the endpoint up? check OPENAI_BASE_URL"),
    ],
)
def test_a_failed_call_names_its_endpoint_and_model_and_what_to_do(
    fault: Fault | None, hint: str
) -> None:
    """What an agent builder reads in a run's failures: which endpoint and model failed, and
    what to do (a 500 or a refused connection said neither)."""
    with FakeOpenAIServer() as server:
        if fault is None:
            server.stop()  # nothing listens there any more: connection refused
            base_url = "http://127.0.0.1:9/v1"
        else:
            server.fail(*[fault] * 3)
            base_url = server.base_url
        client = OpenAIClient(
            LLMConfig(
                model="gpt-4o-mni", base_url=base_url, api_key="k", max_retries=1, backoff=0.01
            )
        )
        try:
            with pytest.raises(LLMError) as caught:
                client.complete(REQ)
        finally:
            client.close()
    said = str(caught.value)
    assert f"({base_url}, model gpt-4o-mni)" in said, said
    assert hint in said, said


def test_a_reply_cut_off_at_the_token_limit_fails_with_its_tokens_billed() -> None:
    """`finish_reason: length`: not an answer (it was returned as one), not asked again (the
    same request is cut off again), and its tokens are what the provider billed."""
    cut = {
        "choices": [{"message": {"content": '{"score": 8'}, "finish_reason": "length"}],
        "usage": {"prompt_tokens": 100, "completion_tokens": 20},
    }
    with FakeOpenAIServer() as server:
        server.fail(Fault(200, json.dumps(cut)))
        client = _client(server)
        try:
            with pytest.raises(LLMError, match="cut off at the token limit") as caught:
                client.complete(ChatRequest.of([{"role": "user", "content": "hi"}], max_tokens=20))
        finally:
            client.close()
        assert server.n_requests == 1
    assert caught.value.kind == "truncated"
    assert "max_tokens 20" in str(caught.value)
    assert client.meter is not None
    row = client.meter.snapshot()["m"]
    assert (row["calls"], row["failures"], row["requests"]) == (0, 1, 1)
    assert (row["prompt_tokens"], row["completion_tokens"]) == (100, 20)
    assert row["cost_usd"] == pytest.approx((100 * 1.0 + 20 * 2.0) / 1e6)


def test_a_billed_reply_with_no_choice_in_it_counts_its_tokens() -> None:
    """An empty `choices` list (a content filter, a proxy) is no answer and is asked again,
    but the provider billed its prompt each time: the spend counted none of it."""
    empty = {"choices": [], "usage": {"prompt_tokens": 100, "completion_tokens": 0}}
    with FakeOpenAIServer() as server:
        server.fail(*[Fault(200, json.dumps(empty))] * 2)
        client = _client(server, max_retries=1)
        try:
            with pytest.raises(LLMError, match="not a chat completion"):
                client.complete(REQ)
        finally:
            client.close()
    assert client.meter is not None
    row = client.meter.snapshot()["m"]
    assert (row["calls"], row["failures"], row["requests"]) == (0, 1, 2)
    assert (row["prompt_tokens"], row["completion_tokens"]) == (200, 0)
    assert row["cost_usd"] == pytest.approx(200 * 1.0 / 1e6)


def test_a_base_url_with_a_password_and_a_key_too_is_refused_saying_which() -> None:
    """aiohttp sends a URL's `user:password` or the key's Authorization header, never both:
    every call of such a configuration failed with "ValueError: Cannot combine AUTHORIZATION
    header with AUTH argument or credentials encoded in URL", naming neither setting."""
    url = "http://team:hunter2pass@127.0.0.1:9/v1"
    with pytest.raises(UsageError, match="carries a user:password and an API key") as caught:
        LLMConfig(model="m", base_url=url, api_key="k")
    assert "hunter2pass" not in str(caught.value)
    assert "OPENAI_API_KEY" in str(caught.value)
    LLMConfig(model="m", base_url=url, api_key="")  # the URL's credentials alone are sent


def test_a_provider_s_own_variables_are_the_ones_a_failure_names() -> None:
    """A plug-in provider subclassing the client with variables of its own: a rejected key
    told its user to check OPENAI_API_KEY, which it does not read."""

    class Router(OpenAIClient):
        base_url_env = "ROUTER_BASE_URL"
        api_key_env = "ROUTER_API_KEY"

    with FakeOpenAIServer(api_key="right") as server:
        client = Router(LLMConfig(model="m", base_url=server.base_url, api_key="wrong"))
        try:
            with pytest.raises(LLMError, match="check ROUTER_API_KEY") as caught:
                client.complete(REQ)
        finally:
            client.close()
    assert "OPENAI" not in str(caught.value)


def _anthropic(base_url: str) -> LLMClient:
    pytest.importorskip("anthropic")
    from memgauge.llm.anthropic import AnthropicClient

    cfg = LLMConfig(
        model="claude-x", base_url=base_url, api_key="ak", provider="anthropic", max_retries=1
    )
    return AnthropicClient(cfg, meter=UsageMeter({"claude-x": Price(1.0, 2.0)}))


def test_an_anthropic_reply_cut_off_at_max_tokens_fails_with_its_tokens_billed() -> None:
    """`stop_reason: max_tokens` is Anthropic's `finish_reason: length`: the half reply was
    returned as an answer (a judge then failed to parse it, or an agent's cut sentence was
    scored); it is a failure of kind truncated, asked once, its tokens billed."""
    cut = {
        "type": "message",
        "role": "assistant",
        "model": "claude-x",
        "content": [{"type": "text", "text": '{"score": 8'}],
        "stop_reason": "max_tokens",
        "usage": {"input_tokens": 100, "output_tokens": 20},
    }
    with FakeOpenAIServer(api_key="ak") as server:
        server.fail(Fault(200, json.dumps(cut)))
        base_url = server.base_url
        client = _anthropic(base_url)
        try:
            with pytest.raises(LLMError, match="cut off at the token limit") as caught:
                client.complete(ChatRequest.of([{"role": "user", "content": "hi"}], max_tokens=20))
        finally:
            client.close()
        assert server.n_requests == 1
    assert caught.value.kind == "truncated"
    assert "max_tokens 20" in str(caught.value)
    assert f"({base_url}, model claude-x)" in str(caught.value)
    meter = client.meter
    assert meter is not None
    row = meter.snapshot()["claude-x"]
    assert (row["calls"], row["failures"], row["requests"]) == (0, 1, 1)
    assert (row["prompt_tokens"], row["completion_tokens"]) == (100, 20)
    assert row["cost_usd"] == pytest.approx((100 * 1.0 + 20 * 2.0) / 1e6)


@pytest.mark.parametrize(
    ("fault", "kind", "hint"),
    [
        (
            Fault(401, '{"type": "error", "error": {"message": "bad key"}}'),
            "auth",
            "check ANTHROPIC_API_KEY",
        ),
        (
            Fault(404, '{"type": "error", "error": {"message": "model: claude-x"}}'),
            "bad_request",
            "check the model id",
        ),
        (Fault(500), "server", "try again later (a call it answered replays from the LLM cache)"),
        (None, "connection", "is the endpoint up? check ANTHROPIC_BASE_URL"),
    ],
)
def test_a_failed_anthropic_call_names_its_endpoint_and_model_and_what_to_do(
    fault: Fault | None, kind: str, hint: str
) -> None:
    """As the OpenAI client's: a 500 said 'status 500: ...' with no endpoint, model or what
    to do, a refused connection 'Connection error.'"""
    with FakeOpenAIServer(api_key="ak") as server:
        if fault is None:
            server.stop()
            base_url = "http://127.0.0.1:9/v1"
        else:
            server.fail(*[fault] * 3)
            base_url = server.base_url
        client = _anthropic(base_url)
        try:
            with pytest.raises(LLMError) as caught:
                client.complete(REQ)
        finally:
            client.close()
    said = str(caught.value)
    assert caught.value.kind == kind
    assert f"({base_url}, model claude-x)" in said, said
    assert hint in said, said
    assert client.meter is not None
    assert client.meter.snapshot()["claude-x"]["failures"] == 1


def _http_date(seconds_from_now: float) -> str:
    from email.utils import format_datetime

    when = datetime.now(UTC) + timedelta(seconds=seconds_from_now)
    return format_datetime(when, usegmt=True)  # Wed, 21 Oct 2026 07:28:00 GMT


def test_a_retry_after_http_date_is_honoured_as_seconds_from_now() -> None:
    """RFC 9110 allows `Retry-After: <HTTP-date>`: it was read as no Retry-After at all, so a
    provider asking to wait a day got retried within a second, again and again."""
    with FakeOpenAIServer() as server:
        server.fail(Fault(429, headers=(("retry-after", _http_date(86400)),)))
        client = _client(server)
        try:
            with pytest.raises(LLMError, match=r"asks to wait 86[34]\d\d") as err:
                client.complete(REQ)
        finally:
            client.close()
        assert err.value.kind == "rate_limit"
        assert len(server.requests) == 1


@pytest.mark.parametrize(
    "value",
    # a fixed date in the past: a test id from the clock differs between xdist's workers
    ["Wed, 21 Oct 2015 07:28:00 GMT", "Sun, 99 Foo 2026 99:99:99 GMT", "soon", "", "-5", "nan"],
)
def test_a_past_or_unreadable_retry_after_falls_back_to_the_backoff(value: str) -> None:
    """A date already past waits nothing; a value that is neither seconds nor a date is
    ignored (the backoff decides), never a crash."""
    with FakeOpenAIServer() as server:
        server.fail(Fault(429, headers=(("retry-after", value),)))
        client = _client(server)
        try:
            assert client.complete(REQ).content == "OK"
        finally:
            client.close()
        assert len(server.requests) == 2


@pytest.mark.parametrize(
    ("var", "value", "need"),
    [
        ("MEMGAUGE_LLM_TIMEOUT", "abc", "seconds, more than 0"),
        ("MEMGAUGE_LLM_CONCURRENCY", "nan", "a whole number, at least 1"),
        ("MEMGAUGE_LLM_CONCURRENCY", "2.5", "a whole number, at least 1"),
        ("MEMGAUGE_LLM_RPM", "inf", "requests per minute (0: no cap)"),
    ],
)
def test_a_bad_llm_knob_says_what_to_write(
    monkeypatch: pytest.MonkeyPatch, var: str, value: str, need: str
) -> None:
    """The README: such a setting is bad input "naming the setting and what to write"; a value
    that was not a number, or not whole, said only what was wrong."""
    monkeypatch.setenv(var, value)
    with pytest.raises(UsageError, match=re.escape(f"set it to {need}, or unset it")):
        LLMConfig.from_env(model="m")
