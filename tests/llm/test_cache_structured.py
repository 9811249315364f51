"""The response cache (exact replay, repeat indexes, cache-only misses) and structured output
(JSON in the shapes models send, schema fallback, one repair, honest failure)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from memgauge.errors import CacheMissError, LLMError
from memgauge.llm import (
    CachingClient,
    ChatRequest,
    FakeOpenAIServer,
    Fault,
    LLMConfig,
    Message,
    ScriptedClient,
    acomplete_structured,
    extract_json,
    request_key,
)
from memgauge.llm.openai import OpenAIClient
from memgauge.store.llm_cache import SQLiteResponseCache


class Score(BaseModel):
    score: int


def _req(text: str = "q", repeat: int = 0) -> ChatRequest:
    return ChatRequest.of([{"role": "user", "content": text}], repeat=repeat)


def test_cache_replays_exactly_and_keeps_repeats_apart(tmp_path: Path) -> None:
    cache = SQLiteResponseCache(tmp_path / "c.db")
    with FakeOpenAIServer() as server:
        server.script(["first", "second", "third"])
        inner = OpenAIClient(LLMConfig(model="m", base_url=server.base_url, api_key="sk-TOPSECRET"))
        client = CachingClient(inner, cache)
        a = client.complete(_req())
        again = client.complete(_req())
        other = client.complete(_req(repeat=1))
        assert (a.content, again.content, other.content) == ("first", "first", "second")
        assert again.cached
        assert again.attempts == 0
        assert len(server.requests) == 2
        # replay from the cache only: no request, same answers; a miss is an error, not a call
        replay = CachingClient(inner, cache, "only")
        assert replay.complete(_req()).content == "first"
        with pytest.raises(CacheMissError, match="cache-only"):
            replay.complete(_req("never asked"))
        assert len(server.requests) == 2
        refresh = CachingClient(inner, cache, "refresh")
        assert refresh.complete(_req()).content == "third"
        inner.close()
    cache.close()
    # no key or header reaches the cache file
    assert b"TOPSECRET" not in (tmp_path / "c.db").read_bytes()


def test_the_key_covers_model_messages_parameters_and_repeat() -> None:
    base = _req()
    keys = {
        request_key("m", base),
        request_key("other", base),
        request_key("m", _req("q2")),
        request_key("m", _req(repeat=2)),
        request_key("m", ChatRequest(base.messages, temperature=0.7)),
        request_key("m", ChatRequest(base.messages, response_format={"type": "json_object"})),
    }
    assert len(keys) == 6
    assert request_key("m", base) == request_key("m", _req())


@pytest.mark.parametrize(
    ("text", "how"),
    [
        ('{"score": 3}', "direct"),
        ('Here you go:\n```json\n{"score": 3}\n```\nThanks', "fenced"),
        ('My verdict is {"score": 3} as requested.', "extracted"),
    ],
)
def test_json_is_found_where_models_put_it(text: str, how: str) -> None:
    assert extract_json(text) == ({"score": 3}, how)


def test_no_json_is_an_error() -> None:
    with pytest.raises(ValueError, match="no JSON"):
        extract_json("I think it is good {not json}")


def _structured(client: object) -> object:
    async def go() -> object:
        try:
            return await acomplete_structured(client, [Message("user", "grade")], Score)  # type: ignore[arg-type]
        finally:
            aclose = getattr(client, "aclose", None)
            if aclose is not None:
                await aclose()  # a loop's connection pool is closed on that loop

    return asyncio.run(go())


def test_repair_once_then_record_the_route() -> None:
    client = ScriptedClient(["no json here", '{"score": 4}'])
    out = _structured(client)
    assert out.value == Score(score=4)  # type: ignore[attr-defined]
    assert out.route == "json_schema/direct+repair"  # type: ignore[attr-defined]
    repair = client.requests[1].messages
    assert repair[-2].role == "assistant"
    assert repair[-2].content == "no json here"
    assert "could not be used" in repair[-1].content


def test_unparsable_after_repair_is_a_failure_not_a_value() -> None:
    out = _structured(ScriptedClient(["nope", '{"score": "high"}']))
    assert out.value is None  # type: ignore[attr-defined]
    assert "unparsable after one repair" in out.error  # type: ignore[attr-defined]
    failed = _structured(ScriptedClient([LLMError("server", "down", attempts=5)]))
    assert failed.value is None
    assert "down" in failed.error


def test_an_endpoint_without_json_schema_falls_back_to_json_mode() -> None:
    with FakeOpenAIServer() as server:
        server.fail(Fault(400, '{"error": {"message": "response_format json_schema unsupported"}}'))
        server.script(['{"score": 2}'])
        client = OpenAIClient(LLMConfig(model="m", base_url=server.base_url))
        out = _structured(client)
        assert out.value == Score(score=2)  # type: ignore[attr-defined]
        assert out.route == "json_object/direct"  # type: ignore[attr-defined]
        assert client.structured == "json_object"
        formats = [r["json"].get("response_format", {}).get("type") for r in server.requests]
        assert formats == ["json_schema", "json_object"]
        client.close()


def test_json_schema_request_carries_the_model_schema() -> None:
    client = ScriptedClient(['{"score": 1}'])
    _structured(client)
    fmt = client.requests[0].response_format
    assert fmt is not None
    assert fmt["json_schema"]["schema"]["properties"]["score"]["type"] == "integer"
    json.dumps(fmt)


def test_identical_requests_in_flight_are_made_once(tmp_path: Path) -> None:
    cache = SQLiteResponseCache(tmp_path / "c.db")
    with FakeOpenAIServer(latency=0.05) as server:
        inner = OpenAIClient(LLMConfig(model="m", base_url=server.base_url))
        client = CachingClient(inner, cache)

        async def main() -> list[str]:
            rs = await asyncio.gather(*(client.acomplete(_req("same")) for _ in range(5)))
            await inner.aclose()
            return [r.content for r in rs]

        assert asyncio.run(main()) == ["OK"] * 5
        assert len(server.requests) == 1
    cache.close()


def test_a_replay_follows_the_original_json_mode_fallback(tmp_path: Path) -> None:
    cache = SQLiteResponseCache(tmp_path / "c.db")
    with FakeOpenAIServer() as server:
        server.fail(Fault(400, '{"error": {"message": "response_format json_schema unsupported"}}'))
        server.script(['{"score": 2}'])
        first = OpenAIClient(LLMConfig(model="m", base_url=server.base_url))
        out = _structured(CachingClient(first, cache))
        assert out.route == "json_object/direct"  # type: ignore[attr-defined]
        # a new process: its client starts at json_schema again; the stored 400 sends the
        # replay down the same path, with no request
        fresh = OpenAIClient(LLMConfig(model="m", base_url=server.base_url))
        replay = _structured(CachingClient(fresh, cache, "only"))
        assert replay.value == Score(score=2)  # type: ignore[attr-defined]
        assert replay.route == "json_object/direct"  # type: ignore[attr-defined]
        assert len(server.requests) == 2
    cache.close()


def test_refresh_replaces_what_the_cache_holds(tmp_path: Path) -> None:
    cache = SQLiteResponseCache(tmp_path / "c.db")
    with FakeOpenAIServer() as server:
        server.script(["old", "new"])
        inner = OpenAIClient(LLMConfig(model="m", base_url=server.base_url))
        assert CachingClient(inner, cache).complete(_req()).content == "old"
        assert CachingClient(inner, cache, "refresh").complete(_req()).content == "new"
        assert CachingClient(inner, cache, "only").complete(_req()).content == "new"
        inner.close()
    cache.close()


def test_one_model_id_at_two_endpoints_is_two_cache_entries(tmp_path: Path) -> None:
    cache = SQLiteResponseCache(tmp_path / "c.db")
    with FakeOpenAIServer() as a, FakeOpenAIServer() as b:
        a.script(["from a"])
        b.script(["from b"])
        ca = OpenAIClient(LLMConfig(model="llama3", base_url=a.base_url))
        cb = OpenAIClient(LLMConfig(model="llama3", base_url=b.base_url))
        assert CachingClient(ca, cache).complete(_req()).content == "from a"
        assert CachingClient(cb, cache).complete(_req()).content == "from b"
        ca.close()
        cb.close()
    cache.close()


def test_a_cancelled_leader_does_not_cancel_those_waiting_on_it(tmp_path: Path) -> None:
    cache = SQLiteResponseCache(tmp_path / "c.db")
    with FakeOpenAIServer(latency=0.2) as server:
        inner = OpenAIClient(LLMConfig(model="m", base_url=server.base_url))
        client = CachingClient(inner, cache)

        async def main() -> str:
            leader = asyncio.create_task(client.acomplete(_req("same")))
            await asyncio.sleep(0.05)
            waiter = asyncio.create_task(client.acomplete(_req("same")))
            await asyncio.sleep(0.05)
            leader.cancel()
            result = await waiter
            await inner.aclose()
            return result.content

        assert asyncio.run(main()) == "OK"
    cache.close()


def test_a_forgotten_answer_is_asked_again_but_a_replay_keeps_it(tmp_path: Path) -> None:
    """A caller that cannot use an answer (an optimizer's reply with no text) drops it, so
    the cache does not keep it as final; a `--cache-only` replay forgets nothing."""
    cache = SQLiteResponseCache(tmp_path / "c.db")
    with FakeOpenAIServer() as server:
        server.script(["unusable", "usable", "third"])
        inner = OpenAIClient(LLMConfig(model="m", base_url=server.base_url))
        client = CachingClient(inner, cache)
        assert client.complete(_req()).content == "unusable"
        client.forget(_req())
        assert client.complete(_req()).content == "usable"
        assert client.complete(_req()).content == "usable"  # kept: nobody forgot it
        replay = CachingClient(inner, cache, "only")
        replay.forget(_req())
        assert replay.complete(_req()).content == "usable"
        assert len(server.requests) == 2
        inner.close()
    cache.close()


class _MissedTheOtherProcess:
    """A second process's connection to the same cache file, whose lookup ran just before the
    first process stored its answer (the race two workers of a sharded run can have)."""

    def __init__(self, path: Path) -> None:
        self.cache = SQLiteResponseCache(path)
        self.looked = False

    def get(self, key: str) -> dict[str, object] | None:
        if not self.looked:
            self.looked = True
            return None
        return self.cache.get(key)

    def put(
        self, key: str, model: str, response: dict[str, object], *, replace: bool = False
    ) -> None:
        self.cache.put(key, model, response, replace=replace)


def test_two_processes_asking_at_once_both_use_the_first_answer_stored(tmp_path: Path) -> None:
    first_process = SQLiteResponseCache(tmp_path / "c.db")
    second_process = _MissedTheOtherProcess(tmp_path / "c.db")
    with FakeOpenAIServer() as server:
        server.script(["first", "second"])
        inner = OpenAIClient(LLMConfig(model="m", base_url=server.base_url))
        a = CachingClient(inner, first_process).complete(_req())
        b = CachingClient(inner, second_process).complete(_req())
        assert len(server.requests) == 2  # both paid: neither saw the other's answer in time
        # the run uses what a replay will give, for both
        assert a.content == b.content == "first"
        assert CachingClient(inner, first_process, "only").complete(_req()).content == "first"
        inner.close()
    first_process.close()
    second_process.cache.close()


def test_an_unparsable_reply_is_a_failure_now_and_asked_again_on_a_rerun(tmp_path: Path) -> None:
    """A judge's reply that does not parse (even after the repair) is a recorded failure, but
    not a cached final answer: the next run asks again and scores; a `--cache-only` replay
    of the failed run still replays the failure, without a request."""
    cache = SQLiteResponseCache(tmp_path / "c.db")
    with FakeOpenAIServer() as server:
        server.script(["not json", "still not json", '{"score": 3}'])
        inner = OpenAIClient(LLMConfig(model="m", base_url=server.base_url))
        failed = _structured(CachingClient(inner, cache))
        assert failed.value is None  # type: ignore[attr-defined]
        assert failed.retryable  # type: ignore[attr-defined]
        assert len(server.requests) == 2
        replay = _structured(CachingClient(inner, cache, "only"))
        assert replay.value is None  # type: ignore[attr-defined]
        assert "unparsable after one repair" in replay.error  # type: ignore[attr-defined]
        assert len(server.requests) == 2
        rerun = _structured(CachingClient(inner, cache))
        assert rerun.value == Score(score=3)  # type: ignore[attr-defined]
        assert len(server.requests) == 3
        again = _structured(CachingClient(inner, cache))  # a good answer is kept
        assert again.value == Score(score=3)  # type: ignore[attr-defined]
        assert len(server.requests) == 3
        inner.close()
    cache.close()


class _SawItUnusable:
    """A second process's connection to the same cache file, whose lookup ran just before the
    first process stored its new answer over the one marked unusable."""

    def __init__(self, path: Path, seen: dict[str, object] | None) -> None:
        self.cache = SQLiteResponseCache(path)
        self.seen = seen

    def get(self, key: str) -> dict[str, object] | None:
        seen, self.seen = self.seen, None
        return seen if seen is not None else self.cache.get(key)

    def put(self, key: str, model: str, response: dict[str, object], **how: Any) -> None:
        self.cache.put(key, model, response, **how)


def test_two_processes_asking_again_at_once_both_use_the_first_new_answer(
    tmp_path: Path,
) -> None:
    """Two workers that both find the answer marked unusable both ask again: the second's
    new answer was stored over the first's, which that worker had used, so a replay of its
    item gave another answer than the run had."""
    first_process = SQLiteResponseCache(tmp_path / "c.db")
    with FakeOpenAIServer() as server:
        server.script(["unusable", "second", "third"])
        inner = OpenAIClient(LLMConfig(model="m", base_url=server.base_url))
        client = CachingClient(inner, first_process)
        assert client.complete(_req()).content == "unusable"
        client.forget(_req())
        key = request_key("m", _req(), scope=client.scope)
        second_process = _SawItUnusable(tmp_path / "c.db", first_process.get(key))
        a = client.complete(_req())
        b = CachingClient(inner, second_process).complete(_req())
        assert len(server.requests) == 3  # both asked again
        assert a.content == b.content == "second"
        assert CachingClient(inner, first_process, "only").complete(_req()).content == "second"
        inner.close()
    first_process.close()
    second_process.cache.close()


def test_a_cache_file_that_is_no_database_is_refused_with_the_caches_advice(
    tmp_path: Path,
) -> None:
    """MEMGAUGE_LLM_CACHE on a text file was told to "give the path of a memgauge store (for
    example MEMGAUGE_HOME/results.db)", the results store, as the cache (fuzzC-6)."""
    from memgauge.errors import UsageError
    from memgauge.store.llm_cache import SQLiteResponseCache

    text = tmp_path / "notes.txt"
    text.write_text("not a database\n", encoding="utf-8")
    with pytest.raises(UsageError) as caught:
        SQLiteResponseCache(text)
    message = str(caught.value)
    assert "give the path of an LLM response cache (MEMGAUGE_LLM_CACHE" in message
    assert "results.db" not in message
