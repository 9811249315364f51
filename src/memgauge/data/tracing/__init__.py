"""Whole traces in: OpenInference spans (OTLP-JSON, Phoenix) and LangSmith runs as traces and
sessions with their searches, tool calls, model calls and final answers (`read_traces`), and
LangSmith's extraction runs as the trace lines `memgauge extraction --outputs` scores.

Each name is declared once, as the API's face does: `import X as X` is its export."""

from memgauge.data.tracing.model import LLMCall as LLMCall
from memgauge.data.tracing.model import Retrieval as Retrieval
from memgauge.data.tracing.model import Session as Session
from memgauge.data.tracing.model import Span as Span
from memgauge.data.tracing.model import ToolCall as ToolCall
from memgauge.data.tracing.model import Trace as Trace
from memgauge.data.tracing.model import TraceSet as TraceSet
from memgauge.data.tracing.read import read_traces as read_traces
