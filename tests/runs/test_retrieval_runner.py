"""Retrieval evaluation through the one engine (`memgauge.evaluate`), end to end, with small
deterministic subjects whose right answers are known."""

from __future__ import annotations

import pytest
from tests.helpers import ScriptedSystem

from memgauge import api
from memgauge.aggregates.retrieval_result import RetrievalEvalResult
from memgauge.data.demo import demo_dataset
from memgauge.data.models import EvalQuery, Judgment, Memory, RetrievalDataset
from memgauge.errors import UnavailableError, UsageError
from memgauge.report import retrieval_result
from memgauge.runs.recording import InMemoryRecorder


def _dataset() -> RetrievalDataset:
    memories = [Memory(id=f"m{i}", text=f"memory {i}", tier="normal") for i in range(1, 7)]
    queries = [
        EvalQuery(id="q1", text="one", category="trigger-match", intent="understand"),
        EvalQuery(id="q2", text="two", category="semantic-search", intent="understand"),
        EvalQuery(id="q3", text="three", category="semantic-search", intent="fix_bug"),
        EvalQuery(id="q4", text="four", category="edge-case"),  # judged, nothing relevant
        EvalQuery(id="q5", text="five"),  # not judged at all
    ]
    judgments = [
        Judgment(query_id="q1", memory_id="m1", grade=3),
        Judgment(query_id="q2", memory_id="m2", grade=2),
        Judgment(query_id="q2", memory_id="m3", grade=1),
        Judgment(query_id="q3", memory_id="m4", grade=3),
        Judgment(query_id="q4", memory_id="m5", grade=0),
    ]
    return RetrievalDataset(name="tiny", memories=memories, queries=queries, judgments=judgments)


ANSWERS = {"one": ["m1", "m2"], "two": ["m3", "m2"], "three": ["m6", "m5", "m4"], "four": ["m5"]}


def no_embedder() -> ScriptedSystem:
    """A system whose construction needs what is not installed."""
    raise UnavailableError("dense channel unavailable: no embedder installed")


def _run(systems: dict[str, object], store: object = False, **cfg: object) -> RetrievalEvalResult:
    report = api.evaluate(
        _dataset(),
        systems,  # type: ignore[arg-type]
        measures=("RR@10", "Recall@2", "nDCG@10"),
        k=10,
        resamples=200,
        store=store,  # type: ignore[arg-type]
        **cfg,  # type: ignore[arg-type]
    )
    return retrieval_result(report.run)


def test_values_match_hand_computation() -> None:
    result = _run({"a": ScriptedSystem("a", ANSWERS)})
    sys_a = result.systems[0]
    per = {q.query_id: q.metrics for q in sys_a.per_query}
    # q1: m1 at rank 1. q2: relevant (grade>=2) m2 at rank 2. q3: m4 at rank 3. q4: none -> 0.
    assert per["q1"]["RR@10"] == 1.0
    assert per["q2"]["RR@10"] == 0.5
    assert per["q3"]["RR@10"] == pytest.approx(1 / 3)
    assert per["q4"]["RR@10"] == 0.0
    assert per["q3"]["Recall@2"] == 0.0
    assert sys_a.metrics["RR@10"].value == pytest.approx((1 + 0.5 + 1 / 3 + 0) / 4)
    assert sys_a.metrics["RR@10"].n_scored == 4
    ci = sys_a.metrics["RR@10"]
    assert ci.ci_low is not None
    assert ci.ci_high is not None
    assert ci.ci_low <= ci.value <= ci.ci_high  # type: ignore[operator]
    # accounting: the unjudged query is not evaluated, the no-relevant one is counted
    assert sys_a.counts["n_unjudged"] == 1
    assert sys_a.counts["n_judged"] == 4
    assert "q5" not in per
    # breakdown by category carries counts
    by_cat = sys_a.breakdown["category"]
    assert by_cat["semantic-search"]["RR@10"].n_scored == 2
    assert by_cat["semantic-search"]["RR@10"].value == pytest.approx((0.5 + 1 / 3) / 2)


def test_failed_searches_are_recorded_not_scored_zero() -> None:
    result = _run({"a": ScriptedSystem("a", ANSWERS, fail=["two"])})
    sys_a = result.systems[0]
    failed = [q for q in sys_a.per_query if q.error]
    assert [q.query_id for q in failed] == ["q2"]
    assert "backend timed out" in (failed[0].error or "")
    assert failed[0].metrics["RR@10"] is None
    assert sys_a.metrics["RR@10"].n_scored == 3
    assert sys_a.metrics["RR@10"].n_failed == 1
    assert sys_a.metrics["RR@10"].value == pytest.approx((1 + 1 / 3 + 0) / 3)


def test_unavailable_system_is_reported_and_others_still_run() -> None:
    result = _run(
        {
            "dense": {"python": {"target": "test_retrieval_runner:no_embedder"}},
            "a": ScriptedSystem("a", ANSWERS),
        }
    )
    assert result.systems[0].status == "unavailable"
    assert "no embedder" in (result.systems[0].reason or "")
    assert result.systems[1].status == "ok"
    assert result.comparisons == []  # only one system ran


def test_comparison_against_first_system() -> None:
    perfect = {"one": ["m1"], "two": ["m2"], "three": ["m4"], "four": []}
    result = _run({"a": ScriptedSystem("a", ANSWERS), "b": ScriptedSystem("b", perfect)})
    (cmp,) = result.comparisons
    assert (cmp.baseline, cmp.candidate) == ("a", "b")
    rr = next(m for m in cmp.metrics if m.measure == "RR@10")
    assert rr.n == 4
    assert rr.delta == pytest.approx(0.75 - (1 + 0.5 + 1 / 3) / 4)
    assert rr.p_holm is not None
    assert rr.p_value is not None
    assert rr.p_holm >= rr.p_value


def test_k_below_cutoff_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="k=5"):
        api.evaluate(
            _dataset(), {"a": ScriptedSystem("a", ANSWERS)}, measures=("nDCG@10",), k=5, store=False
        )


def test_duplicate_system_names_are_a_usage_error() -> None:
    with pytest.raises(UsageError, match="unique"):
        api.evaluate(_dataset(), ["lexical", "lexical"], store=False)


def test_a_retrieval_run_is_recorded_once_as_items_and_round_trips_as_json() -> None:
    rec = InMemoryRecorder()
    result = _run({"a": ScriptedSystem("a", ANSWERS)}, store=rec)
    (run,) = rec.runs.values()
    assert run.run_id == result.run_id
    assert run.kind == "evaluate"
    items = rec.item_records(run.run_id)
    assert {it.item_id for it in items} == {"q1", "q2", "q3", "q4"}
    assert all(it.verdict("RR@10") is not None for it in items)
    again = RetrievalEvalResult.model_validate_json(result.model_dump_json())
    assert again == result


def test_demo_dataset_is_consistent() -> None:
    ds = demo_dataset()
    mem_ids = {m.id for m in ds.memories}
    query_ids = {q.id for q in ds.queries}
    assert len(mem_ids) == len(ds.memories)
    assert len(query_ids) == len(ds.queries)
    assert all(j.memory_id in mem_ids and j.query_id in query_ids for j in ds.judgments)
    assert set(ds.qrels()) == query_ids
    from memgauge.data.models import SEED_CATEGORIES, TIERS

    assert {q.category for q in ds.queries} == set(SEED_CATEGORIES)
    assert {m.tier for m in ds.memories} == set(TIERS)
    assert {j.grade for j in ds.judgments} == {0, 1, 2, 3}
    for chain in ds.causal_chains:
        assert set(chain.memory_ids) <= mem_ids
        assert set(chain.query_ids) <= query_ids
    assert demo_dataset() == ds  # deterministic


def test_the_dataset_is_hashed_once_a_run(monkeypatch: pytest.MonkeyPatch) -> None:
    """Planning hashes the dataset (the run's provenance); the ir aggregate's summary records
    that hash rather than serialising the dataset again (LoCoMo: 0.05 CPU-s)."""
    from memgauge.aggregates import ir
    from memgauge.runs.kinds import retrieval

    hashed: list[str] = []
    sha256 = ir.dataset_sha256

    def counted(dataset: RetrievalDataset) -> str:
        hashed.append(dataset.name)
        return sha256(dataset)

    monkeypatch.setattr(retrieval, "dataset_sha256", counted)
    monkeypatch.setattr(ir, "dataset_sha256", counted)
    report = api.evaluate(_dataset(), {"a": ScriptedSystem("a", ANSWERS)}, store=False)
    monkeypatch.undo()
    assert hashed == ["tiny"]
    expected = ir.dataset_sha256(_dataset())
    assert list(report.run.provenance["datasets"].values()) == [expected]
    assert retrieval_result(report.run).dataset.sha256 == expected
