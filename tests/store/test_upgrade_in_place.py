"""A SQLite store made before Alembic (tests/data/stores/spine-0009.db, at 0009_one_spine) is
upgraded in place, and reads back exactly what the version that made it read."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from memgauge.cli.main import main
from memgauge.data.shapes import Table
from memgauge.online.querylog import QueryLog
from memgauge.report.shapes import cell_text, sections
from memgauge.store.ab_tests import ABTestStore
from memgauge.store.shadow import ShadowStore
from memgauge.store.suite_runs import SuiteRunStore
from memgauge.store.url import HEAD

STORES = Path(__file__).parents[1] / "data" / "stores"


def _copy(tmp_path: Path) -> Path:
    db = tmp_path / "old.db"
    shutil.copy(STORES / "spine-0009.db", db)
    return db


def _jsonable(value: Any) -> Any:
    return json.loads(json.dumps(value, sort_keys=True, default=str))


def _drop_later_fields(run: dict[str, Any]) -> None:
    """Fields that joined a stored summary after those stores were written read back as their
    defaults (they are filled when a run is summarized again); dropped, the rest must equal."""
    summary = run["summary"] or {}
    if run["summary"] is not None:
        # items an evaluator could not score, counted apart (issue 27): 0 when read from it
        assert summary.pop("n_unscored") == 0
    for row in summary.get("evaluators", []):
        # an evaluator's `conventions`; the real verdicts' mean beside a neutral judge's
        assert row.pop("conventions") is None
        assert row.pop("mean_without_fallback") is None
    for agg in summary.get("aggregates", []):
        # written before shapes (issue 30): form 1, no shapes stored; drawn from the detail
        assert (agg.pop("form"), agg.pop("shapes")) == (1, [])
        for m in agg.get("measures", []):
            # what the gate decides on and how (issue 27): primary, scoring, fallbacks
            assert (m.pop("primary"), m.pop("scoring"), m.pop("n_fallback")) == (True, None, 0)
            # why a value is n/a (issue 29)
            assert m.pop("note") is None


def test_a_store_made_before_alembic_is_upgraded_in_place_and_reads_the_same(
    tmp_path: Path,
) -> None:
    db = _copy(tmp_path)
    expected = json.loads((STORES / "spine-0009.read.json").read_text())
    with SuiteRunStore(db) as store:
        listed = _jsonable(store.list_runs())
        # `kind` (what started each run) joined the listing after that version
        assert [{k: v for k, v in r.items() if k != "kind"} for r in listed] == expected["list"]
        assert {r["kind"] for r in listed} == {"suite", "evaluate"}
        assert len(expected["runs"]) == 3
        for run_id, want in expected["runs"].items():
            run = store.get_run(run_id)
            assert run is not None
            got = run.model_dump(mode="json")
            _drop_later_fields(got)
            assert got == want["run"]
            items = [i.model_dump(mode="json") for i in store.item_records(run_id)]
            # which repeat an item is (issue 32, revision 0020): the first, for every old item
            assert {i.pop("repeat") for i in items} == {0}
            assert items == want["items"]
            assert _jsonable(store.tasks(run_id)) == want["tasks"]
            assert _jsonable(store.subjects(run_id)) == want["subjects"]
            assert _jsonable(store.usage(run_id)) == want["usage"]
            assert _jsonable(store.failures(run_id)) == want["failures"]
    with ABTestStore(db) as ab:
        assert _jsonable(ab.get("graph")) == expected["ab"]["graph"]
        assert _jsonable(ab.pairs("graph")) == expected["ab"]["pairs"]
    with ShadowStore(db) as shadow:
        rows = _jsonable(shadow.shadow_rows("rerank"))
        # `intent` (for `shadow summary --by intent`) joined the rows after that version
        assert {r.pop("intent") for r in rows} == {None}
        assert rows == expected["shadow"]["rows"]
        assert shadow.shadow_errors("rerank") == expected["shadow"]["errors"]
    log = QueryLog(db)
    try:
        assert list(log.confidence("m1") or ()) == expected["confidence"]
    finally:
        log.close()
    conn = sqlite3.connect(db)
    try:
        assert conn.execute("SELECT version_num FROM alembic_version").fetchall() == [(HEAD,)]
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        assert "schema_migrations" not in tables  # its history is Alembic's now
    finally:
        conn.close()


def test_an_upgraded_store_takes_new_runs_and_keeps_task_and_verdict_order(
    tmp_path: Path,
) -> None:
    db = _copy(tmp_path)
    expected = json.loads((STORES / "spine-0009.read.json").read_text())
    run_id = next(r for r, v in expected["runs"].items() if len(v["tasks"]) > 1)
    with SuiteRunStore(db) as store:
        # the order columns 0010 added were filled from rowid, the order read before
        assert [t["task"] for t in store.tasks(run_id)] == [
            t["task"] for t in expected["runs"][run_id]["tasks"]
        ]
        first = store.item_records(run_id)[0]
        assert [s.evaluator for s in first.scores] == [
            s["evaluator"] for s in expected["runs"][run_id]["items"][0]["scores"]
        ]


def test_a_store_made_with_the_gate_and_optimize_migrations_is_upgraded_in_place(
    tmp_path: Path,
) -> None:
    """tests/data/stores/integ-0011.db was made by the memgauge whose hand-run migrations went
    on to 0010_suite_run_gate and 0011_optimization_history: the frozen list stops at 0009, so
    it is stamped there, and Alembic's 0011 and 0012 find the gate column and the optimization
    tables already made and keep them, verdicts and studies included."""
    db = tmp_path / "integ.db"
    shutil.copy(STORES / "integ-0011.db", db)
    expected = json.loads((STORES / "integ-0011.read.json").read_text())
    assert expected["schema_migrations"][-2:] == [
        "0010_suite_run_gate",
        "0011_optimization_history",
    ]
    with SuiteRunStore(db) as store:
        assert _jsonable(store.list_runs(100)) == expected["list"]
        for run_id, want in expected["runs"].items():
            run = store.get_run(run_id)
            assert run is not None
            got = run.model_dump(mode="json")
            _drop_later_fields(got)
            assert got == want["run"]
            items = [i.model_dump(mode="json") for i in store.item_records(run_id)]
            assert {i.pop("repeat") for i in items} == {0}  # revision 0020
            assert items == want["items"]
            assert store.gate_verdict(run_id) == expected["gates"][run_id]
        assert sorted(g for g in expected["gates"].values() if g) == ["accepted", "pass"]
        studies = store.list_studies()
        assert [s["study_id"] for s in studies] == [
            s["study"]["study_id"] for s in expected["studies"]
        ]
        for got, want in zip(studies, expected["studies"], strict=True):
            assert _jsonable(got) == want["study"]
            rows = _jsonable(store.iterations(got["study_id"], phase=None))
            for row in rows:
                # a constrained objective's bound measure (revision 0017): none before it
                assert row.pop("constraint_value") is None
            assert rows == want["iterations"]
        # the upgraded store still records gate verdicts, and keeps an accepted run accepted
        later = max(expected["runs"], key=lambda r: expected["runs"][r]["run"]["created_at"])
        store.mark_gated(later, "fail")
        assert store.gate_verdict(later) == "fail"
        accepted = next(r for r, g in expected["gates"].items() if g == "accepted")
        store.mark_gated(accepted, "fail")  # an accepted run stays accepted
        assert store.gate_verdict(accepted) == "accepted"
    conn = sqlite3.connect(db)
    try:
        assert conn.execute("SELECT version_num FROM alembic_version").fetchall() == [(HEAD,)]
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        assert {"optimization_studies", "optimization_iterations"} <= tables
        assert "schema_migrations" not in tables
    finally:
        conn.close()


@pytest.mark.parametrize("name", ["spine-0009", "integ-0011"])
def test_a_run_stored_before_shapes_draws_its_sections_from_its_detail(
    tmp_path: Path, name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """The old stores' retrieval runs were written with `detail` only: on read, the ir
    aggregate draws their shapes from it, so their reports show the same numbers."""
    db = tmp_path / "old.db"
    shutil.copy(STORES / f"{name}.db", db)
    expected = json.loads((STORES / f"{name}.read.json").read_text())
    run_id, want = next(
        (r, v["run"])
        for r, v in expected["runs"].items()
        if (v["run"]["summary"] or {}).get("aggregates")
    )
    stored = want["summary"]["aggregates"][0]["detail"]
    with SuiteRunStore(db) as store:
        run = store.get_run(run_id)
    assert run is not None
    assert run.summary is not None
    [section] = sections(run.summary)
    assert (section.aggregate, section.title, section.task) == ("ir", "Retrieval", "retrieval")
    table = section.shapes[0]
    assert isinstance(table, Table)
    assert table.title == "Retrieval measures"
    assert table.columns == ["system", *stored["settings"]["measures"]]
    first = stored["systems"][0]
    m = stored["settings"]["measures"][0]
    assert table.rows[0][0].text == first["name"]
    assert table.rows[0][1].value == first["metrics"][m]["value"]
    assert table.rows[0][1].n == first["metrics"][m]["n_scored"]
    # and `memgauge report` draws them, in Markdown and in HTML
    out = tmp_path / "r.md"
    assert main(["report", run_id, "--store", str(db), "--out", str(out)]) == 0
    md = out.read_text()
    assert "## Retrieval (task retrieval)" in md
    assert "### Retrieval measures" in md
    assert cell_text(table.rows[0][1]) in md
    html_out = tmp_path / "r.html"
    assert main(["report", run_id, "--store", str(db), "--out", str(html_out)]) == 0
    assert "Retrieval measures" in html_out.read_text()
