"""A retrieval run's page reads the run's headline (its summary without per-query detail) and
the earlier runs' headlines for the gate's baseline, never a summary's per-query detail, and
shows exactly what it showed from the whole summaries; a store made before revision 0016 gets
every run's headline when it is upgraded. One item's page reads its query's own row
(`suite_run_queries`, revision 0022), never the run's summary."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from alembic import command
from alembic.config import Config
from starlette.testclient import TestClient
from tests.helpers import revisions_after

from memgauge.aggregates.ir_facts import IrFacts
from memgauge.cli.main import main
from memgauge.data.records import ItemRecord, RunSummary
from memgauge.runs import suite_compare
from memgauge.store import item_rows, revisions, run_pages, suite_runs, tables
from memgauge.store.engine import open_engine, upgrade
from memgauge.store.headline import headline
from memgauge.store.run_pages import RunReader
from memgauge.store.suite_runs import SuiteRunStore
from memgauge.store.tables import unpacked
from memgauge.store.url import store_url
from memgauge.view import render
from memgauge.view.app import create_app

BUNDLE = Path(__file__).resolve().parents[1] / "data" / "good" / "bundle.yaml"


def _verdict_pairs(items_a: list[ItemRecord], items_b: list[ItemRecord]) -> list[Any]:
    """Each verdict of B with A's on the same subject, task, item and evaluator, read from the
    whole items (what the compare page read before `RunReader.verdict_pairs`)."""
    a = {
        (it.subject, it.task, it.item_id, s.evaluator): (s.value, s.passed, s.error)
        for it in items_a
        for s in it.scores
    }
    return [
        (it.subject, it.task, it.item_id, s.evaluator, s.value, s.passed, s.error, *o)
        for it in items_b
        for s in it.scores
        if (o := a.get((it.subject, it.task, it.item_id, s.evaluator))) is not None
    ]


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    """Two `evaluate -s lexical` runs of one bundle in a new store: their ids, oldest first."""
    root = tmp_path_factory.mktemp("headline")
    db = root / "results.db"
    for n in range(2):
        argv = ["evaluate", str(BUNDLE), "-s", "lexical", "--out", str(root / f"ev{n}")]
        assert main([*argv, "--store", str(db), "--quiet"]) == 0
    with SuiteRunStore(db) as store:
        ids = [r["run_id"] for r in reversed(store.list_runs(2))]
    return db, ids


@pytest.fixture
def parsed(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The texts of the summaries the store parses."""
    seen: list[str] = []
    real = RunSummary.model_validate_json

    def spy(text: Any, *args: Any, **kw: Any) -> RunSummary:
        seen.append(text if isinstance(text, str) else bytes(text).decode())
        return real(text, *args, **kw)

    monkeypatch.setattr(suite_runs.RunSummary, "model_validate_json", spy)
    return seen


def test_the_run_page_parses_no_per_query_detail(
    two_runs: tuple[Path, list[str]], parsed: list[str]
) -> None:
    db, (first, second) = two_runs
    with TestClient(create_app(db)) as client:
        html = client.get(f"/runs/{second}").text
    assert 'id="retrieval-summary"' in html
    assert first in html  # the gate's baseline: the earlier run
    # the run's headline and the earlier run's: two small parses, no query's detail
    assert len(parsed) == 2
    assert not any('"per_query"' in text for text in parsed)


def test_the_pages_show_what_the_whole_summaries_showed(
    two_runs: tuple[Path, list[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    db, (first, second) = two_runs
    with RunReader(db) as reader:
        run = reader.get_run(second, headline=True)
        assert run is not None
    item = f"/runs/{second}/item?subject=lexical&task=retrieval&item=q1"
    urls = [f"/runs/{second}", f"/runs/{first}", f"/trends?suite={run.suite_name}", item]
    with TestClient(create_app(db)) as client:
        fast = [client.get(u).text for u in urls]
    # the same pages drawn from the whole summaries (as before revision 0016)
    get_run, history = RunReader.get_run, RunReader.suite_history
    monkeypatch.setattr(
        RunReader, "get_run", lambda self, rid, **kw: get_run(self, rid, summary=True)
    )
    monkeypatch.setattr(
        RunReader,
        "suite_history",
        lambda self, s, **kw: [
            r
            for r in history(self, s)
            if kw.get("before") is None or r.created_at < kw["before"].created_at
        ],
    )
    with TestClient(create_app(db)) as client:
        whole = [client.get(u).text for u in urls]
    assert fast == whole
    assert "gate baseline" in fast[2]
    assert "Agent-memory metrics of this query" in fast[3]


def test_a_headline_is_the_summary_without_per_query_detail(
    two_runs: tuple[Path, list[str]],
) -> None:
    db, (_first, second) = two_runs
    with SuiteRunStore(db) as store:
        whole = store.get_run(second)
        head = store.get_run(second, headline=True)
    assert whole is not None
    assert whole.summary is not None
    assert head is not None
    assert head.summary is not None
    whole_ir, head_ir = whole.summary.aggregate("ir"), head.summary.aggregate("ir")
    assert whole_ir is not None
    assert head_ir is not None
    systems = whole_ir.facts_as(IrFacts).systems  # type: ignore[union-attr]
    assert systems[0].per_query  # the whole summary has it
    assert "per_query" not in head_ir.model_dump()["facts"]["systems"][0]
    head_systems = head_ir.facts_as(IrFacts).systems  # type: ignore[union-attr]
    assert [s.per_query for s in head_systems] == [[]]
    assert [s.metrics for s in head_systems] == [s.metrics for s in systems]
    assert head.summary == headline(whole.summary)
    assert head.summary.measures() == whole.summary.measures()


def _at_0015(where: str, summary: RunSummary) -> None:
    """A store as memgauge left it before revision 0016: one completed run with `summary`
    (stored deflated, as a retrieval run's is), one running run without one."""
    url = store_url(where)
    engine = open_engine(url)
    try:
        with engine.begin() as conn:
            cfg = Config()
            cfg.set_main_option("script_location", str(Path(revisions.__file__).parent))
            cfg.attributes["connection"] = conn
            command.upgrade(cfg, "0015")
            base = {
                "suite_name": "s",
                "created_at": "2026-01-01T00:00:00+00:00",
                "suite_sha256": "0" * 64,
                "suite_json": "{}",
                "settings_json": "{}",
                "provenance_json": "{}",
                "n_items": 1,
                "kind": "evaluate",
            }
            rows = [
                {
                    **base,
                    "run_id": "done",
                    "status": "completed",
                    "summary_json": tables.packed(summary.model_dump_json()),
                },
                {**base, "run_id": "going", "status": "running", "summary_json": None},
            ]
            conn.execute(sa.insert(tables.suite_runs), rows)
    finally:
        engine.dispose()


def test_a_store_before_0016_gets_each_runs_headline(
    two_runs: tuple[Path, list[str]], store_where: str
) -> None:
    db, (_first, second) = two_runs
    with SuiteRunStore(db) as store:
        run = store.get_run(second)
    assert run is not None
    assert run.summary is not None
    _at_0015(store_where, run.summary)
    url = store_url(store_where)
    engine = open_engine(url)
    try:
        assert upgrade(engine, url) == revisions_after("0015")
        with engine.connect() as conn:
            stored = dict(
                conn.execute(sa.text("SELECT run_id, headline_json FROM suite_runs")).all()
            )
    finally:
        engine.dispose()
    assert stored["going"] is None
    assert json.loads(unpacked(stored["done"])) == json.loads(
        headline(run.summary).model_dump_json()
    )


def _compare_pages(db: Path, urls: list[str]) -> None:
    """The compare pages at `urls` read each measure's stored values and the pairs of verdicts
    that may differ (no item record built) and show what they showed from the runs' whole item
    records, every verdict paired."""
    parsed: list[str | bytes] = []
    real = item_rows.loads_item

    def counted(text: str | bytes) -> Any:
        parsed.append(text)
        return real(text)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(item_rows, "loads_item", counted)
        with TestClient(create_app(db)) as client:
            fast = [client.get(url).text for url in urls]
        assert parsed == []
        # as before: every item of both runs read whole, compared as records
        mp.setattr(
            RunReader,
            "measure_values",
            lambda self, rid: suite_compare._measures(self.item_records(rid), {}),
        )
        mp.setattr(
            RunReader,
            "verdict_pairs",
            lambda self, a, b: _verdict_pairs(self.item_records(a), self.item_records(b)),
        )
        with TestClient(create_app(db)) as client:
            whole = [client.get(url).text for url in urls]
    assert parsed  # the whole items were read
    assert fast == whole


def test_compare_reads_verdicts_only_and_shows_what_whole_items_showed(
    two_runs: tuple[Path, list[str]], viewer_store: Any
) -> None:
    db, (first, second) = two_runs
    a, b = viewer_store.judged
    urls = [f"/compare?a={first}&b={second}", f"/compare?a={second}&b={first}"]
    _compare_pages(db, urls)
    judged = [f"/compare?a={a}&b={b}", f"/compare?a={b}&b={a}"]
    _compare_pages(viewer_store.path, judged)
    with TestClient(create_app(viewer_store.path)) as client:
        html = client.get(judged[0]).text
    # the judged runs differ: deltas with intervals, changed verdicts, regressions
    assert 'class="bad"' in html
    assert ">q2<" in html
    assert "qa-judge" in html


def test_a_page_of_items_in_run_order_is_read_from_an_index(
    two_runs: tuple[Path, list[str]],
) -> None:
    """Not every item of the run sorted for each page (a 100,000-item run's last page)."""
    db, (_first, second) = two_runs
    sql = (
        f"{run_pages._PAGE_SELECT} FROM suite_run_items i{run_pages._OUTPUT_JOIN}"
        f" WHERE i.run_id = ? AND {run_pages._WHERE['all']} ORDER BY {run_pages._ORDER['seq']}"
        " LIMIT 50 OFFSET 50"
    )
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        plan = " / ".join(str(r[3]) for r in conn.execute(f"EXPLAIN QUERY PLAN {sql}", (second,)))
    finally:
        conn.close()
    assert "USING INDEX idx_suite_run_items_seq" in plan
    assert "TEMP B-TREE" not in plan


def _from_summary(reader: RunReader, run_id: str, task: str, subject: str, qid: str) -> Any:
    """One query's detail as the item page found it before revision 0022: in the summary."""
    run = reader.get_run(run_id)
    assert run is not None
    return dict(render._queries(run).get((task, subject, qid), {}))


def test_every_querys_row_is_its_record_in_the_summary(
    two_runs: tuple[Path, list[str]],
) -> None:
    db, (_first, second) = two_runs
    with RunReader(db) as reader:
        run = reader.get_run(second)
        assert run is not None
        expected = render._queries(run)
        ids = [r[0] for r in reader._sql("SELECT item_id FROM suite_run_items")]
        found = {
            ("retrieval", "lexical", qid): reader.query_detail(second, "retrieval", "lexical", qid)
            for qid in ids
        }
    assert expected  # the bundle's retrieval query
    assert {k: v for k, v in found.items() if v} == {k: dict(v) for k, v in expected.items()}
    assert found[("retrieval", "lexical", "q1")]["query_id"] == "q1"


def test_an_item_page_reads_no_summary_and_shows_what_it_showed(
    two_runs: tuple[Path, list[str]], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    db, (_first, second) = two_runs
    urls = [f"/runs/{second}/item?subject=lexical&task=retrieval&item=q{n}" for n in (1, 2)]
    with TestClient(create_app(db)) as client:
        fast = [client.get(u).text for u in urls]
    # a copy whose summaries hold no query's detail: the page still shows it (from its row)
    copy = tmp_path / "copy.db"
    source, target = sqlite3.connect(db), sqlite3.connect(copy)
    source.backup(target)
    source.close()
    target.execute("UPDATE suite_runs SET summary_json = headline_json")
    target.commit()
    target.close()
    with TestClient(create_app(copy)) as client:
        assert [client.get(u).text for u in urls] == fast
    # as the page was drawn when the detail was found in the summary
    monkeypatch.setattr(RunReader, "query_detail", _from_summary)
    with TestClient(create_app(db)) as client:
        before = [client.get(u).text for u in urls]
    assert fast == before
    assert "Agent-memory metrics of this query" in fast[0]


def test_a_new_summary_of_the_run_replaces_its_queries(
    two_runs: tuple[Path, list[str]],
) -> None:
    db, (_first, second) = two_runs
    item = f"/runs/{second}/item?subject=lexical&task=retrieval&item=q1"
    with SuiteRunStore(db) as store:
        run = store.get_run(second)
    assert run is not None
    assert run.summary is not None
    summary = run.summary
    changed = summary.model_copy(deep=True)
    ir = changed.aggregate("ir")
    assert ir is not None
    facts = ir.facts_as(IrFacts)
    assert facts is not None
    query = facts.systems[0].per_query[0]
    assert query.query_id == "q1"
    query.agent_metrics = {"importance_weighted_recall@5": 0.123}
    ir.facts = facts
    with TestClient(create_app(db)) as client:
        first_html = client.get(item).text
        with SuiteRunStore(db) as store:
            store.set_summary(second, changed)
        try:
            html = client.get(item).text
        finally:
            with SuiteRunStore(db) as store:
                store.set_summary(second, summary)
        assert client.get(item).text == first_html
    assert "0.123" in html
    assert "0.123" not in first_html


def test_a_store_before_0022_gets_each_runs_queries(
    two_runs: tuple[Path, list[str]],
    store_where: str,
) -> None:
    db, (_first, second) = two_runs
    with SuiteRunStore(db) as store:
        run = store.get_run(second)
    assert run is not None
    assert run.summary is not None
    _at_0015(store_where, run.summary)
    url = store_url(store_where)
    engine = open_engine(url)
    try:
        assert upgrade(engine, url)[-1] == "0024"
    finally:
        engine.dispose()
    with RunReader(store_where) as reader:
        rows = reader._sql("SELECT run_id, task, subject, query_id FROM suite_run_queries")
        found = {key: reader.query_detail("done", *key) for key in render._queries(run) if key[2]}
    assert sorted(rows) == sorted(("done", t, s, q) for t, s, q in render._queries(run))
    assert found == {k: dict(v) for k, v in render._queries(run).items()}
