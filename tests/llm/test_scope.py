"""Per-run LLM scopes: two runs going at once in one process each hear only their own calls'
usage, and cancelling one stops only its calls (issue 15, item 5)."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import pytest

from memgauge.llm import FakeOpenAIServer
from memgauge.llm._loop import cancel_pending
from memgauge.llm.context import llm_context
from memgauge.llm.scope import CallScope
from memgauge.llm.types import ChatRequest


def _ask(text: str) -> ChatRequest:
    return ChatRequest.of([{"role": "user", "content": text}])


def test_each_scope_hears_only_its_own_calls(monkeypatch: pytest.MonkeyPatch) -> None:
    # held as a run holds it: the context's pools close when the test's calls are done
    with FakeOpenAIServer() as srv, llm_context().hold():
        monkeypatch.setenv("OPENAI_BASE_URL", srv.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "k")
        client = llm_context().client(model="fake")
        meter = llm_context().meter
        a, b = CallScope("a"), CallScope("b")
        heard: dict[str, list[dict[str, Any]]] = {"a": [], "b": [], "all": []}
        stops = [
            meter.listen(lambda m, d: heard["a"].append(dict(d)), scope=a),
            meter.listen(lambda m, d: heard["b"].append(dict(d)), scope=b),
            meter.listen(lambda m, d: heard["all"].append(dict(d))),
        ]

        def calls(scope: CallScope, n: int) -> None:
            for i in range(n):
                scope.bind(client.complete)(_ask(f"{scope.name} {i}"))

        threads = [
            threading.Thread(target=calls, args=(a, 3)),
            threading.Thread(target=calls, args=(b, 5)),
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        for stop in stops:
            stop()
    calls_of = {k: sum(d.get("calls", 0) for d in v) for k, v in heard.items()}
    requests_of = {k: sum(d.get("requests", 0) for d in v) for k, v in heard.items()}
    assert calls_of == {"a": 3, "b": 5, "all": 8}
    assert requests_of == {"a": 3, "b": 5, "all": 8}


def test_cancelling_a_scope_cancels_only_its_calls(monkeypatch: pytest.MonkeyPatch) -> None:
    with FakeOpenAIServer(latency=1.0) as srv, llm_context().hold():
        monkeypatch.setenv("OPENAI_BASE_URL", srv.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "k")
        monkeypatch.setenv("MEMGAUGE_LLM_MAX_RETRIES", "0")
        client = llm_context().client(model="fake")
        a, b = CallScope("a"), CallScope("b")
        outcome: dict[str, str] = {}

        def call(scope: CallScope) -> None:
            try:
                scope.bind(client.complete)(_ask(scope.name))
                outcome[scope.name] = "answered"
            except asyncio.CancelledError:
                outcome[scope.name] = "cancelled"

        threads = {s.name: threading.Thread(target=call, args=(s,)) for s in (a, b)}
        for t in threads.values():
            t.start()
        # both calls are in flight (sent, and waited for by their scopes) before one is
        # cancelled: under load a call can reach the server before its scope holds it
        while srv.n_requests < 2 or a.waiting < 1 or b.waiting < 1:
            time.sleep(0.01)
        assert cancel_pending(a) == 1
        for t in threads.values():
            t.join()
        assert outcome == {"a": "cancelled", "b": "answered"}
        # a cancelled scope refuses new calls; another scope still calls
        with pytest.raises(asyncio.CancelledError):
            a.bind(client.complete)(_ask("again"))
        assert b.bind(client.complete)(_ask("again")).content
