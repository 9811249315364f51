"""`memgauge ab add` takes each pair once (issue 27 item 8): a file added twice, or a file with
new pairs appended, counts the pairs already taken once, on SQLite and on PostgreSQL; a store
made before revision 0015 gets the keys of the pairs it holds, so the file it was fed is
recognised after the upgrade."""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from alembic import command
from alembic.config import Config
from tests.helpers import revisions_after

from memgauge.cli.main import main
from memgauge.store import revisions, tables
from memgauge.store.ab_tests import ABTestStore
from memgauge.store.engine import open_engine, upgrade
from memgauge.store.url import store_url


def _pairs(path: Path, n: int, start: int = 0) -> Path:
    rows = [
        {
            "query_id": f"q{i}",
            "control": [0.25, 0.5, 1.0][i % 3],
            "treatment": [0.5, 1.0, 1.0, 0.2][i % 4],
            "control_latency_ms": 10.0,
            "treatment_latency_ms": 10.5,
            "constitutional_delta": 0.0,
        }
        for i in range(start, start + n)
    ]
    with path.open("a") as f:
        f.writelines(json.dumps(r) + "\n" for r in rows)
    return path


def _status(capsys: pytest.CaptureFixture[str], where: str, name: str) -> dict[str, Any]:
    capsys.readouterr()
    assert main(["ab", "status", name, "--store", where, "--json"]) == 0
    (report,) = json.loads(capsys.readouterr().out)
    return dict(report)


def _add(capsys: pytest.CaptureFixture[str], where: str, name: str, path: Path) -> str:
    capsys.readouterr()
    assert main(["ab", "add", name, str(path), "--store", where]) == 0
    return capsys.readouterr().out


def test_a_file_added_twice_counts_each_pair_once(
    store_where: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["ab", "create", "t", "--delta", "0.1", "--store", store_where]) == 0
    pairs = _pairs(tmp_path / "pairs.jsonl", 60)
    out = _add(capsys, store_where, "t", pairs)
    first = _status(capsys, store_where, "t")
    out_again = _add(capsys, store_where, "t", pairs)
    again = _status(capsys, store_where, "t")
    assert (first["n_pairs"], again["n_pairs"]) == (60, 60)
    assert again["sprt"] == first["sprt"]  # the SPRT saw no pair twice
    assert again["mean_delta"] == first["mean_delta"]
    assert "t: 60 pairs added, 0 already added (skipped)" in out
    assert "t: 0 pairs added, 60 already added (skipped); 60 used by the SPRT" in out_again
    # appended pairs are new; a line repeated within the file is one pair
    _pairs(pairs, 10, start=60)
    _pairs(pairs, 1, start=69)
    assert "t: 10 pairs added, 61 already added (skipped)" in _add(capsys, store_where, "t", pairs)
    assert _status(capsys, store_where, "t")["n_pairs"] == 70
    # the same query measured again, with another value, is another pair
    other = tmp_path / "other.jsonl"
    other.write_text(json.dumps({"query_id": "q0", "control": 0.25, "treatment": 0.75}) + "\n")
    assert "t: 1 pair added, 0 already added" in _add(capsys, store_where, "t", other)
    with ABTestStore(store_where) as store:
        test = store.get("t")
        assert test is not None
        assert test["sample_count"] == 71
        assert test["state"]["n"] == 71
        assert len(store.pairs("t")) == 71


def test_a_pair_needs_its_query_id(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = str(tmp_path / "r.db")
    assert main(["ab", "create", "t", "--delta", "0.1", "--store", db]) == 0
    pairs = tmp_path / "p.jsonl"
    pairs.write_text(
        '{"query_id": "q1", "control": 1, "treatment": 0}\n{"control": 1, "treatment": 0}\n'
    )
    capsys.readouterr()
    assert main(["ab", "add", "t", str(pairs), "--store", db]) == 2
    err = capsys.readouterr().err
    assert "p.jsonl:2: query_id: required: a pair is identified by its query id and values" in err
    assert _status(capsys, db, "t")["n_pairs"] == 0  # nothing written


def _at_0014(where: str) -> None:
    """A store as memgauge left it before revision 0015, holding a test fed one file twice
    (the old double count), an id-less pair and a shadow pair."""
    url = store_url(where)
    engine = open_engine(url)
    try:
        with engine.begin() as conn:
            cfg = Config()
            cfg.set_main_option("script_location", str(Path(revisions.__file__).parent))
            cfg.attributes["connection"] = conn
            command.upgrade(cfg, "0014")
            now = datetime.now(UTC).isoformat()
            conn.execute(
                sa.insert(tables.eval_ab_tests),
                {
                    "feature_id": "old",
                    "status": "running",
                    "metric": "MRR",
                    "config_json": json.dumps(
                        {
                            "delta": 0.1,
                            "alpha": 0.05,
                            "beta": 0.2,
                            "min_samples": 100,
                            "improvement": 0.03,
                            "max_latency_increase": 0.2,
                        }
                    ),
                    "state_json": json.dumps({"n": 4}),
                    "started_at": now,
                    "updated_at": now,
                    "upper_bound": math.log(16),
                    "lower_bound": math.log(0.21),
                    "sample_count": 4,
                },
            )
            base = {
                "feature_id": "old",
                "control_latency_ms": None,
                "treatment_latency_ms": None,
                "constitutional_delta": None,
                "shadow_run_id": None,
            }
            rows = [
                {**base, "seq": 1, "query_id": "q0", "control": 0.25, "treatment": 0.5},
                {**base, "seq": 2, "query_id": "q0", "control": 0.25, "treatment": 0.5},
                {**base, "seq": 3, "query_id": None, "control": 1.0, "treatment": 0.0},
                {
                    **base,
                    "seq": 4,
                    "query_id": "q9",
                    "control": 0.5,
                    "treatment": 1.0,
                    "shadow_run_id": 7,
                },
            ]
            conn.execute(sa.insert(tables.eval_ab_test_pairs), rows)
    finally:
        engine.dispose()


def test_a_store_before_0015_gets_the_keys_of_its_pairs(
    store_where: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _at_0014(store_where)
    url = store_url(store_where)
    engine = open_engine(url)
    try:
        assert upgrade(engine, url) == revisions_after("0014")
        with engine.connect() as conn:
            keys = conn.execute(
                sa.text("SELECT seq, pair_key FROM eval_ab_test_pairs ORDER BY seq")
            ).all()
    finally:
        engine.dispose()
    assert [tuple(k) for k in keys] == [
        (1, '["q0",0.25,0.5,null,null,null]'),
        (2, None),  # the old double count stays as it was counted, unkeyed
        (3, None),  # no query id: nothing to recognise it by
        (4, "shadow:7"),
    ]
    old = tmp_path / "old.jsonl"
    old.write_text(json.dumps({"query_id": "q0", "control": 0.25, "treatment": 0.5}) + "\n")
    assert "old: 0 pairs added, 1 already added" in _add(capsys, store_where, "old", old)


def test_a_pause_while_pairs_are_added_stays(
    store_where: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`ab pause` from another process after `ab add` took its pairs and before it stored the
    decision they lead to: the add set the status back to running, and the test took pairs
    again as if nobody had paused it. The decision is stored only if the status is still the
    one the pairs were taken under."""
    assert main(["ab", "create", "t", "--delta", "0.1", "--store", store_where]) == 0
    real_add = ABTestStore.add
    paused: list[int] = []

    def add(self: ABTestStore, *args: Any) -> Any:
        taken = real_add(self, *args)
        paused.append(main(["ab", "pause", "t", "--store", store_where]))
        return taken

    monkeypatch.setattr(ABTestStore, "add", add)
    assert "t: 10 pairs added" in _add(capsys, store_where, "t", _pairs(tmp_path / "p.jsonl", 10))
    assert paused == [0]
    assert _status(capsys, store_where, "t")["status"] == "paused"
