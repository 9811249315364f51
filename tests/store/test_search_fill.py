"""Revision 0023's fill of the runs stored before it, and 0024's refill: every item's document,
the items at its batches' edges too (`stored_forms.SEARCH_BATCH`, made smaller here), made a
batch at a time (a big run's documents, its outputs inflated, never all in memory at once)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from memgauge.data.records import ItemRecord, RunPlan, RunRecord
from memgauge.store import stored_forms
from memgauge.store.engine import open_engine, upgrade
from memgauge.store.run_pages import ItemQuery, RunReader
from memgauge.store.suite_runs import SuiteRunStore
from memgauge.store.url import store_url

#: batches of 50 documents here (5,000 shipped: the same code at a hundredth of the rows)
_BATCH = 50
_N = 2 * _BATCH + 3  # two full batches and three items


@pytest.fixture(autouse=True)
def _small_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(stored_forms, "SEARCH_BATCH", _BATCH)


def _store_before_0023(db: Path | str, n: int = _N) -> None:
    """A run of `n` items (item k's input holds `needle<k>`), as a store before 0023 kept it."""
    _store_run(db, [{"q": f"needle{k}."} for k in range(n)])
    engine = open_engine(store_url(db))
    # what revisions 0023 and after add, gone (0024's table, where this memgauge has it)
    with engine.begin() as c:
        c.execute(sa.text("DROP TABLE suite_run_search"))
        c.execute(sa.text("DROP TABLE IF EXISTS suite_run_compared"))
        c.execute(sa.text("UPDATE alembic_version SET version_num = '0022'"))
    engine.dispose()


def _store_run(db: Path | str, inputs: list[dict[str, Any]]) -> None:
    """Run "r" of one item per input (item k's id `i<k>`), recorded by this memgauge."""
    n = len(inputs)
    run = RunRecord(
        run_id="r",
        suite_name="s",
        status="queued",
        created_at="2000-01-01T00:00:00+00:00",
        suite_sha256="0" * 64,
        suite={"name": "s"},
    )
    items = [
        ItemRecord(subject="a", task="t", item_id=f"i{k}", seq=k, input=inputs[k]) for k in range(n)
    ]
    store = SuiteRunStore(db)
    store.create_run(run, RunPlan({"a": {}}, [{"task": "t", "kind": "qa", "n_items": n}], items))
    store.close()


def _upgraded_counting(
    url: Any, monkeypatch: pytest.MonkeyPatch
) -> tuple[list[str], list[tuple[int, int]]]:
    """Upgrade the store at `url`: the revisions applied, and at each INSERT of documents how
    many documents had been made and how many that INSERT writes."""
    made = 0
    document = stored_forms.document

    def counted(values: Any) -> str | None:
        nonlocal made
        made += 1
        return document(values)

    monkeypatch.setattr(stored_forms, "document", counted)
    inserts: list[tuple[int, int]] = []

    def before(_c: Any, _cursor: Any, statement: str, params: Any, _ctx: Any, many: bool) -> None:
        if statement.startswith("INSERT INTO suite_run_search"):
            inserts.append((made, len(params) if many else 1))

    engine = open_engine(url)
    sa.event.listen(engine, "before_cursor_execute", before)
    try:
        return upgrade(engine, url), inserts
    finally:
        engine.dispose()


def _made_as_written(inserts: list[tuple[int, int]]) -> None:
    """No document made before its batch is written."""
    written = 0
    for made_then, n in inserts:
        written += n
        assert made_then == written


# on PostgreSQL too: the batches are written on the connection the run's rows were read on
@pytest.mark.parametrize(
    "store_where", ["sqlite", pytest.param("postgresql", marks=pytest.mark.slow)], indirect=True
)
def test_the_fill_writes_every_document_a_batch_at_a_time(
    store_where: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = store_where
    _store_before_0023(db)
    url = store_url(db)
    applied, inserts = _upgraded_counting(url, monkeypatch)
    assert applied[0] == "0023"
    assert [n for _, n in inserts[:3]] == [_BATCH, _BATCH, 3]
    _made_as_written(inserts)
    with RunReader(db) as reader:
        for k in (0, _BATCH - 1, _BATCH, _BATCH + 1, 2 * _BATCH - 1, 2 * _BATCH, _N - 1):
            page = reader.item_page("r", ItemQuery(q=f"needle{k}."))
            assert (page.total, [r.item_id for r in page.rows]) == (1, [f"i{k}"])
    engine = open_engine(url)
    with engine.connect() as c:
        assert c.execute(sa.text("SELECT COUNT(*) FROM suite_run_search")).scalar() == _N
    engine.dispose()


def test_a_batch_is_let_go_when_the_next_is_made(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    _store_before_0023(db, 7)
    engine = sa.create_engine(f"sqlite:///{db}")
    try:
        with engine.connect() as c:
            given = []
            for batch in stored_forms.search_batches(c, "r", 3):
                given.append(batch)
                # the documents of this batch only: the ones before were emptied
                assert [len(b) for b in given] == [0] * (len(given) - 1) + [len(batch)]
            assert [len(b) for b in given] == [0, 0, 0]
    finally:
        engine.dispose()
    assert len(given) == 3


def test_revision_0024_makes_the_documents_with_a_backslash_again_a_batch_at_a_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "s.db"
    # item k's input holds a backslash when k is even: those documents only are made again
    _store_run(db, [{"q": f"needle{k}." + ("C:\\dir" if k % 2 == 0 else "")} for k in range(_N)])
    url = store_url(db)
    engine = open_engine(url)
    with engine.begin() as c:
        c.execute(sa.text("DROP TABLE suite_run_compared"))
        c.execute(sa.text("UPDATE alembic_version SET version_num = '0023'"))
    engine.dispose()

    applied, inserts = _upgraded_counting(url, monkeypatch)
    assert applied == ["0024"]
    # the 52 even items' documents: a full batch, then the rest, each made as it is written
    assert [n for _, n in inserts] == [_BATCH, 2]
    _made_as_written(inserts)
    with RunReader(db) as reader:
        for k in (0, 1, 2 * _BATCH - 2, 2 * _BATCH, _N - 1):
            page = reader.item_page("r", ItemQuery(q=f"needle{k}."))
            assert (page.total, [r.item_id for r in page.rows]) == (1, [f"i{k}"])
        page = reader.item_page("r", ItemQuery(q="c:\\dir"))
        assert page.total == (_N + 1) // 2
