"""Production extraction calls in a trace file as the trace lines `memgauge extraction
--outputs` scores (seed 001's online phase: the LangSmith runs tagged `memory_extraction`).

A run (or span) tagged `memory_extraction` becomes `{id, conversation, existing_memory, output,
tags}`: its inputs' `conversation` (or `messages`, `chat_history`, `transcript`; LangChain
messages' `human` / `ai` / `system` types read as user / assistant / system) and
`existing_memory` (or `memory`, `current_memory`), its outputs' `output` (LangSmith's wrapping
of a returned value) or the outputs whole. A run under another tagged run (LangSmith copies a
run's tags to its children: the extractor's own LLM call) is the same call and is not read
twice. A tagged run that failed, has no output or no conversation cannot be judged: it is
skipped and counted per reason, never scored as an extraction of nothing.
"""

from __future__ import annotations

import json
from typing import Any

from memgauge.data.importers.common import ImportReport
from memgauge.data.tracing.model import Span, TraceSet

__all__ = ["EXTRACTION_TAG", "extraction_lines"]

EXTRACTION_TAG = "memory_extraction"
_CONVERSATION = ("conversation", "messages", "chat_history", "transcript")
_MEMORY = ("existing_memory", "memory", "current_memory")
_ROLES = {"human": "user", "ai": "assistant", "system": "system", "user": "user"}
_ROLES |= {"assistant": "assistant"}


def _mapping(value: Any) -> dict[str, Any] | None:
    """Inputs or outputs as a mapping: LangSmith's object, or OpenInference's JSON text."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return None
    return value if isinstance(value, dict) else None


def _turn(message: Any) -> Any:
    if not isinstance(message, dict):
        return message  # the trace line's model says what is wrong with it
    inner = message.get("kwargs")  # a serialized LangChain message keeps its fields here
    kwargs: dict[str, Any] = inner if isinstance(inner, dict) else message
    role = kwargs.get("role") or kwargs.get("type") or message.get("type")
    return {"role": _ROLES.get(str(role), role), "content": kwargs.get("content")}


def _conversation(inputs: dict[str, Any]) -> Any:
    value = next((inputs[k] for k in _CONVERSATION if inputs.get(k)), None)
    if isinstance(value, list) and value and isinstance(value[0], list):
        value = value[0]  # a chat model's batch of one: [[messages]]
    if isinstance(value, list):
        return [_turn(m) for m in value]
    return value


def _skip(report: ImportReport, key: str, span: Span) -> None:
    report.add(key)
    if not any(n.startswith(f"{key}:") for n in report.notes):
        report.notes.append(f"{key}: the first is run {span.span_id}")


def extraction_lines(traces: TraceSet, report: ImportReport) -> list[dict[str, Any]]:
    """The trace lines of the spans tagged `memory_extraction` (module docstring)."""
    lines: list[dict[str, Any]] = []
    for trace in traces.traces:
        tagged = {s.span_id for s in trace.spans if EXTRACTION_TAG in s.tags}
        parents = {s.span_id: s.parent_id for s in trace.spans}
        for span in trace.spans:
            if span.span_id not in tagged:
                continue
            up, seen = parents.get(span.span_id), set()
            while up is not None and up not in tagged and up not in seen:
                seen.add(up)
                up = parents.get(up)
            if up is not None and up in tagged:
                report.add("extraction_runs_inside_another_not_read_twice")
                continue
            inputs = _mapping(span.input) or {}
            outputs = span.output
            if span.error is not None:
                _skip(report, "extraction_runs_failed_skipped", span)
                continue
            mapped = _mapping(outputs)
            if mapped is not None and "output" in mapped:
                outputs = mapped["output"]
            elif mapped is not None:
                outputs = mapped
            if outputs in (None, "", {}):
                _skip(report, "extraction_runs_without_output_skipped", span)
                continue
            conversation = _conversation(inputs)
            if not conversation:
                _skip(report, "extraction_runs_without_conversation_skipped", span)
                continue
            memory: Any = next((inputs[k] for k in _MEMORY if k in inputs), [])
            lines.append(
                {
                    "id": span.span_id,
                    "conversation": conversation,
                    "existing_memory": memory if memory is not None else [],
                    "output": outputs,
                    "tags": span.tags,
                }
            )
    report.counts["extraction_lines"] = len(lines)
    return lines
