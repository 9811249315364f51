"""Whole traces kept in the results store (revision 0021), on SQLite and on PostgreSQL: each
trace read back as it was read from its file, a file imported twice kept once, long texts cut
at the documented size, and the list's filters and order."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import sqlalchemy as sa

from memgauge import api
from memgauge.cli.main import main
from memgauge.data.tracing import TraceSet, read_traces
from memgauge.store.traces import CUT, TEXT_LIMIT, TraceStore

TRACES = Path(__file__).resolve().parents[1] / "data" / "traces"
FILES = ("otlp_agent.jsonl", "phoenix_spans.jsonl", "langsmith_runs.json")


def _count(where: str, table: str) -> int:
    with TraceStore(where) as kept, kept._read() as c:
        return int(c.execute(sa.text(f"SELECT COUNT(*) FROM {table}")).scalar_one())


@pytest.mark.parametrize("name", FILES)
def test_each_trace_reads_back_as_it_was_read(store_where: str, name: str) -> None:
    traces, _ = read_traces(TRACES / name)
    assert api.store_traces(traces, store_where)["traces_stored"] == len(traces.traces)
    for trace in traces.traces:
        assert api.stored_trace(trace.trace_id, store_where) == trace
    assert api.stored_trace("no-such-trace", store_where) is None


def test_the_stored_rows_hold_what_the_list_shows(store_where: str) -> None:
    traces, _ = read_traces(TRACES / "otlp_agent.jsonl")
    api.store_traces(traces, store_where)
    page = api.stored_traces(store_where)
    assert page.total == 2
    failed, agent = page.rows  # newest first: the failed one started later
    assert (agent.trace_id, agent.session_id, agent.root_name) == (
        "4bf92f3577b34da6a3ce929d0e0e4736",
        "s-42",
        "support_agent",
    )
    assert agent.answer == "Your boat is moored at pier 7 in Porto."
    assert (agent.n_spans, agent.n_retrievals, agent.n_tool_calls, agent.n_llm_calls) == (
        4,
        1,
        1,
        1,
    )
    assert (agent.prompt_tokens, agent.completion_tokens, agent.total_tokens) == (412, 23, 435)
    assert agent.duration_ms == pytest.approx(1840.0)
    assert agent.format == "otlp-json"
    # no call gave a count: n/a, never 0
    assert (failed.prompt_tokens, failed.answer) == (None, None)
    assert failed.error == "RateLimitError: 429 Too Many Requests"


def test_a_file_imported_twice_keeps_each_trace_once(
    store_where: str, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["logs", "import-traces", str(TRACES / "langsmith_runs.json"), "--store", store_where]
    for replaced in (0, 4):
        assert main([*args, "--json"]) == 0
        counts = json.loads(capsys.readouterr().out)["counts"]
        assert (counts["traces_stored"], counts["traces_replaced"]) == (4, replaced)
    assert _count(store_where, "traces") == 4
    assert _count(store_where, "trace_spans") == 8


def test_filters_by_session_error_and_answer_text(store_where: str) -> None:
    for name in FILES:
        api.store_traces(read_traces(TRACES / name)[0], store_where)

    def ids(
        session: str | None = None, has_error: bool | None = None, q: str | None = None
    ) -> set[str]:
        page = api.stored_traces(store_where, session=session, has_error=has_error, q=q)
        return {r.trace_id for r in page.rows}

    assert len(ids()) == 8
    assert ids(session="s-42") == {
        "4bf92f3577b34da6a3ce929d0e0e4736",
        "5b8efff798038103d269b633813fc60d",
    }
    assert ids(has_error=True) == {
        "5b8efff798038103d269b633813fc60d",
        "1f0e3b2a-7c44-4e51-9a0b-2d3c4e5f6a08",
    }
    assert len(ids(has_error=False)) == 6
    assert len(ids(q="PORTO")) == 3
    assert ids(q="%") == set()  # a literal substring, not a LIKE pattern
    page = api.stored_traces(store_where, limit=3, offset=6)
    assert (len(page.rows), page.total) == (2, 8)
    with TraceStore(store_where) as kept:
        assert kept.sessions() == [("s-42", 2), ("sess-7", 2), ("thread-1", 2), ("thread-2", 1)]


def test_long_texts_are_cut_at_the_documented_size(store_where: str) -> None:
    traces, _ = read_traces(TRACES / "phoenix_spans.jsonl")
    trace = traces.traces[0]
    long = "x" * (TEXT_LIMIT + 100)
    spans = [
        s.model_copy(
            update={
                "output": long,
                "llm_call": s.llm_call and s.llm_call.model_copy(update={"output": long}),
            }
        )
        for s in trace.spans
    ]
    big = traces.model_copy(
        update={"traces": [trace.model_copy(update={"spans": spans, "answer": long})]}
    )
    counts = api.store_traces(TraceSet.model_validate(big.model_dump()), store_where)
    # each span's output, and each model call's own
    assert counts["span_texts_cut"] == len(spans) + sum(s.llm_call is not None for s in spans)
    got = api.stored_trace(trace.trace_id, store_where)
    assert got is not None
    assert got.answer == "x" * TEXT_LIMIT + CUT
    assert got.spans[0].output == "x" * TEXT_LIMIT + CUT
    llm = got.llm_calls[0]
    assert llm.output == "x" * TEXT_LIMIT + CUT
    assert llm.model == "claude-3-5-haiku-20241022"  # what is not long is kept whole


def test_reading_a_missing_store_is_refused_and_creates_nothing(tmp_path: Path) -> None:
    from memgauge.errors import UsageError

    with pytest.raises(UsageError, match="no results store"):
        api.stored_traces(tmp_path / "none.db")
    assert not (tmp_path / "none.db").exists()
