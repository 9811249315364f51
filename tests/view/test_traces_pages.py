"""The viewer's traces: `/traces` (sessions and traces, filtered by session, error and a text
of the answer, paged) and `/traces/{id}` (the span tree with timing bars, the searches with
their hits, the tool and model calls, the answer), over traces kept by `memgauge logs
import-traces --store`, on SQLite and PostgreSQL; every text escaped, hostile parameters a
400, nothing written."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest
from starlette.testclient import TestClient
from viewer_store import PAYLOADS, ViewerStore, snapshot

from memgauge.cli.main import main
from memgauge.data.tracing import read_traces
from memgauge.view.app import create_app
from memgauge.view.traces import TraceViews, span_tree, timeline, trace_url

TRACES = Path(__file__).resolve().parents[1] / "data" / "traces"
FILES = ("otlp_agent.jsonl", "phoenix_spans.jsonl", "langsmith_runs.json")
OTLP_AGENT = "4bf92f3577b34da6a3ce929d0e0e4736"
OTLP_FAILED = "5b8efff798038103d269b633813fc60d"


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def traces_store(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> str:
    """The three fixtures' traces kept in a new store, on SQLite and on PostgreSQL: once per
    module, as the tests only read them (the viewer is read-only: tests/view/test_read_only.py),
    not once per test (a database and three imports, seconds on PostgreSQL)."""
    if request.param == "sqlite":
        where = str(tmp_path_factory.mktemp("traces") / "results.db")
    else:
        where = str(request.getfixturevalue("pg_server").new_database())
    with pytest.MonkeyPatch.context() as mp:  # before any test's own MEMGAUGE_HOME is set
        mp.setenv("MEMGAUGE_HOME", str(tmp_path_factory.mktemp("traces-home")))
        for name in FILES:
            assert main(["logs", "import-traces", str(TRACES / name), "--store", where]) == 0
    return where


@pytest.fixture
def client(traces_store: str) -> Iterator[TestClient]:
    """The viewer of the three fixtures' traces, on SQLite and on PostgreSQL."""
    with TestClient(create_app(traces_store), raise_server_exceptions=False) as c:
        yield c


def _ok(client: TestClient, url: str) -> str:
    r = client.get(url)
    assert r.status_code == 200, (url, r.text[:300])
    assert "script-src 'self'" in r.headers["content-security-policy"]
    return r.text


def _listed(html: str) -> list[str]:
    return re.findall(r'class="trace-link" href="/traces/([^"]+)"', html)


def test_the_list_shows_sessions_and_traces_newest_first(client: TestClient) -> None:
    html = _ok(client, "/traces")
    assert '<a href="/traces">Traces</a>' in html  # in the top bar
    assert "8 trace(s) match; 1-8 shown." in html
    listed = _listed(html)
    assert len(listed) == 8
    # the LangSmith runs started in 2024-06-0x after the OTLP ones: newest first
    assert listed.index(OTLP_FAILED) == listed.index(OTLP_AGENT) - 1
    for session, n in (("s-42", 2), ("sess-7", 2), ("thread-1", 2), ("thread-2", 1)):
        assert f'href="/traces?session={session}">{session} · {n} trace' in html
    # the failed trace: its error, no answer; the agent's: its answer and tokens
    row = html.split(f"/traces/{OTLP_FAILED}")[1].split("</tr>")[0]
    assert "RateLimitError: 429 Too Many Requests" in row
    row = html.split(f"/traces/{OTLP_AGENT}")[1].split("</tr>")[0]
    assert "Your boat is moored at pier 7 in Porto." in row
    assert "<td>412 / 23</td>" in row


def test_the_lists_filters(client: TestClient) -> None:
    assert set(_listed(_ok(client, "/traces?session=s-42"))) == {OTLP_AGENT, OTLP_FAILED}
    errors = _listed(_ok(client, "/traces?error=yes"))
    assert OTLP_FAILED in errors
    assert OTLP_AGENT not in errors
    assert OTLP_FAILED not in _listed(_ok(client, "/traces?error=no"))
    # a case-insensitive substring of the answer; LIKE's wildcards are literal
    porto = _listed(_ok(client, "/traces?q=PORTO"))
    assert OTLP_AGENT in porto
    assert len(porto) == 3
    assert "0 trace(s) match." in _ok(client, "/traces?q=%25")
    assert _listed(_ok(client, "/traces?session=s-42&error=no&q=pier")) == [OTLP_AGENT]
    # an unknown error choice is "any", as every viewer filter's default
    assert len(_listed(_ok(client, "/traces?error=maybe"))) == 8


def test_the_list_is_paged_with_its_filters(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(TraceViews, "per_page", 3)
    first = _ok(client, "/traces?error=any&q=o")
    seen = _listed(first)
    assert "page 1 of" in first
    nxt = re.search(r'href="([^"]+)" id="next-page"', first)
    assert nxt is not None
    assert nxt.group(1).replace("&amp;", "&") == "/traces?q=o&page=2"
    second = _ok(client, "/traces?q=o&page=2")
    assert not set(_listed(second)) & set(seen)
    assert f"; 4-{3 + len(_listed(second))} shown." in second
    assert "page 2 of" in second
    assert "0 trace(s) match" not in _ok(client, "/traces?page=1")
    assert _listed(_ok(client, "/traces?page=999")) == []


def test_a_trace_page_shows_its_tree_bars_searches_tools_model_calls_and_answer(
    client: TestClient,
) -> None:
    html = _ok(client, f"/traces/{OTLP_AGENT}")
    assert '<pre id="answer">Your boat is moored at pier 7 in Porto.</pre>' in html
    assert 'session <a href="/traces?session=s-42">s-42</a>' in html
    # the tree: the agent at depth 0, its three children at depth 1, in start order
    rows = re.findall(r'class="span-row depth-(\d)"><td>(?:· )*([\w]+)', html)
    assert rows == [
        ("0", "support_agent"),
        ("1", "memory_search"),
        ("1", "lookup_berth"),
        ("1", "ChatOpenAI"),
    ]
    # one timing bar per span, the agent's the whole width, the search's 42 of 1840 ms
    bars = re.findall(r'class="span-bar" x="([\d.]+)" y="\d+" width="([\d.]+)"', html)
    assert len(bars) == 4
    assert float(bars[0][1]) == pytest.approx(420.0)
    assert float(bars[1][1]) == pytest.approx(420.0 * 42 / 1840, abs=0.1)
    assert "RETRIEVER memory_search: starts 10.0 ms, takes 42.0 ms" in html
    search = html.split('<section class="retrieval">')[1].split("</section>")[0]
    assert "<q>boat mooring location</q>" in search
    assert re.findall(r"<tr><td>(\d)</td><td>([\w-]+)</td><td>([\d.]+)</td></tr>", search) == [
        ("1", "m-pier7", "0.910"),
        ("2", "m-harbour", "0.420"),
    ]
    tool = html.split('<section class="tool-call">')[1].split("</section>")[0]
    assert "<h3>lookup_berth</h3>" in tool
    assert "{&#34;pier&#34;: 7}" in tool
    assert "{&#34;status&#34;: &#34;occupied&#34;}" in tool
    llm = html.split('<section class="llm-call">')[1].split("</section>")[0]
    assert "<h3>gpt-4o-mini-2024-07-18</h3>" in llm
    assert "tokens in 412 · out 23 · total 435" in llm


def test_a_failed_trace_shows_its_error_and_no_answer(client: TestClient) -> None:
    html = _ok(client, f"/traces/{OTLP_FAILED}")
    assert 'id="trace-error">Error: RateLimitError: 429 Too Many Requests' in html
    assert '<p class="meta" id="answer">No answer' in html
    assert "tokens in n/a · out n/a · total n/a" in html  # not given: n/a, never 0


def test_an_unknown_trace_is_a_404(client: TestClient) -> None:
    r = client.get("/traces/nope")
    assert r.status_code == 404
    assert "no trace &#39;nope&#39; in this store" in r.text


@pytest.mark.parametrize(
    "url",
    [
        "/traces?q=" + quote("x\x00y"),
        "/traces?session=" + quote("x\x00y"),
        "/traces?error=" + quote("x\x00y"),
        "/traces?page=" + quote("x\x00y"),
        "/traces/" + quote("x\x00y"),
        f"/traces?page={2**63}",
        f"/traces?page={10**30}",
    ],
)
def test_nul_bytes_and_huge_pages_are_a_400(client: TestClient, url: str) -> None:
    assert client.get(url).status_code == 400


def test_hostile_texts_are_escaped_and_nothing_is_written(viewer_store: ViewerStore) -> None:
    before = snapshot(viewer_store.path)
    with TestClient(create_app(viewer_store.path)) as client:
        listing = _ok(client, "/traces")
        page = _ok(client, trace_url(viewer_store.hostile_trace))
        nul = client.get("/traces?q=" + quote("\x00"))
    assert nul.status_code == 400
    assert _ok_escaped(listing)
    assert _ok_escaped(page)
    assert page.count("&lt;script&gt;window.__xss=1&lt;/script&gt;") >= 8
    assert snapshot(viewer_store.path) == before


def _ok_escaped(html: str) -> bool:
    for payload in PAYLOADS.values():
        assert payload not in html
    assert "<img" not in html
    assert "onerror=" not in html.replace("onerror=&#34;", "")
    return True


def test_a_partial_traces_spans_each_appear_once_in_its_tree() -> None:
    traces, _ = read_traces(TRACES.parent / "bad" / "traces_partial.jsonl")
    for trace in traces.traces:
        rows = span_tree(trace)
        assert sorted(r.span.span_id for r in rows) == sorted(s.span_id for s in trace.spans)
        # a span whose parent the file lacks is drawn as a root, not left out
        ids = {s.span_id for s in trace.spans}
        for r in rows:
            if r.span.parent_id not in ids:
                assert r.depth == 0
        assert str(timeline(rows)).count("<g>") == len(rows)
