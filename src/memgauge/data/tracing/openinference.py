"""OpenInference spans (read by `data.importers.otel`) as trace `Span`s.

The attributes read, from OpenInference's semantic conventions: `openinference.span.kind`
(Phoenix: `span_kind`), `session.id`, `input.value`, `output.value`, `tag.tags`; on LLM spans
`llm.model_name`, `llm.token_count.prompt` / `.completion` / `.total` and
`llm.output_messages.{i}.message.content`; on TOOL spans `tool.name` (else the span's name);
on RETRIEVER spans what `data.importers.spans` reads. The status is OTLP's `status.code`
(2 or `STATUS_CODE_ERROR`) or Phoenix's `status_code` (`ERROR`), with its message, else (an
ERROR without a description, as instrumentations set it) the `exception` event's type and
message, as the SDK records an exception.
"""

from __future__ import annotations

import re
from typing import Any

from memgauge.data.importers.common import ImportReport
from memgauge.data.importers.otel import ENDS_BEFORE_START, RawSpan, first, key_values, span_times
from memgauge.data.importers.spans import DroppedSpanError, search_of
from memgauge.data.tracing.model import (
    KINDS,
    LLMCall,
    Retrieval,
    Span,
    SpanKind,
    ToolCall,
    token_count,
)

__all__ = ["span_of"]

_TOKENS = ("prompt", "completion", "total")
_DOC = re.compile(r"retrieval\.documents\.\d+\.document\.\w+")
_EVENT_NAME = re.compile(r"events\.\d+\.name")


def _exception(raw: RawSpan) -> str | None:
    """The last `exception` event's `type: message` (the SDK's own description of an exception
    it records): OTLP's `events`, each with attributes as `{key, value}`, or Phoenix's, the
    same flattened (`events.0.attributes.exception.message`)."""
    events = raw.span.get("events")
    found: list[dict[str, Any]] = []
    if isinstance(events, list):
        for i, event in enumerate(events):
            if isinstance(event, dict) and event.get("name") == "exception":
                attributes = event.get("attributes") or []
                found.append(
                    attributes
                    if isinstance(attributes, dict)
                    else key_values(attributes, f"events.{i}.attributes")
                )
    else:  # flattened: events.{i}.name, events.{i}.attributes.exception.message
        for key, name in raw.span.items():
            if name == "exception" and _EVENT_NAME.fullmatch(key):
                at = key.removesuffix("name") + "attributes."
                found.append(
                    {k.removeprefix(at): v for k, v in raw.span.items() if k.startswith(at)}
                )
    if not found:
        return None
    kind, message = (first(found[-1], f"exception.{k}") for k in ("type", "message"))
    return ": ".join(str(x) for x in (kind, message) if x is not None) or None


def _error(raw: RawSpan) -> str | None:
    attrs = raw.attrs
    # OTLP keeps `status` an object; Phoenix's export flattens it to `status_code`
    status = raw.span.get("status")
    status = status if isinstance(status, dict) else {}
    span = {**raw.span, **{f"status.{k}": v for k, v in status.items()}}
    code = first(span, "status.code", "status_code")
    if code in (2, "2", "STATUS_CODE_ERROR", "ERROR"):
        return str(
            first(span, "status.message", "status_message")
            or _exception(raw)
            or first(attrs, "exception.message")
            or "error"
        )
    return None


def _kind(raw: RawSpan, report: ImportReport) -> SpanKind:
    kind = raw.kind
    if kind is None:
        if any(_DOC.fullmatch(k) for k in raw.attrs):
            return "RETRIEVER"  # as the retriever import reads it (it counts this)
        report.add("spans_without_kind")
        return "UNKNOWN"
    if kind not in KINDS:
        report.add("spans_of_unknown_kind")
        return "UNKNOWN"
    return kind  # narrowed to a SpanKind by the check against KINDS just above


def _tokens(attrs: dict[str, Any], report: ImportReport) -> dict[str, int | None]:
    out: dict[str, int | None] = {}
    for part in _TOKENS:
        out[f"{part}_tokens"] = token_count(attrs.get(f"llm.token_count.{part}"), report)
    if all(v is None for v in out.values()):
        report.add("llm_spans_without_token_counts")
    return out


def _llm(raw: RawSpan, span_id: str, error: str | None, report: ImportReport) -> LLMCall:
    attrs = raw.attrs
    model = first(attrs, "llm.model_name")
    if model is None:
        report.add("llm_spans_without_model")
    text = first(attrs, "llm.output_messages.0.message.content", "output.value")
    return LLMCall(
        span_id=span_id,
        model=None if model is None else str(model),
        output=None if text is None else str(text),
        error=error,
        **_tokens(attrs, report),
    )


def _tool(raw: RawSpan, span_id: str, error: str | None, report: ImportReport) -> ToolCall:
    name = first(raw.attrs, "tool.name") or first(raw.span, "name")
    if name is None:
        report.add("tool_spans_without_name")
    return ToolCall(
        span_id=span_id,
        name=None if name is None else str(name),
        arguments=raw.attrs.get("input.value"),
        result=raw.attrs.get("output.value"),
        error=error,
    )


def span_of(raw: RawSpan, report: ImportReport) -> tuple[Span, DroppedSpanError | None]:
    """The span, and why its search could not be read when it is a retriever's that cannot be
    (the span is kept, without a retrieval). A malformed value raises `SpanError`."""
    attrs, span = raw.attrs, raw.span
    kind = _kind(raw, report)
    span_id = raw.span_id
    if span_id is None:
        report.add("spans_without_id")
        span_id = f"line{raw.line}:{raw.path}" if raw.line is not None else f"at:{raw.path}"
    trace_id = raw.trace_id
    if trace_id is None:
        report.add("spans_without_trace_id_read_as_their_own_trace")
        trace_id = f"span:{span_id}"
    error = _error(raw)
    times = span_times(span)
    if times.backwards:
        report.add(ENDS_BEFORE_START)
    dropped: DroppedSpanError | None = None
    retrieval = tool = llm = None
    if kind == "RETRIEVER":
        try:
            found = search_of(raw, report)
        except DroppedSpanError as why:
            dropped = why
        else:
            retrieval = (
                None
                if found is None
                else Retrieval(
                    span_id=span_id,
                    query=found.query,
                    result_ids=list(found.result_ids),
                    scores=list(found.scores),
                    latency_ms=found.latency_ms,
                )
            )
    elif kind == "TOOL":
        tool = _tool(raw, span_id, error, report)
    elif kind == "LLM":
        llm = _llm(raw, span_id, error, report)
    tags = attrs.get("tag.tags")
    session = attrs.get("session.id")
    return (
        Span(
            span_id=span_id,
            trace_id=trace_id,
            parent_id=raw.parent_id,
            kind=kind,
            name=None if first(span, "name") is None else str(first(span, "name")),
            session_id=None if session in (None, "") else str(session),
            start_ns=times.start_ns,
            end_ns=times.end_ns,
            input=attrs.get("input.value"),
            output=attrs.get("output.value"),
            tags=[str(t) for t in tags] if isinstance(tags, list) else [],
            error=error,
            line=raw.line,
            retrieval=retrieval,
            tool_call=tool,
            llm_call=llm,
        ),
        dropped,
    )
