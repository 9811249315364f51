"""Shadow runs off the hot path (issue 19): the served result never waits on the treatment, a
full queue drops the shadow and counts it (in the process and in the store), and each row keeps
the query's intent and session at the log level asked for."""

from __future__ import annotations

import json
import re
import sqlite3
import threading
from pathlib import Path

import pytest

from memgauge.cli.main import main
from memgauge.online.shadow import ShadowRunner
from memgauge.store.shadow import ShadowStore


def _control(q: str, k: int) -> list[str]:
    return ["a", "b", "c"]


def test_a_slow_treatment_never_delays_the_served_result(tmp_path: Path) -> None:
    events: list[str] = []
    started, release = threading.Event(), threading.Event()

    def treatment(q: str, k: int) -> list[str]:
        events.append("treatment started")
        started.set()
        # the synchronous runner would sit here until the timeout, and return after it
        release.wait(timeout=10)
        events.append("treatment finished")
        return ["b", "a", "c"]

    with ShadowStore(tmp_path / "r.db") as store:
        runner = ShadowRunner("slow", _control, treatment, store, percent=100)
        assert runner.search("q1", "text") == ["a", "b", "c"]
        events.append("served")
        assert not release.is_set()  # nothing let the treatment finish before the return
        release.set()
        runner.close()
        assert len(store.shadow_rows("slow")) == 1
    assert events.index("served") < events.index("treatment finished")
    assert started.is_set()


def test_a_full_queue_drops_the_shadow_and_counts_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "r.db"
    started, release = threading.Event(), threading.Event()

    def treatment(q: str, k: int) -> list[str]:
        started.set()
        release.wait(timeout=10)
        return ["c", "b", "a"]

    with ShadowStore(db) as store:
        runner = ShadowRunner("busy", _control, treatment, store, percent=100, queue_size=2)
        runner.search("q0", "text")
        assert started.wait(timeout=10)  # the worker holds q0: the queue is empty again
        served = [runner.search(f"q{i}", "text") for i in range(1, 10)]
        assert served == [["a", "b", "c"]] * 9  # every caller served, shadow or not
        assert runner.stats()["dropped"] == 7  # q1 and q2 queued, q3..q9 dropped
        assert runner.stats()["queued"] == 2
        release.set()
        runner.close()
        assert runner.stats() == {
            "recorded": 3,
            "treatment_errors": 0,
            "record_errors": 0,
            "dropped": 7,
            "abandoned": 0,
            "queued": 0,
        }
        assert store.shadow_dropped("busy") == 7
    assert main(["shadow", "summary", "busy", "--store", str(db), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)["busy"]
    assert (out["n"], out["n_dropped"]) == (3, 7)
    assert main(["shadow", "summary", "busy", "--store", str(db)]) == 0
    assert re.search(r"│ dropped \(queue full\) +│ 7 +│", capsys.readouterr().out)


def _stored(db: Path, experiment: str) -> list[tuple[object, ...]]:
    with sqlite3.connect(db) as conn:
        return conn.execute(
            "SELECT query_id, intent, session_id, log_level, query_text, control_result_ids,"
            " treatment_result_ids, rank_correlation, set_overlap, control_mrr, treatment_mrr,"
            " mrr_delta FROM eval_shadow_runs WHERE feature_id = ? ORDER BY id",
            (experiment,),
        ).fetchall()


@pytest.mark.parametrize("level", ["full", "diff-only"])
def test_rows_carry_intent_and_session_at_both_log_levels(tmp_path: Path, level: str) -> None:
    db = tmp_path / "r.db"
    with ShadowStore(db) as store:
        runner = ShadowRunner(
            "lvl",
            _control,
            lambda q, k: ["b", "x", "c"],
            store,
            percent=100,
            log_level=level,  # type: ignore[arg-type]
        )
        runner.search("q1", "oauth refresh", {"b": 3}, intent="find_decision", session_id="s1")
        runner.close()
    ((qid, intent, session, stored_level, text, control, treatment, tau, jac, c_rr, t_rr, d),) = (
        _stored(db, "lvl")
    )
    assert (qid, intent, session, stored_level) == ("q1", "find_decision", "s1", level)
    # the diff metrics and each arm's RR are kept at either level
    assert jac == pytest.approx(2 / 4)
    assert tau is not None
    assert (c_rr, t_rr, d) == pytest.approx((0.5, 1.0, 0.5))
    if level == "full":
        assert text == "oauth refresh"
        assert (json.loads(str(control)), json.loads(str(treatment))) == (
            ["a", "b", "c"],
            ["b", "x", "c"],
        )
    else:  # only what changed: the ids one arm has and the other lacks; no query text
        assert text is None
        assert (json.loads(str(control)), json.loads(str(treatment))) == (["a"], ["x"])


def test_an_unknown_log_level_is_refused(tmp_path: Path) -> None:
    with (
        ShadowStore(tmp_path / "r.db") as store,
        pytest.raises(ValueError, match="log_level must be one of"),
    ):
        ShadowRunner("x", _control, _control, store, log_level="everything")  # type: ignore[arg-type]
