"""Whole traces in: read a trace export (OpenInference as OTLP-JSON or Phoenix's, LangSmith's
runs) into traces and sessions, and log its searches into a store's query log."""

from __future__ import annotations

from pathlib import Path

from memgauge._util.files import atomic_write_text
from memgauge.api._online import log_searches
from memgauge.api._store import Where
from memgauge.data.importers import ImportReport
from memgauge.data.importers.spans import SpanSearch
from memgauge.data.tracing import TraceSet, read_traces

__all__ = ["import_traces"]


def _log(traces: TraceSet, store: Where, report: ImportReport) -> None:
    """Each trace's searches into the query log, through the logging SDK as production logs
    them; span (run) ids are query ids, so importing a file twice logs each search once."""
    prefix = "run:" if traces.format == "langsmith" else "span:"
    searches: list[SpanSearch] = []
    for trace in traces.traces:
        names = {s.span_id: s.name for s in trace.spans}
        searches += [
            SpanSearch(
                query=r.query,
                result_ids=tuple(r.result_ids),
                session_id=trace.session_id,
                trace_id=trace.trace_id,
                query_id=f"{prefix}{r.span_id}",
                latency_ms=r.latency_ms,
                tool_name=names.get(r.span_id) or "memory_search",
            )
            for r in trace.retrievals
        ]
    log_searches(searches, store, report)
    if any(s is not None for t in traces.traces for r in t.retrievals for s in r.scores):
        report.notes.append("the query log keeps each search's ranked ids, not the scores")


def import_traces(
    path: str | Path, *, log: bool = False, store: Where = None, out: str | Path | None = None
) -> tuple[TraceSet, ImportReport]:
    """The traces of `path` (see `memgauge.data.tracing`) and the report of what was read,
    counted per span kind, and what was partial or dropped, per reason. With `log` the searches
    are logged into the query log of `store` (None: the default store); with `out`
    the traces are written there as JSON. The file is read whole first: a malformed one (a
    DataError naming its file, line and field) writes nothing."""
    traces, report = read_traces(path)
    if log:
        _log(traces, store, report)
    if out is not None:
        atomic_write_text(out, traces.model_dump_json(indent=1) + "\n")
    return traces, report
