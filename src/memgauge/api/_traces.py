"""Whole traces in: read a trace export (OpenInference as OTLP-JSON or Phoenix's, LangSmith's
runs) into traces and sessions, keep them whole in the results store (`memgauge.store.traces`)
and log their searches into its query log; and read the kept traces back."""

from __future__ import annotations

from pathlib import Path
from typing import TypedDict, Unpack

from memgauge._util.files import atomic_write_text
from memgauge.api._online import log_searches
from memgauge.api._store import Where, require_store, results_store
from memgauge.data.importers import ImportReport
from memgauge.data.importers.spans import SpanSearch
from memgauge.data.tracing import Trace, TraceSet, read_traces
from memgauge.errors import check_path
from memgauge.store.traces import TracePage, TraceStore

__all__ = ["TraceQuery", "import_traces", "store_traces", "stored_trace", "stored_traces"]


def store_traces(traces: TraceSet, store: Where = None) -> dict[str, int]:
    """Keep `traces` whole in `store` (None: the default store; created if need be), each
    replacing a kept trace of its id; the counts: traces_stored, traces_replaced, and
    span_texts_cut (texts cut at `memgauge.store.traces.TEXT_LIMIT` characters)."""
    with TraceStore(results_store(store)) as kept:
        return kept.put(traces)


class TraceQuery(TypedDict, total=False):
    """Which kept traces `stored_traces` reads, as `TraceStore.page` takes (and defaults)
    them."""

    session: str | None
    has_error: bool | None
    q: str | None
    limit: int
    offset: int


def stored_traces(store: Where = None, **query: Unpack[TraceQuery]) -> TracePage:
    """The traces kept in `store` (read as it is: UsageError when it does not exist), newest
    first: of `session`, with (True) or without (False) an error, whose answer holds `q`
    (case-insensitive); `limit` of them (50) from `offset` (0), and how many match."""
    with TraceStore(require_store(store), read_only=True) as kept:
        return kept.page(**query)


def stored_trace(trace_id: str, store: Where = None) -> Trace | None:
    """The trace `trace_id` kept in `store`, with its spans in start order, or None."""
    with TraceStore(require_store(store), read_only=True) as kept:
        found = kept.get(trace_id)
    return None if found is None else found[1]


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
    path: str | Path,
    *,
    log: bool = False,
    keep: bool = False,
    store: Where = None,
    out: str | Path | None = None,
) -> tuple[TraceSet, ImportReport]:
    """The traces of `path` (see `memgauge.data.tracing`) and the report of what was read,
    counted per span kind, and what was partial or dropped, per reason. With `keep` the traces
    are kept whole in `store` (None: the default store; see `store_traces`, whose counts join
    the report's); with `log` the searches
    are logged into the query log of `store`; with `out`
    the traces are written there as JSON. The file is read whole first: a malformed one (a
    DataError naming its file, line and field) writes nothing."""
    check_path("path", path)
    if out is not None:
        check_path("out", out)
    traces, report = read_traces(path)
    if keep:
        report.counts.update(store_traces(traces, store))
    if log:
        _log(traces, store, report)
    if out is not None:
        atomic_write_text(out, traces.model_dump_json(indent=1) + "\n")
    return traces, report
