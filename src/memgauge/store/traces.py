"""Whole traces kept in the results store (`memgauge logs import-traces --store`), tables
`traces` and `trace_spans` (revision 0021).

A trace is keyed by its id: storing a trace again replaces its rows (one transaction), so
importing a file twice keeps each trace once, as the latest import read it. Every span is
kept with what it did (a retriever's query and hits, a tool's call, a model's call); inputs,
outputs, arguments and results are kept as JSON, and one longer than `TEXT_LIMIT` characters
as its text cut there, ending in `CUT` (a model's prompt can be megabytes: the store keeps what a
person reads, not the whole of it). Reading back gives the `Trace` that was stored.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa

from memgauge._util.numbers import INT32_MAX
from memgauge.data.tracing import LLMCall, Retrieval, Span, ToolCall, Trace, TraceSet
from memgauge.data.tracing.model import as_text
from memgauge.store.base import Store
from memgauge.store.tables import trace_spans as spans_t
from memgauge.store.tables import traces as traces_t

__all__ = ["CUT", "TEXT_LIMIT", "StoredTrace", "TracePage", "TraceStore"]

#: characters of one kept text (an input, output, argument, result, a model's output)
TEXT_LIMIT = 8192
#: what ends a text cut at TEXT_LIMIT
CUT = " …[cut]"


@dataclass(frozen=True)
class StoredTrace:
    """A trace's row: what the list of traces shows."""

    trace_id: str
    format: str
    source: str
    session_id: str | None
    root_span_id: str | None
    root_name: str | None
    start_ns: int | None
    end_ns: int | None
    answer: str | None
    error: str | None
    n_spans: int
    n_retrievals: int
    n_tool_calls: int
    n_llm_calls: int
    prompt_tokens: int | None
    completion_tokens: int | None
    total_tokens: int | None
    imported_at: str

    @property
    def duration_ms(self) -> float | None:
        """From its first span's start to its last span's end; None when either is unknown."""
        if self.start_ns is None or self.end_ns is None:
            return None
        return (self.end_ns - self.start_ns) / 1e6


@dataclass(frozen=True)
class TracePage:
    """One page of the stored traces, and how many match in all."""

    rows: list[StoredTrace]
    total: int


def _cut(text: str | None) -> tuple[str | None, bool]:
    if text is None or len(text) <= TEXT_LIMIT:
        return text, False
    return text[:TEXT_LIMIT] + CUT, True


def _value(value: Any) -> tuple[str | None, bool]:
    """`value` as JSON, or (past TEXT_LIMIT) its text cut, as a JSON string."""
    if value is None:
        return None, False
    text = json.dumps(value, sort_keys=True, default=str, ensure_ascii=False)
    if len(text) <= TEXT_LIMIT:
        return text, False
    cut, _ = _cut(as_text(value))
    return json.dumps(cut, ensure_ascii=False), True


def _load(text: str | None) -> Any:
    return None if text is None else json.loads(text)


def _tokens(calls: Sequence[LLMCall], part: str, past: list[int]) -> int | None:
    """The sum over the calls that gave a count; None (n/a) when none did, never 0, and when
    it passes what every store's INTEGER column keeps (each count does not: `token_count`),
    counted in `past`."""
    known = [n for c in calls if (n := getattr(c, f"{part}_tokens")) is not None]
    total = sum(known)
    if total > INT32_MAX:
        past[0] += 1
        return None
    return total if known else None


def _trace_row(trace: Trace, fmt: str, source: str, now: str, past: list[int]) -> dict[str, Any]:
    starts = [s.start_ns for s in trace.spans if s.start_ns is not None]
    ends = [s.end_ns for s in trace.spans if s.end_ns is not None]
    root = next((s for s in trace.spans if s.span_id == trace.root_span_id), None)
    answer, _ = _cut(trace.answer)
    return {
        "trace_id": trace.trace_id,
        "format": fmt,
        "source": source,
        "session_id": trace.session_id,
        "root_span_id": trace.root_span_id,
        "root_name": root.name if root else None,
        "start_ns": min(starts) if starts else None,
        "end_ns": max(ends) if ends else None,
        "answer": answer,
        "error": trace.error,
        "n_spans": len(trace.spans),
        "n_retrievals": len(trace.retrievals),
        "n_tool_calls": len(trace.tool_calls),
        "n_llm_calls": len(trace.llm_calls),
        **{
            f"{p}_tokens": _tokens(trace.llm_calls, p, past)
            for p in ("prompt", "completion", "total")
        },
        "imported_at": now,
    }


#: a span's fields and an LLM call's that a `trace_spans` column of the same name keeps as they
#: are: written by `_span_row`, read back by `_span`
_SPAN_AS_IS = (
    "trace_id",
    "span_id",
    "parent_id",
    "kind",
    "name",
    "session_id",
    "start_ns",
    "end_ns",
    "line",
    "error",
)
_LLM_AS_IS = ("model", "prompt_tokens", "completion_tokens", "total_tokens")


def _as_is(source: Any, names: Sequence[str]) -> dict[str, Any]:
    """`source`'s attributes `names` by name (all None when `source` is: a span without that
    call)."""
    return {n: None if source is None else getattr(source, n) for n in names}


def _span_row(seq: int, span: Span, cuts: list[int]) -> dict[str, Any]:
    def keep(value: Any, form: Callable[[Any], tuple[str | None, bool]] = _value) -> str | None:
        """`value` as kept (`_value`, or `_cut` for a text), counting it in `cuts` if cut."""
        text, cut = form(value)
        cuts[0] += cut
        return text

    r, t, m = span.retrieval, span.tool_call, span.llm_call
    return {
        **_as_is(span, _SPAN_AS_IS),
        "seq": seq,
        "input_json": keep(span.input),
        "output_json": keep(span.output),
        "tags_json": json.dumps(span.tags),
        "query": keep(r.query, _cut) if r else None,
        "hits_json": json.dumps({"ids": r.result_ids, "scores": r.scores}) if r else None,
        "latency_ms": r.latency_ms if r else None,
        "tool_name": t.name if t else None,
        "tool_args_json": keep(t.arguments) if t else None,
        "tool_result_json": keep(t.result) if t else None,
        "tool_error": t.error if t else None,
        **_as_is(m, _LLM_AS_IS),
        "llm_output": keep(m.output, _cut) if m else None,
        "llm_error": m.error if m else None,
    }


def _span(row: Any) -> Span:
    sid = row.span_id
    retrieval = tool = llm = None
    if row.hits_json is not None:
        hits = json.loads(row.hits_json)
        retrieval = Retrieval(
            span_id=sid,
            query=row.query or "",
            result_ids=hits["ids"],
            scores=hits["scores"],
            latency_ms=row.latency_ms,
        )
    if row.kind == "TOOL":
        tool = ToolCall(
            span_id=sid,
            name=row.tool_name,
            arguments=_load(row.tool_args_json),
            result=_load(row.tool_result_json),
            error=row.tool_error,
        )
    if row.kind == "LLM":
        llm = LLMCall(
            span_id=sid, **_as_is(row, _LLM_AS_IS), output=row.llm_output, error=row.llm_error
        )
    return Span(
        **_as_is(row, _SPAN_AS_IS),
        input=_load(row.input_json),
        output=_load(row.output_json),
        tags=json.loads(row.tags_json),
        retrieval=retrieval,
        tool_call=tool,
        llm_call=llm,
    )


class TraceStore(Store):
    """The traces in the results store at `where` (`read_only`: the viewer's connection)."""

    def put(self, traces: TraceSet) -> dict[str, int]:
        """Keep every trace of `traces`, each replacing a stored one of its id, in one
        transaction; the counts: traces_stored, of which traces_replaced, span_texts_cut
        (texts cut at TEXT_LIMIT) and trace_token_sums_past_32_bits_not_kept (n/a)."""
        now = datetime.now(UTC).isoformat()
        ids = [t.trace_id for t in traces.traces]
        cuts, past = [0], [0]
        rows = [_trace_row(t, traces.format, traces.source, now, past) for t in traces.traces]
        spans = [_span_row(i, s, cuts) for t in traces.traces for i, s in enumerate(t.spans)]
        replaced = 0
        with self._write_tx() as c:
            for start in range(0, len(ids), 500):  # bound the IN list's parameters
                chunk = ids[start : start + 500]
                # spans first: SQLite enforces no cascade unless foreign keys are on
                c.execute(sa.delete(spans_t).where(spans_t.c.trace_id.in_(chunk)))
                gone = c.execute(sa.delete(traces_t).where(traces_t.c.trace_id.in_(chunk)))
                replaced += gone.rowcount
            if rows:
                c.execute(sa.insert(traces_t), rows)
            if spans:
                c.execute(sa.insert(spans_t), spans)
        counts = {"traces_stored": len(rows), "traces_replaced": replaced}
        if cuts[0]:
            counts["span_texts_cut"] = cuts[0]
        if past[0]:
            counts["trace_token_sums_past_32_bits_not_kept"] = past[0]
        return counts

    def _where(
        self, session: str | None, has_error: bool | None, q: str | None
    ) -> list[sa.ColumnElement[bool]]:
        where: list[sa.ColumnElement[bool]] = []
        if session is not None:
            where.append(traces_t.c.session_id == session)
        if has_error is not None:
            err = traces_t.c.error
            where.append(err.is_not(None) if has_error else err.is_(None))
        if q:
            # a literal substring, case-insensitive on both dialects (LIKE's wildcards escaped)
            pattern = "%" + q.lower().replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
            where.append(sa.func.lower(traces_t.c.answer).like(pattern + "%", escape="\\"))
        return where

    def page(
        self,
        *,
        session: str | None = None,
        has_error: bool | None = None,
        q: str | None = None,
        limit: int = 50,
        offset: int = 0,
    ) -> TracePage:
        """The stored traces, newest first (by start; a trace without one last), of
        `session`, with (True) or without (False) an error, whose answer holds `q`
        (case-insensitive); `limit` of them from `offset`, and how many match."""
        where = self._where(session, has_error, q)
        order = (
            traces_t.c.start_ns.is_(None),
            traces_t.c.start_ns.desc(),
            traces_t.c.trace_id,
        )
        query = sa.select(traces_t).where(*where).order_by(*order).limit(limit).offset(offset)
        count = sa.select(sa.func.count()).select_from(traces_t).where(*where)
        with self._read() as c:
            rows = c.execute(query).all()
            total = int(c.execute(count).scalar_one())
        return TracePage([StoredTrace(**r._asdict()) for r in rows], total)

    def sessions(self) -> list[tuple[str, int]]:
        """Each stored session and its number of traces, by session id."""
        query = (
            sa.select(traces_t.c.session_id, sa.func.count())
            .where(traces_t.c.session_id.is_not(None))
            .group_by(traces_t.c.session_id)
            .order_by(traces_t.c.session_id)
        )
        with self._read() as c:
            return [(str(s), int(n)) for s, n in c.execute(query).all()]

    def get(self, trace_id: str) -> tuple[StoredTrace, Trace] | None:
        """The trace `trace_id` as stored (its row, and the trace with its spans in start
        order), or None."""
        with self._read() as c:
            row = c.execute(sa.select(traces_t).where(traces_t.c.trace_id == trace_id)).first()
            if row is None:
                return None
            span_rows = c.execute(
                sa.select(spans_t).where(spans_t.c.trace_id == trace_id).order_by(spans_t.c.seq)
            ).all()
        stored = StoredTrace(**row._asdict())
        spans = [_span(r) for r in span_rows]
        trace = Trace(
            trace_id=stored.trace_id,
            session_id=stored.session_id,
            root_span_id=stored.root_span_id,
            spans=spans,
            retrievals=[s.retrieval for s in spans if s.retrieval is not None],
            tool_calls=[s.tool_call for s in spans if s.tool_call is not None],
            llm_calls=[s.llm_call for s in spans if s.llm_call is not None],
            answer=stored.answer,
            error=stored.error,
        )
        return stored, trace
