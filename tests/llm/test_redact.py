"""Keys and bearer tokens are scrubbed from every error text (issue 13, item 3): the shapes
`redact` knows, and each client that reads an endpoint's error body (OpenAI-compatible chat,
Anthropic, the response cache, the embedder, the HTTP subject), over real HTTP against a fake
server that echoes the request's credentials."""

from __future__ import annotations

from pathlib import Path

import pytest

from memgauge._util import redact as redact_module
from memgauge._util.redact import REDACTED, redact, redactor, register_secret
from memgauge.errors import LLMError, SubjectError
from memgauge.llm import CachingClient, ChatRequest, FakeOpenAIServer, Fault, LLMConfig
from memgauge.llm.fake_server import ECHO_BODY
from memgauge.llm.openai import OpenAIClient
from memgauge.store.llm_cache import SQLiteResponseCache

KEY = "mgk-UNITCANARY-0d9c8b7a6f5e4d3c2b1a-Qx7"


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("Authorization: Bearer abc.DEF-123_x", "Authorization: "),
        ('{"authorization": "Bearer abc.DEF-123_x"}', '{"authorization": "'),
        ("{'Authorization': 'Basic dXNlcjpwYXNz'}", "{'Authorization': '"),
        ("proxy-authorization=Token abcdef12", "proxy-authorization="),
        ("sent bearer abcdEF12.ghij", "sent bearer "),
        ("https://x/v1?api_key=abc123&model=m", "https://x/v1?api_key="),
        ('{"api_key": "zzz-top"}', '{"api_key": "'),
        ("x-api-key: abcd1234efgh", "x-api-key: "),
        ("access_token=ya29.a0AfH6", "access_token="),
        ("password: hunter22abc", "password: "),
        ("Incorrect API key provided: sk-proj-abc123DEF456ghi", "Incorrect API key provided: "),
        ("key sk-ant-api03-abcdefghijkl-mnop", "key "),
        ("https://team:hunter2@proxy.example/v1", "https://team:"),
    ],
)
def test_credential_shapes_are_redacted(text: str, kept: str) -> None:
    out = redact(text)
    assert out.startswith(kept + REDACTED), out
    secret = text[len(kept) :].strip("'\"{}")
    assert secret.split()[-1].strip("'\"{}") not in out


@pytest.mark.parametrize(
    "text",
    [
        "password: expected a string, got int",  # a field named like a secret keeps its words
        "api_key_env: MEM0_KEY is not set",
        "max_tokens=512 and 20 tokens left",
        "task-abcdefghij failed: status 500",
        "judge failed: the answer names the wrong city",
        "write to ops@example.com or see https://team@proxy.example/v1",
        "--store postgresql://memgauge:***@db/x: write postgresql://USER:PASSWORD@HOST:PORT/DB",
    ],
)
def test_ordinary_messages_keep_their_words(text: str) -> None:
    assert redact(text) == text


def test_configured_keys_go_wherever_they_appear_and_before_the_cut() -> None:
    register_secret(KEY)
    text = f"you said {KEY}, again {KEY}"
    assert redact(text) == f"you said {REDACTED}, again {REDACTED}"
    # cut right through the second key: nothing of it is left, since redaction comes first
    cut = redact(text, limit=len(f"you said {KEY}, again ") + 12)
    assert "UNITCANARY" not in cut
    assert KEY[:12] not in cut
    register_secret("short")  # too short to be told from a word: not a secret
    assert redact("a short text") == "a short text"


def test_credential_named_environment_values_are_secrets(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_SERVICE_TOKEN", "tok-0123456789-envcanary")
    assert redact("echo tok-0123456789-envcanary") == f"echo {REDACTED}"


@pytest.mark.parametrize(
    "text",
    [
        "Recall@10 = 1.000",
        "RR@5 = 0.000",
        "AUTHORIZATION: x",
        "a Bearer here",
        "the KeY",
        "SK-abc",
        "PassWord",
        "\u017fecret=abcd1234efgh",  # long s: IGNORECASE takes it for an s
        "the \u212aey",  # Kelvin sign: IGNORECASE takes it for a k
        "caf\u00e9 token",
        "caf\u00e9 only",
        "",
    ],
)
def test_the_ascii_cue_gives_the_case_blind_patterns_answer(text: str) -> None:
    assert redact_module._cued(text) == (redact_module._CUE.search(text) is not None)


def test_a_changed_environment_and_a_key_registered_later_are_seen_at_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    first, second = "tok-1111111111-envcanary", "tok-2222222222-envcanary"
    monkeypatch.setenv("MY_OTHER_TOKEN", first)
    assert redactor()(f"echo {first}") == f"echo {REDACTED}"
    monkeypatch.setenv("MY_OTHER_TOKEN", second)
    assert redactor()(f"echo {first} {second}") == f"echo {first} {REDACTED}"
    monkeypatch.delenv("MY_OTHER_TOKEN")
    assert redact(f"echo {second}") == f"echo {second}"
    late = "mgk-LATECANARY-0123456789"
    assert redact(f"echo {late}") == f"echo {late}"
    register_secret(late)
    assert redact(f"echo {late}") == f"echo {REDACTED}"


def _client(server: FakeOpenAIServer, **kw: object) -> OpenAIClient:
    cfg = LLMConfig(model="m", base_url=server.base_url, api_key=KEY, backoff=0.01, max_retries=0)
    return OpenAIClient(cfg, **kw)  # type: ignore[arg-type]


@pytest.mark.parametrize("status", [400, 429, 500, 503])
def test_openai_client_errors_hold_no_key(status: int) -> None:
    with FakeOpenAIServer(api_key=KEY) as server:
        server.fail(Fault(status, ECHO_BODY, echo_auth=True))
        client = _client(server)
        with pytest.raises(LLMError) as info:
            client.complete(ChatRequest.of([{"role": "user", "content": "hi"}]))
        client.close()
    message = str(info.value)
    assert "Incorrect API key provided: " + REDACTED in message
    assert "UNITCANARY" not in message


def test_a_non_json_error_body_and_a_malformed_reply_hold_no_key() -> None:
    with FakeOpenAIServer(api_key=KEY) as server:
        server.fail(
            Fault(
                502, "<html>upstream said: Authorization: {authorization}</html>", echo_auth=True
            ),
            Fault(200, "not json {key}", echo_auth=True),
        )
        client = _client(server)
        for _ in range(2):
            with pytest.raises(LLMError) as info:
                client.complete(ChatRequest.of([{"role": "user", "content": "hi"}]))
            assert "UNITCANARY" not in str(info.value), info.value
        client.close()


def test_a_cached_400_holds_no_key_in_the_file_or_on_replay(tmp_path: Path) -> None:
    db = tmp_path / "c.db"
    with FakeOpenAIServer(api_key=KEY) as server:
        server.fail(Fault(400, ECHO_BODY, echo_auth=True))
        client = CachingClient(_client(server), SQLiteResponseCache(db))
        request = ChatRequest.of([{"role": "user", "content": "hi"}])
        for _ in range(2):  # the call, then the replay of the cached 400
            with pytest.raises(LLMError, match="bad_request") as info:
                client.complete(request)
            assert "UNITCANARY" not in str(info.value)
        assert server.n_requests == 1
        client.close()
    assert b"UNITCANARY" not in db.read_bytes()


def test_anthropic_errors_hold_no_key() -> None:
    pytest.importorskip("anthropic")
    from memgauge.llm.anthropic import AnthropicClient

    with FakeOpenAIServer(api_key=KEY) as server:
        server.fail(*[Fault(s, ECHO_BODY, echo_auth=True) for s in (400, 429, 500)])
        cfg = LLMConfig(
            model="claude-x",
            base_url=server.base_url,
            api_key=KEY,
            provider="anthropic",
            max_retries=0,
        )
        client = AnthropicClient(cfg)
        for _ in range(3):
            with pytest.raises(LLMError) as info:
                client.complete(ChatRequest.of([{"role": "user", "content": "hi"}]))
            assert "UNITCANARY" not in str(info.value), info.value
        client.close()


def test_embedder_errors_hold_no_key() -> None:
    from memgauge.embed.openai import OpenAIEmbedder

    with FakeOpenAIServer(api_key=KEY) as server:
        server.fail(Fault(400, ECHO_BODY, echo_auth=True))
        emb = OpenAIEmbedder("m", base_url=server.base_url, api_key=KEY, max_retries=0)
        with pytest.raises(SubjectError) as info:
            emb.embed(["a text"])
        emb.close()
    assert "answered 400" in str(info.value)
    assert "UNITCANARY" not in str(info.value)


@pytest.mark.parametrize("status", [400, 500])
def test_http_subject_errors_hold_no_key(status: int, monkeypatch: pytest.MonkeyPatch) -> None:
    from memgauge.subjects.http import HttpSubject

    secret = "svc-SUBJECTCANARY-5e4d3c2b1a09"
    monkeypatch.setenv("MEMORY_SERVICE_CREDENTIAL", secret)  # a name no pattern knows
    with FakeOpenAIServer(api_key=secret) as server:
        subject = HttpSubject(
            server.base_url, api_key_env="MEMORY_SERVICE_CREDENTIAL", max_retries=0
        )
        server.fail(Fault(status, '{"error": "key {key} is not allowed here"}', echo_auth=True))
        with pytest.raises(SubjectError) as info:
            subject.reset()
        subject.close()
    assert "not allowed here" in str(info.value)
    assert "SUBJECTCANARY" not in str(info.value)


def test_a_password_in_the_base_url_is_not_in_a_failed_call_s_message() -> None:
    """A failed call names its endpoint: a proxy's base URL may carry a password
    (`https://user:PASSWORD@host/v1`), which was shown as it is."""
    with FakeOpenAIServer() as server:
        server.fail(Fault(500))
        base_url = server.base_url.replace("://", "://team:hunter2@")
        # no key: aiohttp sends the URL's credentials (it refuses both at once)
        client = OpenAIClient(LLMConfig(model="m", base_url=base_url, api_key="", max_retries=0))
        try:
            with pytest.raises(LLMError) as caught:
                client.complete(ChatRequest.of([{"role": "user", "content": "hi"}]))
        finally:
            client.close()
    said = str(caught.value)
    assert "hunter2" not in said, said
    assert f"://team:{REDACTED}@127.0.0.1" in said, said
