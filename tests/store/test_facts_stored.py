"""A result is stored with its aggregate's typed facts and no free `detail` dict (stored form 3),
and every program reads the facts back as the same typed model."""

from __future__ import annotations

import json
import sqlite3
import zlib
from pathlib import Path

import pytest

from memgauge.aggregates.cost_shapes import CostFacts
from memgauge.aggregates.ir_facts import IrFacts
from memgauge.cli.main import main
from memgauge.data.facts import Facts, IrView
from memgauge.data.records import AggregateResult, RepeatsFacts
from memgauge.data.shapes import FORM
from memgauge.store.headline import headline
from memgauge.store.suite_runs import SuiteRunStore

BUNDLE = Path(__file__).parents[1] / "data" / "good" / "bundle.yaml"


@pytest.fixture(scope="module")
def stored(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """`evaluate` of the good bundle with a run type and a feature, stored: (store, run id)."""
    root = tmp_path_factory.mktemp("facts")
    db = root / "r.db"
    argv = ["evaluate", str(BUNDLE), "-s", "lexical", "--resamples", "100", "--quiet"]
    extra = ["--run-type", "shadow", "--feature-id", "f-9", "--repeat", "2"]
    assert main([*argv, *extra, "--out", str(root / "out"), "--store", str(db)]) == 0
    with SuiteRunStore(db) as store:
        (run,) = store.list_runs()
    return db, str(run["run_id"])


def _raw_summary(db: Path) -> dict[str, object]:
    conn = sqlite3.connect(db)
    try:
        (raw,) = conn.execute("SELECT summary_json FROM suite_runs").fetchone()
    finally:
        conn.close()
    text = zlib.decompress(raw).decode() if isinstance(raw, bytes) else raw
    loaded: dict[str, object] = json.loads(text)
    return loaded


def test_a_new_result_is_stored_with_its_facts_and_no_detail(stored: tuple[Path, str]) -> None:
    db, _run_id = stored
    aggregates = _raw_summary(db)["aggregates"]
    assert isinstance(aggregates, list)
    assert [a["aggregate"] for a in aggregates] == ["ir", "cost", "repeats"]
    for a in aggregates:
        assert a["form"] == FORM == 3
        assert "detail" not in a
        assert a["shapes"]
    ir, cost, repeats = (a["facts"] for a in aggregates)
    assert ir["settings"]["measures"][0] == "RR@5"
    assert ir["pipeline"]["run_type"] == "shadow"
    assert [s["name"] for s in ir["systems"]] == ["lexical"]
    assert cost["encoding"] == "o200k_base"
    assert repeats == {"nondeterminism": []}


def test_its_facts_read_back_typed_as_they_were_computed(stored: tuple[Path, str]) -> None:
    db, run_id = stored
    with SuiteRunStore(db) as store:
        run = store.get_run(run_id)
    assert run is not None
    assert run.summary is not None
    ir = run.summary.aggregate("ir")
    assert ir is not None
    # read back without the aggregate's model: the fields it was stored with, untyped
    assert type(ir.facts) is Facts
    facts = ir.facts_as(IrFacts)
    assert facts is not None
    assert (facts.settings.k, facts.settings.rel_threshold, facts.settings.gain) == (20, 2, "exp")
    assert facts.pipeline is not None
    assert (facts.pipeline.run_type, facts.pipeline.feature_id) == ("shadow", "f-9")
    assert facts.dataset.n_queries == 1
    assert facts.systems[0].metrics["RR@5"].value == 1.0
    [query] = facts.systems[0].per_query
    assert query.metrics["RR@5"] == 1.0
    # the store's view of the same facts, and the result stored again is the same
    view = ir.facts_as(IrView)
    assert view is not None
    assert [s.name for s in view.systems] == ["lexical"]
    again = AggregateResult.model_validate_json(ir.model_dump_json())
    assert again.facts_as(IrFacts) == facts
    cost = run.summary.aggregate("cost")
    assert cost is not None
    assert (cost.facts_as(CostFacts) or CostFacts()).encoding == "o200k_base"
    assert run.summary.nondeterminism() == []
    repeats = run.summary.aggregate("repeats")
    assert repeats is not None
    assert repeats.facts_as(RepeatsFacts) == RepeatsFacts()


def test_runs_show_json_lists_facts(
    stored: tuple[Path, str], capsys: pytest.CaptureFixture[str]
) -> None:
    db, run_id = stored
    capsys.readouterr()
    assert main(["runs", "show", run_id, "--store", str(db), "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    ir = shown["summary"]["aggregates"][0]
    assert "detail" not in ir
    assert ir["facts"]["settings"]["measures"][0] == "RR@5"
    assert shown["pipeline"] == {
        "retrieval": {
            "sampling_rate": 1.0,
            "feature_id": "f-9",
            "run_type": "shadow",
            "n_judged": 1,
            "n_asked": 1,
        }
    }


def test_a_copy_given_other_facts_reads_those(stored: tuple[Path, str]) -> None:
    """The typed facts a result has read are kept, for its own facts only: its headline (a copy
    without the queries) reads the copy's."""
    db, run_id = stored
    with SuiteRunStore(db) as store:
        run = store.get_run(run_id)
    assert run is not None
    assert run.summary is not None
    ir = run.summary.aggregate("ir")
    assert ir is not None
    whole = ir.facts_as(IrFacts)
    assert whole is not None
    assert ir.facts_as(IrFacts) is whole  # read once
    assert len(whole.systems[0].per_query) == 1
    head = headline(run.summary).aggregate("ir")
    assert head is not None
    short = head.facts_as(IrFacts)
    assert short is not None
    assert short.systems[0].per_query == []
    assert short.systems[0].metrics == whole.systems[0].metrics
