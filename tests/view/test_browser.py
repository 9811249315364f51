"""The viewer in a real browser: Debian's Chromium (`/usr/bin/chromium`) driven by Playwright,
against `memgauge view` running as its own process. Click-through to a judge's reasoning,
filters, compare, trend, a run in progress refreshing by itself, the layout at 1280 px on every
page (nothing wider than the window, every SVG text inside its SVG, no table cell broken
inside a word, every table scrolling in its own box), a 0-1 measure's trend on a 0-1 axis, an
optimization's candidate runs grouped under it on the runs page, and script payloads in every
kind of text shown as text with no script run. Screenshots for the README go to docs/.

Never `playwright install`: CI installs Debian's chromium with apt (`.ci/run`), and these tests
skip, saying why, only where it is absent.
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlencode
from urllib.request import urlopen

import pytest
import yaml
from tests.helpers import run_memgauge, write_recall_suite
from viewer_store import PAYLOADS, XSS, ViewerStore, snapshot

from memgauge.view.traces import trace_url

CHROMIUM = Path("/usr/bin/chromium")
ROOT = Path(__file__).resolve().parents[2]
# the README's screenshots: written to docs/ when MEMGAUGE_SCREENSHOTS is set (so that a test
# run leaves the work tree clean), else to a temporary directory
DOCS = ROOT / "docs" if os.environ.get("MEMGAUGE_SCREENSHOTS") else Path(tempfile.mkdtemp())
SUBJECTS = ROOT / "tests" / "data" / "subjects"
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        not CHROMIUM.is_file(),
        reason="no /usr/bin/chromium here (CI installs it: apt-get install chromium)",
    ),
]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _env() -> dict[str, str]:
    src = str(ROOT / "src")
    return {**os.environ, "PYTHONPATH": os.pathsep.join([src, str(SUBJECTS)])}


class Server:
    """`memgauge view --store DB --port N [ARGS]` in its own process."""

    def __init__(self, store: Path | str, *args: str) -> None:
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "memgauge",
                "view",
                "--store",
                str(store),
                "--port",
                str(self.port),
                *args,
            ],
            env=_env(),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        deadline = time.monotonic() + 30
        while True:
            try:
                with urlopen(self.url + "/static/style.css", timeout=1):
                    return
            except OSError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    _, err = self.proc.communicate(timeout=5)
                    raise RuntimeError(f"memgauge view did not start: {err.decode()}") from None
                time.sleep(0.1)

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.communicate(timeout=10)  # also closes its pipe
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.communicate()


@pytest.fixture(scope="module")
def watch_state(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A `memgauge watch` state of three passes, the last one firing, over searches whose
    intent (a filter the page shows) is every script payload."""
    from tests.online.test_watch import _log

    from memgauge import api

    tmp = tmp_path_factory.mktemp("watch")
    db, state = tmp / "log.db", tmp / "watch.json"
    cfg = api.WatchConfig(
        store=api.results_store(str(db)),
        state=state,
        filters=api.WatchFilter(intents=(XSS,)),
        measures=("quality_proxy",),
        min_samples=5,
    )
    for proxies in ([0.8] * 10, [0.78] * 10, [0.5] * 8 + [0.4, 0.3]):
        _log(db, proxies, intent=XSS)
        api.watch_pass(cfg)
    return state


@pytest.fixture(scope="module")
def server(viewer_store: ViewerStore, watch_state: Path) -> Iterator[Server]:
    srv = Server(viewer_store.path, "--watch-state", str(watch_state))
    yield srv
    srv.stop()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with sync_api.sync_playwright() as pw, tempfile.TemporaryDirectory() as profile:
        ctx = pw.chromium.launch_persistent_context(
            profile,
            executable_path=str(CHROMIUM),
            headless=True,
            args=ARGS,
            viewport={"width": 1280, "height": 900},
        )
        yield ctx
        ctx.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    pg = browser.new_page()
    dialogs: list[str] = []
    errors: list[str] = []
    pg.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    pg.on("pageerror", lambda e: errors.append(str(e)))
    yield pg
    pg.close()
    assert not dialogs, f"a dialog opened: {dialogs}"
    assert not errors, f"script errors: {errors}"


LAYOUT_JS = """() => {
  const out = {width: document.scrollingElement.scrollWidth, bad: []};
  for (const svg of document.querySelectorAll('svg')) {
    const box = svg.getBoundingClientRect();
    for (const t of svg.querySelectorAll('text')) {
      const r = t.getBoundingClientRect();
      if (r.width === 0 && r.height === 0) continue;
      if (r.left < box.left - 0.5 || r.right > box.right + 0.5 || r.top < box.top - 0.5
          || r.bottom > box.bottom + 0.5) {
        out.bad.push(t.textContent + ' ' + JSON.stringify([r.left, r.right, box.left, box.right]));
      }
    }
  }
  return out;
}"""


def _layout_ok(page: Any) -> None:
    got = page.evaluate(LAYOUT_JS)
    assert got["width"] <= 1280, f"{page.url}: scrollWidth {got['width']}"
    assert not got["bad"], f"{page.url}: SVG text outside its SVG: {got['bad'][:3]}"
    _words_ok(page)


# Where the text of each table cell wraps, read from the rendered line boxes: every character's
# box (a Range over it), and a break wherever a character starts below the previous one of its
# text node. A break between two letters or digits is a break inside a word ("ite|ms"); a break
# at a space or after punctuation (`tune-|prompt`, `">|<img`) is one the line breaker allows
# between words (UAX #14). Comparing heights with `white-space: nowrap` would change the
# table's own layout while measuring it; this reads the layout as the reader sees it, and names
# the very place of each bad break. Every table must also sit in a box that scrolls sideways.
WORDS_JS = r"""() => {
  const word = /[\p{L}\p{N}]/u, bad = [], unscrolled = [];
  for (const cell of document.querySelectorAll('td, th')) {
    const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const text = node.data;
      let prev = null;
      for (let i = 0; i < text.length; i++) {
        const range = document.createRange();
        range.setStart(node, i);
        range.setEnd(node, i + 1);
        const r = range.getClientRects()[0];
        if (!r) { prev = null; continue; }
        if (prev && word.test(prev.ch) && word.test(text[i]) && r.top >= prev.bottom - 1) {
          bad.push(text.slice(Math.max(0, i - 15), i) + '|' + text.slice(i, i + 15));
        }
        prev = {ch: text[i], bottom: r.bottom};
      }
    }
  }
  for (const table of document.querySelectorAll('table')) {
    const box = table.parentElement;
    if (!box.classList.contains('scroll') || getComputedStyle(box).overflowX !== 'auto') {
      unscrolled.push(table.id || table.className || table.outerHTML.slice(0, 60));
    }
  }
  return {bad, unscrolled};
}"""


def _words_ok(page: Any) -> None:
    """No table cell breaks inside a word, and every table scrolls in its own box (issue 29:
    at 1280 px the runs list read "ite ms" and "co mpl ete d")."""
    got = page.evaluate(WORDS_JS)
    assert not got["bad"], f"{page.url}: a cell breaks inside a word: {got['bad'][:5]}"
    assert not got["unscrolled"], f"{page.url}: a table outside a .scroll box: {got['unscrolled']}"


def _item(run_id: str, subject: str, task: str, item: str) -> str:
    return f"/runs/{run_id}/item?" + urlencode({"subject": subject, "task": task, "item": item})


def test_click_through_to_a_judges_reasoning(
    page: Any, server: Server, viewer_store: ViewerStore
) -> None:
    run_id = viewer_store.judged[1]
    page.goto(server.url + "/")
    page.click(f'a[href="/runs/{run_id}"]')
    page.wait_for_selector("#grid")
    page.screenshot(path=str(DOCS / "viewer-run.png"), full_page=False)
    page.click("text=failures")
    page.wait_for_selector("#items")
    assert "show=failures" in page.url
    page.click("a.item-link >> nth=0")
    page.wait_for_selector(".verdict")
    reasoning = page.inner_text(".verdict >> nth=0")
    assert re.search(r"the response lacks k\d+x", reasoning)
    page.click("details.raw summary")
    assert '"label": "no"' in page.inner_text("details.raw pre")


def _filter_passes_and_search(page: Any, url: str) -> None:
    """On the judged run's items page: 12 items, 6 passing, one of them matching "item 3?";
    each step waits for its URL change (a fill during the filter's navigation would be lost)."""
    page.goto(url)
    assert page.locator("a.item-link").count() == 12
    page.select_option("select[name=show]", "passes")
    page.wait_for_function("() => location.search.includes('show=passes')")
    page.wait_for_function("() => document.querySelectorAll('a.item-link').length === 6")
    page.fill("input[name=q]", "item 3?")
    page.wait_for_function("() => location.search.includes('q=item')")
    page.wait_for_function("() => document.querySelectorAll('a.item-link').length === 1")
    assert page.inner_text("a.item-link") == "q3"


def test_filters_and_search_update_the_url_and_the_table(
    page: Any, server: Server, viewer_store: ViewerStore
) -> None:
    _filter_passes_and_search(page, f"{server.url}/runs/{viewer_store.judged[1]}/items")
    page.reload()  # the state lives in the URL
    assert page.input_value("input[name=q]") == "item 3?"
    assert page.locator("a.item-link").count() == 1
    page.screenshot(path=str(DOCS / "viewer-items.png"))


def test_typing_on_after_the_search_box_s_pause_keeps_focus_and_letters(
    page: Any, server: Server, viewer_store: ViewerStore
) -> None:
    """The search box filters 400 ms after a key and the page swaps in the answer, the box
    with it: a reader who pauses and types on must keep typing into the box (the swapped-in
    box lost focus and the letters after a pause went nowhere)."""
    page.goto(f"{server.url}/runs/{viewer_store.judged[1]}/items")
    page.click("input[name=q]")
    page.keyboard.type("item")
    page.wait_for_function("() => location.search.includes('q=item')")
    page.keyboard.type(" 3?")
    page.wait_for_function("() => location.search.includes('q=item%203')", timeout=5000)
    assert page.input_value("input[name=q]") == "item 3?"
    page.wait_for_function("() => document.querySelectorAll('a.item-link').length === 1")
    assert page.evaluate("document.activeElement.name") == "q"


def test_letters_typed_while_the_search_is_answered_are_kept(
    page: Any, server: Server, viewer_store: ViewerStore
) -> None:
    """The search box's request is on its way (held here for a second) while the reader types
    on: its answer keeps the box as typed (it put back the text it was asked with, and the
    letters typed meanwhile were gone), and the search then runs on the whole text."""
    held: list[str] = []

    def slow(route: Any) -> None:
        if "q=item" in route.request.url and not held:
            held.append(route.request.url)
            time.sleep(1.0)
        route.continue_()

    page.goto(f"{server.url}/runs/{viewer_store.judged[1]}/items")
    page.route("**/items?*", slow)
    page.click("input[name=q]")
    page.keyboard.type("item")
    page.wait_for_timeout(600)  # the 400 ms pause: the request for "item" is held
    page.keyboard.type(" 3?")
    page.wait_for_function("() => location.search.includes('q=item%203')", timeout=5000)
    assert held
    assert page.input_value("input[name=q]") == "item 3?"
    page.wait_for_function("() => document.querySelectorAll('a.item-link').length === 1")


def test_filters_and_search_on_a_postgresql_store(page: Any, pg_viewer_store: ViewerStore) -> None:
    """`memgauge view --store postgresql://...` in Chromium: the same filters and search as on
    SQLite (`test_postgres.py` compares every page's rows)."""
    srv = Server(pg_viewer_store.path)
    try:
        _filter_passes_and_search(page, f"{srv.url}/runs/{pg_viewer_store.judged[1]}/items")
        page.click("a.item-link")
        page.wait_for_function("() => location.pathname.endsWith('/item')")
        assert "K3X" in page.inner_text("body")
    finally:
        srv.stop()


def test_compare_two_runs(page: Any, server: Server, viewer_store: ViewerStore) -> None:
    a, b = viewer_store.judged
    page.goto(f"{server.url}/runs/{b}")
    page.select_option("select[name=a]", a)
    page.click("text=compare >> nth=-1")
    page.wait_for_selector("#deltas")
    changed = page.inner_text("#changed")
    for item in ("q2", "q4", "q8", "q10"):
        assert re.search(rf"\b{item}\b", changed)
    page.screenshot(path=str(DOCS / "viewer-compare.png"))


def test_open_a_trend(page: Any, server: Server) -> None:
    page.goto(f"{server.url}/trends?suite=judged")
    page.click("a.trend-link:has-text('icontains')")
    page.wait_for_function("() => location.search.includes('icontains')")
    assert "icontains" in page.text_content("#trend-chart svg")
    assert page.locator("#trend-chart svg polyline").count() >= 1


def test_open_an_optimization_and_its_diff(
    page: Any, server: Server, viewer_store: ViewerStore
) -> None:
    sid = viewer_store.optimization
    page.goto(server.url + "/")
    page.click("header a:has-text('Optimizations')")
    page.click(f'a.study-link[href="/optimizations/{sid}"]')
    page.wait_for_selector("#score-chart svg")
    # a dot per candidate (the start and 3 iterations), the best-so-far line
    assert page.locator("#score-chart svg circle").count() == 4
    assert "best so far" in page.text_content("#score-chart svg")
    assert "paired" in page.inner_text("#holdout")
    page.screenshot(path=str(DOCS / "viewer-optimization.png"), full_page=False)
    page.select_option("#diff-form select[name=a]", "1")
    page.select_option("#diff-form select[name=b]", "3")
    page.click("#diff-form button")
    page.wait_for_function(
        "() => location.search.includes('a=1') && location.search.includes('b=3')"
    )
    assert "From iteration 1" in page.inner_text("#diff")
    # each iteration links to its run page
    page.click("#iterations a.run-link >> nth=1")
    page.wait_for_selector("#grid")
    assert "/runs/" in page.url
    # a prompt rewrite: the unified diff, its added line marked
    page.goto(f"{server.url}/optimizations/{viewer_store.hostile_optimization}?a=0&b=1")
    added = page.locator("#diff pre.text-diff span.add")
    assert added.count() == 1
    assert added.inner_text() == "+A memory that repeats a stored one is NOOP."


def _hostile_urls(store: ViewerStore) -> list[str]:
    from memgauge.store.run_pages import RunReader

    with RunReader(store.path) as r:
        run = r.get_run(store.hostile)
        items = r.item_records(store.hostile)
    assert run is not None
    it = items[0]
    return [
        "/",
        "/?candidates=show",
        f"/runs/{store.hostile}",
        f"/runs/{store.hostile}/items",
        f"/runs/{store.hostile}/items?show=failures&q=" + PAYLOADS["script"][:10],
        _item(store.hostile, it.subject, it.task, it.item_id),
        _item(store.hostile, items[1].subject, items[1].task, items[1].item_id),
        # two runs (a run with itself is refused): the hostile one's names on the page
        f"/compare?a={store.judged[0]}&b={store.hostile}",
        "/trends?" + urlencode({"suite": run.suite_name}),
        "/optimizations",
        f"/optimizations/{store.hostile_optimization}",
        f"/optimizations/{store.hostile_optimization}?a=1&b=0",
        trace_url(store.hostile_trace),
        "/watch",
    ]


def test_script_payloads_are_shown_as_text_and_never_run(
    page: Any, server: Server, viewer_store: ViewerStore, tmp_path: Path
) -> None:
    report = tmp_path / "hostile.html"
    args = [viewer_store.hostile, "--out", str(report), "--store", str(viewer_store.path)]
    assert run_memgauge("report", *args).returncode == 0
    for url in [server.url + u for u in _hostile_urls(viewer_store)] + [report.as_uri()]:
        page.goto(url)
        page.evaluate("() => document.querySelectorAll('details').forEach(d => d.open = true)")
        page.hover("body")
        assert page.evaluate("() => window.__xss") is None, f"a payload ran on {url}"
        assert page.locator("img[src=x]").count() == 0
        text = page.inner_text("body")
        if "/items?show" in url or "compare" in url:
            continue  # filtered or item-free views: the payload need not appear
        for name, payload in PAYLOADS.items():
            assert payload in text, f"{name} payload not shown as text on {url}"


def test_layout_at_1280_on_every_page(
    page: Any, server: Server, viewer_store: ViewerStore, tmp_path: Path
) -> None:
    a, b = viewer_store.judged
    urls = [
        "/",
        *(
            f"/runs/{r}"
            for r in (
                a,
                b,
                viewer_store.retrieval,
                viewer_store.audit,
                viewer_store.extraction,
                viewer_store.operations,
            )
        ),
        f"/runs/{b}/items",
        f"/runs/{viewer_store.retrieval}/items",
        _item(b, "memory", "recall", "q4"),
        _item(viewer_store.retrieval, "lexical", "retrieval", "q1"),
        f"/compare?a={a}&b={b}",
        "/trends?suite=judged",
        "/ab",
        f"/ab/test?name={viewer_store.ab_test}",
        f"/shadow?name={viewer_store.shadow}",
        f"/optimizations/{viewer_store.optimization}",
        f"/optimizations/{viewer_store.optimization}?a=1&b=3",
        "/traces",
        trace_url(viewer_store.trace),
        *_hostile_urls(viewer_store),
    ]
    for url in urls:
        page.goto(server.url + url)
        _layout_ok(page)
    page.goto(f"{server.url}/ab/test?name={viewer_store.ab_test}")
    page.screenshot(path=str(DOCS / "viewer-ab.png"))
    report = tmp_path / "r.html"
    args = [b, "--out", str(report), "--store", str(viewer_store.path)]
    assert run_memgauge("report", *args).returncode == 0
    for path in (report, viewer_store.path.parent / "ev" / "report.html"):
        page.goto(path.as_uri())
        _layout_ok(page)


SCROLL_JS = """(sel) => {
  const box = document.querySelector(sel).parentElement;
  return {scroll: box.scrollWidth, client: box.clientWidth,
          overflow: getComputedStyle(box).overflowX,
          page: document.scrollingElement.scrollWidth};
}"""


def test_a_wide_table_scrolls_in_its_own_box(page: Any, tmp_path: Path) -> None:
    """Fourteen measures of two systems make a summary wider than the page: it scrolls
    sideways inside its box, the page does not, and no cell breaks a word to fit."""
    measures = [
        *("RR@5", "RR@10", "nDCG@5", "nDCG@10", "nDCG@20", "Recall@5", "Recall@10"),
        *("Recall@20", "P@5", "P@10", "AP@10", "R-prec", "Success@5", "Success@10"),
    ]
    out = tmp_path / "wide"
    done = run_memgauge(
        "evaluate",
        str(ROOT / "tests" / "data" / "good" / "bundle.yaml"),
        *("-s", "lexical", "-s", "hybrid"),
        *(a for m in measures for a in ("-m", m)),
        *("--out", str(out), "--no-store", "--quiet"),
    )
    assert done.returncode == 0, done.stderr
    page.goto((out / "report.html").as_uri())
    got = page.evaluate(SCROLL_JS, "#retrieval-summary")
    assert got["overflow"] == "auto"
    assert got["scroll"] > got["client"] + 200, got
    assert got["page"] <= 1280, got
    _layout_ok(page)


def test_a_0_1_measure_s_trend_axis_stays_within_0_1(
    page: Any, server: Server, viewer_store: ViewerStore
) -> None:
    """One evaluate run with every value 1.0: the axis was drawn from 0.42 to 1.58."""
    from memgauge.store.run_pages import RunReader

    with RunReader(viewer_store.path) as r:
        run = r.get_run(viewer_store.retrieval)
    assert run is not None
    for measure in ("nDCG@10", "Recall@5"):
        key = f"lexical / retrieval / {measure}"
        page.goto(f"{server.url}/trends?" + urlencode({"suite": run.suite_name, "measure": key}))
        ticks = [float(t) for t in page.locator("#trend-chart svg text.y-tick").all_text_contents()]
        assert len(ticks) == 5, ticks
        assert min(ticks) >= 0.0, (measure, ticks)
        assert max(ticks) <= 1.0, (measure, ticks)
        _layout_ok(page)


def test_candidate_runs_group_under_their_study_with_a_filter(
    page: Any, server: Server, viewer_store: ViewerStore
) -> None:
    """Issue 29: an optimization's candidate runs buried the user's own runs."""
    from memgauge.store.run_pages import RunReader

    with RunReader(viewer_store.path) as r:
        studies = {
            sid: set(r.study_run_ids(sid))
            for sid in (viewer_store.hostile_optimization, viewer_store.optimization)
        }
    page.goto(server.url + "/")
    groups = page.locator("#runs tr.study-group")
    assert [groups.nth(i).get_attribute("data-study") for i in range(2)] == list(studies)
    assert page.locator("#runs tr.candidate").count() == 0
    for sid, runs in studies.items():
        group = page.locator(f'#runs tr.study-group[data-study="{sid}"]')
        assert f"{len(runs)} candidate runs" in group.inner_text()
    page.select_option("select[name=candidates]", "show")
    page.click("form.filters button")
    page.wait_for_function("() => location.search.includes('candidates=show')")
    # each study's runs, right under it
    order = page.evaluate(
        """() => [...document.querySelectorAll('#runs tbody tr')].map(
             tr => [tr.className, tr.dataset.study || ''])"""
    )
    for sid, runs in studies.items():
        at = order.index(["study-group", sid])
        assert order[at + 1 : at + 1 + len(runs)] == [["candidate", sid]] * len(runs)
    shown = page.locator("#runs tr.candidate a.run-link").all_inner_texts()
    assert set(shown) == set().union(*studies.values())
    page.click("a.candidates-toggle")
    page.wait_for_function("() => !location.search.includes('candidates=show')")
    assert page.locator("#runs tr.candidate").count() == 0
    assert page.locator("#runs tr.study-group").count() == 2


STYLE_JS = """() => {
  const body = getComputedStyle(document.body);
  return {font: body.fontFamily, margin: body.marginTop, color: body.color,
          header: getComputedStyle(document.querySelector('header.top')).backgroundColor};
}"""


def test_reports_are_drawn_with_their_stylesheet(page: Any, tmp_path: Path) -> None:
    """Issue 27 item 11: an HTML-escaped inline stylesheet lost its body rule, and every
    report.html showed in the browser's default serif font. The computed style, not the
    source, is what a reader sees."""
    demo, db = tmp_path / "demo", tmp_path / "r.db"
    done = run_memgauge("demo", "--out", str(demo), "--store", str(db), "--no-progress")
    assert done.returncode == 0, done.stderr
    import sqlite3

    with sqlite3.connect(db) as conn:
        (run_id,) = conn.execute("SELECT run_id FROM suite_runs").fetchone()
    report = tmp_path / "report.html"
    done = run_memgauge("report", run_id, "--out", str(report), "--store", str(db))
    assert done.returncode == 0, done.stderr
    css = (ROOT / "src" / "memgauge" / "view" / "static" / "style.css").read_text()
    rule = re.search(r"body\{font:\S+ ([^;}]+)", css)
    assert rule is not None
    family = rule.group(1)  # system-ui,-apple-system,"Segoe UI",Roboto,sans-serif
    for path in (report, demo / "report.html"):
        page.goto(path.as_uri())
        got = page.evaluate(STYLE_JS)
        assert got["font"].replace(", ", ",") == family, (path.name, got)
        assert (got["margin"], got["color"], got["header"]) == (
            "0px",
            "rgb(29, 35, 48)",  # #1d2330
            "rgb(29, 35, 48)",
        ), (path.name, got)


def _slow_suite(root: Path, n: int, delay: float = 0.4) -> Path:
    items = [
        {"id": f"s{i}", "input": f"where is thing {i}", "expected": f"thing {i}"} for i in range(n)
    ]
    memories = [{"id": f"m{i}", "text": f"thing {i} is in box {i}"} for i in range(n)]
    for name, rows in (("items", items), ("memories", memories)):
        (root / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    suite = {
        "name": "slow-live",
        "concurrency": 1,
        "subjects": {"slow": {"python": {"target": "slow:SlowMemory", "kwargs": {"delay": delay}}}},
        "tasks": [
            {
                "name": "recall",
                "kind": "expected-output",
                "dataset": "items.jsonl",
                "memories": "memories.jsonl",
                "k": 1,
                "evaluators": ["icontains"],
            }
        ],
    }
    path = root / "suite.yaml"
    path.write_text(yaml.safe_dump(suite))
    return path


def _completed(db: Path) -> tuple[str | None, int]:
    import sqlite3

    if not db.is_file():
        return None, 0
    try:
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
        try:
            row = conn.execute(
                "SELECT r.run_id, (SELECT COUNT(*) FROM suite_run_items i WHERE"
                " i.run_id = r.run_id AND i.status = 'completed') FROM suite_runs r"
            ).fetchone()
        finally:
            conn.close()
    except sqlite3.Error:
        return None, 0
    return (row[0], int(row[1])) if row else (None, 0)


def test_a_run_in_progress_refreshes_by_itself(page: Any, tmp_path: Path) -> None:
    from memgauge import api

    db = tmp_path / "live.db"
    suite = _slow_suite(tmp_path, 16)
    # the viewer is up on the (empty) store before the run starts: its start-up, seconds on a
    # loaded machine, is not taken out of the 6 s the run is in progress
    with api.open_store(db):
        pass
    srv = Server(db)
    run = subprocess.Popen(
        [sys.executable, "-m", "memgauge", "run", str(suite), "--store", str(db)],
        env=_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 60
        while (state := _completed(db))[1] < 1:
            assert run.poll() is None, run.stderr.read().decode() if run.stderr else ""
            assert time.monotonic() < deadline, "the run never started"
            time.sleep(0.1)
        run_id = state[0]
        page.goto(f"{srv.url}/runs/{run_id}")
        assert page.get_attribute("#main", "data-live") == "1"
        before = int(re.search(r"(\d+) completed", page.inner_text("#run-status")).group(1))  # type: ignore[union-attr]
        page.evaluate("() => { window.__same_page = 1 }")
        page.wait_for_function(
            f"() => parseInt(document.querySelector('#run-status').innerText.match(/(\\d+) completed/)[1]) > {before}",
            timeout=20_000,
        )
        # updated in place, not by reloading the page
        assert page.evaluate("() => window.__same_page") == 1
        page.wait_for_function(
            "() => document.querySelector('#run-status').innerText.includes('completed ·')"
            " && !document.querySelector('#main').dataset.live",
            timeout=30_000,
        )
    finally:
        srv.stop()
        run.communicate(timeout=60)
    assert run.returncode == 0
    before_counts = snapshot(db)
    assert before_counts[1]["suite_run_items"] == 16


def test_a_live_page_s_refresh_keeps_what_the_reader_types_and_picks(
    page: Any, tmp_path: Path
) -> None:
    """A run in progress redraws its page every 2 s: the search typed into its items page
    letter by letter across refreshes, and the earlier run picked to compare with on its run
    page, stay as the reader left them (each refresh put back the values the page was drawn
    with: the box kept its last letter, the compare button compared with the newest run)."""
    db = tmp_path / "live.db"
    for n in range(2):  # two earlier runs of the suite, to pick one to compare with
        fast = tmp_path / f"fast{n}"
        fast.mkdir()
        done = run_memgauge(
            "run", str(_slow_suite(fast, 2, delay=0)), "--store", str(db), env=_env()
        )
        assert done.returncode == 0, done.stderr
    live = tmp_path / "live"
    live.mkdir()
    srv = Server(db)
    run = subprocess.Popen(
        [sys.executable, "-m", "memgauge", "run", str(_slow_suite(live, 60)), "--store", str(db)],
        env=_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while page.goto(srv.url + "/?status=running") and not page.locator("a.run-link").count():
            assert run.poll() is None, "the run ended before the page showed it"
            assert time.monotonic() < deadline, "the run never started"
            time.sleep(0.2)
        page.click("a.run-link")
        page.wait_for_selector("form[action='/compare']")
        assert page.get_attribute("#main", "data-live") == "1"
        picker = "form[action='/compare'] select[name=a]"
        options = page.eval_on_selector_all(picker + " option", "os => os.map(o => o.value)")
        assert len(options) == 2, options
        assert page.input_value(picker) == options[0]
        page.select_option(picker, options[1])  # not the one drawn selected
        status = page.inner_text("#run-status")
        page.wait_for_function(
            f"() => document.querySelector('#run-status').innerText !== {json.dumps(status)}",
            timeout=10_000,
        )
        assert page.input_value(picker) == options[1]
        page.click("a[href$='/items']")
        page.wait_for_selector("#item-filters")
        page.click("input[name=q]")
        for ch in "where is thing 12":  # 4 s of typing: two refreshes at least
            page.keyboard.type(ch)
            page.wait_for_timeout(250)
        page.wait_for_function("() => location.search.includes('q=where%20is%20thing%2012')")
        assert page.input_value("input[name=q]") == "where is thing 12"
        assert page.get_attribute("#main", "data-live") == "1"
        # the back button draws the form from the URL, refresh or not
        page.go_back()
        page.wait_for_function("() => !location.search.includes('q=where%20is%20thing%2012')")
        page.wait_for_timeout(2500)
        assert page.input_value("input[name=q]") in "where is thing 12"
        assert page.input_value("input[name=q]") == page.evaluate(
            "new URLSearchParams(location.search).get('q') || ''"
        )
    finally:
        srv.stop()
        run.terminate()
        run.communicate(timeout=30)


def test_review_a_hit_and_a_verdict_by_clicking(
    page: Any, tmp_path: Path, viewer_store: ViewerStore
) -> None:
    """`memgauge view --review`: from the queue to an item, grade a hit 2 and override the
    judge's verdict with a note by clicking; the store holds both labels, the page shows them,
    and a page of the review carries its payloads as text (no dialog, no script error)."""
    import shutil
    import sqlite3

    db = tmp_path / "review.db"
    shutil.copy(viewer_store.path, db)
    srv = Server(db, "--review", "--reviewer", "alice")
    try:
        run = viewer_store.retrieval
        page.goto(f"{srv.url}/review?run={run}")
        assert page.inner_text("#reviewer") == "alice"
        _layout_ok(page)
        page.click("a.review-link >> nth=0")
        page.wait_for_selector("table.review-hits")
        _layout_ok(page)
        row = page.locator("table.review-hits tbody tr").first
        memory = row.locator("td").nth(1).inner_text()
        # the reviewer sees what they grade: the memory's text, which the store leaves out
        # (the dataset's own) and the page reads back from the run's unchanged dataset
        texts = {"m1": "Deploys go out on Tuesdays", "m2": "Never commit secrets"}
        assert row.locator("td").nth(2).inner_text() == texts[memory]
        row.locator("input[name=grade][value='2']").check()
        row.locator("button[name=save]").click()
        page.wait_for_selector("span.label-given")
        assert "alice: 2" in page.locator("table.review-hits tbody tr").first.inner_text()
        # the judged run: override the judge on q1 with a note
        page.goto(f"{srv.url}/review?run={viewer_store.judged[0]}")
        page.click("a.review-link >> nth=1")
        verdict = page.locator("#verdict-qa-judge")
        verdict.locator("input[name=note]").fill("the memory says <b>otherwise</b>")
        verdict.locator("button[value=override]").click()
        page.wait_for_selector("#verdict-qa-judge span.label-given")
        shown = page.locator("#verdict-qa-judge span.label-given").inner_text()
        assert shown == "alice: fail (the memory says <b>otherwise</b>)"
        page.goto(f"{srv.url}/review?run={viewer_store.hostile}")
        page.click("a.review-link >> nth=0")
        page.wait_for_selector("table.review-hits")
        assert page.evaluate("() => window.__xss") is None
    finally:
        srv.stop()
    conn = sqlite3.connect(db)
    rows = conn.execute(
        "SELECT reviewer, run_id, kind, target, grade, label, machine, note FROM review_labels"
        " ORDER BY id"
    ).fetchall()
    conn.close()
    assert rows == [
        ("alice", run, "hit", memory, 2, None, rows[0][6], ""),
        (
            "alice",
            viewer_store.judged[0],
            "verdict",
            "qa-judge",
            None,
            "fail",
            "pass",
            "the memory says <b>otherwise</b>",
        ),
    ]


def test_the_first_page_a_browser_opens_logs_no_error(browser: Any, server: Server) -> None:
    """A browser asks every new site for /favicon.ico; the viewer has none, so the first page
    of every store logged "Failed to load resource: ... 404" in the console. The page names
    its icon (an empty one), so nothing is asked that is not there."""
    pg = browser.new_page()
    logged: list[str] = []
    missing: list[str] = []
    pg.on("console", lambda m: logged.append(m.text) if m.type == "error" else None)
    pg.on("response", lambda r: missing.append(r.url) if r.status >= 400 else None)
    try:
        pg.goto(server.url + "/")
        pg.wait_for_timeout(500)  # the icon is asked for after the load
    finally:
        pg.close()
    assert not missing, missing
    assert not logged, logged


def test_a_name_of_one_long_word_does_not_widen_the_page(page: Any, tmp_path: Path) -> None:
    """A suite named with one 300-letter word: the runs page's suite select grew as wide as
    the name (the page 2209 px wide) and the run page's "trend of NAME" link did not break
    (2542 px). Tables scroll in their own box; everything else stays within 1280 px."""
    name = "x" * 300
    rows = [
        {"id": f"q{i}", "input": f"port of service {i}?", "expected": f"80{i}"} for i in range(3)
    ]
    memories = [{"id": f"m{i}", "text": f"service {i} listens on port 80{i}"} for i in range(3)]
    suite = write_recall_suite(tmp_path, rows, memories, ["contains"], name=name)
    db = tmp_path / "r.db"
    done = run_memgauge("run", str(suite), "--store", str(db), "--json")
    assert done.returncode == 0, done.stderr
    run_id = json.loads(done.stdout.strip().splitlines()[-1])["run_id"]
    srv = Server(db)
    try:
        for url in ("/", f"/runs/{run_id}", f"/trends?suite={name}"):
            page.goto(srv.url + url)
            assert name in page.inner_text("main"), url
            width = page.evaluate("document.scrollingElement.scrollWidth")
            assert width <= 1280, (url, width)
    finally:
        srv.stop()
