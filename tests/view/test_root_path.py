"""The viewer behind a reverse proxy at a sub-path (`memgauge view --root-path /memgauge`),
through Starlette's test client: every link, form, script and live refresh of every page is
written under the root path, and a proxy that passes the prefix on or cuts it off is answered
alike. (`test_browser.py` drives it through a real proxy in Chromium.)"""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from html import unescape
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.testclient import TestClient
from starlette.types import Receive, Scope, Send
from tests.helpers import run_memgauge
from viewer_store import ViewerStore, confirm_form

from memgauge.view.app import _UnderRoot, create_app
from memgauge.view.render import self_url

ROOT = "/memgauge"
#: every URL a page gives the browser to follow, fetch or post to
_URLS = re.compile(r'\b(href|src|action|hx-get)="([^"]*)"')


@pytest.fixture(scope="module")
def db(viewer_store: ViewerStore, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the session's store: review mode writes labels."""
    copy = tmp_path_factory.mktemp("root") / "review.db"
    shutil.copy(viewer_store.path, copy)
    return Path(copy)


@pytest.fixture(scope="module")
def client(db: Path) -> Iterator[TestClient]:
    with TestClient(create_app(db, reviewer="alice", root=ROOT), follow_redirects=False) as c:
        yield c


def _links(html: str) -> list[tuple[str, str]]:
    """(attribute, URL) of each URL of a page."""
    return [(a, unescape(u)) for a, u in _URLS.findall(html)]


def _starts(viewer_store: ViewerStore) -> list[str]:
    run = viewer_store.judged[0]
    return [
        f"{ROOT}/",
        f"{ROOT}/runs/{run}",
        f"{ROOT}/runs/{run}/items?page=1",
        f"{ROOT}/runs/{viewer_store.retrieval}/items",
        f"{ROOT}/compare?a={viewer_store.judged[0]}&b={viewer_store.judged[1]}",
        f"{ROOT}/optimizations",
        f"{ROOT}/optimizations/{viewer_store.optimization}",
        f"{ROOT}/ab",
        f"{ROOT}/traces",
        f"{ROOT}/watch",
        f"{ROOT}/review",
        f"{ROOT}/runs/no-such-run",  # an error page's links
    ]


def test_every_url_of_every_page_is_under_the_root_and_answers(
    client: TestClient, viewer_store: ViewerStore
) -> None:
    """Links, forms, the stylesheet, the script and a live page's refresh were written from
    the host's root (`/runs/...`): behind a proxy at /memgauge/ every one of them 404'd or
    reached another tool on the host."""
    seen: set[str] = set()
    todo = _starts(viewer_store)
    fetched = 0
    while todo and fetched < 40:
        url = todo.pop(0)
        r = client.get(url)
        fetched += 1
        assert r.status_code in (200, 404) if "no-such" in url else r.status_code == 200, url
        if not r.headers["content-type"].startswith("text/html"):
            continue
        for attribute, link in _links(r.text):
            if link.startswith(("#", "data:", "http://", "https://")):
                continue
            assert link.startswith(ROOT + "/"), f"{url} links {link!r} outside {ROOT}/"
            path = urlsplit(link).path
            if attribute != "action" and path not in seen:
                seen.add(path)
                todo.append(link.split("#")[0])
    assert {f"{ROOT}/static/style.css", f"{ROOT}/static/htmx.min.js"} <= seen
    assert any(p.startswith(f"{ROOT}/runs/") and p.endswith("/item") for p in seen)
    assert any(p.startswith(f"{ROOT}/review/item") for p in seen)


def test_a_proxy_that_cuts_the_root_off_is_answered_alike(
    client: TestClient, viewer_store: ViewerStore
) -> None:
    run = viewer_store.judged[0]
    whole, cut = client.get(f"{ROOT}/runs/{run}"), client.get(f"/runs/{run}")
    assert whole.status_code == cut.status_code == 200
    assert f'href="{ROOT}/runs/{run}/items"' in cut.text
    # the root alone, without its slash, is the runs page
    assert client.get(ROOT).status_code == 200


def test_a_live_page_refreshes_itself_under_the_root() -> None:
    """A page's own URL (a run in progress refreshes #main from it every 2 s), whether the
    proxy passed the root on or cut it off."""
    seen: list[str] = []

    async def page(scope: Scope, receive: Receive, send: Send) -> None:
        seen.append(self_url(Request(scope)))
        await PlainTextResponse("")(scope, receive, send)

    c = TestClient(_UnderRoot(page, ROOT))  # no `with`: no lifespan events to answer
    c.get(f"{ROOT}/runs/a%2Fb/items?show=failures")
    c.get("/runs/x")
    assert seen == [f"{ROOT}/runs/a%2Fb/items?show=failures", f"{ROOT}/runs/x"]


def test_a_label_posted_under_the_root_comes_back_under_it(
    db: Path, viewer_store: ViewerStore
) -> None:
    client = TestClient(create_app(db, reviewer="alice", root=ROOT), follow_redirects=False)
    run = viewer_store.judged[0]
    page = f"{ROOT}/review/item?run={run}&subject=memory&task=recall&item=q1"
    r = client.get(page)
    assert r.status_code == 200
    # the session cookie is the viewer's alone, not every tool's on the host
    assert f"Path={ROOT}" in r.headers["set-cookie"]
    token = re.search(r'name="csrf" value="([0-9a-f]+)"', r.text)
    assert token is not None
    assert f'action="{ROOT}/review/label"' in r.text
    r = client.post(f"{ROOT}/review/label", data=confirm_form(run, token.group(1)))
    assert r.status_code == 303, r.text[:500]
    assert r.headers["location"].startswith(f"{ROOT}/review/item?")


@pytest.mark.parametrize("given", ["a b", "/x/../y", "memgauge?x=1", "/%2e%2e"])
def test_a_root_path_a_proxy_cannot_mean_is_exit_2(given: str, db: Path) -> None:
    r = run_memgauge("view", "--store", str(db), "--root-path", given)
    assert r.returncode == 2
    assert "--root-path" in r.stderr
    assert "Traceback" not in r.stderr


@pytest.mark.parametrize("sent", [f"{ROOT}/trends/?suite=judged", "/trends/?suite=judged"])
def test_a_trailing_slash_is_sent_back_under_the_root(client: TestClient, sent: str) -> None:
    """Starlette's redirect of `/trends/` wrote `http://HOST/trends`: under a proxy that passes
    the root on, a page of another tool on the host (nginx rewrote it only when it cut the
    root off)."""
    r = client.get(sent)
    assert r.status_code == 307
    assert r.headers["location"] == f"{ROOT}/trends?suite=judged"
    assert client.get(f"{ROOT}/").status_code == 200


@pytest.mark.parametrize("root", ["", ROOT])
def test_a_trailing_slash_redirect_never_leaves_the_viewer(db: Path, root: str) -> None:
    """`//evil.example/` was sent on to `//evil.example`: a browser reads that as another
    site (an open redirect a link in a phishing mail could use)."""
    client = TestClient(create_app(db, root=root), follow_redirects=False)
    for sent in ("//evil.example/", f"{root}//evil.example/", "///evil.example//"):
        r = client.get("http://testserver" + sent)  # the path as sent, not another host
        assert r.status_code == 307, sent
        assert r.headers["location"] == f"{root}/evil.example", sent


@pytest.mark.parametrize("root", ["", ROOT])
def test_runs_is_the_runs_list_not_a_redirect_loop(db: Path, root: str) -> None:
    """`/runs` was sent to `/runs/` (the run pages' route) and `/runs/` back to `/runs`, with
    no end: a browser gave up with "too many redirects"."""
    client = TestClient(create_app(db, root=root), follow_redirects=False)
    r = client.get(f"{root}/runs?status=completed")
    assert r.status_code == 200
    assert r.text == client.get(f"{root}/?status=completed").text
    assert client.get(f"{root}/runs/").headers["location"] == f"{root}/runs"
