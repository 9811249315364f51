"""Every route of the viewer with Starlette's test client, over a real store: what each page
shows, and that after every route the store's migration table and row counts are unchanged."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from html import unescape
from pathlib import Path
from urllib.parse import urlencode

import pytest
from starlette.testclient import TestClient
from tests.helpers import run_memgauge, write_recall_suite
from viewer_store import ViewerStore, snapshot

from memgauge.store.run_pages import RunReader
from memgauge.view.app import create_app


@pytest.fixture(scope="module")
def client(viewer_store: ViewerStore) -> Iterator[TestClient]:
    with TestClient(create_app(viewer_store.path)) as c:
        yield c


def _get(client: TestClient, store: ViewerStore, url: str, status: int = 200) -> str:
    before = snapshot(store.path)
    r = client.get(url)
    assert r.status_code == status, r.text[:2000]
    assert snapshot(store.path) == before, f"{url} changed the store"
    assert "script-src 'self'" in r.headers.get("content-security-policy", "")
    return r.text


def test_runs_page_lists_every_run_with_its_counts(
    client: TestClient, viewer_store: ViewerStore
) -> None:
    html = _get(client, viewer_store, "/")
    for run_id in (*viewer_store.judged, viewer_store.retrieval, viewer_store.audit):
        assert f'href="/runs/{run_id}"' in html
    with RunReader(viewer_store.path) as r:
        rows = r.runs_overview()
    judged = next(x for x in rows if x["run_id"] == viewer_store.judged[0])
    assert (judged["subjects"], judged["tasks"]) == (["memory"], ["recall"])
    # the filter keeps only the suite's runs
    html = _get(client, viewer_store, "/?suite=judged")
    assert viewer_store.retrieval not in html
    assert all(r in html for r in viewer_store.judged)


def test_run_page_grid_targets_gate_usage_provenance(
    client: TestClient, viewer_store: ViewerStore
) -> None:
    second = viewer_store.judged[1]
    html = _get(client, viewer_store, f"/runs/{second}")
    grid = html[html.index('id="grid"') : html.index("</table>", html.index('id="grid"'))]
    assert "qa-judge" in grid
    assert "icontains" in grid
    with RunReader(viewer_store.path) as r:
        run = r.get_run(second)
    assert run is not None
    assert run.summary is not None
    e = next(x for x in run.summary.evaluators if x.evaluator == "icontains")
    assert f"{e.mean:.3f}" in grid
    assert f"[{e.ci_low:.3f}, {e.ci_high:.3f}]" in grid
    assert 'id="gate"' in html
    assert "1 earlier completed run" in html
    usage = html[html.index('id="usage"') :]
    assert "fake-judge" in usage.split("</table>")[0]
    assert "memgauge_version" in html
    assert run.suite_sha256 in html
    assert "lexical" in html  # the subject's spec


def test_run_page_gate_line_names_no_phase_the_gate_does_not_have(
    client: TestClient, viewer_store: ViewerStore
) -> None:
    """The gate's line read "Status pass, phase , against the rolling baseline ...": the
    template named a `phase` the gate result no longer has, drawn as nothing."""
    html = _get(client, viewer_store, f"/runs/{viewer_store.judged[1]}")
    start = html.index('<p id="gate">')
    line = re.sub(r"<[^>]+>", "", html[start : html.index("</p>", start)])
    assert re.fullmatch(
        r"Status (pass|warn|fail), against the rolling baseline of 1 earlier completed"
        r" run\(s\) of this suite \(1 in history\)\.",
        line,
    ), line


def test_retrieval_run_page_shows_its_measures_comparisons_and_latency(
    client: TestClient, viewer_store: ViewerStore
) -> None:
    html = _get(client, viewer_store, f"/runs/{viewer_store.retrieval}")
    assert 'id="retrieval-summary"' in html
    assert "Paired comparisons" in html
    assert "Search latency, ms" in html
    assert "<svg" in html


@pytest.mark.parametrize("kind", ["audit", "extraction", "operations"])
def test_write_path_and_audit_sections(
    client: TestClient, viewer_store: ViewerStore, kind: str
) -> None:
    html = _get(client, viewer_store, f"/runs/{getattr(viewer_store, kind)}")
    section = {
        "audit": "<h2>Audit</h2>",
        "extraction": "<h2>Extraction</h2>",
        "operations": "<h2>Operations</h2>",
    }[kind]
    assert section in html
    if kind == "audit":
        assert "Recall accuracy" in html
        assert "What is the user&#39;s name?" in html
    if kind == "extraction":
        assert "Invented" in html
        assert "Missed" in html
    if kind == "operations":
        assert "heuristic" in html
        assert "exact-noop" in html


def _item_links(html: str) -> list[str]:
    return [unescape(u) for u in re.findall(r'class="item-link" href="([^"]+)"', html)]


def test_items_page_filters_search_sort_and_pages(
    client: TestClient, viewer_store: ViewerStore
) -> None:
    second = viewer_store.judged[1]
    base = f"/runs/{second}/items"
    html = _get(client, viewer_store, base)
    assert "12 item(s) match" in html
    assert len(_item_links(html)) == 12
    # the second run's memories miss every even item: the judge fails those
    html = _get(client, viewer_store, f"{base}?show=failures")
    failing = {re.search(r"item=(q\d+)", u).group(1) for u in _item_links(html)}  # type: ignore[union-attr]
    assert failing == {f"q{i}" for i in range(0, 12, 2)}
    html = _get(client, viewer_store, f"{base}?show=passes")
    assert len(_item_links(html)) == 6
    # regressed against the first run (which missed only every third item): q2, q4, q8, q10
    html = _get(client, viewer_store, f"{base}?show=regressed&baseline={viewer_store.judged[0]}")
    regressed = {re.search(r"item=(q\d+)", u).group(1) for u in _item_links(html)}  # type: ignore[union-attr]
    assert regressed == {"q2", "q4", "q8", "q10"}
    html = _get(client, viewer_store, f"{base}?show=changed&baseline={viewer_store.judged[0]}")
    assert len(_item_links(html)) >= 4
    # search: the item's text, case-insensitively, and the judge's reasoning
    html = _get(client, viewer_store, f"{base}?q=ITEM+7%3F")
    assert [re.search(r"item=(q\d+)", u).group(1) for u in _item_links(html)] == ["q7"]  # type: ignore[union-attr]
    html = _get(client, viewer_store, f"{base}?q=lacks+k4x")
    assert [re.search(r"item=(q\d+)", u).group(1) for u in _item_links(html)] == ["q4"]  # type: ignore[union-attr]
    # sorting by item id, descending; and the filter state is kept in the page links
    html = _get(client, viewer_store, f"{base}?sort=item&order=desc")
    ids = [re.search(r"item=(q\d+)", u).group(1) for u in _item_links(html)]  # type: ignore[union-attr]
    assert ids == sorted(ids, reverse=True)


def test_items_pagination_keeps_the_filters(viewer_store: ViewerStore) -> None:
    from memgauge.view import app as app_module

    old = app_module.PER_PAGE
    app_module.PER_PAGE = 5
    try:
        with TestClient(create_app(viewer_store.path)) as c:
            base = f"/runs/{viewer_store.judged[1]}/items"
            html = _get(c, viewer_store, f"{base}?show=failures&sort=item")
            assert "page 1 of 2" in html
            nxt = unescape(re.search(r'href="([^"]+)" id="next-page"', html).group(1))  # type: ignore[union-attr]
            assert "show=failures" in nxt
            assert "sort=item" in nxt
            assert "page=2" in nxt
            html = _get(c, viewer_store, nxt)
            assert len(_item_links(html)) == 1
            assert "page 2 of 2" in html
    finally:
        app_module.PER_PAGE = old


def test_item_page_shows_the_judges_reasoning_raw_reply_and_template(
    client: TestClient, viewer_store: ViewerStore
) -> None:
    run_id = viewer_store.judged[1]
    query = urlencode({"subject": "memory", "task": "recall", "item": "q4"})
    html = _get(client, viewer_store, f"/runs/{run_id}/item?{query}")
    assert "the response lacks k4x" in html  # the reasoning
    assert "raw reply" in html
    assert "&#34;label&#34;: &#34;no&#34;" in html
    assert "template hash" in html
    assert "route" in html
    assert "What is the code for item 4?" in html


def test_retrieval_item_highlights_relevant_hits(
    client: TestClient, viewer_store: ViewerStore
) -> None:
    query = urlencode({"subject": "lexical", "task": "retrieval", "item": "q1"})
    html = _get(client, viewer_store, f"/runs/{viewer_store.retrieval}/item?{query}")
    hits = html[html.index('class="hits"') :]
    assert '<tr class="relevant"><td class="num">1</td><td>m1</td>' in hits


def test_item_failures_are_shown(client: TestClient, viewer_store: ViewerStore) -> None:
    with RunReader(viewer_store.path) as r:
        failed = next(it for it in r.item_records(viewer_store.hostile) if it.status == "failed")
    query = urlencode({"subject": failed.subject, "task": failed.task, "item": failed.item_id})
    html = _get(client, viewer_store, f"/runs/{viewer_store.hostile}/item?{query}")
    assert 'class="failures"' in html
    assert "subject" in html


def test_compare_page(client: TestClient, viewer_store: ViewerStore) -> None:
    a, b = viewer_store.judged
    html = _get(client, viewer_store, f"/compare?a={a}&b={b}")
    deltas = html[html.index('id="deltas"') :].split("</table>")[0]
    assert "qa-judge" in deltas
    assert "icontains" in deltas
    changed = html[html.index('id="changed"') :].split("</table>")[0]
    for item in ("q2", "q4", "q8", "q10"):
        assert f">{item}<" in changed
    assert "Tasks" in html  # the dataset files differ between the two runs' task specs


def test_compare_of_a_run_with_itself_says_so_and_links_to_the_run(
    client: TestClient, viewer_store: ViewerStore
) -> None:
    """It drew all-zero deltas, read as "no change", where `runs compare A A` exits 2."""
    a, _ = viewer_store.judged
    html = _get(client, viewer_store, f"/compare?a={a}&b={a}", status=400)
    assert f"a and b both name run {a}" in unescape(html)
    assert f'href="/runs/{a}"' in html
    assert 'id="deltas"' not in html


def test_trends_page_draws_the_gate_baseline(client: TestClient, viewer_store: ViewerStore) -> None:
    html = _get(
        client, viewer_store, "/trends?suite=judged&measure=memory+%2F+recall+%2F+icontains"
    )
    assert "gate baseline" in html
    assert "<polyline" in html
    assert "2 completed run(s)" in html


def test_a_trend_tells_two_runs_of_one_minute_apart(
    client: TestClient, viewer_store: ViewerStore
) -> None:
    """The two judged runs, made within a second or a few: the trend's x labels tell them
    apart (both read the same minute before; runs of one second add their ids' ends)."""
    html = _get(
        client, viewer_store, "/trends?suite=judged&measure=memory+%2F+recall+%2F+icontains"
    )
    labels = re.findall(r">(\d{4}-\d\d-\d\d \d\d:\d\d[^<]*)</text>", html)
    assert len(labels) == 2, labels
    assert labels[0] != labels[1], labels


def _two_runs_of_a_box_suite(tmp_path: Path, n: int, *, shelves: int) -> tuple[Path, list[str]]:
    """A recall suite of `n` items (box i is on shelf i % `shelves`) run twice into one store:
    the store and the two run ids, oldest first."""
    items = [
        {"id": f"q{i}", "input": f"where is box {i}", "expected": f"shelf {i}"} for i in range(n)
    ]
    memories = [{"id": f"m{i}", "text": f"box {i} is on shelf {i % shelves}"} for i in range(n)]
    suite = write_recall_suite(tmp_path, items, memories, ["icontains"])
    db = tmp_path / "r.db"
    runs = []
    for _ in range(2):
        done = run_memgauge("run", str(suite), "--store", str(db), "--json")
        assert done.returncode == 0, done.stderr
        runs.append(json.loads(done.stdout.splitlines()[-1])["run_id"])
    return db, runs


def test_a_run_s_gate_says_what_memgauge_gate_says_beside_its_status(tmp_path: Path) -> None:
    """A suite's first run has no earlier run: its page says the gate passes until one
    exists, as `memgauge gate` does, not "No regression." over nothing; the second run's page
    gives the warnings `memgauge gate --json` gives (5 items: little power to see a drop)."""
    db, runs = _two_runs_of_a_box_suite(tmp_path, 5, shelves=3)
    client = TestClient(create_app(db))
    html = unescape(client.get(f"/runs/{runs[0]}").text)
    assert "No earlier run to compare with: the gate passes until one exists." in html
    assert "No regression." not in html
    html = unescape(client.get(f"/runs/{runs[1]}").text)
    gated = run_memgauge("gate", runs[1], "--store", str(db), "--json")
    warnings = json.loads(gated.stdout.splitlines()[-1])["warnings"]
    assert warnings
    shown = re.findall(r'<ul class="warn" id="gate-warnings">(.*?)</ul>', html, re.S)
    assert shown, html[html.find('id="gate"') :][:1500]
    assert re.findall(r"<li>(.*?)</li>", shown[0]) == warnings


def test_a_run_s_gate_names_the_earlier_runs_that_did_not_complete(tmp_path: Path) -> None:
    """The suite's earlier run failed: `memgauge gate` warns that only a completed run counts
    in the baseline and names it; the run's page, which shows the gate's warnings, said only
    "No earlier run to compare with" (the warning was `memgauge gate`'s alone)."""
    from memgauge.store.suite_runs import SuiteRunStore

    db, runs = _two_runs_of_a_box_suite(tmp_path, 3, shelves=3)
    with SuiteRunStore(db) as store:
        store.set_status(runs[0], "failed")
    html = unescape(TestClient(create_app(db)).get(f"/runs/{runs[1]}").text)
    gated = run_memgauge("gate", runs[1], "--store", str(db), "--no-learn", "--json")
    warnings = json.loads(gated.stdout.splitlines()[-1])["warnings"]
    assert any(runs[0] in w for w in warnings), warnings
    shown = re.findall(r'<ul class="warn" id="gate-warnings">(.*?)</ul>', html, re.S)
    assert shown, html[html.find('id="gate"') :][:1500]
    assert re.findall(r"<li>(.*?)</li>", shown[0]) == warnings


def test_a_trend_tells_two_runs_of_one_second_apart(viewer_store: ViewerStore) -> None:
    """Two runs stamped with the same second (a fast suite's, back to back): the x labels add
    each run's id end, so each is told apart."""
    from memgauge.view.history import trend_page

    reader = RunReader(viewer_store.path)
    try:
        runs = reader.suite_history("judged", headline=True)
    finally:
        reader.close()
    same = [r.model_copy(update={"created_at": runs[0].created_at}) for r in runs]
    chart = str(trend_page(same, "memory / recall / icontains", [])["chart"])
    labels = re.findall(r">(\d{4}-\d\d-\d\d \d\d:\d\d[^<]*)</text>", chart)
    assert len(labels) == 2, labels
    assert labels[0] != labels[1], labels
    assert all(lab.endswith(r.run_id[-8:]) for lab, r in zip(labels, runs, strict=True)), labels


def test_ab_and_shadow_pages(client: TestClient, viewer_store: ViewerStore) -> None:
    html = _get(client, viewer_store, "/ab")
    assert viewer_store.ab_test in html
    assert viewer_store.shadow in html
    html = _get(client, viewer_store, f"/ab/test?name={viewer_store.ab_test}")
    assert "SPRT log likelihood ratio" in html
    assert 'id="ab-decision"' in html
    html = _get(client, viewer_store, f"/shadow?name={viewer_store.shadow}")
    assert "6 comparison(s)" in html
    assert "identical" in html


def test_static_files_and_not_found(client: TestClient, viewer_store: ViewerStore) -> None:
    r = client.get("/static/htmx.min.js")
    assert r.status_code == 200
    assert r.text.startswith("var htmx=")
    assert client.get("/static/style.css").status_code == 200
    for url in (
        "/static/../app.py",
        "/runs/nope",
        "/ab/test?name=nope",
        "/shadow?name=nope",
        f"/runs/{viewer_store.judged[0]}/item?subject=x&task=y&item=z",
    ):
        _get(client, viewer_store, url, status=404)


def test_optimizations_list(client: TestClient, viewer_store: ViewerStore) -> None:
    html = _get(client, viewer_store, "/optimizations")
    table = html[html.index('id="optimizations"') :].split("</table>")[0]
    for study in (viewer_store.optimization, viewer_store.hostile_optimization):
        assert f'href="/optimizations/{study}"' in table
    with RunReader(viewer_store.path) as r:
        row = r.get_study(viewer_store.optimization)
    assert row is not None
    assert row["holdout"] is not None
    assert f"{row['holdout']['best']:.3f}" in table
    assert "retrieval/Recall@3" in table
    assert '<a href="/optimizations">Optimizations</a>' in html  # in the top bar


def test_optimization_page_scores_holdout_best_and_runs(
    client: TestClient, viewer_store: ViewerStore
) -> None:
    from memgauge import api

    study = api.optimization(viewer_store.optimization, store=viewer_store.path)
    # the prefix of an id opens it too
    html = _get(client, viewer_store, f"/optimizations/{viewer_store.optimization[:-2]}")
    chart = html[html.index('id="score-chart"') :].split("</svg>")[0]
    scored = [r for r in study["iterations"] if r["score"] is not None]
    assert len(scored) == 4  # the start and 3 iterations
    # a dot per candidate, and the best-so-far line over the steps
    assert chart.count('r="4"') == len(scored)
    assert "best so far" in chart
    assert "<polyline" in chart
    holdout = html[html.index('id="holdout"') :].split("</table>")[0]
    h = study["holdout"]
    for key in ("best", "baseline"):
        assert f"{h[key]:.3f}" in holdout
    assert f"{h['delta']:+.3f}" in holdout
    assert f"[{h['ci_low']:.3f}, {h['ci_high']:.3f}]" in holdout
    assert f'href="/runs/{h["best_run_id"]}"' in holdout
    best = html[html.index('id="best"') :].split("</div>")[0]
    assert f"{study['best']['score']:.3f}" in best
    assert "pin_constitutional" in best
    iterations = html[html.index('id="iterations"') :].split("</table>")[0]
    for r in study["iterations"]:
        assert f'href="/runs/{r["run_id"]}"' in iterations
    # the default diff: the start against the best
    diff = html[html.index('id="diff"') :]
    assert "From iteration 0 " in diff
    assert "pin_constitutional" in diff.split("</table>")[0]


def test_optimization_diff_between_chosen_iterations(
    client: TestClient, viewer_store: ViewerStore
) -> None:
    from memgauge import api

    sid = viewer_store.optimization
    want = api.optimization_diff(sid, "1", "3", store=viewer_store.path)
    html = _get(client, viewer_store, f"/optimizations/{sid}?a=1&b=3")
    assert '<option value="1" selected>' in html
    assert '<option value="3" selected>' in html
    params = html[html.index('id="diff"') :].split("</div>")[0]
    for p in want["params"]:
        assert f"<td>{p['field']}</td>" in params
    # texts: the optimizer model's rewrite as a unified diff, its added line marked
    hostile = viewer_store.hostile_optimization
    html = _get(client, viewer_store, f"/optimizations/{hostile}?a=0&b=1")
    text = html[html.index('class="diff text-diff"') :].split("</pre>")[0]
    assert '<span class="">--- prompt @ 0</span>' in text
    assert '<span class="add">+A memory that repeats a stored one is NOOP.</span>' in text
    assert "&lt;script&gt;window.__xss=1&lt;/script&gt;" in text
    assert "<script>window" not in html


def test_optimization_not_found_and_bad_iterations(
    client: TestClient, viewer_store: ViewerStore
) -> None:
    _get(client, viewer_store, "/optimizations/opt-nope", status=404)
    html = _get(client, viewer_store, f"/optimizations/{viewer_store.optimization}?a=0&b=99", 400)
    assert "has no such iteration" in html
    html = _get(client, viewer_store, f"/optimizations/{viewer_store.optimization}?a=x.y", 400)
    assert "STEP or STEP.CANDIDATE" in html
