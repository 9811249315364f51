"""LangMem over a LangGraph store and the OpenAI Agents SDK's session, as subjects, against the
real libraries, offline (memgauge's MiniLM embedder; no LLM is called)."""

from __future__ import annotations

import asyncio

import pytest

from memgauge import api
from memgauge.data.models import EvalQuery, Judgment, Memory, RetrievalDataset
from memgauge.errors import UsageError
from memgauge.report import retrieval_result

MEMS = [
    Memory(id="m1", text="Tax is rounded per invoice line, never on the total"),
    Memory(id="m2", text="Payments go through Stripe"),
    Memory(id="m3", text="Stripe webhooks are verified with the signing secret"),
    Memory(id="m4", text="The office plants are watered on Fridays"),
]
DATASET = RetrievalDataset(
    memories=MEMS,
    queries=[
        EvalQuery(id="q1", text="how are webhook signatures checked?"),
        EvalQuery(id="q2", text="rounding of tax on invoices"),
    ],
    judgments=[
        Judgment(query_id="q1", memory_id="m3", grade=3),
        Judgment(query_id="q2", memory_id="m1", grade=3),
    ],
)


@pytest.fixture
def langmem() -> object:
    pytest.importorskip("langmem", reason="LangMem: pip install 'memgauge[langmem]'")
    from memgauge.subjects.langmem import LangMemSubject

    return LangMemSubject()


def test_langmem_ingest_search_dump_reset(langmem: object) -> None:
    from memgauge.subjects.langmem import LangMemSubject

    assert isinstance(langmem, LangMemSubject)
    langmem.ingest(MEMS)
    found = langmem.search("webhook signature verification", 2)
    assert found.hits[0].id == "m3"  # LangMem's own key mapped back to the dataset's id
    assert found.hits[0].score is not None
    assert [h.rank for h in found.hits] == [1, 2]
    assert sorted(m.id for m in langmem.dump()) == ["m1", "m2", "m3", "m4"]
    assert [e.kind for e in langmem.events] == ["ADD"] * 4
    # the store holds what LangMem's manage tool wrote: {"content": text} under a UUID key
    items = langmem.store.search(langmem.namespace, limit=10)
    assert {i.value["content"] for i in items} == {m.text for m in MEMS}
    langmem.reset()
    assert langmem.dump() == []
    assert langmem.search("Stripe", 3).hits == []


def test_langmem_subjects_do_not_see_each_other(langmem: object) -> None:
    from memgauge.subjects.langmem import LangMemSubject

    other = LangMemSubject()
    other.ingest(MEMS[:1])
    assert [m.id for m in other.dump()] == ["m1"]
    assert langmem.dump() == []  # type: ignore[attr-defined]


def test_langmem_in_a_retrieval_evaluation(tmp_path: object) -> None:
    pytest.importorskip("langmem")
    report = api.evaluate(
        DATASET, {"langmem": {"langmem": {}}}, measures=("RR@10",), resamples=100, store=False
    )
    result = retrieval_result(report.run)
    assert result.systems[0].status == "ok"
    assert result.systems[0].metrics["RR@10"].value == 1.0


def test_agents_session_is_a_recency_window() -> None:
    pytest.importorskip("agents", reason="the Agents SDK: pip install 'memgauge[agents]'")
    from memgauge.subjects.agents_session import AgentsSessionSubject

    s = AgentsSessionSubject(window=3)
    try:
        s.ingest(MEMS[:2])
        s.ingest(MEMS[2:])
        # newest first, the query ignored, at most the window
        assert [h.id for h in s.search("anything", 10).hits] == ["m4", "m3", "m2"]
        assert [h.id for h in s.search("anything", 2).hits] == ["m4", "m3"]
        assert s.search("x", 1).hits[0].text == MEMS[3].text
        assert [m.id for m in s.dump()] == ["m1", "m2", "m3", "m4"]
        s.reset()
        assert s.search("x", 5).hits == []
        assert s.dump() == []
    finally:
        s.close()
    with pytest.raises(UsageError, match="window"):
        AgentsSessionSubject(window=0)


def test_agents_session_is_used_from_a_running_event_loop() -> None:
    """A notebook's cell runs in an event loop: the session's private loop was run in the
    calling thread, "Cannot run the event loop while another loop is running"."""
    pytest.importorskip("agents")
    from memgauge.subjects.registry import build_subject

    async def cell() -> list[str]:
        s = build_subject({"agents-session": {"window": 3}})
        try:
            s.reset()
            s.ingest(MEMS)
            assert [h.id for h in s.search("anything", 2).hits] == ["m4", "m3"]
            return [m.id for m in s.dump()]
        finally:
            s.close()

    assert asyncio.run(cell()) == ["m1", "m2", "m3", "m4"]


def test_agents_session_in_a_retrieval_evaluation() -> None:
    """A window of 2 holds m4 and m3: q1's memory (m3) is found, q2's (m1, the oldest) only
    with the whole session."""
    pytest.importorskip("agents")
    report = api.evaluate(
        DATASET,
        {
            "last-2": {"agents-session": {"window": 2}},
            "all": {"agents-session": {"window": None}},
        },
        measures=("Recall@10",),
        resamples=100,
        store=False,
    )
    result = retrieval_result(report.run)
    by_name = {s.name: s for s in result.systems}
    assert by_name["last-2"].metrics["Recall@10"].value == 0.5
    assert by_name["all"].metrics["Recall@10"].value == 1.0
