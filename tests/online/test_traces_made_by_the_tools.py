"""`memgauge logs import-traces` on trace exports made by the tracing tools themselves (the
OpenTelemetry SDK and its OTLP encoder, LangSmith's own run schema), checked against what the
tool held: tests/data/traces/README.md says how each file was made."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tests.online.test_import_traces import TRACES, _cli

from memgauge.cli.main import main
from memgauge.data.traces import export_report
from memgauge.data.tracing import Span, read_traces
from memgauge.errors import DataError

SDK = TRACES / "otel_sdk.jsonl"
#: the trace exports in tests/data/traces that the tools made themselves (its README says how)
MADE_BY_TOOLS = (
    "otel_sdk.jsonl",
    "langsmith_sdk_runs.json",
    "langsmith_sdk_runtree.jsonl",
    "langchain_runs.json",
    "phoenix_sdk_spans.jsonl",
    "phoenix_sdk_rest.json",
)


def _expected(name: str) -> list[dict[str, Any]]:
    return list(json.loads((TRACES / name).read_text(encoding="utf-8")))


def _spans(path: Path) -> dict[str, Span]:
    traces, _ = read_traces(path)
    return {s.span_id: s for t in traces.traces for s in t.spans}


def test_every_span_the_sdk_recorded_is_read_with_its_ids_times_kind_and_session() -> None:
    want = _expected("otel_sdk.expected.json")
    got = _spans(SDK)
    assert set(got) == {w["span_id"] for w in want}
    for w in want:
        span, attrs = got[w["span_id"]], w["attributes"]
        assert (span.trace_id, span.parent_id, span.name) == (
            w["trace_id"],
            w["parent_id"],
            w["name"],
        )
        assert (span.start_ns, span.end_ns) == (w["start_ns"], w["end_ns"])
        assert span.kind == attrs["openinference.span.kind"]
        assert span.session_id == attrs.get("session.id", span.session_id)
        assert span.input == attrs.get("input.value")
        assert span.output == attrs.get("output.value")
        assert span.tags == list(attrs.get("tag.tags", []))


def _sdk_error(span: dict[str, Any]) -> str | None:
    """The error as the SDK recorded it: the status's description, else the exception event's
    type and message (the SDK's own `f"{type}: {message}"` description)."""
    if span["status"] != "ERROR":
        return None
    if span["status_description"]:
        return str(span["status_description"])
    (event,) = [e for e in span["events"] if e["name"] == "exception"]
    return f"{event['attributes']['exception.type']}: {event['attributes']['exception.message']}"


def test_searches_model_calls_tools_and_errors_are_those_the_sdk_recorded() -> None:
    want = {w["span_id"]: w for w in _expected("otel_sdk.expected.json")}
    traces, _ = read_traces(SDK)
    for trace in traces.traces:
        for search in trace.retrievals:
            attrs = want[search.span_id]["attributes"]
            assert search.query == attrs["input.value"]
            docs = sorted({k.split(".")[2] for k in attrs if k.startswith("retrieval.documents.")})
            assert search.result_ids == [
                attrs[f"retrieval.documents.{i}.document.id"] for i in docs
            ]
            assert search.scores == [attrs[f"retrieval.documents.{i}.document.score"] for i in docs]
        for llm in trace.llm_calls:
            attrs = want[llm.span_id]["attributes"]
            assert llm.model == attrs["llm.model_name"]
            for part in ("prompt", "completion", "total"):
                # a count the SDK did not record is n/a (None), never 0
                assert getattr(llm, f"{part}_tokens") == attrs.get(f"llm.token_count.{part}")
            assert llm.output == attrs.get("llm.output_messages.0.message.content")
            assert llm.error == _sdk_error(want[llm.span_id])
        for tool in trace.tool_calls:
            attrs = want[tool.span_id]["attributes"]
            assert (tool.name, tool.arguments, tool.result) == (
                attrs["tool.name"],
                attrs["input.value"],
                attrs.get("output.value"),
            )
            assert tool.error == _sdk_error(want[tool.span_id])
        for span in trace.spans:
            assert span.error == _sdk_error(want[span.span_id])


def test_the_sdk_export_read_through_the_cli(capsys: pytest.CaptureFixture[str]) -> None:
    want = _expected("otel_sdk.expected.json")
    c = _cli(capsys, str(SDK))["counts"]
    assert c["spans"] == len(want)
    assert c["traces"] == len({w["trace_id"] for w in want})
    assert (c["sessions"], c["answers"], c["traces_without_answer"]) == (1, 1, 1)
    assert c["spans_with_error"] == sum(w["status"] == "ERROR" for w in want)
    assert c["prompt_tokens"] == sum(w["attributes"].get("llm.token_count.prompt", 0) for w in want)
    assert c["otlp_exports"] == 2


def test_an_error_without_a_description_is_its_exception_event_in_phoenix_too(
    tmp_path: Path,
) -> None:
    """Phoenix keeps the SDK's events as a list of `{name, timestamp, attributes}`."""
    span = {
        "name": "ChatCompletion",
        "span_kind": "LLM",
        "context.span_id": "d01e13be235f461f",
        "context.trace_id": "e52fec142d752a6a05840f4ce50ee168",
        "parent_id": None,
        "start_time": "2026-01-01T00:01:00.021+00:00",
        "status_code": "ERROR",
        "status_message": "",
        "events": [
            {
                "name": "exception",
                "timestamp": "2026-01-01T00:01:00.030+00:00",
                "attributes": {"exception.type": "RuntimeError", "exception.message": "429"},
            }
        ],
        "attributes.llm.model_name": "gpt-4o-mini",
    }
    path = tmp_path / "spans.jsonl"
    path.write_text(json.dumps(span) + "\n", encoding="utf-8")
    assert _spans(path)["d01e13be235f461f"].error == "RuntimeError: 429"


def test_an_exception_event_whose_attribute_has_no_key_names_its_field(tmp_path: Path) -> None:
    record = json.loads(SDK.read_text(encoding="utf-8").splitlines()[1])
    llm = record["resourceSpans"][0]["scopeSpans"][0]["spans"][2]
    assert llm["events"][0]["name"] == "exception"
    llm["events"][0]["attributes"] = [{"value": {"stringValue": "429"}}]
    path = tmp_path / "otel.jsonl"
    path.write_text(json.dumps(record) + "\n", encoding="utf-8")
    with pytest.raises(DataError) as bad:
        read_traces(path)
    assert "resourceSpans.0.scopeSpans.0.spans.2.events.0.attributes.0" in str(bad.value)


LANGSMITH = [TRACES / "langsmith_sdk_runs.json", TRACES / "langsmith_sdk_runtree.jsonl"]


def _runs(path: Path) -> list[dict[str, Any]]:
    """Every run of a LangSmith file as LangSmith wrote it (a tree's runs, or one a line)."""
    if path.suffix == ".jsonl":
        return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]

    def down(run: dict[str, Any]) -> list[dict[str, Any]]:
        return [run, *(r for child in run["child_runs"] or [] for r in down(child))]

    return [r for root in _expected(path.name) for r in down(root)]


def _of_type(path: Path, run_type: str) -> list[dict[str, Any]]:
    return [r for r in _runs(path) if r["run_type"] == run_type]


@pytest.mark.parametrize("path", LANGSMITH, ids=lambda p: p.name)
def test_a_traceable_retrievers_documents_are_its_search(path: Path) -> None:
    traces, report = read_traces(path)
    got = {r.span_id: r for t in traces.traces for r in t.retrievals}
    runs = _of_type(path, "retriever")
    assert runs
    assert set(got) == {r["id"] for r in runs}
    for run in runs:
        docs = run["outputs"]["output"]  # @traceable wraps the returned list
        assert got[run["id"]].query == run["inputs"]["query"]
        assert got[run["id"]].result_ids == [d["metadata"]["id"] for d in docs]
        assert got[run["id"]].scores == [d["metadata"]["score"] for d in docs]
    assert not [k for k in report.counts if k.endswith("_dropped")]


@pytest.mark.parametrize(
    ("outputs", "where"),
    [
        ({"output": "no memory found"}, "outputs.output: is a string"),
        ({"hits": 3}, "outputs: is an object"),
        ({"documents": 5}, "outputs.documents: is an integer"),
    ],
)
def test_a_retrievers_outputs_that_are_no_documents_are_named_where_they_are(
    outputs: dict[str, Any], where: str, tmp_path: Path
) -> None:
    """A @traceable retriever that returned a string was dropped naming outputs.documents, a
    field its run does not have: the field named is the one read (its `output`, else its
    outputs whole)."""
    runs = _expected("langsmith_sdk_runs.json")
    runs[0]["child_runs"][0]["outputs"] = outputs
    path = tmp_path / "runs.json"
    path.write_text(json.dumps(runs), encoding="utf-8")
    _, report = read_traces(path)
    assert report.counts["retriever_spans_documents_not_a_list_dropped"] == 1
    assert any(f"at 0.child_runs.0.{where}, not a list" in note for note in report.notes), (
        report.notes
    )


@pytest.mark.parametrize("path", LANGSMITH, ids=lambda p: p.name)
def test_an_llm_runs_usage_metadata_is_its_token_counts(path: Path) -> None:
    traces, report = read_traces(path)
    got = {c.span_id: c for t in traces.traces for c in t.llm_calls}
    runs = _of_type(path, "llm")
    assert set(got) == {r["id"] for r in runs}
    for run in runs:
        usage = (run["outputs"] or {}).get("usage_metadata") or {}
        call = got[run["id"]]
        assert (call.prompt_tokens, call.completion_tokens, call.total_tokens) == (
            usage.get("input_tokens"),  # a failed call gave none: n/a, never 0
            usage.get("output_tokens"),
            usage.get("total_tokens"),
        )
        assert call.model == run["extra"]["metadata"]["ls_model_name"]
    failed = sum(r["error"] is not None for r in runs)
    assert report.counts["llm_spans_without_token_counts"] == failed
    assert report.counts["prompt_tokens"] == sum(
        (r["outputs"] or {}).get("usage_metadata", {}).get("input_tokens", 0) for r in runs
    )


@pytest.mark.parametrize("path", LANGSMITH, ids=lambda p: p.name)
def test_an_llm_runs_output_is_its_openai_messages_content(path: Path) -> None:
    traces, _ = read_traces(path)
    got = {c.span_id: c for t in traces.traces for c in t.llm_calls}
    for run in _of_type(path, "llm"):
        choices = (run["outputs"] or {}).get("choices")
        want = choices[0]["message"]["content"] if choices else None
        assert got[run["id"]].output == want
        assert got[run["id"]].error == run["error"]


@pytest.mark.parametrize("path", LANGSMITH, ids=lambda p: p.name)
def test_a_traceable_extractor_is_one_trace_line_for_extraction_outputs(path: Path) -> None:
    (run,) = [r for r in _runs(path) if r["name"] == "extract_memories"]
    (child,) = [r for r in _runs(path) if r["parent_run_id"] == run["id"]]
    assert "memory_extraction" in child["tags"]  # @traceable gave its LLM call the tag too
    lines, report = export_report(path)
    assert [line.model_dump(exclude={"case_id"}) for line in lines] == [
        {
            "id": run["id"],
            "conversation": [{**turn, "timestamp": None} for turn in run["inputs"]["conversation"]],
            "existing_memory": run["inputs"]["existing_memory"],
            "output": run["outputs"]["output"],
            "tags": run["tags"],
        }
    ]
    assert report.counts["extraction_runs_inside_another_not_read_twice"] == 1


PHOENIX = TRACES / "phoenix_sdk_spans.jsonl"


def test_phoenixs_own_export_reads_its_token_counts_written_as_floats() -> None:
    rows = [json.loads(line) for line in PHOENIX.read_text(encoding="utf-8").splitlines()]
    traces, report = read_traces(PHOENIX)
    got = {c.span_id: c for t in traces.traces for c in t.llm_calls}
    llm = [r for r in rows if r["span_kind"] == "LLM"]
    assert set(got) == {r["context.span_id"] for r in llm}
    for row in llm:
        for part in ("prompt", "completion", "total"):
            value = row[f"attributes.llm.token_count.{part}"]  # 412.0: pandas' float column
            want = None if value is None else int(value)
            assert getattr(got[row["context.span_id"]], f"{part}_tokens") == want
    assert "llm_token_counts_not_counts_ignored" not in report.counts
    assert report.counts["prompt_tokens"] == 412


def test_phoenixs_own_export_reads_each_error_as_the_sdk_recorded_it() -> None:
    rows = [json.loads(line) for line in PHOENIX.read_text(encoding="utf-8").splitlines()]
    want = {w["name"]: w for w in _expected("otel_sdk.expected.json") if w["status"] == "ERROR"}
    spans = _spans(PHOENIX)
    failed = {s.name: s.error for s in spans.values() if s.error is not None}
    assert failed == {name: _sdk_error(w) for name, w in want.items()}
    assert sorted(failed) == sorted(r["name"] for r in rows if r["status_code"] == "ERROR")


def test_a_token_count_with_a_fraction_is_still_not_a_count(tmp_path: Path) -> None:
    row = json.loads(PHOENIX.read_text(encoding="utf-8").splitlines()[-1])
    row |= {
        "span_kind": "LLM",
        "attributes.openinference.span.kind": "LLM",
        "attributes.llm.token_count.prompt": 412.5,
    }
    path = tmp_path / "spans.jsonl"
    path.write_text(json.dumps(row) + "\n", encoding="utf-8")
    traces, report = read_traces(path)
    (call,) = [c for t in traces.traces for c in t.llm_calls]
    assert call.prompt_tokens is None
    assert report.counts["llm_token_counts_not_counts_ignored"] == 1


def test_phoenixs_rest_api_gives_the_traces_its_dataframe_export_gives() -> None:
    def shape(path: Path) -> list[tuple[Any, ...]]:
        traces, _ = read_traces(path)
        return sorted(
            (
                s.trace_id,
                s.span_id,
                s.parent_id,
                s.kind,
                s.session_id,
                s.start_ns,
                s.end_ns,
                s.error,
                None if s.llm_call is None else s.llm_call.prompt_tokens,
                None if s.retrieval is None else tuple(s.retrieval.result_ids),
            )
            for t in traces.traces
            for s in t.spans
        )

    assert shape(TRACES / "phoenix_sdk_rest.json") == shape(PHOENIX)


def test_a_langchain_agents_runs_read_as_langchain_recorded_them() -> None:
    path = TRACES / "langchain_runs.json"
    runs = {r["run_type"]: r for r in _runs(path)}
    (trace,) = read_traces(path)[0].traces
    assert trace.session_id == runs["chain"]["extra"]["metadata"]["thread_id"]
    assert trace.answer == runs["chain"]["outputs"]["output"]
    (search,) = trace.retrievals
    docs = runs["retriever"]["outputs"]["documents"]  # LangChain's own key, Documents' own ids
    assert (search.query, search.result_ids) == (
        runs["retriever"]["inputs"]["query"],
        [d["id"] for d in docs],
    )
    assert search.scores == [d["metadata"]["score"] for d in docs]
    (llm,) = trace.llm_calls
    (generation,) = runs["llm"]["outputs"]["generations"][0]
    message = generation["message"]["kwargs"]
    assert llm.output == message["content"]
    usage = message["usage_metadata"]
    assert (llm.prompt_tokens, llm.completion_tokens, llm.total_tokens) == (
        usage["input_tokens"],
        usage["output_tokens"],
        usage["total_tokens"],
    )
    assert llm.model is None  # the fake model names none: n/a, not a guess
    (tool,) = trace.tool_calls
    assert (tool.name, tool.result) == (runs["tool"]["name"], runs["tool"]["outputs"]["output"])


@pytest.mark.parametrize("name", MADE_BY_TOOLS)
def test_validate_reads_each_tools_export_as_a_trace(
    name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """`memgauge validate` says what `import-traces` reads: Phoenix's REST response
    ({"data": [spans], "next_cursor"}) was taken for a dataset with two unknown fields."""
    assert main(["validate", str(TRACES / name)]) == 0, capsys.readouterr().err
    assert capsys.readouterr().out.startswith(f"ok  {TRACES / name}  (trace:")
