"""The viewer's traces (kept by `memgauge logs import-traces --store`): `/traces` lists the
sessions and the traces, newest first, filtered by session, error and a text in the answer,
a page at a time; `/traces/{id}` shows one trace: its spans as a tree with timing bars, each
search with its hits, each tool call, each model call with its tokens, and the final answer.

Read-only as every page: the store is opened read-only (`TraceStore(read_only=True)`) per
request. Every text is escaped (the templates autoescape; the timeline is drawn with the
charts' escaping helpers)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote

from markupsafe import Markup, escape
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from memgauge.data.tracing import Span, Trace
from memgauge.store.traces import TraceStore
from memgauge.store.url import StoreURL
from memgauge.view.charts import PALETTE, _fit, _svg, _t, text_width
from memgauge.view.render import PER_PAGE, pager, render, rooted

__all__ = ["ERRORS", "TraceViews", "span_tree", "timeline", "trace_url"]

Handler = Callable[[Request], Awaitable[Response]]

#: the error filter's choices: any trace, those with an error, those without
ERRORS = ("any", "yes", "no")
_KIND_COLOR = {"AGENT": 0, "CHAIN": 7, "RETRIEVER": 2, "TOOL": 1, "LLM": 6, "EMBEDDING": 4}
_MAX_LABEL = 300.0  # px of a timeline's span label


@dataclass(frozen=True)
class SpanRow:
    """A span in tree order: its depth, and its start and duration relative to the trace."""

    span: Span
    depth: int
    offset_ms: float | None
    duration_ms: float | None


def span_tree(trace: Trace) -> list[SpanRow]:
    """The spans depth first from the roots (a span whose parent the trace lacks is a root),
    children in start order; each with its start (from the trace's first) and duration."""
    ids = {s.span_id for s in trace.spans}
    children: dict[str | None, list[Span]] = {}
    for span in trace.spans:  # already in start order
        parent = span.parent_id if span.parent_id in ids else None
        children.setdefault(parent, []).append(span)
    starts = [s.start_ns for s in trace.spans if s.start_ns is not None]
    t0 = min(starts) if starts else None
    rows: list[SpanRow] = []
    seen: set[str] = set()

    def walk(parent: str | None, depth: int) -> None:
        for span in children.get(parent, []):
            if span.span_id in seen:  # a cycle of parents: each span once
                continue
            seen.add(span.span_id)
            offset = None if t0 is None or span.start_ns is None else (span.start_ns - t0) / 1e6
            took = (
                None
                if span.start_ns is None or span.end_ns is None
                else (span.end_ns - span.start_ns) / 1e6
            )
            rows.append(SpanRow(span, depth, offset, took))
            walk(span.span_id, depth + 1)

    walk(None, 0)
    rows += [SpanRow(s, 0, None, None) for s in trace.spans if s.span_id not in seen]
    return rows


def _ms(value: float | None) -> str:
    return "n/a" if value is None else f"{value:,.1f} ms"


def timeline(rows: list[SpanRow]) -> Markup:
    """The spans as horizontal bars on the trace's time axis, indented by depth, coloured by
    kind; a span without times is written n/a, not drawn."""
    if not rows:
        return Markup("")
    labels = ["  " * r.depth + f"{r.span.kind} {r.span.name or ''}".strip() for r in rows]
    label_w = min(max(text_width(x) for x in labels), _MAX_LABEL) + 8
    ends = [(r.offset_ms or 0.0) + (r.duration_ms or 0.0) for r in rows]
    total = max([*ends, 1e-6])
    notes = [_ms(r.duration_ms) for r in rows]
    note_w = max(text_width(n) for n in notes) + 10
    plot_w, row, top = 420.0, 18, 24
    width = label_w + plot_w + note_w + 4
    height = top + row * len(rows) + 8
    title = f"Spans over {total:,.1f} ms"
    body = [_t(2, 14, title, extra=' font-weight="600"')]
    for i, (r, label, note) in enumerate(zip(rows, labels, notes, strict=True)):
        y = top + i * row
        tip = f"{r.span.kind} {r.span.name or ''}: starts {_ms(r.offset_ms)}, takes {note}"
        if r.span.error:
            tip += f"; error: {r.span.error}"
        body.append(f"<g><title>{escape(tip)}</title>")
        body.append(_t(8 + 10 * r.depth, y + 12, _fit(label.strip(), label_w - 10 * r.depth - 10)))
        if r.offset_ms is None or r.duration_ms is None:
            body.append(_t(label_w + 2, y + 12, "n/a", extra=' fill="#8a93a3"') + "</g>")
            continue
        x = label_w + plot_w * r.offset_ms / total
        w = max(plot_w * r.duration_ms / total, 1.0)
        color = PALETTE[_KIND_COLOR.get(r.span.kind, 5) % len(PALETTE)]
        stroke = ' stroke="#e15759" stroke-width="2"' if r.span.error else ""
        body.append(
            f'<rect class="span-bar" x="{x:.1f}" y="{y + 3}" width="{w:.1f}" height="12"'
            f' fill="{color}"{stroke}/>'
        )
        body.append(_t(label_w + plot_w + 6, y + 12, note) + "</g>")
    return _svg(width, height, title, body)


def trace_url(trace_id: str) -> str:
    """A trace's page (an id may hold any character: each is quoted)."""
    return rooted("/traces/" + quote(trace_id, safe=""))


def _when(ns: int | None) -> str:
    if ns is None:
        return ""
    return datetime.fromtimestamp(ns / 1e9, UTC).isoformat(timespec="milliseconds")[:23]


class TraceViews:
    """The traces' routes over one store; `page` wraps HTML in the viewer's response (headers,
    CSP), `page_number` reads a `page` parameter as every paged view does."""

    per_page = PER_PAGE

    def __init__(
        self,
        store: StoreURL,
        *,
        page: Callable[..., Response],
        page_number: Callable[[str | None], int],
        base: Callable[..., dict[str, Any]],
    ) -> None:
        self.store = store
        self._page = page
        self._page_number = page_number
        self._base = base

    def routes(self, wrap: Callable[[Handler], Handler]) -> list[Route]:
        """The two routes, each handler passed through `wrap`."""
        return [
            Route("/traces", wrap(self.list)),
            Route("/traces/{trace_id:path}", wrap(self.trace)),
        ]

    async def list(self, request: Request) -> Response:
        qp = request.query_params
        page_no = self._page_number(qp.get("page"))
        session = qp.get("session") or None
        error = qp.get("error") if qp.get("error") in ERRORS else "any"
        q = qp.get("q") or ""
        has_error = {"yes": True, "no": False}.get(error or "any")
        with TraceStore(self.store, read_only=True) as kept:
            found = kept.page(
                session=session,
                has_error=has_error,
                q=q or None,
                limit=self.per_page,
                offset=(page_no - 1) * self.per_page,
            )
            sessions = kept.sessions()
        filters = {"session": session or "", "error": error, "q": q}
        params = {k: v for k, v in filters.items() if v and v != "any"}
        return self._page(
            render(
                "traces.html",
                rows=found.rows,
                pager=pager(
                    "/traces", params, page_no, self.per_page, found.total, len(found.rows)
                ),
                sessions=sessions,
                filters=filters,
                errors=ERRORS,
                when=_when,
                ms=_ms,
                trace_url=trace_url,
                **self._base(request),
            )
        )

    async def trace(self, request: Request) -> Response:
        trace_id = request.path_params["trace_id"]
        with TraceStore(self.store, read_only=True) as kept:
            found = kept.get(trace_id)
        if found is None:
            raise HTTPException(404, f"no trace {trace_id!r} in this store")
        stored, trace = found
        rows = span_tree(trace)
        return self._page(
            render(
                "trace.html",
                t=stored,
                trace=trace,
                rows=rows,
                chart=timeline(rows),
                names={s.span_id: s.name or s.kind for s in trace.spans},
                when=_when,
                ms=_ms,
                **self._base(request),
            )
        )
