"""Issue 19 item 7, seed 002's metric conventions through `memgauge evaluate` and `memgauge run`,
in every report (terminal, summary.md, report.html, result.json): `--no-relevant`, paired tests
per category, `sourceChannels` on judgments, per-query agent metrics, query-expansion impact and
tier-stratified precision per tier."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from memgauge import api
from memgauge.aggregates.ir_facts import IrFacts
from memgauge.cli.main import main

SUBJECTS = Path(__file__).resolve().parents[1] / "data" / "subjects"

MEMORIES = [
    {"id": "m1", "text": "deploys go out on tuesday", "tier": "critical", "folder": "ops"},
    {"id": "m2", "text": "deploys are frozen in december", "tier": "important", "folder": "ops"},
    {"id": "m3", "text": "never commit secrets to the repo", "tier": "constitutional"},
    {"id": "m4", "text": "the cafe opens at nine", "tier": "normal", "folder": "misc"},
    {"id": "m5", "text": "release notes live in the wiki", "tier": "normal", "folder": "docs"},
    {"id": "m6", "text": "ship releases after review", "tier": "critical", "folder": "ops"},
]
QUERIES = [
    {"id": "q1", "text": "when do deploys go out", "category": "semantic-search"},
    {"id": "q2", "text": "deploys frozen", "category": "semantic-search"},
    {"id": "q3", "text": "commit secrets", "category": "trigger-match"},
    {"id": "q4", "text": "coffee shop hours", "category": "trigger-match"},
    {"id": "q5", "text": "release ship", "category": "edge-case"},
    # judged, but nothing relevant: the --no-relevant convention decides what it scores
    {"id": "q6", "text": "holiday party", "category": "edge-case"},
]
JUDGMENTS = [
    {"query_id": "q1", "memory_id": "m1", "grade": 3, "source_channels": ["lexical", "dense"]},
    {"query_id": "q1", "memory_id": "m2", "grade": 1},
    {"query_id": "q2", "memory_id": "m2", "grade": 3, "sourceChannels": ["lexical"]},
    {"query_id": "q3", "memory_id": "m3", "grade": 3, "sourceChannels": ["graph"]},
    {"query_id": "q4", "memory_id": "m4", "grade": 2},
    {"query_id": "q5", "memory_id": "m6", "grade": 3, "sourceChannels": ["dense"]},
    {"query_id": "q5", "memory_id": "m5", "grade": 2},
    {"query_id": "q6", "memory_id": "m4", "grade": 0},
]


@pytest.fixture
def dataset(tmp_path: Path) -> Path:
    path = tmp_path / "tiny.yaml"
    path.write_text(
        yaml.safe_dump(
            {"name": "tiny", "memories": MEMORIES, "queries": QUERIES, "judgments": JUDGMENTS}
        )
    )
    return path


def _evaluate(tmp_path: Path, dataset: Path, *args: str) -> tuple[dict[str, Any], str, str]:
    out = tmp_path / "report"
    code = main(
        [
            "evaluate",
            str(dataset),
            "--out",
            str(out),
            "--no-store",
            "--quiet",
            "--resamples",
            "200",
            *args,
        ]
    )
    assert code in (0, None)
    result = json.loads((out / "result.json").read_text())
    return result, (out / "summary.md").read_text(), (out / "report.html").read_text()


MEASURES_5 = ("RR@5", "Recall@5", "nDCG@5")


def _against_lexical(
    tmp_path: Path, dataset: Path, python_subject: str
) -> tuple[dict[str, Any], str, str]:
    """The lexical reference memory, then a `python:` subject from tests/data/subjects."""
    measures = [a for m in MEASURES_5 for a in ("-m", m)]
    return _evaluate(
        tmp_path, dataset, "-s", "lexical", "-s", f"python:{python_subject}", *measures
    )


def _system(result: dict[str, Any], name: str) -> dict[str, Any]:
    return next(s for s in result["systems"] if s["name"] == name)


def _query(system: dict[str, Any], qid: str) -> dict[str, Any]:
    return next(q for q in system["per_query"] if q["query_id"] == qid)


@pytest.mark.parametrize(("mode", "recall", "rr"), [("zero", 0.0, 0.0), ("one", 1.0, 0.0)])
def test_evaluate_no_relevant_modes_score_the_query_and_say_so(
    tmp_path: Path,
    dataset: Path,
    capsys: pytest.CaptureFixture[str],
    mode: str,
    recall: float,
    rr: float,
) -> None:
    result, md, html = _evaluate(
        tmp_path, dataset, "-s", "lexical", "-m", "Recall@5", "-m", "RR@5", "--no-relevant", mode
    )
    terminal = capsys.readouterr().out
    lexical = _system(result, "lexical")
    assert _query(lexical, "q6")["metrics"] == {"Recall@5": recall, "RR@5": rr}
    assert result["settings"]["no_relevant"] == mode
    for text in (terminal, md, html):
        assert f"no relevant document: {mode}" in text
    assert lexical["metrics"]["Recall@5"]["n_scored"] == 6


def test_evaluate_no_relevant_skip_leaves_the_query_out(tmp_path: Path, dataset: Path) -> None:
    result, md, _ = _evaluate(tmp_path, dataset, "-s", "lexical", "--no-relevant", "skip")
    lexical = _system(result, "lexical")
    assert lexical["metrics"]["Recall@10"]["n_scored"] == 5
    assert _query(lexical, "q6")["metrics"]["Recall@10"] is None
    assert lexical["counts"]["n_no_relevant"] == 1
    assert "left out of the means" in md


def test_default_is_zero_and_the_suite_of_a_default_run_is_unchanged(
    tmp_path: Path, dataset: Path
) -> None:
    from memgauge.runs.kinds.retrieval import evaluate_suite

    suite = evaluate_suite(dataset, [("lexical", {"reference": {"mode": "lexical"}})])
    ir = suite.tasks[0].aggregates[0]
    assert "no_relevant" not in json.dumps(
        ir.model_dump(mode="json") if hasattr(ir, "model_dump") else ir
    )
    result, _, _ = _evaluate(tmp_path, dataset, "-s", "lexical", "-m", "Recall@5")
    assert result["settings"]["no_relevant"] == "zero"
    assert _query(_system(result, "lexical"), "q6")["metrics"]["Recall@5"] == 0.0


@pytest.mark.parametrize("mode", ["one", "skip"])
def test_a_suite_file_reaches_no_relevant_through_run(
    tmp_path: Path, dataset: Path, mode: str
) -> None:
    """Set on the evaluator alone, or on both: the evaluator's verdict and the ir aggregate's
    value of q6 (nothing relevant) are one value; a skip is no failure."""
    for given in ({}, {"no_relevant": mode}):
        task = {
            "name": "retrieval",
            "kind": "retrieval",
            "dataset": str(dataset),
            "k": 5,
            "evaluators": [{"retrieval": {"measure": "Recall@5", "no_relevant": mode}}],
            "aggregates": [{"ir": {"measures": ["Recall@5"], **given}}],
        }
        suite = tmp_path / "suite.yaml"
        suite.write_text(
            yaml.safe_dump(
                {
                    "name": "s",
                    "subjects": {"lexical": {"reference": {"mode": "lexical"}}},
                    "tasks": [task],
                }
            )
        )
        db = str(tmp_path / "r.db")
        assert main(["run", str(suite), "--store", db, "--no-progress"]) == 0
        report = api.run_suite(suite, store=False)
        ir = report.summary.aggregate("ir")
        assert ir is not None
        facts = ir.facts_as(IrFacts)
        assert facts is not None
        assert facts.settings.no_relevant == mode
        system = facts.systems[0].model_dump(mode="json")
        q6 = next(r for r in report.items if r.item_id == "q6")
        value = _query(system, "q6")["metrics"]["Recall@5"]
        assert value == (1.0 if mode == "one" else None)
        assert q6.scores[0].value == value
        # a skip is no failure: the run completed with nothing failed
        assert q6.status == "completed"
        assert not q6.failures


def test_tier_precision_is_reported_per_tier_in_every_report(
    tmp_path: Path, dataset: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    result, md, html = _evaluate(tmp_path, dataset, "-s", "lexical", "--agent-k", "2")
    terminal = capsys.readouterr().out
    lexical = _system(result, "lexical")
    agent = lexical["agent_metrics"]
    # recomputed by hand from the recorded top-2 hits: per tier, relevant hits / hits
    tiers = {m["id"]: m["tier"] for m in MEMORIES}
    grades = {(j["query_id"], j["memory_id"]): j["grade"] for j in JUDGMENTS}
    shown: dict[str, int] = {}
    good: dict[str, int] = {}
    for q in lexical["per_query"]:
        for d in q["hits"][:2]:
            shown[tiers[d]] = shown.get(tiers[d], 0) + 1
            good[tiers[d]] = good.get(tiers[d], 0) + (grades.get((q["query_id"], d), 0) >= 2)
    assert shown  # the lexical memory finds something
    for tier in ("constitutional", "critical", "important", "normal"):
        metric = agent[f"tier_precision[{tier}]@2"]
        assert metric["n"] == shown.get(tier, 0)
        assert metric["value"] == (good[tier] / shown[tier] if tier in shown else None)
        for text in (terminal, md, html):
            assert f"tier_precision[{tier}]@2" in text
    assert "tier_precision[temporary]@2" not in agent  # no temporary memory in the dataset
    assert "per_query" not in agent["tier_order_holds@2"]["detail"]


def test_source_channels_are_read_kept_and_attributed(tmp_path: Path, dataset: Path) -> None:
    result, md, html = _evaluate(tmp_path, dataset, "-s", "lexical", "--agent-k", "5")
    lexical = _system(result, "lexical")
    q1 = _query(lexical, "q1")
    assert q1["relevant_channels"] == {"m1": ["dense", "lexical"]}
    assert _query(lexical, "q5")["relevant_channels"] == {"m6": ["dense"]}
    agent = lexical["agent_metrics"]
    # dense: m1 (q1) and m6 (q5); lexical: m1 (q1), m2 (q2); graph: m3 (q3)
    for channel, pairs in {
        "dense": [("q1", "m1"), ("q5", "m6")],
        "lexical": [("q1", "m1"), ("q2", "m2")],
        "graph": [("q3", "m3")],
    }.items():
        per_query = [1.0 if m in _query(lexical, q)["hits"][:5] else 0.0 for q, m in pairs]
        metric = agent[f"channel_recall[{channel}]@5"]
        assert metric["value"] == pytest.approx(sum(per_query) / len(per_query))
        assert metric["n"] == len(pairs)
        assert metric["detail"]["share"] == pytest.approx(len(pairs) / 4)
        assert f"channel_recall[{channel}]@5" in md
        for (q, _), v in zip(pairs, per_query, strict=True):
            assert _query(lexical, q)["agent_metrics"][f"channel_recall[{channel}]@5"] == v
    assert "Channels that produced the judged memories" in html


def test_per_query_agent_metrics_average_to_the_run_level_ones(
    tmp_path: Path, dataset: Path
) -> None:
    result, _, html = _evaluate(tmp_path, dataset, "-s", "lexical")
    # the per-query view: each item's page in report.html shows its own values
    assert html.count("Agent-memory metrics of this query") == len(QUERIES)
    lexical = _system(result, "lexical")
    for name in ("importance_weighted_recall@5", "iw_recall_critical@5", "folder_ils@5"):
        values = [
            q["agent_metrics"][name] for q in lexical["per_query"] if name in q["agent_metrics"]
        ]
        metric = lexical["agent_metrics"][name]
        assert len(values) == metric["n"] > 0, name
        assert sum(values) / len(values) == pytest.approx(metric["value"]), name
    surfacing = [q["agent_metrics"]["constitutional_surfacing@5"] for q in lexical["per_query"]]
    assert (
        sum(surfacing) / len(surfacing)
        == lexical["agent_metrics"]["constitutional_surfacing@5"]["value"]
    )
    # q6's only judgment is grade 0: importance-weighted recall does not apply to it
    assert "importance_weighted_recall@5" not in _query(lexical, "q6")["agent_metrics"]


def test_paired_tests_per_category_match_the_overall_procedure_on_each_category(
    tmp_path: Path,
    dataset: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from memgauge.stats import compare_many

    monkeypatch.syspath_prepend(str(SUBJECTS))
    result, md, html = _against_lexical(tmp_path, dataset, "keyword_memory:KeywordMemory@kw")
    terminal = capsys.readouterr().out
    (comp,) = result["comparisons"]
    categories = {q["id"]: q["category"] for q in QUERIES}
    assert set(comp["by_category"]) == set(categories.values())
    base, cand = _system(result, "lexical"), _system(result, "kw")
    for group, rows in comp["by_category"].items():
        qids = sorted(q for q, c in categories.items() if c == group)
        a = {m: [_query(base, q)["metrics"][m] for q in qids] for m in MEASURES_5}
        b = {m: [_query(cand, q)["metrics"][m] for q in qids] for m in a}
        expected = compare_many(a, b, seed=0, n_resamples=200)
        assert [r["measure"] for r in rows] == list(a)
        for row in rows:
            want = expected[row["measure"]]
            assert row["n"] == len(qids)
            assert row["delta"] == pytest.approx(want.delta)
            assert row["p_holm"] == want.p_holm  # Holm across the category's measures
            assert row["mark"] == want.mark
    assert "Paired comparisons of RR@5 by category" in html
    by_category = md.split("## Paired comparisons of RR@5 by category", 1)[1]
    assert by_category.split("\n\n", 2)[1].startswith("against lexical")
    assert "RR@5 by category" in terminal


def test_query_expansion_impact_compares_before_and_after_with_a_paired_ci(
    tmp_path: Path,
    dataset: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from memgauge.metrics import evaluate_ranked
    from memgauge.stats import compare_many

    monkeypatch.syspath_prepend(str(SUBJECTS))
    measures = MEASURES_5
    result, md, html = _against_lexical(
        tmp_path, dataset, "expanding_memory:ExpandingMemory@expanding"
    )
    terminal = capsys.readouterr().out
    assert _system(result, "lexical")["expansion"] is None  # it reports no pre-expansion ranking
    system = _system(result, "expanding")
    impact = system["expansion"]
    assert impact["n_queries"] == len(QUERIES)
    qrels: dict[str, dict[str, int]] = {}
    for j in JUDGMENTS:
        qrels.setdefault(j["query_id"], {})[j["memory_id"]] = j["grade"]
    pre = {q["query_id"]: q["pre_expansion"] for q in system["per_query"]}
    post = {q["query_id"]: q["hits"] for q in system["per_query"]}
    assert pre != post  # the synonyms change some rankings
    before = evaluate_ranked(qrels, pre, measures)
    after = evaluate_ranked(qrels, post, measures)
    expected = compare_many(before.per_query, after.per_query, seed=0, n_resamples=200)
    for row in impact["metrics"]:
        want = expected[row["measure"]]
        assert row["mean_a"] == pytest.approx(want.mean_a)
        assert row["mean_b"] == pytest.approx(want.mean_b)
        assert (row["ci_low"], row["ci_high"]) == pytest.approx(
            (want.delta_ci_low, want.delta_ci_high)
        )
        assert row["p_holm"] == want.p_holm
    new = [sum(d not in set(pre[q]) for d in post[q]) / len(post[q]) for q in post if post[q]]
    assert impact["new_hit_share"] == pytest.approx(sum(new) / len(new))
    assert impact["new_relevant"] == sum(
        1 for q in post for d in set(post[q]) - set(pre[q]) if qrels.get(q, {}).get(d, -1) >= 2
    )
    assert impact["new_relevant"] > 0
    for text in (terminal, md, html):
        assert "xpansion impact" in text
    assert html.count("Before query expansion") == len(QUERIES)  # each query's own view


def test_a_malformed_pre_expansion_is_the_search_s_failure_not_a_crash(
    tmp_path: Path, dataset: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.syspath_prepend(str(SUBJECTS))
    out = tmp_path / "report"
    code = main(
        [
            "evaluate",
            str(dataset),
            "-s",
            "python:expanding_memory:BadExpansion@bad",
            "--out",
            str(out),
            "--no-store",
            "--quiet",
        ]
    )
    assert code == 4  # every search failed: a dead system, as any other subject error


def test_judgment_channels_change_a_dataset_s_hash_only_when_some_are_named() -> None:
    import hashlib

    from memgauge.aggregates.ir import dataset_sha256
    from memgauge.data.models import RetrievalDataset

    plain = [{k: v for k, v in j.items() if "hannels" not in k} for j in JUDGMENTS]
    ds = RetrievalDataset.model_validate(
        {"memories": MEMORIES, "queries": QUERIES, "judgments": plain}
    )
    # hashed as before judgments had channels: the dump without the field (and without the
    # fields added since, `synthetic`, which a dataset that is not synthetic does not hash)
    assert (
        dataset_sha256(ds)
        == hashlib.sha256(
            ds.model_dump_json(
                exclude={
                    "protocol": True,
                    "synthetic": True,
                    "judgments": {"__all__": {"source_channels"}},
                }
            ).encode()
        ).hexdigest()
    )
    named = RetrievalDataset.model_validate(
        {"memories": MEMORIES, "queries": QUERIES, "judgments": JUDGMENTS}
    )
    assert dataset_sha256(named) != dataset_sha256(ds)
