"""The viewer and `memgauge report` on a PostgreSQL store: the same store built by the same
commands on SQLite and on a real PostgreSQL server (see `viewer_store.py`) gives the same pages,
item for item, and reading it changes nothing (the server refuses writes in the viewer's
read-only transactions)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from starlette.testclient import TestClient
from viewer_store import PAYLOADS, ViewerStore

from memgauge.cli.main import main
from memgauge.store.run_pages import SHOWS, SORTS, ItemQuery, ItemRow, RunReader
from memgauge.view.app import create_app

#: searches: an item's id, a judge's reason, a payload in outputs, nothing, a non-ASCII text
SEARCHES = ("ITEM 7?", "lacks k4x", "k1x", PAYLOADS["script"][:10], "zzz-no-such-thing", "é")


def _page_key(rows: list[ItemRow]) -> list[tuple[Any, ...]]:
    """What a page shows that does not depend on when it ran: the items, their status and
    score, their verdicts and the baseline's."""
    return [
        (
            r.subject,
            r.task,
            r.item_id,
            r.status,
            r.score,
            r.n_failures,
            [(s.evaluator, s.value, s.passed, s.reason, s.error) for s in r.scores],
            sorted((k, v.value, v.passed) for k, v in r.baseline.items()),
        )
        for r in rows
    ]


def test_every_item_filter_sort_and_search_matches_sqlite(
    viewer_store: ViewerStore, pg_viewer_store: ViewerStore
) -> None:
    lite, pg = viewer_store, pg_viewer_store
    with RunReader(lite.path) as a, RunReader(pg.path) as b:
        cases = [(lite.judged[1], pg.judged[1], lite.judged[0], pg.judged[0])]
        cases.append((lite.hostile, pg.hostile, None, None))
        cases.append((lite.retrieval, pg.retrieval, None, None))
        n_nonempty = 0
        for run_a, run_b, base_a, base_b in cases:
            for show in SHOWS:
                for sort in (s for s in SORTS if s != "duration"):  # timings differ
                    for desc in (False, True):
                        for q in ("", *SEARCHES):
                            for page in (1, 2):
                                query = {
                                    "show": show,
                                    "sort": sort,
                                    "desc": desc,
                                    "q": q,
                                    "page": page,
                                }
                                pa = a.item_page(
                                    run_a, ItemQuery(**query, per_page=5, baseline=base_a)
                                )
                                pb = b.item_page(
                                    run_b, ItemQuery(**query, per_page=5, baseline=base_b)
                                )
                                assert pa.total == pb.total, (run_a, query)
                                assert _page_key(pa.rows) == _page_key(pb.rows), (run_a, query)
                                n_nonempty += bool(pa.rows)
        assert n_nonempty > 100  # the comparison saw pages, not only empty ones
        # the searches find what they should (on both, as compared above)
        found = a.item_page(lite.judged[1], ItemQuery(q="ITEM 7?"))
        assert [r.item_id for r in found.rows] == ["q7"]
        assert a.item_page(lite.judged[1], ItemQuery(q="lacks k4x")).total >= 1


def test_runs_item_and_failures_match_sqlite(
    viewer_store: ViewerStore, pg_viewer_store: ViewerStore
) -> None:
    with RunReader(viewer_store.path) as a, RunReader(pg_viewer_store.path) as b:

        def shape(rows: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
            keep = ("suite", "kind", "status", "n_items", "n_completed", "n_failed")
            return sorted(
                (*(r[k] for k in keep), tuple(r["subjects"]), tuple(r["tasks"])) for r in rows
            )

        assert shape(a.runs_overview()) == shape(b.runs_overview())
        assert shape(a.runs_overview(suite="judged")) == shape(b.runs_overview(suite="judged"))
        assert shape(a.runs_overview(candidates=False)) == shape(b.runs_overview(candidates=False))
        # an optimization's candidate runs, grouped under it (issue 29)
        groups = [
            [(g["suite"], g["n_runs"], g["n_live"], g["n_failed"]) for g in r.study_groups()]
            for r in (a, b)
        ]
        assert groups[0] == groups[1] == [("tune-prompt", 5, 0, 0), ("tune-lexical", 6, 0, 0)]
        assert a.choices() == b.choices()
        # what a run is compared with: the runs of its suite before it, on both databases
        first, later = (b.get_run(r) for r in pg_viewer_store.judged)
        assert first is not None
        assert later is not None
        assert [r["run_id"] for r in b.suite_runs(later)] == [first.run_id]
        assert b.suite_runs(first) == []
        for store, reader in ((viewer_store, a), (pg_viewer_store, b)):
            hostile = reader.item_records(store.hostile)
            failed = next(it for it in hostile if it.status == "failed")
            got = reader.item(store.hostile, failed.subject, failed.task, failed.item_id)
            assert got is not None
            assert got.failures
            assert reader.item(store.hostile, "nobody", "nothing", "none") is None
        la = a.item(viewer_store.judged[1], "memory", "recall", "q4")
        lb = b.item(pg_viewer_store.judged[1], "memory", "recall", "q4")
        assert la is not None
        assert lb is not None
        assert (la.input, la.expected, la.output) == (lb.input, lb.expected, lb.output)
        assert [(s.evaluator, s.value, s.reason, s.raw_reply) for s in la.scores] == [
            (s.evaluator, s.value, s.reason, s.raw_reply) for s in lb.scores
        ]
        assert len(a.task_items(viewer_store.extraction, "extraction")) == len(
            b.task_items(pg_viewer_store.extraction, "extraction")
        )


def _urls(store: ViewerStore) -> list[str]:
    a, b = store.judged
    return [
        "/",
        "/?suite=judged",
        "/?candidates=show",
        *(
            f"/runs/{r}"
            for r in (a, b, store.retrieval, store.audit, store.extraction, store.operations)
        ),
        f"/runs/{b}/items?show=regressed&baseline={a}",
        f"/runs/{b}/items?q=lacks+k4x&sort=score&order=desc",
        f"/runs/{store.hostile}/items?q=" + PAYLOADS["script"][:10],
        f"/runs/{b}/item?subject=memory&task=recall&item=q4",
        f"/compare?a={a}&b={b}",
        "/trends?suite=judged&measure=memory+%2F+recall+%2F+icontains",
        "/ab",
        f"/ab/test?name={store.ab_test}",
        f"/shadow?name={store.shadow}",
        "/optimizations",
        f"/optimizations/{store.optimization}",
        f"/optimizations/{store.optimization}?a=1&b=3",
        f"/optimizations/{store.hostile_optimization}?a=0&b=1",
    ]


@pytest.fixture
def pg_client(pg_viewer_store: ViewerStore) -> Iterator[TestClient]:
    with TestClient(create_app(pg_viewer_store.path)) as c:
        yield c


def _counts(url: str) -> dict[str, int]:
    engine = sa.create_engine(url.replace("postgresql://", "postgresql+psycopg://", 1))
    try:
        with engine.connect() as c:
            names = sorted(sa.inspect(c).get_table_names())
            return {
                n: int(c.exec_driver_sql(f'SELECT COUNT(*) FROM "{n}"').scalar_one()) for n in names
            }
    finally:
        engine.dispose()


def test_every_page_renders_on_postgresql_and_reading_changes_nothing(
    pg_client: TestClient, pg_viewer_store: ViewerStore, viewer_store: ViewerStore
) -> None:
    before = _counts(pg_viewer_store.path)
    for url in _urls(pg_viewer_store):
        response = pg_client.get(url)
        assert response.status_code == 200, (url, response.text[:500])
    html = pg_client.get(f"/runs/{pg_viewer_store.judged[1]}/items?q=ITEM+7%3F").text
    assert "q7" in html
    for payload in PAYLOADS.values():  # shown as text, never as markup
        assert payload not in pg_client.get(f"/runs/{pg_viewer_store.hostile}/items").text
    assert _counts(pg_viewer_store.path) == before
    with RunReader(pg_viewer_store.path) as reader:
        assert reader.table_counts() == before
        with pytest.raises(sa.exc.DBAPIError, match="read-only"):
            reader.set_status(pg_viewer_store.judged[0], "failed")
    assert _counts(pg_viewer_store.path) == before


def test_report_from_a_postgresql_store(
    pg_viewer_store: ViewerStore, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "r.html"
    run_id = pg_viewer_store.judged[1]
    assert main(["report", run_id[:-2], "--out", str(out), "--store", pg_viewer_store.path]) == 0
    assert run_id in capsys.readouterr().out
    html = out.read_text()
    assert run_id in html
    assert "<script" not in html
    assert (
        main(["report", "nope", "--out", str(tmp_path / "x.html"), "--store", pg_viewer_store.path])
        == 2
    )
    assert not (tmp_path / "x.html").exists()


def test_a_postgresql_database_that_is_not_a_store_is_refused(
    pg_server: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    """An empty database (a team's store before its first run) holds no store yet; one with
    someone else's tables is not a store; neither is changed by reading it."""
    empty = pg_server.new_database()
    for args in (["view", "--port", "0"], ["runs", "list"], ["history", "s"], ["ab", "status"]):
        assert main([*args, "--store", empty]) == 2
        assert "no results store at" in capsys.readouterr().err
    assert _counts(empty) == {}
    engine = sa.create_engine(empty.replace("postgresql://", "postgresql+psycopg://", 1))
    with engine.begin() as c:
        c.exec_driver_sql("CREATE TABLE orders (id integer)")
    engine.dispose()
    assert main(["view", "--store", empty, "--port", "0"]) == 2
    assert "not a memgauge results store" in capsys.readouterr().err
    assert _counts(empty) == {"orders": 0}
