"""Whole traces as memgauge reads them: spans of an agent's run, grouped into traces and
sessions, with what a trace did (its searches, tool calls and model calls) and what it answered.

One model whatever the source (OpenInference spans in OTLP-JSON or Phoenix exports, LangSmith
run trees): each reader builds `Span`s, `group` builds the rest. A number a source did not give
(a model's token counts, a latency) is None, never 0.
"""

from __future__ import annotations

import json
from typing import Any, Literal, get_args

from pydantic import ConfigDict, Field

from memgauge._util.model import Model
from memgauge._util.numbers import INT32_MAX
from memgauge.data.importers.common import ImportReport

__all__ = [
    "KINDS",
    "LLMCall",
    "Retrieval",
    "Session",
    "Span",
    "ToolCall",
    "Trace",
    "TraceSet",
    "as_text",
    "token_count",
]

#: OpenInference's span kinds (`openinference.span.kind`); LangSmith's run types map onto them
SpanKind = Literal[
    "LLM",
    "RETRIEVER",
    "TOOL",
    "AGENT",
    "CHAIN",
    "EMBEDDING",
    "RERANKER",
    "GUARDRAIL",
    "EVALUATOR",
    "UNKNOWN",
]
KINDS: tuple[SpanKind, ...] = get_args(SpanKind)


class _Model(Model):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


class Retrieval(_Model):
    """A search a retriever span (or run) recorded."""

    span_id: str = Field(description="The span (or run) that searched.")
    query: str = Field(description="What was searched for.")
    result_ids: list[str] = Field(description="The documents found, best first.")
    scores: list[float | None] = Field(
        default_factory=list, description="Each result's score as the retriever gave it."
    )
    latency_ms: float | None = Field(default=None, description="How long it took.")


class ToolCall(_Model):
    """A tool the agent ran (a TOOL span, a LangSmith `tool` run)."""

    span_id: str = Field(description="The span (or run) of the call.")
    name: str | None = Field(description="The tool's name; None when the span gives none.")
    arguments: Any = Field(default=None, description="What the tool was called with.")
    result: Any = Field(default=None, description="What it returned.")
    error: str | None = Field(default=None, description="Its error, when it failed.")


class LLMCall(_Model):
    """A call to a model (an LLM span, a LangSmith `llm` run)."""

    span_id: str = Field(description="The span (or run) of the call.")
    model: str | None = Field(description="The model's name; None when the span gives none.")
    prompt_tokens: int | None = Field(default=None, description="Tokens in, when given.")
    completion_tokens: int | None = Field(default=None, description="Tokens out, when given.")
    total_tokens: int | None = Field(default=None, description="Both, when given.")
    output: str | None = Field(default=None, description="What the model wrote, as text.")
    error: str | None = Field(default=None, description="Its error, when it failed.")


class Span(_Model):
    """One span (or LangSmith run) of a trace."""

    span_id: str = Field(description="Its id (a run id for LangSmith).")
    trace_id: str = Field(description="The trace it belongs to.")
    parent_id: str | None = Field(default=None, description="Its parent span; None for a root.")
    kind: SpanKind = Field(description="Its OpenInference kind.")
    name: str | None = Field(default=None, description="Its name.")
    session_id: str | None = Field(default=None, description="The session (conversation).")
    start_ns: int | None = Field(default=None, description="Start, Unix nanoseconds.")
    end_ns: int | None = Field(default=None, description="End, Unix nanoseconds.")
    input: Any = Field(default=None, description="Its input (`input.value`, `inputs`).")
    output: Any = Field(default=None, description="Its output (`output.value`, `outputs`).")
    tags: list[str] = Field(default_factory=list, description="Its tags.")
    error: str | None = Field(default=None, description="Its error, when its status is one.")
    line: int | None = Field(default=None, description="The file's line it came from (JSONL).")
    retrieval: Retrieval | None = Field(default=None, description="A retriever's search.")
    tool_call: ToolCall | None = Field(default=None, description="A tool span's call.")
    llm_call: LLMCall | None = Field(default=None, description="An LLM span's call.")


class Trace(_Model):
    """One trace: its spans and what they did, in start order."""

    trace_id: str = Field(description="Its id.")
    session_id: str | None = Field(default=None, description="The session it ran in.")
    root_span_id: str | None = Field(
        description="The span without a parent; None when the file has none of this trace's."
    )
    spans: list[Span] = Field(description="Every span of the trace, in start order.")
    retrievals: list[Retrieval] = Field(default_factory=list, description="Its searches.")
    tool_calls: list[ToolCall] = Field(default_factory=list, description="Its tool calls.")
    llm_calls: list[LLMCall] = Field(default_factory=list, description="Its model calls.")
    answer: str | None = Field(
        default=None, description="Its final answer: the root span's output, as text."
    )
    error: str | None = Field(default=None, description="The first error of its spans.")


class Session(_Model):
    """The traces of one session (conversation), in start order."""

    session_id: str = Field(description="Its id (`session.id`, LangSmith's thread id).")
    trace_ids: list[str] = Field(description="Its traces.")


class TraceSet(_Model):
    """What a trace file holds."""

    schema_version: int = Field(default=1, description="Version of this model.")
    source: str = Field(description="The file read.")
    format: Literal["otlp-json", "phoenix", "langsmith"] = Field(description="What it was.")
    traces: list[Trace] = Field(description="Every trace, in file order of their first span.")
    sessions: list[Session] = Field(description="Traces grouped by session.")


def as_text(value: Any) -> str | None:
    """An output as the text an agent answered: a string as it is; from an object its
    `output`, `answer`, `result`, `text` or `content`, or its last `messages` entry's; else
    its JSON."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, dict):
        for key in ("output", "answer", "result", "text", "content"):
            if key in value:
                return as_text(value[key])
        messages = value.get("messages")
        if isinstance(messages, list) and messages:
            return as_text(messages[-1])
    return json.dumps(value, sort_keys=True, default=str)


def token_count(value: Any, report: ImportReport) -> int | None:
    """A token count as a trace export writes it: an integer from 0 to 2**31-1 (what every
    store keeps: PostgreSQL's INTEGER columns hold 32 bits; no model call comes near), or a
    float that is one (Phoenix's export: pandas writes a column with a null as floats).
    Anything else (a string, a negative or fractional number, a boolean, 2**31, 1e30) is None,
    counted in `report` (`llm_token_counts_not_counts_ignored`)."""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if value is None or (
        not isinstance(value, bool) and isinstance(value, int) and 0 <= value <= INT32_MAX
    ):
        return value
    report.add("llm_token_counts_not_counts_ignored")
    return None
