"""Every viewer page a reader can reach from the runs list, and `memgauge report`'s HTML file,
parsed by html5lib (the WHATWG parsing algorithm, as browsers run it): no parse error, no id
twice on a page, and every payload of the store's hostile run, trace and study shown as text,
never as an element."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit

import pytest
from starlette.testclient import TestClient
from viewer_store import PAYLOADS, ViewerStore

from memgauge.cli.main import main
from memgauge.view.app import create_app

html5lib = pytest.importorskip("html5lib")

#: pages to read at most (html5lib reads about 50 a second): the pages of each kind of run,
#: study, test and trace the crawl starts from, then the first page each link path leads to
LIMIT = 40


def _parsed(src: str, where: str) -> Any:
    """The document html5lib builds of `src`, asserting it met no parse error and no id
    twice."""
    parser = html5lib.HTMLParser(namespaceHTMLElements=False)
    doc = parser.parse(src)
    lines = src.splitlines()
    errors = [
        f"{code} {data} at {line}:{col}: {lines[line - 1][max(0, col - 60) : col + 20]!r}"
        for (line, col), code, data in parser.errors
    ]
    assert not errors, (where, errors[:5])
    ids = Counter(e.get("id") for e in doc.iter() if e.get("id") is not None)
    assert not [i for i, n in ids.items() if n > 1], (where, ids.most_common(3))
    # an id is one token: HTML allows no white space in it, and no empty one
    assert not [i for i in ids if not i or any(c.isspace() for c in i)], (where, list(ids))
    return doc


def _no_payload_became_markup(doc: Any, where: str) -> None:
    """No element or attribute a payload would make: no inline handler, no image, no SVG, and
    no script but the viewer's own (by URL)."""
    for el in doc.iter():
        assert el.tag not in ("img", "svg"), (where, el.tag)
        assert not [a for a in el.attrib if a.startswith("on")], (where, el.tag, el.attrib)
        if el.tag == "script":
            assert el.get("src", "").startswith("/static/"), (where, el.attrib, el.text)


@pytest.fixture(scope="module")
def client(viewer_store: ViewerStore) -> Iterator[TestClient]:
    with TestClient(create_app(viewer_store.path, reviewer="r1")) as c:
        yield c


def test_every_page_parses_without_error_and_payloads_stay_text(
    client: TestClient, viewer_store: ViewerStore
) -> None:
    hostile = viewer_store.hostile
    runs = [hostile, viewer_store.retrieval, viewer_store.audit, viewer_store.extraction]
    start = [
        *[f"/runs/{run}" for run in [*runs, viewer_store.operations, viewer_store.judged[-1]]],
        f"/runs/{hostile}/items",
        f"/traces/{quote(viewer_store.hostile_trace, safe='')}",
        f"/optimizations/{viewer_store.hostile_optimization}",
        f"/compare?a={viewer_store.judged[0]}&b={viewer_store.judged[-1]}",
        *("/", "/review", "/traces", "/ab", "/watch"),
    ]
    queue, seen, per_path = list(start), set(start), Counter[str]()
    shown = 0
    while queue and shown < LIMIT:
        url = queue.pop(0)
        r = client.get(url)
        assert r.status_code == 200, (url, r.status_code)
        if "text/html" not in r.headers.get("content-type", ""):
            continue
        doc = _parsed(r.text, url)
        _no_payload_became_markup(doc, url)
        text = "".join(doc.itertext())
        if hostile in url:
            assert PAYLOADS["script"] in text, url  # shown, as text
        shown += 1
        for a in doc.iter("a"):
            href = a.get("href") or ""
            parts = urlsplit(href)
            if parts.scheme or parts.netloc or not href.startswith("/") or href in seen:
                continue
            if href.startswith("/static/") or per_path[parts.path]:
                continue
            per_path[parts.path] += 1
            seen.add(href)
            queue.append(href)
    assert shown == LIMIT  # the crawl reached the run, item, review and trace pages


def test_the_html_report_parses_and_shows_payloads_as_text(
    viewer_store: ViewerStore, tmp_path: Path
) -> None:
    out = tmp_path / "run.html"
    args = ["report", viewer_store.hostile, "--out", str(out), "--store", str(viewer_store.path)]
    assert main(args) == 0
    doc = _parsed(out.read_text(encoding="utf-8"), str(out))
    _no_payload_became_markup(doc, str(out))
    assert not list(doc.iter("script"))
    assert PAYLOADS["script"] in "".join(doc.itertext())
