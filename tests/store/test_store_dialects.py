"""The results store on SQLite and on a real PostgreSQL server (tests/pgserver.py): the schema
the migrations make is exactly `store.tables`, and every store module reads back what it
wrote, on both."""

from __future__ import annotations

import pytest
import sqlalchemy as sa
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from tests.helpers import revisions_after

from memgauge.data.records import ItemRecord, RunPlan, RunRecord, RunSummary, ScoreRecord
from memgauge.online.querylog import QueryLog
from memgauge.store import tables
from memgauge.store.ab_tests import ABTestStore
from memgauge.store.dialect import driver_rows, executemany, upsert
from memgauge.store.engine import open_engine, upgrade
from memgauge.store.querylog import bootstrap_judgments, golden_set, harvest
from memgauge.store.shadow import ShadowStore
from memgauge.store.suite_runs import SuiteRunStore
from memgauge.store.url import HEAD, store_url


def _run(run_id: str = "r1", suite: str = "demo") -> RunRecord:
    return RunRecord(
        run_id=run_id,
        suite_name=suite,
        kind="suite",
        suite_sha256="ab" * 32,
        suite={"name": suite},
        settings={"seed": 0},
        provenance={"memgauge_version": "0.1.0"},
    )


def _items(n: int = 3) -> list[ItemRecord]:
    return [
        ItemRecord(subject="s", task="t", item_id=f"q{i}", seq=i, input={"text": str(i)})
        for i in range(n)
    ]


def test_the_migrated_schema_is_exactly_the_tables_module(store_where: str) -> None:
    url = store_url(store_where)
    engine = open_engine(url)
    try:
        assert upgrade(engine, url) == revisions_after("0008")
        with engine.connect() as conn:
            ctx = MigrationContext.configure(conn, opts={"compare_type": True})
            diff = compare_metadata(ctx, tables.metadata)
            version = conn.exec_driver_sql("SELECT version_num FROM alembic_version").scalar()
        # alembic_version is Alembic's own table, not ours to declare
        assert [
            d for d in diff if not (d[0] == "remove_table" and d[1].name == "alembic_version")
        ] == []
        assert version == HEAD
    finally:
        engine.dispose()


def test_runs_items_and_verdicts_round_trip(store_where: str) -> None:
    big = [{"id": f"m{i}", "score": i / 7} for i in range(60)]  # deflated past 512 bytes
    with SuiteRunStore(store_where) as store:
        store.create_run(
            _run(),
            RunPlan(
                {"s": {"reference": {}}},
                [
                    {"task": "t", "kind": "retrieval", "spec": {}, "n_items": 3},
                    {"task": "a", "kind": "expected-output", "spec": {}, "n_items": 0},
                ],
                _items(),
            ),
        )
        done = ItemRecord(
            subject="s",
            task="t",
            item_id="q1",
            status="completed",
            output=big,
            latency_ms={"total": 1.0},
            scores=[
                ScoreRecord(evaluator="z-judge", value=0.5, reason="half", raw_reply="{}"),
                ScoreRecord(evaluator="a-retry", value=None, detail={"retryable": True}),
                ScoreRecord(evaluator="neutral", value=0.5, fallback=True),
            ],
            attempts=1,
        )
        store.record_items("r1", [done])
        store.set_summary("r1", RunSummary(n_items=3, n_completed=1, llm_usage={"m": "x" * 900}))
        store.record_usage("r1", "m", {"calls": 2, "prompt_tokens": 10})
        store.record_usage("r1", "m", {"calls": 1})
    with SuiteRunStore(store_where) as store:
        run = store.get_run("r1")
        assert run is not None
        assert run.summary is not None
        assert run.summary.llm_usage == {"m": "x" * 900}
        assert [t["task"] for t in store.tasks("r1")] == ["t", "a"]  # the suite's order
        q1 = store.item_records("r1")[1]
        assert q1.output == big
        # a verdict's place among its item's, not the evaluators' alphabetical order
        assert [s.evaluator for s in q1.scores] == ["z-judge", "a-retry", "neutral"]
        assert q1.scores[2].fallback is True
        slim = store.item_records("r1", detail=False)[1]
        assert (slim.scores[2].fallback, slim.input) == (True, {})
        assert store.usage("r1")["m"]["calls"] == 3
        assert store.find_run_ids("r") == ["r1"]
        assert store.find_run_ids("r_") == []  # a LIKE wildcard is taken literally
        [listed] = store.list_runs()
        assert (listed["n_items"], listed["n_completed"], listed["n_failed"]) == (3, 1, 0)
        assert store.unfinished_items("r1") == {("s", "t", "q0"), ("s", "t", "q2")}
        # the verdict marked retryable puts its item back in the queue
        assert ("s", "t", "q1") in store.unfinished_items("r1", retry_failed=True)
        assert store.item_records("r1")[1].scores == []


#: built once, as the store's statements are (`dialect` keeps their SQL by the object)
_FROM_K = sa.text("SELECT k, v FROM t_many WHERE k > :k ORDER BY k")


def test_executemany_takes_rows_as_dicts_or_as_tuples_of_named_columns(store_where: str) -> None:
    """A statement's rows as dicts, or as tuples given the columns' names in the statement's
    order or in another: the same rows stored (the driver takes `?` in order on SQLite,
    named parameters on PostgreSQL)."""
    table = sa.Table(
        "t_many", sa.MetaData(), sa.Column("k", sa.Text, primary_key=True), sa.Column("v", sa.Text)
    )
    engine = open_engine(store_url(store_where))
    try:
        table.create(engine)
        with engine.begin() as c:
            stmt = upsert(c, table, ("k",))
            executemany(c, stmt, [{"k": "a", "v": "1"}, {"k": "b", "v": "2"}])
            executemany(c, stmt, [("b", "3"), ("c", "4")], ("k", "v"))
            executemany(c, stmt, [("5", "d"), ("6", "a")], ("v", "k"))
            rows = c.execute(sa.select(table).order_by(table.c.k)).all()
            # the driver's own rows, in the same (uncommitted) transaction
            read = list(driver_rows(c, _FROM_K, {"k": "b"}))
        assert [tuple(r) for r in rows] == [("a", "6"), ("b", "3"), ("c", "4"), ("d", "5")]
        assert [tuple(r) for r in read] == [("c", "4"), ("d", "5")]
    finally:
        engine.dispose()


def test_one_process_of_two_claims_a_run(store_where: str) -> None:
    with SuiteRunStore(store_where) as a, SuiteRunStore(store_where) as b:
        a.create_run(_run(), RunPlan({}, [], _items(1)))
        me = {"token": "A", "pid": 1, "host": "h"}
        assert a.claim_run("r1", me, expect=None)
        assert not b.claim_run("r1", {**me, "token": "B"}, expect=None)
        assert a.heartbeat("r1", "A")
        assert not b.heartbeat("r1", "B")
        assert b.claim_run("r1", {**me, "token": "B"}, expect="A")  # a takeover names the owner
        assert a.set_status("r1", "completed", owner="A") is False
        assert b.set_status("r1", "completed", owner="B") is True
        b.set_summary("r1", RunSummary(n_items=1))
        assert [r.run_id for r in a.suite_history("demo")] == ["r1"]


def test_ab_tests_and_shadow_runs(store_where: str) -> None:
    with ABTestStore(store_where) as ab:
        assert ab.create(
            "t",
            "RR@10",
            {"min_samples": 5, "improvement": 0.03},
            {},
            upper_bound=2.9,
            lower_bound=-2.9,
        )
        assert not ab.create(
            "t",
            "RR@10",
            {"min_samples": 5, "improvement": 0.03},
            {},
            upper_bound=2.9,
            lower_bound=-2.9,
        )
        one = {"query_id": "q1", "control": 0.5, "treatment": 1.0, "pair_key": "k1"}
        two = {"query_id": "q2", "control": 0.0, "treatment": 0.5, "pair_key": "k2"}
        assert ab.add("t", [one], lambda state, new: {"log_lr": 0.4}) == [one]
        # a key the test holds is skipped, as is a repeat within one call
        assert ab.add("t", [one, two, two], lambda state, new: {"log_lr": 0.9}) == [two]
        ab.set_status("t", "graduated")
        test = ab.get("t")
        assert test is not None
        assert (test["sample_count"], test["treatment_mrr_sum"], test["status"]) == (
            2,
            1.5,
            "graduated",
        )
        assert test["graduated_at"] is not None
        assert [p["query_id"] for p in ab.pairs("t")] == ["q1", "q2"]
    with ShadowStore(store_where) as shadow:
        row = {"query_id": "q", "control": ["a"], "treatment": ["a"], "top1_changed": False}
        shadow.record_shadow("e", row)
        shadow.record_shadow("e", {"query_id": "q2", "control": ["a"], "treatment": None})
        assert [r["query_id"] for r in shadow.shadow_rows("e")] == ["q"]
        assert shadow.shadow_errors("e") == 1
        assert shadow.experiments() == ["e"]
        shadow.project("e")


def test_the_query_log_and_its_golden_set(store_where: str) -> None:
    log = QueryLog(store_where)
    try:
        qid = log.query("oauth refresh", session_id="s", result_ids=["m1", "m2"], latency_ms=3.0)
        log.feedback("read_after_search", session_id="s", memory_id="m2")  # linked to qid
        for _ in range(5):
            log.validate("m1", useful=True, session_id="s", query_id=qid)
        log.validate("m1", useful=False, session_id="s", query_id=qid)
        assert log.confidence("m1") == (1.0 - 0.05, 6)
    finally:
        log.close()
    assert bootstrap_judgments(store_where) == {"3": 1, "2": 1}
    assert harvest(store_where, 5) == [qid]
    queries, judgments = golden_set(store_where)
    assert [q["id"] for q in queries] == [qid]
    assert {(j["memory_id"], j["grade"]) for j in judgments} == {("m1", 3), ("m2", 2)}
    engine = open_engine(store_url(store_where))
    try:
        with engine.connect() as conn:
            rank = conn.execute(sa.select(tables.eval_feedback.c.rank_in_results)).scalars().all()
        assert 2 in rank  # the feedback without a query id found its query and rank
    finally:
        engine.dispose()


def test_gate_verdicts_are_kept_and_checked(store_where: str) -> None:
    """`suite_runs.gate` (revision 0011) on both dialects: pass / fail recorded, an accepted run
    stays accepted, failed runs listed per suite, any other value refused by the table."""
    with SuiteRunStore(store_where) as store:
        for run_id in ("r1", "r2"):
            store.create_run(_run(run_id), RunPlan({"s": {"reference": {}}}, [], []))
        assert store.gate_verdict("r1") is None
        store.mark_gated("r1", "fail")
        store.mark_gated("r2", "pass")
        assert store.failed_gates("demo") == {"r1"}
        assert store.accept_gate("r1") == "fail"
        store.mark_gated("r1", "fail")
        assert store.gate_verdict("r1") == "accepted"
        assert store.failed_gates("demo") == set()
        with pytest.raises(sa.exc.IntegrityError), store._write() as c:
            c.execute(sa.update(tables.suite_runs).values(gate="maybe"))
