"""A big run's comparison with the suite's run before it, kept when the run is recorded
(`store.compared_rows`, `runs.run_comparison.keep`): the compare page shows the same numbers
from it as computed on request; it is used only for the runs as they were when it was made
(a run changed, resumed or deleted, or another baseline: compared on request); nothing is
kept if making it is interrupted; and a small run's recording keeps none."""

from __future__ import annotations

import json
import sqlite3
import struct
from pathlib import Path

import pytest
import sqlalchemy as sa
from starlette.testclient import TestClient
from tests.conftest import RecallSuite
from viewer_store import ViewerStore

from memgauge.cli.main import main
from memgauge.runs import run_comparison
from memgauge.runs.run_comparison import Comparison
from memgauge.store import compared_rows
from memgauge.store.run_pages import RunReader
from memgauge.store.suite_runs import SuiteRunStore
from memgauge.view import compared
from memgauge.view.app import create_app
from memgauge.view.history import comparison_on_request

DATA = Path(__file__).resolve().parents[1] / "data"


@pytest.fixture
def store_copy(viewer_store: ViewerStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the viewer's store (its two judged runs differ), every run big enough to
    keep its comparison, and no comparison kept in this process."""
    copy = tmp_path / "copy.db"
    source, target = sqlite3.connect(viewer_store.path), sqlite3.connect(copy)
    source.backup(target)
    source.close()
    target.close()
    monkeypatch.setattr(compared_rows, "KEEP_FROM", 0)
    monkeypatch.setattr(compared, "_kept", type(compared._kept)())
    return copy


def _kept_rows(db: Path) -> list[tuple[str, str]]:
    conn = sqlite3.connect(db)
    try:
        return conn.execute("SELECT run_id, baseline_id FROM suite_run_compared").fetchall()
    finally:
        conn.close()


def _page(db: Path, a: str, b: str) -> str:
    with TestClient(create_app(db)) as client:
        response = client.get(f"/compare?a={a}&b={b}")
    assert response.status_code == 200
    return response.text


def _on_request(db: Path, a: str, b: str, seed: int) -> Comparison:
    with RunReader(db) as reader:
        return comparison_on_request(
            reader.measure_values(a), reader.measure_values(b), reader.verdict_pairs(a, b), seed
        )


def test_the_kept_comparison_is_the_one_made_on_request(
    viewer_store: ViewerStore, store_copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b = viewer_store.judged
    on_request_page = _page(store_copy, a, b)
    with SuiteRunStore(store_copy) as store:
        assert run_comparison.keep(store, b)
        assert not run_comparison.keep(store, b)  # kept already, for the runs as they are
    assert _kept_rows(store_copy) == [(b, a)]
    with RunReader(store_copy) as reader:
        kept = reader.kept_comparison(a, b, 0)
    assert kept is not None
    made = Comparison.from_json(kept)
    assert made == _on_request(store_copy, a, b, 0)
    assert made.n_changed >= 4
    assert any(c.regressed for c in made.changed)
    assert any(r["p_value"] is not None for r in made.rows)
    # the page reads it, and is the page computed on request, byte for byte
    monkeypatch.setattr(compared, "_kept", type(compared._kept)())

    def refused(*args: object, **kwargs: object) -> object:
        raise AssertionError("computed on request")

    monkeypatch.setattr(compared, "compare_measures", refused)
    assert _page(store_copy, a, b) == on_request_page
    # another seed is another comparison: not the kept one
    with RunReader(store_copy) as reader:
        assert reader.kept_comparison(a, b, 1) is None


def test_a_run_changed_since_is_compared_on_request(
    viewer_store: ViewerStore, store_copy: Path
) -> None:
    a, b = viewer_store.judged
    with SuiteRunStore(store_copy) as store:
        assert run_comparison.keep(store, b)
    conn = sqlite3.connect(store_copy)
    values = conn.execute(
        "SELECT subject, task, evaluator, values_f8 FROM suite_run_values WHERE run_id = ?", (a,)
    ).fetchone()
    # the baseline's values as another attempt left them: a value changed
    changed = struct.pack("<d", 0.25) + bytes(values[3][8:])
    assert changed != values[3]
    conn.execute(
        "UPDATE suite_run_values SET values_f8 = ? WHERE run_id = ? AND subject = ? AND task = ?"
        " AND evaluator = ?",
        (changed, a, *values[:3]),
    )
    conn.commit()
    with RunReader(store_copy) as reader:
        assert reader.kept_comparison(a, b, 0) is None
    conn.execute(
        "UPDATE suite_run_values SET values_f8 = ? WHERE run_id = ? AND subject = ? AND task = ?"
        " AND evaluator = ?",
        (values[3], a, *values[:3]),
    )
    conn.commit()
    with RunReader(store_copy) as reader:
        assert reader.kept_comparison(a, b, 0) is not None
    # the run resumed (running again), then finished again (its attempt's end moves)
    conn.execute("UPDATE suite_runs SET status = 'running' WHERE run_id = ?", (b,))
    conn.commit()
    with RunReader(store_copy) as reader:
        assert reader.kept_comparison(a, b, 0) is None
    conn.execute(
        "UPDATE suite_runs SET status = 'completed', finished_at = '2999-01-01T00:00:00+00:00'"
        " WHERE run_id = ?",
        (b,),
    )
    conn.commit()
    conn.close()
    with RunReader(store_copy) as reader:
        assert reader.kept_comparison(a, b, 0) is None
    # its recording keeps it again, for the runs as they are now
    with SuiteRunStore(store_copy) as store:
        assert run_comparison.keep(store, b)
    assert _kept_rows(store_copy) == [(b, a)]


def test_a_deleted_run_takes_its_kept_comparisons_with_it(
    viewer_store: ViewerStore, store_copy: Path
) -> None:
    a, b = viewer_store.judged
    with SuiteRunStore(store_copy) as store:
        assert run_comparison.keep(store, b)
        with store._write() as c:
            c.execute(sa.text("DELETE FROM suite_runs WHERE run_id = :run"), {"run": a})
    assert _kept_rows(store_copy) == []
    # b's page now offers the runs before a (if any): not kept, compared on request
    with RunReader(store_copy) as reader:
        inputs = reader.comparison_inputs(b)
    assert inputs is None or inputs.baseline != a


def test_nothing_is_kept_when_making_it_is_interrupted_or_a_run_moves_meanwhile(
    viewer_store: ViewerStore, store_copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    b = viewer_store.judged[1]

    def interrupted(*args: object) -> dict[str, object]:
        raise KeyboardInterrupt

    monkeypatch.setattr(run_comparison, "payload", interrupted)
    with SuiteRunStore(store_copy) as store, pytest.raises(KeyboardInterrupt):
        run_comparison.keep(store, b)
    assert _kept_rows(store_copy) == []
    made = run_comparison.payload

    def resumed_meanwhile(*args: object) -> dict[str, object]:
        conn = sqlite3.connect(store_copy)
        conn.execute("UPDATE suite_runs SET status = 'running' WHERE run_id = ?", (b,))
        conn.commit()
        conn.close()
        return {"rows": [], "changed": [], "n_changed": 0}

    monkeypatch.setattr(run_comparison, "payload", resumed_meanwhile)
    assert made is not resumed_meanwhile
    with SuiteRunStore(store_copy) as store:
        assert not run_comparison.keep(store, b)
    assert _kept_rows(store_copy) == []


def _evaluate(db: Path, out: Path) -> None:
    argv = ["evaluate", str(DATA / "good" / "bundle.yaml"), "-s", "lexical"]
    assert main([*argv, "--out", str(out), "--store", str(db), "--quiet"]) == 0


def test_recording_a_run_keeps_its_comparison_from_the_size_it_pays_off(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "r.db"
    _evaluate(db, tmp_path / "e0")
    _evaluate(db, tmp_path / "e1")
    assert _kept_rows(db) == []  # small runs: compared on request, nothing more written
    monkeypatch.setattr(compared_rows, "KEEP_FROM", 0)
    _evaluate(db, tmp_path / "e2")
    with SuiteRunStore(db) as store:
        runs = [r["run_id"] for r in store.list_runs(3)]
    assert _kept_rows(db) == [(runs[0], runs[1])]
    with RunReader(db) as reader:
        kept = reader.kept_comparison(runs[1], runs[0], 0)
    assert kept is not None
    assert Comparison.from_json(kept) == _on_request(db, runs[1], runs[0], 0)


def test_a_store_before_its_upgrade_keeps_none(viewer_store: ViewerStore, store_copy: Path) -> None:
    """A copy read before revision 0024 (no table of kept comparisons): compared on request."""
    a, b = viewer_store.judged
    conn = sqlite3.connect(store_copy)
    conn.execute("DROP TABLE suite_run_compared")
    conn.commit()
    conn.close()
    with RunReader(store_copy) as reader:
        assert reader.kept_comparison(a, b, 0) is None


def test_a_comparison_that_cannot_be_kept_is_a_warning_not_the_commands_failure(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Keeping it only spares the viewer's first request: a store that refuses the write
    leaves the run completed, its reports written and the exit code the run's (it was 70)."""
    db = tmp_path / "r.db"
    _evaluate(db, tmp_path / "e0")
    monkeypatch.setattr(compared_rows, "KEEP_FROM", 0)

    def locked(*args: object) -> bool:
        raise sa.exc.OperationalError("INSERT", {}, sqlite3.OperationalError("database is locked"))

    monkeypatch.setattr(run_comparison, "keep", locked)
    capsys.readouterr()
    _evaluate(db, tmp_path / "e1")
    said = capsys.readouterr()
    assert "comparison with the run before it was not kept" in said.out + said.err
    assert "database is locked" in said.out + said.err
    assert "internal error" not in said.out + said.err
    assert any((tmp_path / "e1").iterdir())
    with SuiteRunStore(db) as store:
        runs = store.list_runs(2)
    assert [r["status"] for r in runs] == ["completed", "completed"]
    assert _kept_rows(db) == []


def test_run_says_the_comparison_was_not_kept_and_exits_with_the_runs_code(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    recall_suite: RecallSuite,
) -> None:
    items = [{"id": "i0", "input": "what colour is the boat", "expected": "the boat is blue"}]
    suite = recall_suite(items, [{"id": "m0", "text": "the boat is blue"}], ["exact"])
    argv = ["run", str(suite), "--store", str(tmp_path / "r.db"), "--json"]
    assert main(argv) == 0
    monkeypatch.setattr(compared_rows, "KEEP_FROM", 0)

    def full(*args: object) -> bool:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(run_comparison, "keep", full)
    capsys.readouterr()
    assert main(argv) == 0  # was 3, "unavailable: No space left on device", no summary
    said = capsys.readouterr()
    assert json.loads(said.out.strip().splitlines()[-1])["status"] == "completed"
    assert "warning: run " in said.err
    assert "was not kept (OSError: [Errno 28] No space left on device)" in said.err
