"""Read a trace file (OTLP-JSON, Phoenix's span export, LangSmith's runs) into a `TraceSet`.

What is partial is kept and counted per reason in the report, never silently read as nothing:
a span whose parent is not in the file (`spans_with_missing_parent`), a span whose parent is
itself or in a cycle of parents (`spans_in_parent_cycle`: under no root), a trace none of whose
spans is a root (`traces_without_root`: it has no final answer), one with several roots
(`traces_with_several_roots`: the earliest answers), a root without an output
(`traces_without_answer`), spans of one trace naming different sessions
(`traces_with_conflicting_sessions`: the root's wins), a span given twice (`spans_repeated`:
the last wins), a span whose end precedes its start (`spans_ending_before_start`: its end and
its duration n/a, never negative nor 0), a span whose status is an error (`spans_with_error`),
an LLM span without its
model or token counts, a retriever span whose search cannot be read (dropped from the
retrievals, as `logs import-spans` drops it, with the line of the first of each reason).

A file that cannot be read at all is a `DataError` naming the file, the line and the field: not
JSON, a record that is not a span or a run, an attribute without a key, a time that is not one,
a document id that is not text, no spans at all.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memgauge.data.importers.common import ImportReport
from memgauge.data.importers.otel import SpanError, records, walk
from memgauge.data.importers.spans import DroppedSpanError, drop
from memgauge.data.jsonio import existing
from memgauge.data.tracing import langsmith, openinference
from memgauge.data.tracing.model import Session, Span, Trace, TraceSet, as_text
from memgauge.errors import DataError, Problem

__all__ = ["export_format", "read_traces"]


def _start(span: Span) -> tuple[bool, int]:
    return (span.start_ns is None, span.start_ns or 0)


def _in_parent_cycle(spans: list[Span], by_id: dict[str, Span]) -> int:
    """How many spans never reach a root nor a missing parent: a span whose parent is itself,
    or in (or under) a cycle of parents. Each span is walked once."""
    settled: dict[str, bool] = {}  # span id -> whether its parents loop
    for span in spans:
        path: list[str] = []
        on_path: set[str] = set()
        at: Span | None = span
        while at is not None and at.span_id not in settled and at.span_id not in on_path:
            path.append(at.span_id)
            on_path.add(at.span_id)
            at = by_id.get(at.parent_id) if at.parent_id is not None else None
        loops = at is not None and (at.span_id in on_path or settled[at.span_id])
        settled.update(dict.fromkeys(path, loops))
    return sum(settled.values())


def _trace(trace_id: str, spans: list[Span], report: ImportReport) -> Trace:
    by_id = {s.span_id: s for s in spans}
    missing = [s for s in spans if s.parent_id is not None and s.parent_id not in by_id]
    if missing:
        report.add("spans_with_missing_parent", len(missing))
    looped = _in_parent_cycle(spans, by_id)
    if looped:
        report.add("spans_in_parent_cycle", looped)
    roots = sorted((s for s in spans if s.parent_id is None), key=_start)
    root = roots[0] if roots else None
    if root is None:
        report.add("traces_without_root")
    elif len(roots) > 1:
        report.add("traces_with_several_roots")
    sessions = {s.session_id for s in spans if s.session_id}
    session = (root.session_id if root else None) or next(
        (s.session_id for s in sorted(spans, key=_start) if s.session_id), None
    )
    if len(sessions) > 1:
        report.add("traces_with_conflicting_sessions")
    answer = None if root is None else as_text(root.output)
    if root is not None and answer in (None, ""):
        report.add("traces_without_answer")
        answer = None
    ordered = sorted(spans, key=_start)
    errors = [s.error for s in ordered if s.error]
    return Trace(
        trace_id=trace_id,
        session_id=session,
        root_span_id=None if root is None else root.span_id,
        spans=ordered,
        retrievals=[s.retrieval for s in ordered if s.retrieval],
        tool_calls=[s.tool_call for s in ordered if s.tool_call],
        llm_calls=[s.llm_call for s in ordered if s.llm_call],
        answer=answer,
        error=errors[0] if errors else None,
    )


def group(spans: list[Span], report: ImportReport) -> tuple[list[Trace], list[Session]]:
    """Spans into traces (in file order of their first span) and traces into sessions."""
    by_trace: dict[str, list[Span]] = defaultdict(list)
    for span in spans:  # read once each (`_spans`)
        by_trace[span.trace_id].append(span)
    traces = [_trace(t, s, report) for t, s in by_trace.items()]
    in_session: dict[str, list[Trace]] = defaultdict(list)
    for trace in traces:
        if trace.session_id is not None:
            in_session[trace.session_id].append(trace)
        else:
            report.add("traces_without_session")
    sessions = [
        Session(session_id=sid, trace_ids=[t.trace_id for t in sorted(ts, key=_trace_start)])
        for sid, ts in in_session.items()
    ]
    return traces, sessions


def _trace_start(trace: Trace) -> tuple[bool, int]:
    return _start(trace.spans[0])


def _count(traces: list[Trace], sessions: list[Session], report: ImportReport) -> None:
    spans = [s for t in traces for s in t.spans]
    for span in spans:
        report.add(f"{span.kind.lower()}_spans")
    report.counts["spans"] = len(spans)
    report.counts["traces"] = len(traces)
    report.counts["sessions"] = len(sessions)
    report.counts["retrievals"] = sum(len(t.retrievals) for t in traces)
    report.counts["tool_calls"] = sum(len(t.tool_calls) for t in traces)
    report.counts["llm_calls"] = sum(len(t.llm_calls) for t in traces)
    report.counts["answers"] = sum(t.answer is not None for t in traces)
    errors = sum(s.error is not None for s in spans)
    if errors:
        report.counts["spans_with_error"] = errors
    calls = [c for t in traces for c in t.llm_calls]
    for part in ("prompt", "completion"):
        known = [n for c in calls if (n := getattr(c, f"{part}_tokens")) is not None]
        if known:  # no counts is n/a (absent), never 0
            report.counts[f"{part}_tokens"] = sum(known)


@dataclass
class _Read:
    """A span as read, with what reading it counted (merged only if it is the one kept)."""

    span: Span
    counts: ImportReport
    dropped: Problem | None
    key: str = ""


def _spans(
    file: str, recs: list[tuple[int | None, Any]], fmt: str, report: ImportReport
) -> tuple[list[Span], list[Problem]]:
    """The spans of the file, a span given twice read once (the last: a later export of a
    span supersedes an earlier one), its counts and dropped search counted once."""
    problems: list[Problem] = []
    read: dict[tuple[str, str], _Read] = {}

    def keep(
        made: tuple[Span, DroppedSpanError | None], own: ImportReport, line: int | None, at: str
    ) -> None:
        span, dropped = made
        where = None
        if dropped is not None:
            field = ".".join(x for x in (at, dropped.field) if x)
            where = Problem(file, line, field, dropped.message)
        key = (span.trace_id, span.span_id)
        if key in read:
            report.add("spans_repeated")
            del read[key]  # the last is kept, in its own place in the file's order
        read[key] = _Read(span, own, where, "" if dropped is None else dropped.key)

    def scratch() -> ImportReport:
        return ImportReport(source=file, format=fmt)

    if fmt == "langsmith":
        trace_of: dict[str, str] = {}
        for line, value in recs:
            try:
                for path, run, parent in langsmith.runs_of(value, ""):
                    own = scratch()
                    try:
                        keep(langsmith.span_of_run(run, parent, trace_of, own), own, line, path)
                    except SpanError as bad:
                        field = ".".join(x for x in (path, bad.field) if x)
                        problems.append(Problem(file, line, field or None, bad.message))
            except SpanError as bad:
                problems.append(Problem(file, line, bad.field or None, bad.message))
    else:
        for raw in walk(Path(file), problems, report, recs):
            own = scratch()
            try:
                keep(openinference.span_of(raw, own), own, raw.line, raw.path)
            except SpanError as bad:
                problems.append(Problem(file, raw.line, raw.field(bad.field), bad.message))
    firsts: dict[str, Problem] = {}
    for one in read.values():
        for key, n in one.counts.counts.items():
            report.add(key, n)
        if one.dropped is not None:
            drop(report, firsts, one.dropped, one.key, "retrievals not read")
    return [one.span for one in read.values()], problems


def _format(value: Any) -> str | None:
    if langsmith.is_langsmith(value):
        return "langsmith"
    if isinstance(value, dict) and "resourceSpans" in value:
        return "otlp-json"
    if isinstance(value, dict) and isinstance(value.get("data"), list) and value["data"]:
        value = value["data"][0]  # Phoenix's REST API
    elif isinstance(value, list) and value:
        value = value[0]
    if isinstance(value, dict) and (
        "span_kind" in value or "context.span_id" in value or isinstance(value.get("context"), dict)
    ):
        return "phoenix"
    return None


def export_format(path: str | Path) -> str | None:
    """Which trace export `path` is (`otlp-json`, `phoenix`, `langsmith`) by its first record,
    or None (another file, or one that cannot be read: its own reader says why)."""
    p = Path(path)
    if not p.is_file():
        return None
    try:
        for _, value in records(p, []):
            return _format(value)
    except DataError:
        return None
    return None


def read_traces(path: str | Path) -> tuple[TraceSet, ImportReport]:
    """The traces of `path` (module docstring) and the report of what was read and how."""
    p, file = existing(path)
    problems: list[Problem] = []
    recs = list(records(p, problems))
    if problems:
        raise DataError(problems)
    fmt = _format(recs[0][1]) if recs else None
    if fmt is None or (fmt == "phoenix" and any(_format(v) == "otlp-json" for _, v in recs)):
        # the span reader names what is wrong with a record that is neither
        fmt = "otlp-json" if any(_format(v) == "otlp-json" for _, v in recs) else "phoenix"
    report = ImportReport(source=file, format=fmt)
    spans, problems = _spans(file, recs, fmt, report)
    if problems:
        raise DataError(problems)
    if not spans:
        raise DataError(
            Problem(file, None, None, "no spans: not an OTLP-JSON, Phoenix or LangSmith export")
        )
    # the trace model keeps the scores; only a query-log import leaves them out (it says so)
    report.counts.pop("scores_not_stored", None)
    traces, sessions = group(spans, report)
    _count(traces, sessions, report)
    return TraceSet(source=file, format=fmt, traces=traces, sessions=sessions), report
