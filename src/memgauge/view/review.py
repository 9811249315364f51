"""The viewer's review mode (`memgauge view --review`): a person grades retrieval hits,
confirms or overrides verdicts with a note, labels extracted facts and operation decisions,
working through a queue of a run's items.

It adds three routes to the read-only viewer and nothing else changes: `/review` (the queue),
`/review/item?run=&subject=&task=&item=` (one item's forms) and `/review/label` (POST: one
label); with `--ask-reviewer`, a fourth, `/review/name` (the form where a browser gives its
reviewer's name, kept in a cookie). The pages read the store as every page does (`RunReader`,
read-only); the one write is `ReviewStore.add`, a row added to `review_labels`, so a label
never overwrites another.

Who labels: the server's one `--reviewer`; or each request's, from the header a proxy that
signs people in sets (`--reviewer-header`, trusted only then); or the name each browser gave
(`--ask-reviewer`). `ReviewViews.who` reads it.

Every POST carries a CSRF token: the first page sets a random session id in an HttpOnly,
SameSite=Lax cookie (no browser sends it with another site's POST; Strict would drop it,
and a new one would replace it, each time a link on another site opened the viewer), and
each form holds HMAC(secret, session id and the page's reviewer), the secret kept in MEMGAUGE_HOME (a restarted
viewer takes the forms of pages loaded before it); a POST whose
token is missing or does not match that of its cookie is a 403, and a label that does not fit
its kind (a grade out of 0-3, an unknown action, a hit the item does not have) a 400 with the
reason: nothing is written either way.

The queue: the items this reviewer has not labelled first; within each half, the
disagreements first (a reviewer's label that differs from the machine, or verdicts on the item
that differ among themselves); then run order. Filters: run (default the newest), subject,
task, category."""

from __future__ import annotations

import hashlib
import hmac
import logging
import os
import secrets
import stat
import unicodedata
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, quote, unquote

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from memgauge.data.environment import memgauge_home
from memgauge.data.records import ItemRecord
from memgauge.data.review import LABELS, MAX_REVIEWER, ReviewLabel
from memgauge.errors import UsageError
from memgauge.runs.hit_texts import HitTexts, hit_texts
from memgauge.store.review import ReviewStore, current_labels
from memgauge.store.run_pages import RunReader
from memgauge.store.url import StoreURL
from memgauge.track.review import Target, item_targets, make_label, verdicts_disagree
from memgauge.view.render import NAV, ROOT, page_url, render, rooted, run_named, self_url

__all__ = ["COOKIE", "NAME_COOKIE", "SECRET_FILE", "ReviewViews"]

#: the review session's cookie (a random id; the CSRF token is derived from it)
COOKIE = "memgauge_review"
#: the reviewer's name a browser gave (`--ask-reviewer`), kept this many days
NAME_COOKIE = "memgauge_reviewer"
_NAME_DAYS = 365
#: the key of the CSRF tokens, in MEMGAUGE_HOME (`_kept_secret`)
SECRET_FILE = "review-secret"
_SECRET_BYTES = 32
_MAX_FORM = 64 * 1024  # bytes of a label's form: a note of a few pages
_NAV = [*NAV, ("Review", "/review")]
_ITEM_FILTERS = ("subject", "task", "category")
#: the invisible characters no reviewer name holds: bidi overrides and marks, zero-width
#: spaces (a name drawn as another's: `\u202enimda` shows as `admin`)
_INVISIBLE = frozenset(
    "\u061c\u200b\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\ufeff"
)

Handler = Callable[[Request], Awaitable[Response]]

#: the server's log (uvicorn's, which `memgauge view` shows from warnings up)
_log = logging.getLogger("uvicorn.error")


@dataclass
class QueueRow:
    """One item in the review queue."""

    run_id: str
    item: ItemRecord
    reviewers: list[str]
    mine: bool
    disagreement: bool

    @property
    def url(self) -> str:
        """Its review page."""
        it = self.item
        return page_url(
            "/review/item", run=self.run_id, subject=it.subject, task=it.task, item=it.item_id
        )


def _kept_secret() -> bytes:
    """The key the CSRF tokens are made with, kept in MEMGAUGE_HOME/review-secret (mode 0600,
    made once): a restarted viewer (a deploy, a crash) takes the forms of the pages loaded
    before it, where a key of the process alone refused a reviewer's half-written label with
    a 403 that lost it. A home that cannot hold it gives the process a key of its own."""
    try:
        path = memgauge_home() / SECRET_FILE
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            kept = _read_secret(path)
            if kept is None:
                _log.warning(
                    "memgauge view: %s is not a key this viewer can keep (a symlink, another"
                    " user's file, unreadable, or not %d bytes): a review form loaded before a"
                    " restart will be refused; remove the file to have a key made there",
                    path,
                    _SECRET_BYTES,
                )
            return kept or secrets.token_bytes(_SECRET_BYTES)
        secret = secrets.token_bytes(_SECRET_BYTES)
        with os.fdopen(fd, "wb") as f:
            f.write(secret)
        return secret
    except (OSError, RuntimeError, UsageError):  # RuntimeError: no home directory to find
        return secrets.token_bytes(_SECRET_BYTES)


def _read_secret(path: Path) -> bytes | None:
    """The key kept at `path`, its mode made 0600 again when it was wider (a key others on the
    machine read forges every form's token); None (the process's own key then) for a symlink
    (one planted there names a key its planter knows), a file not this user's or not a key,
    or one another viewer is writing this instant."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)  # a FIFO: no wait
    except OSError:  # a symlink (ELOOP), a file this user cannot read
        return None
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid():
            return None
        if st.st_mode & 0o077:
            os.fchmod(fd, 0o600)
        kept = f.read(_SECRET_BYTES + 1)
    return kept if len(kept) == _SECRET_BYTES else None


def _fits(name: str) -> bool:
    """Whether `name` (stripped) is a reviewer's name, however it came (the form, the cookie,
    the proxy's header): 1-MAX_REVIEWER characters, no control character (a NUL PostgreSQL
    refuses, a terminal's escape in `review export`) and no invisible one (`_INVISIBLE`)."""
    return 0 < len(name) <= MAX_REVIEWER and not any(
        c in _INVISIBLE or unicodedata.category(c) == "Cc" for c in name
    )


def _review_page(url: str) -> bool:
    """Whether `url` is a review page of this viewer's, the only place the name form sends a
    browser back to: under the root's `/review`, with no `.` or `..` segment (`%2e` too, as
    a browser reads it) that would take it out to another tool of the proxy's host."""
    path = url.split("?", 1)[0].split("#", 1)[0]
    review = rooted("/review")
    return (path == review or path.startswith(review + "/")) and not any(
        unquote(s) in (".", "..") for s in path.split("/")
    )


def _header_text(value: str) -> str:
    """A header's value as the proxy wrote it: its bytes read as UTF-8 (a name such as José
    from an identity provider), where ASGI gives them as Latin-1 (`JosÃ©`); as given when
    they are not UTF-8."""
    try:
        return value.encode("latin-1").decode("utf-8")
    except UnicodeError:
        return value


def _set_cookie(
    request: Request, response: Response, name: str, value: str, days: int | None = None
) -> None:
    """A review cookie: for the viewer's own paths only (a proxy's other tools on the host
    never see it), never to a script, never sent with another site's POST (SameSite=Lax: it
    is sent when a link there opens the viewer, so the name and session a browser has are
    kept), and over HTTPS only when the page came over it (the scheme a trusted proxy's
    X-Forwarded-Proto gives)."""
    response.set_cookie(
        name,
        value,
        max_age=None if days is None else days * 86400,
        httponly=True,
        samesite="lax",
        path=ROOT.get() or "/",
        secure=request.url.scheme == "https",
    )


class ReviewViews:
    """The review routes over one store, for one `reviewer`, or each request's own (`who`:
    from `reviewer_header`, else, with neither, the name its browser gave); `page` wraps HTML
    in the viewer's response (headers, CSP) and `reader` opens the viewer's read-only
    connection."""

    def __init__(
        self,
        store: StoreURL,
        reviewer: str | None,
        *,
        page: Callable[..., Response],
        reader: Callable[[], Any],
        reviewer_header: str | None = None,
    ) -> None:
        self.store = store
        #: the one reviewer of every request, or None: each request's own (`who`)
        self.reviewer = reviewer
        self.reviewer_header = reviewer_header
        self._page = page
        self._reader = reader
        self._secret = _kept_secret()

    def routes(self, wrap: Callable[[Handler], Handler]) -> list[Route]:
        """The routes review mode adds, each handler passed through `wrap`."""
        routes = [
            Route("/review", wrap(self.queue)),
            Route("/review/item", wrap(self.item)),
            Route("/review/label", wrap(self.label), methods=["POST"]),
        ]
        if self.asks:
            routes.append(Route("/review/name", wrap(self.name), methods=["GET", "POST"]))
        return routes

    # -- who labels, the session and its token

    @property
    def asks(self) -> bool:
        """Whether each browser gives its reviewer's name (`--ask-reviewer`)."""
        return self.reviewer is None and self.reviewer_header is None

    def who(self, request: Request) -> str:
        """The reviewer of `request`: the server's one reviewer, the name the proxy put in the
        trusted header (`--reviewer-header`), or the name this browser gave (`--ask-reviewer`);
        a 403 when that header or name is missing, nothing labelled."""
        name = self._given_name(request)
        if name is None:
            raise HTTPException(403, "no reviewer name: give yours on the review page first")
        return name

    def _given_name(self, request: Request) -> str | None:
        if self.reviewer is not None:
            return self.reviewer
        if self.reviewer_header is None:  # the name this browser gave
            name = unquote(request.cookies.get(NAME_COOKIE, "")).strip()
            return name if _fits(name) else None
        name = _header_text(request.headers.get(self.reviewer_header, "")).strip()
        if not _fits(name):
            raise HTTPException(
                403,
                f"no reviewer in the {self.reviewer_header} header (or one of more than"
                f" {MAX_REVIEWER} characters, or with a control or invisible character: this"
                " viewer takes each reviewer's name from it, as the proxy in front of it sets it for the person"
                " it signed in): open the viewer through that proxy",
            )
        return name

    def token(self, session: str, reviewer: str | None) -> str:
        """The CSRF token of a session id, for the reviewer its page was made for (None: none
        named yet): a token takes no other reviewer's label, so a session cookie planted in a
        browser (by another tool of the proxy's host) with its planter's token labels nothing
        under the name the proxy gives that browser."""
        message = f"{session}\n{reviewer or ''}".encode()
        return hmac.new(self._secret, message, hashlib.sha256).hexdigest()

    def _session(self, request: Request) -> tuple[str, bool]:
        given = request.cookies.get(COOKIE, "")
        if len(given) == 32 and all(c in "0123456789abcdef" for c in given):
            return given, False
        return secrets.token_hex(16), True

    def _respond(
        self, request: Request, template: str, reviewer: str | None, **context: Any
    ) -> Response:
        session, new = self._session(request)
        response = self._page(
            render(
                template,
                csrf=self.token(session, reviewer),
                reviewer=reviewer,
                asks=self.asks,
                nav=_NAV,
                self_url=self_url(request),
                **context,
            )
        )
        if new:
            _set_cookie(request, response, COOKIE, session)
        return response

    @contextmanager
    def _labels(self) -> Iterator[ReviewStore]:
        store = ReviewStore(self.store, read_only=True)
        try:
            yield store
        finally:
            store.close()

    # -- pages

    @staticmethod
    def _run_id(reader: RunReader, given: str | None) -> str:
        if not given:
            newest = reader.runs_overview()
            if not newest:
                raise HTTPException(404, "no run in this store to review")
            return str(newest[0]["run_id"])
        return run_named(reader, given)

    async def queue(self, request: Request) -> Response:
        """The queue of one run's items (see the module docstring for its order)."""
        me = self._given_name(request)
        if me is None:
            return self._ask_name(request)
        qp = request.query_params
        filters = {k: qp.get(k) or "" for k in _ITEM_FILTERS}
        with self._reader() as reader:
            run_id = self._run_id(reader, qp.get("run"))
            runs = [r["run_id"] for r in reader.runs_overview()]
            items = reader.item_records(run_id, detail=False, outputs=False)
        with self._labels() as store:
            labels = current_labels(store.labels(run_ids=[run_id]))
        choices = {k: sorted({str(getattr(it, k) or "") for it in items} - {""}) for k in filters}
        by_item: dict[tuple[str, str, str], list[ReviewLabel]] = {}
        for lab in labels:
            by_item.setdefault((lab.subject, lab.task, lab.item_id), []).append(lab)
        rows = []
        for it in items:
            if any(v and str(getattr(it, k) or "") != v for k, v in filters.items()):
                continue
            mine = by_item.get(it.key, [])
            rows.append(
                QueueRow(
                    run_id=run_id,
                    item=it,
                    reviewers=sorted({lab.reviewer for lab in mine}),
                    mine=any(lab.reviewer == me for lab in mine),
                    disagreement=verdicts_disagree(it) or any(lab.disagrees for lab in mine),
                )
            )
        # sorted() is stable: run order within each group
        rows.sort(key=lambda r: (r.mine, not r.disagreement))
        return self._respond(
            request,
            "review_queue.html",
            me,
            run_id=run_id,
            runs=runs,
            rows=rows,
            filters=filters,
            choices=choices,
            n_todo=sum(not r.mine for r in rows),
        )

    def _item(self, reader: RunReader, run_id: str, subject: str, task: str, item: str) -> Any:
        it = reader.item(run_id, subject, task, item)
        if it is None:
            raise HTTPException(404, "no such item in this run")
        return it

    async def item(self, request: Request) -> Response:
        """One item's review forms, each target with the labels given to it so far."""
        me = self._given_name(request)
        if me is None:
            return self._ask_name(request)
        qp = request.query_params
        with self._reader() as reader:
            run_id = self._run_id(reader, qp.get("run"))
            it = self._item(
                reader, run_id, qp.get("subject", ""), qp.get("task", ""), qp.get("item", "")
            )
            run = reader.get_run(run_id, headline=True)
        # the hits' texts the store left out, read back from the run's dataset
        texts = hit_texts(run) if run is not None else HitTexts()
        it = texts.fill(it)
        with self._labels() as store:
            history = store.labels(item=(run_id, it.subject, it.task, it.item_id))
        current = current_labels(history)
        targets = item_targets(it)

        def given(t: Target) -> list[ReviewLabel]:
            return [lab for lab in current if (lab.kind, lab.target) == (t.kind, t.target)]

        def own(t: Target) -> ReviewLabel | None:
            return next((lab for lab in given(t) if lab.reviewer == me), None)

        return self._respond(
            request,
            "review_item.html",
            me,
            run_id=run_id,
            it=it,
            targets=targets,
            hit_note=texts.note(it.task),
            given=given,
            own=own,
            history=list(reversed(history)),
            labels=LABELS,
            queue_url=page_url("/review", run=run_id),
        )

    # -- the name a browser gives (`--ask-reviewer`)

    def _ask_name(self, request: Request, status_code: int = 200) -> Response:
        """The form that asks this browser's reviewer name, then goes back to this page."""
        if not self.asks:  # a trusted header that is missing: a 403 saying so
            self.who(request)
        back = self_url(request) if request.url.path != "/review/name" else ""
        response = self._respond(
            request,
            "review_name.html",
            self._given_name(request),
            back=request.query_params.get("next") or back,
        )
        response.status_code = status_code
        return response

    async def name(self, request: Request) -> Response:
        """GET: the form; POST: keep the name given in this browser's cookie (1-200
        characters) and go back to the review page it came from."""
        if request.method == "GET":
            return self._ask_name(request)
        form = await self._form(request)
        self._check_token(request, form, self._given_name(request))
        name = " ".join(form.get("name", "").split())
        if not _fits(name):
            raise HTTPException(
                400,
                f"give a name of 1-{MAX_REVIEWER} characters, with no control or invisible"
                " character",
            )
        back = form.get("next", "")
        if not _review_page(back):
            back = rooted("/review")
        response = RedirectResponse(back, status_code=303)
        _set_cookie(request, response, NAME_COOKIE, quote(name, safe=""), days=_NAME_DAYS)
        return response

    # -- the one write

    async def _form(self, request: Request) -> dict[str, str]:
        kind = request.headers.get("content-type", "").split(";", 1)[0].strip().lower()
        if kind != "application/x-www-form-urlencoded":
            raise HTTPException(
                400, "a label is posted as a form (application/x-www-form-urlencoded)"
            )
        body = await request.body()
        if len(body) > _MAX_FORM:
            raise HTTPException(400, f"the form is larger than {_MAX_FORM // 1024} KiB")
        try:
            pairs = parse_qsl(body.decode(), keep_blank_values=True, strict_parsing=False)
        except UnicodeDecodeError:
            raise HTTPException(400, "the form is not UTF-8") from None
        if any("\x00" in k or "\x00" in v for k, v in pairs):
            raise HTTPException(400, "a form field holds a NUL byte")
        return dict(pairs)

    def _check_token(self, request: Request, form: dict[str, str], reviewer: str | None) -> None:
        session = request.cookies.get(COOKIE)
        token = form.get("csrf", "")
        if not session or not token:
            raise HTTPException(403, "no review session token: reload the page and try again")
        # as bytes: compare_digest raises TypeError on a str holding a non-ASCII character
        if not hmac.compare_digest(token.encode(), self.token(session, reviewer).encode()):
            raise HTTPException(
                403,
                "the review session token does not match (or the page was made for another"
                " reviewer name): reload the page",
            )

    async def label(self, request: Request) -> Response:
        """Store one label (see the module docstring), then show the item again."""
        me = self.who(request)
        form = await self._form(request)
        self._check_token(request, form, me)
        if not form.get("run"):
            raise HTTPException(400, "the form names no run (field run)")
        with self._reader() as reader:
            run_id = self._run_id(reader, form["run"])
            it = self._item(
                reader, run_id, form.get("subject", ""), form.get("task", ""), form.get("item", "")
            )
        try:
            label = make_label(
                it,
                run_id,
                me,
                kind=form.get("kind", ""),
                target=form.get("target", ""),
                grade=form.get("grade"),
                action=form.get("action"),
                label=form.get("label"),
                note=form.get("note", ""),
            )
        except UsageError as exc:
            raise HTTPException(400, str(exc)) from None
        with ReviewStore(self.store) as store:
            store.add(label)
        back = page_url(
            "/review/item", run=run_id, subject=it.subject, task=it.task, item=it.item_id
        )
        return RedirectResponse(f"{rooted(back)}#{label.kind}-{label.target}", status_code=303)
