"""Write otel_sdk.jsonl: an agent's traces made by the OpenTelemetry Python SDK itself.

Run by hand (not by the tests; it imports no memgauge), with the packages named in README.md:

    pip install opentelemetry-sdk opentelemetry-exporter-otlp-proto-common protobuf \
        openinference-semantic-conventions
    python tests/data/traces/make_otel.py

The spans are recorded by the SDK's own `TracerProvider`, encoded by the OTLP exporter's own
`encode_spans` into the protobuf `ExportTraceServiceRequest` it sends, and written as protobuf's
`json_format.MessageToJson` writes that message, one request a line (the OpenTelemetry
Collector's file exporter writes one request a line too). Attribute names are OpenInference's
constants, set as its instrumentations set them (documents as flattened indexed keys). Ids come
from the SDK's own `RandomIdGenerator` with Python's `random` seeded, and times are given, so a
second run writes the same file.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

from google.protobuf import json_format
from openinference.semconv.trace import (
    DocumentAttributes,
    MessageAttributes,
    OpenInferenceSpanKindValues,
    SpanAttributes,
    ToolCallAttributes,
)
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import (
    Status,
    StatusCode,
    format_span_id,
    format_trace_id,
    set_span_in_context,
)

HERE = Path(__file__).parent
T0 = 1_767_225_600_000_000_000  # 2026-01-01T00:00:00Z in Unix nanoseconds
MS = 1_000_000
KIND = SpanAttributes.OPENINFERENCE_SPAN_KIND


def _docs(prefix: str, docs: list[tuple[str, float, str]]) -> dict[str, object]:
    out: dict[str, object] = {}
    for i, (doc_id, score, content) in enumerate(docs):
        at = f"{prefix}.{i}."
        out[at + DocumentAttributes.DOCUMENT_ID] = doc_id
        out[at + DocumentAttributes.DOCUMENT_SCORE] = score
        out[at + DocumentAttributes.DOCUMENT_CONTENT] = content
        out[at + DocumentAttributes.DOCUMENT_METADATA] = json.dumps({"source": "memory"})
    return out


def _trace(tracer, session: str, question: str, start: int, *, fail: bool) -> None:  # type: ignore[no-untyped-def]
    root = tracer.start_span(
        "agent.answer",
        start_time=start,
        attributes={
            KIND: OpenInferenceSpanKindValues.AGENT.value,
            SpanAttributes.SESSION_ID: session,
            SpanAttributes.INPUT_VALUE: question,
            SpanAttributes.INPUT_MIME_TYPE: "text/plain",
            SpanAttributes.TAG_TAGS: ["agent", "memory"],
        },
    )
    ctx = set_span_in_context(root)
    query = question.lower().rstrip("?")
    retriever = tracer.start_span(
        "memory.search",
        context=ctx,
        start_time=start + 1 * MS,
        attributes={
            KIND: OpenInferenceSpanKindValues.RETRIEVER.value,
            SpanAttributes.SESSION_ID: session,
            SpanAttributes.INPUT_VALUE: query,
            **_docs(
                SpanAttributes.RETRIEVAL_DOCUMENTS,
                [
                    ("mem-17", 0.82, "The boat is moored at Lagos marina."),
                    ("mem-4", 0.41, "Dentist appointment in Porto on Tuesday."),
                ],
            ),
        },
    )
    retriever.end(end_time=start + 13 * MS)
    tool = tracer.start_span(
        "lookup_calendar",
        context=ctx,
        start_time=start + 14 * MS,
        attributes={
            KIND: OpenInferenceSpanKindValues.TOOL.value,
            SpanAttributes.TOOL_NAME: "lookup_calendar",
            SpanAttributes.TOOL_PARAMETERS: json.dumps({"day": "tuesday"}),
            SpanAttributes.INPUT_VALUE: json.dumps({"day": "tuesday"}),
        },
    )
    if fail:  # as the SDK records an exception raised inside `start_as_current_span`
        error = TimeoutError("calendar service timed out after 5 s")
        tool.record_exception(error, timestamp=start + 19 * MS)
        tool.set_status(Status(StatusCode.ERROR, f"{type(error).__name__}: {error}"))
    else:
        tool.set_attribute(SpanAttributes.OUTPUT_VALUE, json.dumps({"events": ["dentist 10:00"]}))
        tool.set_status(Status(StatusCode.OK))
    tool.end(end_time=start + 20 * MS)
    llm = tracer.start_span(
        "ChatCompletion",
        context=ctx,
        start_time=start + 21 * MS,
        attributes={
            KIND: OpenInferenceSpanKindValues.LLM.value,
            SpanAttributes.LLM_MODEL_NAME: "gpt-4o-mini-2024-07-18",
            SpanAttributes.LLM_PROVIDER: "openai",
            f"{SpanAttributes.LLM_INPUT_MESSAGES}.0.{MessageAttributes.MESSAGE_ROLE}": "user",
            f"{SpanAttributes.LLM_INPUT_MESSAGES}.0.{MessageAttributes.MESSAGE_CONTENT}": question,
        },
    )
    if fail:  # an instrumentation's way: the exception event, and ERROR without a description
        error = RuntimeError("Error code: 429 - rate limit reached for gpt-4o-mini")
        llm.record_exception(error, timestamp=start + 30 * MS)
        llm.set_status(Status(StatusCode.ERROR))
        llm.end(end_time=start + 31 * MS)
        root.set_status(Status(StatusCode.ERROR, "the model call failed"))
        root.end(end_time=start + 32 * MS)
        return
    answer = "Your boat is at Lagos marina; the dentist is on Tuesday at 10:00."
    out = f"{SpanAttributes.LLM_OUTPUT_MESSAGES}.0."
    llm.set_attributes(
        {
            out + MessageAttributes.MESSAGE_ROLE: "assistant",
            out + MessageAttributes.MESSAGE_CONTENT: answer,
            out + f"{MessageAttributes.MESSAGE_TOOL_CALLS}.0.{ToolCallAttributes.TOOL_CALL_ID}": (
                "call_1"
            ),
            SpanAttributes.LLM_TOKEN_COUNT_PROMPT: 412,
            SpanAttributes.LLM_TOKEN_COUNT_COMPLETION: 23,
            SpanAttributes.LLM_TOKEN_COUNT_TOTAL: 435,
            SpanAttributes.OUTPUT_VALUE: answer,
        }
    )
    llm.end(end_time=start + 540 * MS)
    root.set_attribute(SpanAttributes.OUTPUT_VALUE, answer)
    root.set_status(Status(StatusCode.OK))
    root.end(end_time=start + 541 * MS)


def main() -> None:
    random.seed(20260101)  # the SDK's RandomIdGenerator draws from `random`
    exporter = InMemorySpanExporter()
    # `service.instance.id` given: the SDK would draw a fresh uuid4 each run
    resource = Resource.create({"service.name": "boat-agent", "service.instance.id": "boat-1"})
    provider = TracerProvider(resource=resource)
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("memgauge.fixture", "1.0")
    lines, truth = [], []
    for n, (question, fail) in enumerate(
        [("Where is my boat and when is the dentist?", False), ("When is the dentist?", True)]
    ):
        exporter.clear()
        _trace(tracer, "session-porto", question, T0 + n * 60_000 * MS, fail=fail)
        spans = exporter.get_finished_spans()
        lines.append(json_format.MessageToJson(encode_spans(spans), indent=None))
        truth.extend(_truth(span) for span in spans)
    (HERE / "otel_sdk.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    # what the SDK itself holds of each span, in its own spelling: the tests' answer key
    text = json.dumps(truth, indent=1, ensure_ascii=False)
    (HERE / "otel_sdk.expected.json").write_text(text + "\n", encoding="utf-8")


def _truth(span) -> dict[str, object]:  # type: ignore[no-untyped-def]
    return {
        "name": span.name,
        "trace_id": format_trace_id(span.context.trace_id),
        "span_id": format_span_id(span.context.span_id),
        "parent_id": None if span.parent is None else format_span_id(span.parent.span_id),
        "start_ns": span.start_time,
        "end_ns": span.end_time,
        "status": span.status.status_code.name,
        "status_description": span.status.description,
        "events": [{"name": e.name, "attributes": dict(e.attributes or {})} for e in span.events],
        "attributes": dict(span.attributes or {}),
    }


if __name__ == "__main__":
    main()
