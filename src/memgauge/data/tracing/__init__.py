"""Whole traces in: OpenInference spans (OTLP-JSON, Phoenix) and LangSmith runs as traces and
sessions with their searches, tool calls, model calls and final answers (`read_traces`), and
LangSmith's extraction runs as the trace lines `memgauge extraction --outputs` scores."""

from memgauge.data.tracing.model import (
    LLMCall,
    Retrieval,
    Session,
    Span,
    ToolCall,
    Trace,
    TraceSet,
)
from memgauge.data.tracing.read import read_traces

__all__ = [
    "LLMCall",
    "Retrieval",
    "Session",
    "Span",
    "ToolCall",
    "Trace",
    "TraceSet",
    "read_traces",
]
