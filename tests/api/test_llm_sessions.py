"""A run closes the LLM connection pools (aiohttp sessions) it opened, however it ends; runs
going at once do not close them under each other."""

from __future__ import annotations

import asyncio
import gc
import os
import signal
import threading
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.conftest import _LEFT_OPEN, RecallSuite, SessionWatch, _Collector
from tests.helpers import judge_rule

import memgauge
from memgauge import api
from memgauge.data.records import ItemRecord
from memgauge.llm import FakeOpenAIServer
from memgauge.llm.context import llm_context
from memgauge.llm.types import ChatRequest

N = 6


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as srv:
        srv.respond(judge_rule)
        monkeypatch.setenv("OPENAI_BASE_URL", srv.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "k")
        monkeypatch.setenv("MEMGAUGE_MODEL", "fake-judge")
        yield srv


@pytest.fixture
def judged(server: FakeOpenAIServer, recall_suite: RecallSuite) -> Path:
    """N items, every other one answerable, judged by two LLM judges (two models: two
    clients, each with its own connection pool)."""
    items = [{"id": f"q{i}", "input": f"code of {i}?", "expected": f"K{i}X"} for i in range(N)]
    memories = [{"id": f"m{i}", "text": f"The code of {i} is K{i}X."} for i in range(0, N, 2)]
    rubric = {"rubric": {"prompt": "Is it helpful?", "model": "fake-rubric"}}
    return recall_suite(items, memories, [{"qa-judge": "longmemeval"}, rubric], name="judged")


def test_run_suite_closes_every_session_its_judges_opened(
    judged: Path, server: FakeOpenAIServer, tmp_path: Path, aiohttp_sessions: SessionWatch
) -> None:
    report = memgauge.run_suite(judged, store=tmp_path / "r.db")
    assert report.status == "completed"
    items = {r.item_id: r for r in report.items}
    assert [_value(items[f"q{i}"], "qa-judge") for i in range(N)] == [1.0, 0.0] * (N // 2)
    assert [_value(r, "rubric") for r in items.values()] == [0.75] * N
    assert len(server.requests) == 2 * N
    assert aiohttp_sessions.count == 2  # one pool per judge model, over real HTTP
    assert aiohttp_sessions.still_open() == []  # closed when run_suite returned
    assert aiohttp_sessions.logged == []


def _value(row: ItemRecord, evaluator: str) -> float | None:
    verdict = row.verdict(evaluator)
    assert verdict is not None
    return verdict.value


class _Interrupt:
    """Ctrl-C after the first item is recorded (`advance` runs in the recorder's thread: the
    signal reaches the run's, as a user's Ctrl-C does)."""

    def __init__(self) -> None:
        self.sent = False

    def start(self, run_id: str, total: int, done: int) -> None:
        pass

    def phase(self, subject: str, task: str, corpus: str | None) -> None:
        pass

    def advance(self, row: ItemRecord) -> None:
        if not self.sent:
            self.sent = True
            os.kill(os.getpid(), signal.SIGINT)


def test_an_interrupted_run_closes_its_sessions_too(
    judged: Path, server: FakeOpenAIServer, tmp_path: Path, aiohttp_sessions: SessionWatch
) -> None:
    server.latency = 0.5  # the other items' judges are still waiting when Ctrl-C comes
    with pytest.raises(KeyboardInterrupt):
        memgauge.run_suite(judged, store=tmp_path / "r.db", progress=_Interrupt())
    assert 0 < len(server.requests) < 2 * N  # interrupted with the judges' pools in use
    assert aiohttp_sessions.count >= 1
    assert aiohttp_sessions.still_open() == []
    with api.open_store(tmp_path / "r.db") as store:
        (run,) = store.list_runs()
    assert run["status"] == "cancelled"


def _ask(text: str) -> ChatRequest:
    return ChatRequest.of([{"role": "user", "content": text}])


def test_holders_overlap_the_last_one_closes(
    server: FakeOpenAIServer, aiohttp_sessions: SessionWatch
) -> None:
    ctx = llm_context()
    outer_holds, inner_done = threading.Event(), threading.Event()
    answers: list[str] = []

    def other_run() -> None:  # a second run in another thread, ending first
        with ctx.hold():
            outer_holds.wait()
            answers.append(ctx.client().complete(_ask("one")).content)
        inner_done.set()

    thread = threading.Thread(target=other_run)
    thread.start()
    with ctx.hold():
        outer_holds.set()
        inner_done.wait()
        thread.join()
        (session,) = aiohttp_sessions.opened
        assert not session.closed  # the other run ended: this one still uses the pool
        answers.append(ctx.client().complete(_ask("two")).content)
        assert list(aiohttp_sessions.opened) == [session]  # the same pool, not a new one
    assert session.closed  # the last holder let go
    assert answers == [judge_rule({"messages": [{"content": "one"}]})] * 2
    assert len(server.requests) == 2


def test_a_session_left_open_is_reported(
    server: FakeOpenAIServer, aiohttp_sessions: SessionWatch
) -> None:
    """The check itself: a client used outside any hold and never closed is caught (then
    closed here, so that this test passes)."""
    ctx = llm_context()
    assert ctx.client().complete(_ask("x")).content
    (left,) = aiohttp_sessions.still_open()
    ctx.close()
    assert left.closed
    assert aiohttp_sessions.still_open() == []


def test_a_session_dropped_in_a_cycle_is_found_by_a_collection_after_a_freeze(
    aiohttp_sessions: SessionWatch,
) -> None:
    """The check's collection (tests/conftest.py `_Collector`) scans only what is new since
    it last ran: a session dropped unclosed inside a reference cycle, which only the cyclic
    collector frees, is still found and logged, after a collection that froze the heap and
    after one that thawed it. (The test's own watch, which holds what it opens, lets go of
    these.)"""

    async def drop_one() -> None:
        import aiohttp

        cycle: dict[str, object] = {"session": aiohttp.ClientSession()}
        cycle["self"] = cycle  # unreachable once returned, but refcounting cannot free it
        aiohttp_sessions.opened.remove(cycle["session"])

    collector = _Collector()
    logged: list[str] = []
    loop = asyncio.new_event_loop()
    # what aiohttp says of a session collected while open, kept from this test's own check
    loop.set_exception_handler(lambda _loop, context: logged.append(context["message"]))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ResourceWarning)
            collector.collect()  # the first is full, and freezes what survives
            assert collector.full_at > 0
            for n in range(3):  # young collections: the frozen heap is not scanned
                loop.run_until_complete(drop_one())
                assert len(logged) == n
                collector.collect()
                assert logged == ["Unclosed client session"] * (n + 1)
            collector.full_at = 1  # as if the heap had grown: thaw and collect everything
            loop.run_until_complete(drop_one())
            collector.collect()
            assert logged == ["Unclosed client session"] * 4
            assert collector.full_at > 1
    finally:
        loop.close()


def test_the_check_counts_the_frozen_heap_once_a_collection(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`gc.get_freeze_count()` walks every frozen object (CPython 3.11): late in a worker,
    0.04-0.1 CPU-s a call, three a collection after each test that opened a session. A young
    collection and one after a thaw ask it once; what the young one froze is counted from
    its survivors."""
    collector = _Collector()
    collector.collect()  # the first is full, and freezes what survives
    asked: list[int] = []
    count = gc.get_freeze_count

    def counted() -> int:
        asked.append(count())
        return asked[-1]

    monkeypatch.setattr(gc, "get_freeze_count", counted)
    kept = [[n] for n in range(1000)]  # survivors of the young collection
    collector.collect()
    assert len(asked) == 1
    assert collector.frozen >= asked[0] + len(kept)
    assert abs(count() - collector.frozen) < 50  # the estimate: what the collection froze
    gc.freeze()  # a run's end, as gcquiet's restore does it
    gc.unfreeze()
    collector.collect()
    assert len(asked) == 2
    assert count() > 0  # frozen again


def test_after_a_run_thawed_the_heap_the_check_does_not_walk_it_and_still_finds_a_dropped_session(
    aiohttp_sessions: SessionWatch,
) -> None:
    """A run thaws what the check froze when it ends (memgauge's `_util.gcquiet`): the check's
    next collection would walk the whole heap, 0.15-0.7 CPU-s after each test that ran a
    suite. It freezes it again unwalked; a session dropped unclosed meanwhile is still found
    open, by the watch that holds it."""

    async def drop_one() -> None:
        import aiohttp

        cycle: dict[str, object] = {"session": aiohttp.ClientSession()}
        cycle["self"] = cycle

    collector = _Collector()
    collector.collect()  # the first is full, and freezes what survives
    loop = asyncio.new_event_loop()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ResourceWarning)
            loop.run_until_complete(drop_one())
    finally:
        loop.close()
    gc.freeze()  # a run's end, as gcquiet's restore does it
    gc.unfreeze()
    walked: list[int] = []

    def seen(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            walked.append(info["generation"])

    gc.callbacks.append(seen)
    try:
        collector.collect()
    finally:
        gc.callbacks.remove(seen)
    assert 2 not in walked  # the oldest generation, where the thawed heap is, not walked
    assert gc.get_freeze_count() > 0  # frozen again
    (left,) = aiohttp_sessions.still_open()
    assert not left.closed
    # found: this test's own check lets go of it, kept unclosed and never collected
    aiohttp_sessions.opened.remove(left)
    _LEFT_OPEN.append(left)
