"""Wrong answers attributed to their causes (issue 33 item 3, seed 004): each cause on
hand-built records, the aggregate's counts and Wilson intervals, a failed call counted apart,
and a real run (in-process CLI) whose items keep their causes and whose viewer, report and
JSON draw them.

cl100k_base token counts (tiktoken's published ids, as tests/runs/test_cost_aggregate.py):
"hello world" 2, "tiktoken is great!" 6.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest
import yaml
from starlette.testclient import TestClient

from memgauge import api
from memgauge.aggregates import AGGREGATES, TaskView
from memgauge.aggregates.attribution import AttributionAggregate
from memgauge.aggregates.attribution_cause import attribute
from memgauge.aggregates.facts import SubjectsFacts
from memgauge.cli.main import main
from memgauge.data.records import AggregateResult, Failure, ItemRecord, ScoreRecord
from memgauge.data.shapes import Breakdown, Examples
from memgauge.errors import UsageError
from memgauge.runs.suite import Suite
from memgauge.stats.proportion import wilson_ci
from memgauge.store.suite_runs import SuiteRunStore
from memgauge.subjects.protocol import Answer, Hit, SearchResult

TASK = TaskView(name="qa", kind="expected-output", subjects=["a"], evaluators=[("ok", "contains")])


def _item(
    iid: str,
    passed: bool | None,
    *,
    meta: dict[str, Any] | None = None,
    extra: dict[str, Any] | None = None,
    output: str = "wrong",
    expected: Any = "right",
    status: str = "completed",
) -> ItemRecord:
    scores = (
        [] if passed is None else [ScoreRecord(evaluator="ok", value=float(passed), passed=passed)]
    )
    return ItemRecord(
        subject="a",
        task="qa",
        item_id=iid,
        status=status,  # type: ignore[arg-type]
        input={"text": f"question {iid}", "metadata": meta or {}},
        expected=expected,
        output=output,
        extra=extra or {},
        scores=scores,
    )


RANKING = [{"id": "m1", "text": "hello world"}, {"id": "m2", "text": "tiktoken is great!"}]

#: one item of each cause, one right, one whose call failed, one whose verdict failed
ITEMS = [
    # evidence m3 not in the top 2; the deeper search had it at rank 3
    _item(
        "miss",
        False,
        meta={"evidence": ["m3"]},
        extra={"retrieved": ["m1", "m2"], "ranking": [*RANKING, {"id": "m3", "text": "rer"}]},
    ),
    # evidence m9 nowhere: the store does not hold it
    _item(
        "absent",
        False,
        meta={"evidence": ["m9"]},
        extra={"retrieved": ["m1", "m2"], "ranking": RANKING, "stored": []},
    ),
    # m2 retrieved at rank 2; a 5-token budget keeps "hello world" (2) only, not m2 (6 more)
    _item(
        "cut",
        False,
        meta={"evidence": ["m2"]},
        extra={"retrieved": ["m1", "m2"], "ranking": RANKING},
    ),
    # m1 fits the budget, and the answer is still wrong
    _item(
        "reader",
        False,
        meta={"evidence": ["m1"]},
        extra={"retrieved": ["m1", "m2"], "ranking": RANKING},
    ),
    # a conflict probe answered with the superseded value
    _item(
        "stale",
        False,
        meta={"evidence": ["m2"], "old_values": ["Paris"]},
        extra={"retrieved": ["m1", "m2"], "ranking": RANKING},
        output="The user lives in Paris.",
        expected="Berlin",
    ),
    # nothing to check it against
    _item("none", False, extra={"retrieved": ["m1"]}),
    _item("right", True, meta={"evidence": ["m1"]}, extra={"retrieved": ["m1"]}),
    ItemRecord(
        subject="a",
        task="qa",
        item_id="call-failed",
        status="failed",
        failures=[Failure(stage="subject", kind="TimeoutError", message="too slow")],
    ),
    ItemRecord(
        subject="a",
        task="qa",
        item_id="unscored",
        status="completed",
        output="x",
        scores=[ScoreRecord(evaluator="ok", value=None, error="judge down")],
    ),
]


def _subjects(result: AggregateResult) -> dict[str, dict[str, Any]]:
    facts = result.facts_as(SubjectsFacts)
    assert facts is not None
    return facts.subjects


def _causes(agg: AttributionAggregate) -> dict[str, str]:
    detail = _subjects(agg.compute(TASK, {"a": ITEMS}))["a"]
    return {w["id"]: w["cause"] for w in detail["items"]}


def test_each_cause_on_hand_built_items() -> None:
    agg = AttributionAggregate(budget=5, encoding="cl100k_base")
    assert _causes(agg) == {
        "miss": "retrieval_miss",
        "absent": "retrieval_miss",
        "cut": "budget_cut",
        "reader": "reader_error",
        "stale": "stale",
        "none": "unattributable",
    }
    by_id = {r.item_id: r for r in ITEMS}
    miss = attribute(by_id["miss"], "ok")
    absent = attribute(by_id["absent"], "ok")
    assert miss is not None
    assert (miss.rank, miss.text) == (
        3,
        "evidence m3 not in the top 2; at rank 3",
    )
    assert absent is not None
    assert absent.rank == "absent"
    cut = attribute(by_id["cut"], "ok", budget=5, encoding="cl100k_base")
    assert cut is not None
    assert cut.text == (
        "evidence m2 retrieved at rank 2, cut by a 5-token budget (1 of 2 hits kept)"
    )
    stale = attribute(by_id["stale"], "ok")
    assert stale is not None
    assert stale.text == "answered the superseded value 'Paris'"
    none = attribute(by_id["none"], "ok")
    assert none is not None
    assert "names no evidence memory" in none.text
    # right answers, failed calls and verdicts not given have no cause
    for iid in ("right", "call-failed", "unscored"):
        assert attribute(by_id[iid], "ok") is None
    # without a budget the cut item's evidence is in the context: a reader error
    assert _causes(AttributionAggregate())["cut"] == "reader_error"


def test_the_context_an_agent_reports_and_a_superseded_memory_in_it() -> None:
    cut = _item(
        "c", False, meta={"evidence": ["m2"]}, extra={"used": ["m1", "m2"], "context": ["m1"]}
    )
    found = attribute(cut, "ok")
    assert found is not None
    assert found.cause == "budget_cut"
    assert found.text.endswith("cut by the context rule (1 of 2 hits kept)")
    held = _item(
        "s", False, meta={"evidence": ["m2"], "stale": ["m1"]}, extra={"used": ["m1", "m2"]}
    )
    stale = attribute(held, "ok")
    assert stale is not None
    assert stale.text == "the context held superseded memory m1"
    # an old value inside the right one says nothing about staleness
    within = _item(
        "w",
        False,
        meta={"evidence": ["m2"], "old_values": ["Paris"]},
        extra={"used": ["m2"]},
        output="Paris, Texas? no",
        expected="Paris, Texas",
    )
    assert (attribute(within, "ok") or pytest.fail("no cause")).cause == "reader_error"
    # an agent that does not say what it answered from cannot be attributed
    silent = _item("q", False, meta={"evidence": ["m2"]})
    assert (attribute(silent, "ok") or pytest.fail("no cause")).text == (
        "the subject did not say which memories it answered from"
    )
    # a budget with no texts recorded to fill it with
    blind = _item("b", False, meta={"evidence": ["m2"]}, extra={"retrieved": ["m1", "m2"]})
    assert (attribute(blind, "ok", budget=5) or pytest.fail("no cause")).cause == "unattributable"


def test_counts_shares_and_wilson_intervals_per_subject() -> None:
    agg = AGGREGATES.build({"attribution": {"budget": 5, "encoding": "cl100k_base"}})
    result = agg.compute(TASK, {"a": ITEMS})
    values = {m.name: m for m in result.measures}
    assert sorted(values) == sorted(
        f"failure_cause[{c}]"
        for c in ("retrieval_miss", "budget_cut", "reader_error", "stale", "unattributable")
    )
    miss = values["failure_cause[retrieval_miss]"]
    low, high = wilson_ci(2, 6) or pytest.fail("no interval")
    assert (miss.value, miss.ci_low, miss.ci_high) == (2 / 6, low, high)
    assert round(low, 4) == 0.0968
    assert round(high, 4) == 0.7000
    one = values["failure_cause[unattributable]"]
    assert (one.value, one.n_scored, one.n_failed) == (1 / 6, 6, 2)
    assert round(one.ci_low or 0, 4) == 0.0301
    assert round(one.ci_high or 0, 4) == 0.5635
    assert all(not m.higher_is_better and not m.primary for m in values.values())
    detail = _subjects(result)["a"]
    assert (detail["n_wrong"], detail["n_right"], detail["n_failed"]) == (6, 1, 2)
    assert detail["counts"]["unattributable"]["count"] == 1
    breakdown, examples = result.shapes
    assert isinstance(breakdown, Breakdown)
    assert isinstance(examples, Examples)
    assert list(breakdown.values) == [
        "retrieval miss",
        "budget cut",
        "reader error",
        "stale/conflicting",
        "unattributable",
    ]
    (cell,) = breakdown.values["budget cut"]
    assert (cell.value, cell.n, cell.n_failed, cell.note) == (1 / 6, 6, 2, "1 of 6 wrong answers")
    assert [e.id for e in examples.items] == ["miss", "absent", "cut", "reader", "stale", "none"]
    # a result stored before shapes is drawn from the detail it kept: these facts and settings
    kept = {"budget": 5, "encoding": "cl100k_base", "subjects": _subjects(result)}
    assert AttributionAggregate.shapes_from(kept) == result.shapes


def test_a_subject_with_no_wrong_answer_is_na_not_zero() -> None:
    result = AttributionAggregate().compute(TASK, {"a": [ITEMS[6]]})
    (m, *_) = result.measures
    assert (m.value, m.ci_low, m.n_scored, m.note) == (None, None, 0, "no wrong answer")


def test_bad_arguments_and_an_unknown_evaluator() -> None:
    with pytest.raises(UsageError, match="budget 0"):
        AttributionAggregate(budget=0)
    with pytest.raises(UsageError, match="depth 0"):
        AttributionAggregate(depth=0)
    with pytest.raises(UsageError, match="evaluator 'judge' is none of its evaluators"):
        AttributionAggregate(evaluator="judge").compute(TASK, {"a": ITEMS})


# --- a real run ------------------------------------------------------------------------------

#: six questions over six memories, one of each cause and one right (the docs' example too)
DATA = Path(__file__).resolve().parents[1] / "data" / "suites" / "attribution"


def _suite(tmp_path: Path) -> Path:
    suite = {
        "name": "attribution",
        "subjects": {"memory": {"reference": {"mode": "lexical"}}},
        "tasks": [
            {
                "name": "qa",
                "kind": "expected-output",
                "dataset": str(DATA / "items.jsonl"),
                "memories": str(DATA / "memories.jsonl"),
                "k": 1,
                "evaluators": ["contains"],
                "aggregates": [{"attribution": {"depth": 5}}],
            }
        ],
    }
    path = tmp_path / "suite.yaml"
    path.write_text(yaml.safe_dump(suite))
    return path


def test_a_run_keeps_each_cause_with_its_item_and_every_medium_draws_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "r.db"
    assert main(["run", str(_suite(tmp_path)), "--store", str(db), "--json"]) == 0
    run_id = json.loads(capsys.readouterr().out.strip().splitlines()[-1])["run_id"]
    with SuiteRunStore(db) as store:
        items = {it.item_id: it for it in store.item_records(run_id)}
        run = store.get_run(run_id)
    assert {i: (it.extra.get("attribution") or {}).get("cause") for i, it in items.items()} == {
        "reader": "reader_error",
        "miss": "retrieval_miss",
        "absent": "retrieval_miss",
        "stale": "stale",
        "none": "unattributable",
        "ok": None,
    }
    # the miss's evidence was second in the subject's ranking searched five deep
    assert items["miss"].extra["attribution"] == {
        "cause": "retrieval_miss",
        "text": "evidence m6 not in the top 1; at rank 2",
        "rank": 2,
    }
    assert items["absent"].extra["stored"] == []
    assert items["absent"].extra["attribution"]["rank"] == "absent"
    # the answer is still the top-1 hit: the deeper search is apart from it
    assert items["miss"].output == "The user drinks green tea every morning."
    assert run is not None
    assert run.summary is not None
    measures = {m.name: m for m in run.summary.measures() if m.source == "attribution"}
    assert measures["failure_cause[retrieval_miss]"].value == 2 / 5
    assert measures["failure_cause[unattributable]"].n_scored == 5

    assert main(["runs", "show", run_id, "--store", str(db), "--json"]) == 0
    (stored,) = json.loads(capsys.readouterr().out)["summary"]["aggregates"]
    assert [s["type"] for s in stored["shapes"]] == ["breakdown", "examples"]
    assert stored["shapes"][0]["values"]["retrieval miss"][0]["value"] == 2 / 5

    assert main(["runs", "show", run_id, "--store", str(db)]) == 0
    shown = capsys.readouterr().out
    assert "Wrong answers by cause" in shown
    assert "40.0% [11.8%, 76.9%] (n=5)" in shown  # retrieval miss, 2 of 5
    assert "evidence m6 not in the top 1; at rank 2" in shown

    md, html = tmp_path / "report.md", tmp_path / "report.html"
    for out in (md, html):
        assert main(["report", run_id, "--store", str(db), "--out", str(out)]) == 0
        text = out.read_text()
        assert "Wrong answers by cause" in text
        assert "stale/conflicting" in text

    with TestClient(api_view(db)) as client:
        page = client.get(f"/runs/{run_id}")
        assert page.status_code == 200
        assert "Wrong answers by cause" in page.text
        query = urlencode({"subject": "memory", "task": "qa", "item": "miss"})
        item = client.get(f"/runs/{run_id}/item?{query}")
        assert item.status_code == 200
        assert "Why the answer is wrong" in item.text
        assert "retrieval miss</span> evidence m6 not in the top 1; at rank 2" in item.text


def api_view(db: Path) -> Any:
    from memgauge.view.app import create_app

    return create_app(db)


class _Agent:
    """An agent over fixed hits whose context rule keeps the first hit only, that searches,
    and that fails on one question."""

    name = "agent"

    def __init__(self) -> None:
        from memgauge.subjects.events import Capabilities

        self.capabilities = Capabilities(answers=True)
        self.hits = [Hit("m1", "hello world", None, 1), Hit("m2", "tiktoken is great!", None, 2)]

    def answer(self, question: str, *, history: Any = None) -> Answer:
        if question == "boom":
            raise RuntimeError("the agent fell over")
        return Answer("no idea", metadata={"retrieved": ["m1", "m2"], "context": ["m1"]})

    def search(self, query: str, k: int, *, session: Any = None) -> SearchResult:
        return SearchResult(self.hits[:k])


def test_an_agent_context_rule_and_a_failed_call_through_the_api() -> None:
    items = [
        {"id": "cut", "input": "q", "expected": "yes", "metadata": {"evidence": ["m2"]}},
        {"id": "boom", "input": "boom", "expected": "yes", "metadata": {"evidence": ["m2"]}},
    ]
    suite = Suite.model_validate(
        {
            "name": "agent",
            "max_failure_rate": 1.0,
            "subjects": {"agent": {"live": {"name": "agent"}}},
            "tasks": [
                {
                    "name": "qa",
                    "kind": "expected-output",
                    "items": items,
                    "evaluators": ["contains"],
                    "aggregates": ["attribution"],
                }
            ],
        }
    )
    report = api.run_suite(suite, store=False, subjects={"agent": _Agent()})
    by_id = {it.item_id: it for it in report.items}
    cut = by_id["cut"]
    assert cut.extra["used"] == ["m1", "m2"]
    assert cut.extra["context"] == ["m1"]
    assert [h["id"] for h in cut.extra["ranking"]] == ["m1", "m2"]
    assert cut.extra["attribution"]["cause"] == "budget_cut"
    # the failed call is a failure, not a cause
    assert by_id["boom"].status == "failed"
    assert "attribution" not in by_id["boom"].extra
    found = report.summary.aggregate("attribution")
    assert found is not None
    counts = _subjects(found)["agent"]
    assert (counts["n_wrong"], counts["n_failed"]) == (1, 1)
    assert counts["counts"]["budget_cut"]["count"] == 1


def test_longmemeval_and_locomo_probes_carry_their_evidence_turns() -> None:
    from memgauge.probes.sources import load_audit_source

    source = load_audit_source(DATA.parents[1] / "longmemeval" / "sample.json")
    evidence = {p.id: p.item()["metadata"].get("evidence") for p in source.probes}
    assert evidence == {
        "e47becba": ["e47becba/answer_280352e9:0"],
        "gpt4_2655b836": [
            "gpt4_2655b836/answer_4be1b6b4_2:0",
            "gpt4_2655b836/answer_4be1b6b4_3:0",
        ],
        "6a1eabeb_abs": None,  # an abstention question: no turn holds its answer
    }


class _Store:
    def __init__(self, ids: list[str]) -> None:
        self.ids = ids

    def dump(self) -> list[Any]:
        from memgauge.data.models import Memory

        return [Memory(id=i, text=i) for i in self.ids]


class _Searches:
    """A memory-backed agent: its own `search`, and the memory it reads (`memory`)."""

    def __init__(self, hits: list[Hit] | None, stored: list[str]) -> None:
        self.hits, self.memory = hits, _Store(stored)

    def search(self, query: str, k: int, *, session: Any = None) -> SearchResult:
        if self.hits is None:
            raise ConnectionError("search is down")
        return SearchResult(self.hits[:k])


def test_the_deeper_search_and_the_store_check() -> None:
    from memgauge.runs.kinds.deeper import deeper

    agg = [AttributionAggregate(depth=2)]
    hits = [Hit(f"m{i}", f"text {i}", None, i) for i in range(1, 4)]
    said = {"retrieved": ["m1"], "context": ["m1"], "coverage": 0.5}
    # evidence m3 is third: not within the depth asked; the agent's memory holds it
    got = deeper(_Searches(hits, ["m1", "m3"]), agg, "q", {"evidence": ["m3"]}, said)
    assert got == {
        "used": ["m1"],
        "context": ["m1"],
        "ranking": [{"id": "m1", "text": "text 1"}, {"id": "m2", "text": "text 2"}],
        "depth": 2,
        "stored": ["m3"],
    }
    # found within the depth: the store is not read
    assert "stored" not in deeper(_Searches(hits, []), agg, "q", {"evidence": ["m2"]})
    # no aggregate asks: nothing is recorded, not even what the agent said
    assert deeper(_Searches(hits, []), [], "q", {"evidence": ["m2"]}, said) == {}
    # the evaluation's own search failing leaves the answer standing, and says why
    assert deeper(_Searches(None, []), agg, "q", {}, said) == {
        "used": ["m1"],
        "context": ["m1"],
        "ranking_error": "ConnectionError: search is down",
    }
