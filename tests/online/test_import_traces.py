"""`memgauge logs import-traces`: whole traces (OpenInference spans as OTLP-JSON and Phoenix's
export, LangSmith run trees) read into traces and sessions with their searches, tool calls,
model calls and answers; partial traces counted per reason; unreadable files refused."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from memgauge.cli.main import main
from memgauge.data.importers.otel import nanos
from memgauge.data.tracing import Trace, TraceSet, read_traces

DATA = Path(__file__).resolve().parents[1] / "data"
TRACES = DATA / "traces"
BAD = DATA / "bad"


def _cli(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, Any]:
    assert main(["logs", "import-traces", *args, "--json"]) == 0
    return dict(json.loads(capsys.readouterr().out))


def _by_id(traces: TraceSet) -> dict[str, Trace]:
    return {t.trace_id: t for t in traces.traces}


def test_otlp_json_agent_trace_with_its_searches_tools_model_calls_and_answer() -> None:
    traces, report = read_traces(TRACES / "otlp_agent.jsonl")
    assert traces.format == "otlp-json"
    first = _by_id(traces)["4bf92f3577b34da6a3ce929d0e0e4736"]
    assert first.session_id == "s-42"
    assert first.root_span_id == "00f067aa0ba902b7"
    assert [s.kind for s in first.spans] == ["AGENT", "RETRIEVER", "TOOL", "LLM"]
    assert first.answer == "Your boat is moored at pier 7 in Porto."
    (search,) = first.retrievals
    assert (search.query, search.result_ids) == ("boat mooring location", ["m-pier7", "m-harbour"])
    assert search.scores == [0.91, 0.42]
    assert search.latency_ms == pytest.approx(42.0)
    (tool,) = first.tool_calls
    assert (tool.name, tool.arguments, tool.result) == (
        "lookup_berth",
        '{"pier": 7}',
        '{"status": "occupied"}',
    )
    (llm,) = first.llm_calls
    assert (llm.model, llm.prompt_tokens, llm.completion_tokens, llm.total_tokens) == (
        "gpt-4o-mini-2024-07-18",
        412,
        23,
        435,
    )
    # the second export's ids are base64 (a protobuf JSON encoder's): read as OTLP's hex
    second = _by_id(traces)["5b8efff798038103d269b633813fc60d"]
    assert second.root_span_id == "b7ad6b7169203331"
    assert second.spans[1].parent_id == "b7ad6b7169203331"
    assert second.answer is None  # it failed: no answer, never an empty one
    assert second.error == "RateLimitError: 429 Too Many Requests"
    assert second.llm_calls[0].prompt_tokens is None  # not given: n/a, not 0
    assert [s.trace_ids for s in traces.sessions] == [[first.trace_id, second.trace_id]]
    c = report.counts
    assert (c["agent_spans"], c["retriever_spans"], c["tool_spans"], c["llm_spans"]) == (1, 1, 1, 2)
    assert (c["traces"], c["sessions"], c["answers"], c["spans_with_error"]) == (2, 1, 1, 2)
    assert c["traces_without_answer"] == 1
    assert c["llm_spans_without_token_counts"] == 1
    assert c["prompt_tokens"] == 412  # the sum over the calls that gave one


def test_phoenix_span_export() -> None:
    traces, report = read_traces(TRACES / "phoenix_spans.jsonl")
    assert traces.format == "phoenix"
    first = _by_id(traces)["9f8e7d6c5b4a39281706f5e4d3c2b1a0"]
    assert first.answer == "You said the price is 35 euros a month."
    assert first.retrievals[0].result_ids == ["m-price-35", "m-price-20"]
    assert first.retrievals[0].latency_ms == pytest.approx(45.0)
    assert first.tool_calls[0].name == "calculator"
    assert first.tool_calls[0].result == "420"
    assert first.llm_calls[0].model == "claude-3-5-haiku-20241022"
    # the session is on the root only; the second trace joins it
    assert traces.sessions[0].session_id == "sess-7"
    assert len(traces.sessions[0].trace_ids) == 2
    assert (report.counts["prompt_tokens"], report.counts["completion_tokens"]) == (270, 16)
    assert not any(k.endswith(("_dropped", "_skipped")) for k in report.counts)


def test_langsmith_run_tree() -> None:
    traces, report = read_traces(TRACES / "langsmith_runs.json")
    assert traces.format == "langsmith"
    agent = _by_id(traces)["1f0e3b2a-7c44-4e51-9a0b-2d3c4e5f6a01"]
    assert agent.session_id == "thread-1"  # the thread, not the run's session_id (a project)
    assert [s.kind for s in agent.spans] == ["CHAIN", "RETRIEVER", "TOOL", "LLM"]
    assert agent.retrievals[0].query == "customer city"
    # a Document's id is `id` or `metadata.id`; the one with neither is dropped and counted
    assert agent.retrievals[0].result_ids == ["m-porto", "m-dentists"]
    assert agent.retrievals[0].scores == [0.88, None]
    assert (agent.tool_calls[0].arguments, agent.tool_calls[0].result) == (
        "dentists Porto",
        "12 accounts",
    )
    llm = agent.llm_calls[0]
    assert (llm.model, llm.prompt_tokens, llm.completion_tokens, llm.total_tokens) == (
        "gpt-4o-mini",
        310,
        9,
        319,
    )
    assert llm.output == "Your customers are dentists in Porto."
    assert agent.answer == "Your customers are dentists in Porto."
    failed = _by_id(traces)["1f0e3b2a-7c44-4e51-9a0b-2d3c4e5f6a08"]
    assert (failed.error, failed.answer) == ("RateLimitError: Error code: 429", None)
    assert {s.session_id: len(s.trace_ids) for s in traces.sessions} == {
        "thread-1": 2,
        "thread-2": 1,
    }
    assert report.counts["documents_without_id_dropped"] == 1
    assert report.counts["traces_without_session"] == 1


def test_partial_traces_are_counted_per_reason(capsys: pytest.CaptureFixture[str]) -> None:
    report = _cli(capsys, str(BAD / "traces_partial.jsonl"))
    c = report["counts"]
    assert c["spans_with_missing_parent"] == 1
    assert c["traces_without_root"] == 1
    assert c["traces_with_conflicting_sessions"] == 1
    assert c["spans_repeated"] == 1
    assert c["llm_spans_without_model"] == 1  # the repeated LLM span is counted once
    assert c["tool_spans_without_name"] == 1
    assert c["spans_of_unknown_kind"] == 1
    assert c["retriever_spans_documents_a_string_dropped"] == 1
    # the retriever span whose documents are a string is no search that found nothing
    assert c["retrievals"] == 1
    assert report["dropped"] == [
        {
            "line": 2,
            "field": "attributes.retrieval.documents",
            "why": "is a string, not a list of documents",
        }
    ]
    traces, _ = read_traces(BAD / "traces_partial.jsonl")
    rootless = _by_id(traces)["c0ffee00c0ffee00c0ffee00c0ffee02"]
    assert (rootless.root_span_id, rootless.answer) == (None, None)
    assert rootless.retrievals[0].result_ids == ["m-boat"]
    assert _by_id(traces)["c0ffee00c0ffee00c0ffee00c0ffee01"].session_id == "sess-a"  # the root's


def test_searches_logged_once_and_traces_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db, out = tmp_path / "log.db", tmp_path / "traces.json"
    args = ("--log", "--store", str(db), "--out", str(out))
    report = _cli(capsys, str(TRACES / "langsmith_runs.json"), *args)
    assert report["counts"]["queries_logged"] == 1
    _cli(capsys, str(TRACES / "langsmith_runs.json"), *args)
    with sqlite3.connect(db) as conn:
        rows = conn.execute(
            "SELECT query_id, query, session_id, result_ids, trace_id FROM eval_queries"
        ).fetchall()
    assert rows == [
        (
            "run:1f0e3b2a-7c44-4e51-9a0b-2d3c4e5f6a02",
            "customer city",
            "thread-1",
            '["m-porto", "m-dentists"]',
            "1f0e3b2a-7c44-4e51-9a0b-2d3c4e5f6a01",
        )
    ]
    written = TraceSet.model_validate_json(out.read_text())
    assert len(written.traces) == 4
    # --log keeps the traces whole too, each once
    with sqlite3.connect(db) as conn:
        kept = conn.execute("SELECT trace_id, n_spans FROM traces ORDER BY trace_id").fetchall()
    assert [n for _, n in kept] == [4, 2, 1, 1]


def test_store_alone_keeps_the_traces_and_logs_no_search(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "kept.db"
    assert (
        main(["logs", "import-traces", str(TRACES / "otlp_agent.jsonl"), "--store", str(db)]) == 0
    )
    out = capsys.readouterr().out
    assert "  traces_stored: 2\n  traces_replaced: 0\n" in out
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT COUNT(*) FROM eval_queries").fetchone() == (0,)
        kinds = conn.execute("SELECT kind FROM trace_spans ORDER BY trace_id, seq").fetchall()
    assert [k for (k,) in kinds] == ["AGENT", "RETRIEVER", "TOOL", "LLM", "CHAIN", "LLM"]


def test_a_token_count_past_64_bits_is_no_count_not_an_internal_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A token count of 1e30 (a float, so JSON's 64-bit limit let it by) became an integer the
    store could not keep: exit 70 on SQLite's INTEGER. It is no count, ignored and counted, as
    a negative one is; LangSmith's runs read counts by the same rule."""
    db = tmp_path / "kept.db"
    report = _cli(capsys, str(BAD / "traces_token_count_1e30.jsonl"), "--store", str(db))
    assert report["counts"]["llm_token_counts_not_counts_ignored"] == 1
    assert report["counts"]["traces_stored"] == 2


def test_token_counts_every_store_keeps_and_a_trace_sum_past_them_is_n_a(
    store_where: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A count under 64 bits was read as a count, but PostgreSQL keeps tokens in 32-bit
    INTEGER columns ("integer out of range": exit 70 there), and a trace's sum of two counts
    near 2**63 passed even SQLite's 64 bits (exit 70 on both). A count past 2**31-1 is no count
    on every store (ignored and counted); a trace's sum past it is n/a, counted, not kept."""
    from memgauge.store.traces import TraceStore

    spans = [
        json.loads(ln) for ln in (BAD / "traces_token_count_1e30.jsonl").read_text().splitlines()
    ]
    llm = [s for s in spans if s["span_kind"] == "LLM"]
    llm[0]["attributes.llm.token_count.prompt"] = 2**31 - 1
    spans.append({**llm[0], "context.span_id": "a1b2c3d4e5f60009"})  # its trace: 2**32 - 2
    llm[1]["attributes.llm.token_count.prompt"] = 2**63 - 1
    path = tmp_path / "spans.jsonl"
    path.write_text("".join(json.dumps(s) + "\n" for s in spans))
    report = _cli(capsys, str(path), "--store", store_where)
    c = report["counts"]
    assert c["llm_token_counts_not_counts_ignored"] == 1
    assert c["trace_token_sums_past_32_bits_not_kept"] == 1
    assert c["traces_stored"] == 2
    with TraceStore(store_where) as kept:
        two, one = (kept.get(s["context.trace_id"]) for s in llm)
    assert two is not None
    assert one is not None
    assert (two[0].prompt_tokens, two[0].completion_tokens) == (None, 24)
    assert [c.prompt_tokens for c in two[1].llm_calls] == [2**31 - 1, 2**31 - 1]
    assert (one[0].prompt_tokens, one[1].llm_calls[0].prompt_tokens) == (None, None)


def test_a_time_of_nanoseconds_with_leading_zeros_is_its_value(tmp_path: Path) -> None:
    """More than 19 characters of digits was out of range whatever their value: a time the
    exporter zero-padded (`0001717318801000000000`, 2024-06-02T09:00:01) was refused."""
    runs = json.loads((BAD / "traces_langsmith_time_past_64_bits.json").read_text())
    runs[0]["end_time"] = "0001717318801000000000"
    path = tmp_path / "runs.json"
    path.write_text(json.dumps(runs))
    assert main(["logs", "import-traces", str(path), "--store", str(tmp_path / "kept.db")]) == 0
    assert nanos({"endTimeUnixNano": "0" * 5000 + "5"}, "endTimeUnixNano") == 5


@pytest.mark.parametrize("when", ["9999-12-31T23:59:59.000000", "99999999999999999999999", "²"])
def test_a_time_past_64_bits_of_nanoseconds_is_refused_not_an_internal_error(
    when: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A run ending in 9999 (a "never" sentinel), or at 10**23 ns, was a time SQLite cannot
    keep: `--store` exited 70. A superscript digit, a digit to str.isdigit() and none to
    int(), was an internal error too. Each is refused, exit 2 naming the run's field."""
    runs = json.loads((BAD / "traces_langsmith_time_past_64_bits.json").read_text())
    runs[0]["end_time"] = when
    path = tmp_path / "runs.json"
    path.write_text(json.dumps(runs))
    argv = ["logs", "import-traces", str(path), "--store", str(tmp_path / "kept.db")]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert f"{path}: 0.end_time: {when!r} is " in err
    assert (
        main(["logs", "import-traces", str(BAD / "traces_langsmith_time_past_64_bits.json")]) == 2
    )
    assert "0.end_time: '9999-12-31T23:59:59.000000' is out of range" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("value", "words"),
    [
        ({"arrayValue": "agent, memory"}, "arrayValue: must be an object {values: [...]}"),
        ({"arrayValue": {"values": 5}}, "arrayValue.values: must be a list, got an integer"),
        ({"kvlistValue": ["a"]}, "kvlistValue: must be an object {values: [...]}, got a list"),
    ],
)
def test_an_otlp_array_or_kvlist_value_of_another_shape_is_refused_not_a_crash(
    value: dict[str, Any], words: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An attribute's `arrayValue` or `kvlistValue` that is no `{values: [...]}` object was an
    AttributeError or TypeError: exit 70. It is exit 2 naming the line and the field."""
    bad = BAD / "traces_otlp_array_value_a_string.jsonl"
    assert main(["logs", "import-traces", str(bad)]) == 2
    assert f"{bad}:1: resourceSpans.0.scopeSpans.0.spans.3.attributes.4.value.arrayValue" in (
        capsys.readouterr().err
    )
    doc = json.loads(bad.read_text().split("\n")[0])
    doc["resourceSpans"][0]["scopeSpans"][0]["spans"][3]["attributes"][4]["value"] = value
    path = tmp_path / "otlp.jsonl"
    path.write_text(json.dumps(doc) + "\n" + bad.read_text().split("\n")[1] + "\n")
    assert main(["logs", "import-traces", str(path)]) == 2
    assert words in capsys.readouterr().err


def test_spans_whose_parents_loop_are_counted_not_read_as_a_tree(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A span whose parent is itself, and two spans each other's parent, in a trace with its
    root: each parent is in the file and the trace has a root, so nothing was counted and the
    three spans, under no root, were silently out of its tree."""
    report = _cli(capsys, str(BAD / "traces_parent_cycle.jsonl"))
    c = report["counts"]
    assert c["spans_in_parent_cycle"] == 3
    assert "traces_without_root" not in c
    assert "spans_with_missing_parent" not in c


def test_the_terminal_report_names_kinds_and_reasons(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["logs", "import-traces", str(BAD / "traces_partial.jsonl")]) == 0
    out = capsys.readouterr().out
    assert "by kind: agent 1, retriever 2, llm 1, tool 1, unknown 1" in out
    assert "    traces_without_root: 1" in out


@pytest.mark.parametrize(
    ("body", "words"),
    [
        ("", "file is empty"),
        ('{"resourceSpans": []}', "no spans: not an OTLP-JSON, Phoenix or LangSmith export"),
        ("[]", "no spans"),
        ('{"runs": [{"run_type": "chain", "name": "x"}]}', "runs.0.id: a run needs its id"),
        ('{"run_type": "chain", "id": "r", "child_runs": {"a": 1}}', "child_runs: must be a list"),
        (
            '{"span_kind": "RETRIEVER", "context.span_id": "p", "attributes.input.value": "q",'
            ' "attributes.retrieval.documents": [{"document.id": "a", "document.score": "hi"}]}',
            "traces.json: attributes.retrieval.documents.0.document.score: a score must be a",
        ),
    ],
)
def test_unreadable_trace_files_exit_2_with_file_and_reason(
    body: str, words: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "traces.json"
    path.write_text(body)
    db = tmp_path / "log.db"
    assert main(["logs", "import-traces", str(path), "--log", "--store", str(db)]) == 2
    cap = capsys.readouterr()
    assert words in cap.err, cap.err
    assert "traces.json" in cap.err
    assert "Traceback" not in cap.out + cap.err
    assert not db.exists()


def test_validate_describes_a_trace_export(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", str(TRACES / "langsmith_runs.json")]) == 0
    out = capsys.readouterr().out
    assert (
        "langsmith trace export: 4 traces in 2 sessions, 8 spans; 2 runs tagged"
        " memory_extraction as trace lines"
    ) in out


def test_validate_says_one_trace_session_and_run_in_the_singular(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["validate", str(TRACES / "langsmith_sdk_runs.json")]) == 0
    out = capsys.readouterr().out
    assert "3 traces in 1 session, 10 spans; 1 run tagged memory_extraction" in out, out


def test_openinference_spans_tagged_memory_extraction_are_trace_lines(tmp_path: Path) -> None:
    """The same reading for an OpenInference export: `tag.tags`, and the inputs and outputs
    as the JSON text `input.value` / `output.value` hold."""
    from memgauge.data.traces import export_report

    inputs = {"conversation": "We will never run ads.", "existing_memory": "pricing: 20 euros"}
    span = {
        "name": "extract_memories",
        "span_kind": "CHAIN",
        "context.span_id": "e1",
        "context.trace_id": "t1",
        "attributes.tag.tags": ["memory_extraction"],
        "attributes.input.value": json.dumps(inputs),
        "attributes.input.mime_type": "application/json",
        "attributes.output.value": json.dumps({"output": ["constraint: No ads"]}),
    }
    path = tmp_path / "spans.jsonl"
    path.write_text(json.dumps(span) + "\n")
    (line,), report = export_report(path)
    assert line.key == "e1"
    assert [(t.role, t.content) for t in line.conversation or []] == [
        ("user", "We will never run ads.")
    ]
    assert line.existing_memory == ["pricing: 20 euros"]
    assert line.output == ["constraint: No ads"]
    assert report.counts["extraction_lines"] == 1


def test_a_span_ending_before_it_starts_is_counted_its_duration_n_a(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A retriever span whose end precedes its start (its times swapped) was read with a
    latency of 0 (clamped from -42 ms), counted nowhere: it is counted as the parent cycles
    are, its end and latency are n/a, the trace's end its other spans', and `validate` and
    `logs import-spans` name it too."""
    bad = BAD / "traces_span_ends_before_start.json"
    traces, report = read_traces(bad)
    assert report.counts["spans_ending_before_start"] == 1
    (trace,) = traces.traces
    (search,) = trace.retrievals
    assert search.latency_ms is None
    backwards = next(s for s in trace.spans if s.kind == "RETRIEVER")
    assert (backwards.start_ns, backwards.end_ns) == (1717236000052000000, None)
    assert _cli(capsys, str(bad))["counts"]["spans_ending_before_start"] == 1
    assert main(["validate", str(bad)]) == 0
    assert "; spans_ending_before_start: 1 (its end read as unknown" in capsys.readouterr().out
    db = tmp_path / "q.db"
    assert main(["logs", "import-spans", str(bad), "--store", str(db)]) == 0
    assert json.loads(capsys.readouterr().out)["spans_ending_before_start"] == 1


@pytest.mark.parametrize("command", ["import-traces", "import-spans"])
def test_a_one_line_json_lines_export_names_its_line(
    command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A JSON-lines export of one line parses as one document, and its bad record was named
    without `:1:` where the same record in a file of two lines names its line; a document over
    several lines (`.json`) still names its fields alone."""
    bad = BAD / "traces_otlp_array_value_a_string.jsonl"
    field = "resourceSpans.0.scopeSpans.0.spans.3.attributes.4.value.arrayValue"
    one = tmp_path / "one.jsonl"
    one.write_text("\n" + bad.read_text().split("\n")[0] + "\n")  # a blank line first
    assert main(["logs", command, str(one), "--store", str(tmp_path / "q.db")]) == 2
    assert f"{one}:2: {field}: must be an object" in capsys.readouterr().err
    pretty = tmp_path / "one.json"
    pretty.write_text(json.dumps(json.loads(bad.read_text().split("\n")[0]), indent=1))
    assert main(["logs", command, str(pretty), "--store", str(tmp_path / "q.db")]) == 2
    assert f"{pretty}: {field}: must be an object" in capsys.readouterr().err
