"""The viewer's web application: Starlette routes over a read-only store, pages drawn with the
templates of `memgauge.view.render`.

Every request opens the store read-only (`RunReader`: `mode=ro`, `query_only`), so a page
always shows what is recorded now (a run in progress included) and nothing the viewer does can
change the store. Responses carry a Content-Security-Policy that allows only the viewer's own
script (the vendored HTMX) and no inline script: an escaped payload that slipped through
would still not run.

Routes: `/` runs (an optimization's candidate runs grouped under it; `?candidates=show` lists
them there) · `/runs/{id}` a run · `/runs/{id}/items` its items (filters in the query string) ·
`/runs/{id}/item?subject=&task=&item=` one item · `/compare?a=&b=` · `/trends?suite=` · `/ab`,
`/ab/test?name=` · `/shadow?name=` · `/optimizations`, `/optimizations/{id}?a=&b=` (the diff
from iteration A to B) · `/traces`, `/traces/{id}` (`memgauge.view.traces`) · `/watch`
(`memgauge.view.watch`) · `/static/...`.
A page family is a function here, a line in `ROUTES`, a template, and (for the top bar) a line in `render.NAV`.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import unquote_to_bytes

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from memgauge._util.numbers import INT64_MAX
from memgauge._util.preload import preload
from memgauge.aggregates.repeats import repeats_of
from memgauge.data.records import repeat_id
from memgauge.errors import UnavailableError, UsageError
from memgauge.optimize import find_study
from memgauge.runs.run_comparison import Comparison
from memgauge.runs.suite_compare import unended_note
from memgauge.store.ab_tests import ABTestStore
from memgauge.store.run_pages import SHOWS, SORTS, ItemQuery, RunReader
from memgauge.store.shadow import ShadowStore
from memgauge.store.url import StoreURL, nothing_recorded, store_url
from memgauge.view.history import (
    ab_page,
    compare_page,
    comparison_on_request,
    seed_of,
    shadow_page,
    trend_page,
)
from memgauge.view.optimization import study_page
from memgauge.view.pages import duration, is_live, run_page, stale_reason
from memgauge.view.render import (
    NAV,
    PER_PAGE,
    ROOT,
    item_context,
    pager,
    render,
    root_path,
    rooted,
    run_named,
    run_url,
    self_url,
    sent_path,
    static_bytes,
)
from memgauge.view.runs_list import CANDIDATES, runs_list
from memgauge.view.traces import TraceViews
from memgauge.view.watch import WatchViews

__all__ = ["create_app"]

#: the server's log (uvicorn's, which `memgauge view` shows from warnings up)
_log = logging.getLogger("uvicorn.error")

CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:;"
    " connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
)
#: the longest item search: SQLite refuses a LIKE or GLOB pattern past 50,000 bytes (a 500),
#: and the patterns take up to 4 bytes a character (UTF-8, escapes); no one types more
MAX_SEARCH = 4000
_STATIC = {
    "htmx.min.js": "text/javascript; charset=utf-8",
    "style.css": "text/css; charset=utf-8",
}

Handler = Callable[[Request], Awaitable[Response]]


def _choice(value: str | None, allowed: tuple[str, ...]) -> str:
    """`value` when it is one of `allowed`, else the first (the default)."""
    return value if value in allowed and value is not None else allowed[0]


def _page(html: str, status_code: int = 200) -> HTMLResponse:
    return HTMLResponse(
        html,
        status_code=status_code,
        headers={
            "Content-Security-Policy": CSP,
            "X-Content-Type-Options": "nosniff",
            "Referrer-Policy": "no-referrer",
            "Cache-Control": "no-store",
        },
    )


class _Views:
    """The handlers, bound to one store path."""

    def __init__(self, store: StoreURL, nav: list[tuple[str, str]] | None = None) -> None:
        self.store = store
        #: the top bar's pages when not the default (review mode adds its queue)
        self.nav = nav
        # refuse a store this memgauge cannot read at start, not at the first request
        with self._reader():
            pass

    @contextmanager
    def _reader(self) -> Iterator[RunReader]:
        reader = RunReader(self.store)
        try:
            yield reader
        finally:
            reader.close()

    def _base(self, request: Request, **context: Any) -> dict[str, Any]:
        return {
            "self_url": self_url(request),
            **({"nav": self.nav} if self.nav else {}),
            # an answer htmx swaps in (a live page's refresh, a filter form's request), not the
            # back button's (`_macros.html`'s kept_in_swaps)
            "keep_forms": request.headers.get("HX-Request") == "true"
            and "HX-History-Restore-Request" not in request.headers,
            **context,
        }

    async def runs(self, request: Request) -> Response:
        qp = request.query_params
        filters = {k: qp.get(k) or "" for k in ("suite", "status", "kind")}
        candidates = _choice(qp.get("candidates"), CANDIDATES)
        show = candidates == "show"
        suite, status, kind = (filters[k] or None for k in ("suite", "status", "kind"))
        with self._reader() as reader:
            rows = reader.runs_overview(suite=suite, status=status, kind=kind, candidates=show)
            groups = reader.study_groups(suite=suite, status=status, kind=kind)
            going = reader.going_candidates(suite=suite, status=status, kind=kind)
            choices = reader.choices()
        for r in rows:
            r["duration"] = duration(r["started_at"], r["finished_at"])
            r["stale"] = stale_reason(r)
        for g in groups:  # a candidate whose owner is gone is not going, as a run of its own
            g["n_live"] = sum(c["study_id"] == g["study_id"] and is_live(c) for c in going)
        live = any(is_live(r) for r in rows) or any(g["n_live"] for g in groups)
        return _page(
            render(
                "runs.html",
                entries=runs_list(rows, groups, show=show),
                n_candidates=sum(g["n_runs"] for g in groups),
                choices=choices,
                filters={**filters, "candidates": candidates},
                live=live,
                **self._base(request),
            )
        )

    async def run_pages(self, request: Request) -> Response:
        """`/runs/{id}`, `/runs/{id}/items`, `/runs/{id}/item`: one route, as only the path
        as sent tells a `/` of the id from the one before the page (`run_path`)."""
        page = {"": self.run, "items": self.items, "item": self.item}.get(run_path(request)[1])
        if page is None:
            raise HTTPException(404, "no such page of a run")
        return await page(request)

    async def run(self, request: Request) -> Response:
        with self._reader() as reader:
            run_id = run_named(reader, run_path(request)[0])
            # the headline: the page shows no query's own detail (a 10,000-query run's summary
            # is 99% of that); the gate's baseline reads the earlier runs' headlines likewise
            run = reader.get_run(run_id, headline=True)
            assert run is not None
            page = run_page(
                run,
                items=lambda: reader.item_records(run_id, detail=False),
                usage=lambda: reader.usage(run_id),
                subjects=reader.subjects(run_id),
                tasks=reader.tasks(run_id),
                history=lambda: reader.suite_history(run.suite_name, headline=True, before=run),
                failures=reader.run_failures(run_id),
                others=reader.suite_runs(run),
                excluded=lambda: reader.failed_gates(run.suite_name),
                verdict=reader.gate_verdict(run_id),
            )
            candidate = reader.iteration_of_run(run_id) if run.kind == "optimize" else None
        return _page(
            render(
                "run.html",
                p=page,
                candidate=candidate,
                live=page.live,
                duration=duration(run.started_at or run.created_at, run.finished_at),
                **self._base(request),
            )
        )

    async def items(self, request: Request) -> Response:
        qp = request.query_params
        page_no = _page_number(qp.get("page"))
        with self._reader() as reader:
            run_id = run_named(reader, run_path(request)[0])
            run = reader.get_run(run_id, summary=False)
            assert run is not None
            baseline = qp.get("baseline") or None
            if baseline is not None:
                baseline = run_named(reader, baseline)
            query = ItemQuery(
                subject=qp.get("subject") or None,
                task=qp.get("task") or None,
                show=_choice(qp.get("show"), SHOWS),
                q=_search_text(qp.get("q")),
                sort=_choice(qp.get("sort"), SORTS),
                desc=qp.get("order") == "desc",
                page=page_no,
                per_page=PER_PAGE,
                baseline=baseline,
            )
            page = reader.item_page(run_id, query)
            subjects = list(reader.subjects(run_id))
            tasks = [t["task"] for t in reader.tasks(run_id)]
            others = reader.suite_runs(run)
        params = {k: v for k, v in qp.items() if k != "page" and v}
        path = run_url(run_id, "items")

        def item_url(row: Any) -> str:
            return rooted(
                run_url(run_id, "item", subject=row.subject, task=row.task, item=row.item_id)
            )

        return _page(
            render(
                "items.html",
                run=run,
                q=query,
                page=page,
                rows=page.rows,
                pager=pager(path, params, query.page, PER_PAGE, page.total, len(page.rows)),
                shows=SHOWS,
                sorts=SORTS,
                subjects=subjects,
                tasks=tasks,
                others=others,
                item_url=item_url,
                live=is_live(run),
                **self._base(request),
            )
        )

    async def item(self, request: Request) -> Response:
        qp = request.query_params
        with self._reader() as reader:
            run_id = run_named(reader, run_path(request)[0])
            run = reader.get_run(run_id, headline=True)
            assert run is not None
            it = reader.item(run_id, qp.get("subject", ""), qp.get("task", ""), qp.get("item", ""))
            if it is None:
                raise HTTPException(404, "no such item in this run")
            query = reader.query_detail(run_id, it.task, it.subject, it.item_id)
            n = repeats_of(run.suite, it.task)
            siblings = [
                found
                for r in range(n if n > 1 else 0)
                if (found := reader.item(run_id, it.subject, it.task, repeat_id(it.source_id, r)))
            ]
        context = item_context(run, it, query, repeats=siblings)
        return _page(render("item.html", run=run, **context, **self._base(request)))

    async def compare(self, request: Request) -> Response:
        qp = request.query_params
        with self._reader() as reader:
            a_id = run_named(reader, qp.get("a", ""))
            b_id = run_named(reader, qp.get("b", ""))
            if a_id == b_id:
                # `runs compare A A` is exit 2: all-zero deltas would read as "no change"
                return _page(
                    render(
                        "error.html",
                        status_code=400,
                        title="The same run twice",
                        message=f"a and b both name run {a_id}: a run compared with itself"
                        " shows no difference; pick another run to compare it with.",
                        link=(run_url(a_id), f"Run {a_id}"),
                        **self._base(request),
                    ),
                    status_code=400,
                )
            run_a = reader.get_run(a_id, headline=True)
            run_b = reader.get_run(b_id, headline=True)
            assert run_a is not None
            assert run_b is not None
            seed = seed_of(run_b)
            kept = reader.kept_comparison(a_id, b_id, seed)
            if kept is not None:  # made when B was recorded, from the runs as they are now
                comparison = Comparison.from_json(kept)
            else:
                # the paired t-test's SciPy (about 0.7 CPU-s to import) loads while the runs
                # are read
                preload(["scipy.stats"])
                comparison = comparison_on_request(
                    # each measure's values, a few arrays per run; the verdicts of the items
                    # whose verdicts differ: no item record built, no verdict of a same item
                    reader.measure_values(a_id),
                    reader.measure_values(b_id),
                    reader.verdict_pairs(a_id, b_id),
                    seed,
                )
            context = compare_page(
                run_a, run_b, comparison, reader.subjects(a_id), reader.subjects(b_id)
            )
            # a run not completed, as `runs compare` says it
            context["unended"] = [n for r in (run_a, run_b) if (n := unended_note(r, reader))]
        return _page(render("compare.html", c=context, **self._base(request)))

    async def trends(self, request: Request) -> Response:
        suite = request.query_params.get("suite", "")
        with self._reader() as reader:
            runs = reader.suite_history(suite, headline=True)
            failed = reader.failed_gates(suite)
        t = trend_page(runs, request.query_params.get("measure"), failed)
        return _page(render("trends.html", suite=suite, t=t, **self._base(request)))

    async def ab_list(self, request: Request) -> Response:
        with ABTestStore(self.store, read_only=True) as ab:
            tests = []
            for name in ab.names():
                test = ab.get(name)
                assert test is not None
                report = ab_page(test, ab.pairs(name))["report"]
                tests.append(report)
        with ShadowStore(self.store, read_only=True) as shadow:
            shadows = shadow.experiments()
        return _page(render("ab_list.html", tests=tests, shadows=shadows, **self._base(request)))

    async def ab_test(self, request: Request) -> Response:
        name = request.query_params.get("name", "")
        with ABTestStore(self.store, read_only=True) as ab:
            test = ab.get(name)
            if test is None:
                raise HTTPException(404, f"no A/B test {name!r}")
            context = ab_page(test, ab.pairs(name))
        return _page(render("ab.html", a=context, **self._base(request)))

    async def shadow(self, request: Request) -> Response:
        name = request.query_params.get("name", "")
        with ShadowStore(self.store, read_only=True) as store:
            if name not in store.experiments():
                raise HTTPException(404, f"no shadow experiment {name!r}")
            context = shadow_page(
                name,
                store.shadow_rows(name),
                store.shadow_errors(name),
                store.shadow_dropped(name),
            )
        return _page(render("shadow.html", s=context, **self._base(request)))

    async def optimizations(self, request: Request) -> Response:
        with self._reader() as reader:
            studies = reader.list_studies(200)
        live = any(st["status"] == "running" for st in studies)
        return _page(
            render("optimizations.html", studies=studies, live=live, **self._base(request))
        )

    async def optimization(self, request: Request) -> Response:
        qp = request.query_params
        with self._reader() as reader:
            try:
                study_id = find_study(reader, request.path_params["study_id"])
            except UsageError as exc:
                raise HTTPException(404, str(exc)) from None
            try:
                context = study_page(reader, study_id, qp.get("a") or None, qp.get("b") or None)
            except UsageError as exc:  # an iteration the study does not have
                raise HTTPException(400, str(exc)) from None
        return _page(
            render(
                "optimization.html",
                o=context,
                live=context["study"]["status"] == "running",
                **self._base(request),
            )
        )

    async def static(self, request: Request) -> Response:
        name = request.path_params["name"]
        if name not in _STATIC:
            raise HTTPException(404, "no such file")
        return Response(
            static_bytes(name),
            media_type=_STATIC[name],
            headers={"Cache-Control": "max-age=3600", "X-Content-Type-Options": "nosniff"},
        )


def _page_number(given: str | None) -> int:
    """The `page` parameter: 1 when absent or not a number (a hand-edited link still shows
    something); past the last page any store can hold, a 400: its offset would not fit in a
    64-bit integer (SQLite's OverflowError, PostgreSQL's "bigint out of range": a 500)."""
    try:
        page = max(1, int(given or 1))
    except ValueError:
        return 1
    last = INT64_MAX // PER_PAGE
    if page > last:
        raise HTTPException(400, f"page {given}: pages go up to {last:,}")
    return page


def _search_text(given: str | None) -> str:
    """The items page's `q`; a 400 past MAX_SEARCH characters."""
    text = given or ""
    if len(text) > MAX_SEARCH:
        raise HTTPException(
            400, f"a search of {len(text):,} characters: search for at most {MAX_SEARCH:,}"
        )
    return text


class _UnderRoot:
    """The viewer under a root path (`--root-path /memgauge`): its links are written under it
    (`render.ROOT`, set for each request), and a request is answered whether the proxy passed
    the path on whole (`/memgauge/runs/x`) or cut the root off (`/runs/x`).

    A path with a trailing `/` (`/memgauge/trends/`) is sent to the page without it by a
    relative redirect under the root: Starlette's own redirect wrote the host's URL without
    the root, a page on another tool of the proxy's (or the server's own address)."""

    def __init__(self, app: ASGIApp, root: str) -> None:
        self.app = app
        self.root = root

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        root = self.root
        if scope["type"] == "http" and (scope["path"] + "/").startswith(root + "/"):
            raw = scope.get("raw_path")
            scope = {
                **scope,
                "path": scope["path"][len(root) :] or "/",
                "raw_path": raw[len(root) :] or b"/"
                if raw and raw.startswith(root.encode())
                else raw,
            }
        sent = sent_path(Request(scope)) if scope["type"] == "http" else "/"
        if len(sent) > 1 and sent.endswith("/"):
            query = scope["query_string"].decode("latin-1")
            # one leading `/`: `//host` would send the browser to another site
            to = root + "/" + sent.strip("/") + (f"?{query}" if query else "")
            await RedirectResponse(to, status_code=307)(scope, receive, send)
            return
        token = ROOT.set(root)
        try:
            await self.app(scope, receive, send)
        finally:
            ROOT.reset(token)


def run_path(request: Request) -> tuple[str, str]:
    """The run id and the page (`""`, `"items"`, `"item"`) of a `/runs/...` request, read
    from the path as sent: decoded, `/runs/a%2Fitems` (run `a/items`) and `/runs/a/items`
    (run `a`'s items) are one path. `render.run_url` writes these URLs."""
    _, _, rest = sent_path(request).partition("/runs/")
    run_part, _, page = rest.partition("/")
    return unquote_to_bytes(run_part).decode("utf-8", errors="replace"), page


def _refusing_nul(handler: Handler) -> Handler:
    """`handler`, after a check that no parameter holds a NUL byte: PostgreSQL refuses one in
    any text it is given (a 500), and no run id, name or search holds one."""

    async def checked(request: Request) -> Response:
        for where, values in (
            ("query", request.query_params.multi_items()),
            ("path", request.path_params.items()),
        ):
            for key, value in values:
                if "\x00" in key or "\x00" in str(value):
                    raise HTTPException(400, f"a {where} parameter holds a NUL byte")
        return await handler(request)

    return checked


async def _error(request: Request, exc: Exception) -> Response:
    code = exc.status_code if isinstance(exc, HTTPException) else 500
    detail = exc.detail if isinstance(exc, HTTPException) else "internal error"
    return _page(
        render(
            "error.html",
            status_code=code,
            title="Not found" if code == 404 else "Error",
            message=detail,
        ),
        status_code=code,
    )


async def _unavailable(request: Request, exc: Exception) -> Response:
    """A store that cannot be reached now (a PostgreSQL server gone, a SQLite lock held past
    its timeout): a 503 that says so, and one line in the server's log, where it was a bare
    "Internal Server Error" and a traceback. A live page keeps asking, and shows again once
    the store is back."""
    posted = request.method == "POST"
    _log.warning("memgauge view: %s %s: %s", request.method, request.url.path, exc)
    return _page(
        render(
            "error.html",
            status_code=503,
            title="Results store unavailable",
            message=f"{exc} The viewer shows it again once it is back: reload this page"
            + ("; what you posted was not saved, send it again then." if posted else "."),
        ),
        status_code=503,
    )


def create_app(
    store: str | Path | StoreURL,
    *,
    reviewer: str | None = None,
    watch_states: Sequence[str | Path] = (),
    root: str | None = None,
    reviewer_header: str | None = None,
    ask_reviewer: bool = False,
) -> Starlette:
    """The viewer of the results store at `store`, a SQLite file or a PostgreSQL server
    (read-only; UsageError when it is missing or at another schema). With `reviewer`, review
    mode too (`memgauge.view.review`): its pages, and one POST route that adds that reviewer's
    labels to `review_labels`; without it, no route takes a POST. `/watch` shows the store's
    watches and those of the state files `watch_states` (`memgauge.view.watch`). `root`: the
    path a proxy serves it under (`/memgauge`, `render.root_path`), every link written under
    it. `reviewer_header` (instead of `reviewer`): review mode where each request's reviewer
    is the name in that header, as a proxy that signs people in sets it; `ask_reviewer`
    (instead of both): review mode where each browser gives its reviewer's name once."""
    prefix = root_path(root)
    url = store_url(store)
    if not url.exists():
        raise UsageError(f"no results store at {url}: {nothing_recorded()}")
    review = reviewer is not None or reviewer_header is not None or ask_reviewer
    views = _Views(url, nav=[*NAV, ("Review", "/review")] if review else None)
    pages = {
        "/": views.runs,
        # the list at /runs too: without it Starlette sent /runs to /runs/ (the run pages'
        # route), which the root's trailing-slash rule sent back to /runs, without end
        "/runs": views.runs,
        "/runs/{rest:path}": views.run_pages,
        "/compare": views.compare,
        "/trends": views.trends,
        "/ab": views.ab_list,
        "/ab/test": views.ab_test,
        "/shadow": views.shadow,
        "/optimizations": views.optimizations,
        "/optimizations/{study_id}": views.optimization,
        "/static/{name}": views.static,
    }
    routes = [Route(path, _refusing_nul(handler)) for path, handler in pages.items()]
    traces = TraceViews(url, page=_page, page_number=_page_number, base=views._base)
    routes.extend(traces.routes(_refusing_nul))
    watches = WatchViews(url, watch_states, page=_page, base=views._base)
    routes.extend(watches.routes(_refusing_nul))
    if review:
        from memgauge.view.review import ReviewViews  # review mode only

        reviews = ReviewViews(
            url, reviewer, page=_page, reader=views._reader, reviewer_header=reviewer_header
        )
        routes.extend(reviews.routes(_refusing_nul))
    return Starlette(
        routes=routes,
        exception_handlers={HTTPException: _error, 404: _error, UnavailableError: _unavailable},
        middleware=[Middleware(_UnderRoot, root=prefix)],
    )
