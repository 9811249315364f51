"""Parameters no link of the viewer makes: a page number past what a store can offset to, and a
NUL byte in any parameter. Each is a 400 with a page that says why, on SQLite and on a real
PostgreSQL server (which refuses NUL in text: a 500 before, as was the page's 64-bit offset
overflowing), and the store is unchanged (issue 27 item 7)."""

from __future__ import annotations

from collections.abc import Iterator
from urllib.parse import quote

import pytest
from starlette.testclient import TestClient
from viewer_store import ViewerStore

from memgauge.view import app as app_module
from memgauge.view.app import create_app

NUL = quote("x\x00y")


def _urls(s: ViewerStore, v: str) -> list[str]:
    """Every parameter of every route, `v` in it, the others valid."""
    a, b = s.judged
    items = f"/runs/{a}/items"
    return [
        f"/?suite={v}",
        f"/?status={v}",
        f"/?kind={v}",
        f"/?candidates={v}",
        f"/?candidates=show&suite={v}",
        f"/?{v}=1",
        *(
            f"{items}?{k}={v}"
            for k in ("page", "q", "subject", "task", "baseline", "show", "sort", "order")
        ),
        f"/runs/{v}",
        f"/runs/{v}/items",
        f"/runs/{a}/item?subject={v}&task=recall&item=q1",
        f"/runs/{a}/item?subject=memory&task={v}&item=q1",
        f"/runs/{a}/item?subject=memory&task=recall&item={v}",
        f"/compare?a={v}&b={b}",
        f"/compare?a={a}&b={v}",
        f"/trends?suite={v}",
        f"/trends?suite=judged&measure={v}",
        f"/ab/test?name={v}",
        f"/shadow?name={v}",
        f"/optimizations/{v}",
        f"/optimizations/{s.optimization}?a={v}&b=1",
        f"/optimizations/{s.optimization}?a=1&b={v}",
        f"/static/{v}",
        *(f"/traces?{k}={v}" for k in ("session", "error", "q", "page")),
        f"/traces/{v}",
        f"/watch?{v}=1",
    ]


@pytest.fixture(params=["sqlite", "postgresql"])
def store(request: pytest.FixtureRequest, viewer_store: ViewerStore) -> ViewerStore:
    """`viewer_store` asked for by name, not only through getfixturevalue: tests/conftest.py
    groups the tests of the session's stores onto the xdist worker that builds them by the
    fixtures a test names, and the PostgreSQL store is in that group too."""
    if request.param == "sqlite":
        return viewer_store
    found: ViewerStore = request.getfixturevalue("pg_viewer_store")
    return found


@pytest.fixture
def client(store: ViewerStore) -> Iterator[TestClient]:
    with TestClient(create_app(store.path), raise_server_exceptions=False) as c:
        yield c


def test_a_nul_byte_in_any_parameter_is_a_400(client: TestClient, store: ViewerStore) -> None:
    for url in _urls(store, NUL):
        r = client.get(url)
        assert r.status_code == 400, (url, r.status_code, r.text[:300])
        assert "holds a NUL byte" in r.text
        assert "script-src 'self'" in r.headers["content-security-policy"]


@pytest.mark.parametrize("page", [2**62, 2**63, 2**64, 10**30])
def test_a_page_past_any_stores_offset_is_a_400(
    client: TestClient, store: ViewerStore, page: int
) -> None:
    r = client.get(f"/runs/{store.judged[1]}/items?page={page}&show=failures")
    assert r.status_code == 400, r.text[:300]
    last = (2**63 - 1) // app_module.PER_PAGE
    assert f"pages go up to {last:,}" in r.text


def test_the_last_page_there_can_be_and_a_page_that_is_no_number_still_show(
    client: TestClient, store: ViewerStore
) -> None:
    base = f"/runs/{store.judged[1]}/items"
    last = (2**63 - 1) // app_module.PER_PAGE
    r = client.get(f"{base}?page={last}")
    assert r.status_code == 200, r.text[:300]
    assert "/item?" not in r.text  # no item there
    for page in ("abc", "-5", "0", ""):
        r = client.get(f"{base}?page={page}")
        assert r.status_code == 200
        assert "; 1-" in r.text  # the first page's items
        assert "/item?" in r.text


def test_a_search_past_what_a_like_pattern_holds_is_a_400(
    client: TestClient, store: ViewerStore
) -> None:
    """A search of 60,000 characters made SQLite refuse its GLOB pattern ("LIKE or GLOB
    pattern too complex": a 500, a traceback in the server's log); past MAX_SEARCH characters
    it is a 400 that says so, and a search at the bound (4-byte characters: the most bytes a
    pattern takes) still shows its page."""
    base = f"/runs/{store.judged[1]}/items"
    r = client.get(f"{base}?q={quote('a' * 60_000)}")
    assert r.status_code == 400, r.text[:300]
    assert "a search of 60,000 characters: search for at most 4,000" in r.text
    at_bound = "\U0001f600" * app_module.MAX_SEARCH
    assert client.get(f"{base}?q={quote(at_bound)}").status_code == 200
