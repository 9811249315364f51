"""Agent-memory metrics (seed 002 section 3), each checked on cases worked out by hand."""

from __future__ import annotations

import pytest

from memgauge.data.models import CausalChain, EquivalenceClass
from memgauge.metrics import agent

TIERS = {
    "c1": "constitutional",
    "c2": "constitutional",
    "k1": "critical",
    "i1": "important",
    "n1": "normal",
    "n2": "normal",
    "t1": "temporary",
}


def test_constitutional_surfacing_needs_all_of_them_in_top_k() -> None:
    ranked = {"q1": ["c1", "c2", "n1"], "q2": ["c1", "n1", "c2"], "q3": ["n1"]}
    v = agent.constitutional_surfacing(ranked, {"c1", "c2"}, k=2)
    assert v.value == pytest.approx(1 / 3)  # only q1 has both in its top 2
    assert v.n == 3
    assert v.per_query == {"q1": 1.0, "q2": 0.5, "q3": 0.0}
    assert v.detail["mean_fraction"] == pytest.approx(0.5)


def test_constitutional_surfacing_is_na_without_constitutional_memories() -> None:
    v = agent.constitutional_surfacing({"q": ["a"]}, set(), 5)
    assert v.value is None
    assert v.n == 0
    assert v.note == "no constitutional memories"


def test_importance_weighted_recall_uses_the_seed_weights() -> None:
    qrels = {"q": {"c1": 3, "k1": 2, "n1": 2, "t1": 2, "i1": 1}}
    ranked = {"q": ["k1", "t1", "x", "c1"]}
    # relevant (>= 2): c1 (4), k1 (3), n1 (1), t1 (0.5) -> total 8.5; found in top 3: k1, t1
    v = agent.importance_weighted_recall(ranked, qrels, TIERS, k=3)
    assert v.value == pytest.approx(3.5 / 8.5)
    crit = agent.importance_weighted_recall(
        ranked, qrels, TIERS, k=3, only_tiers={"critical", "constitutional"}
    )
    assert crit.value == pytest.approx(3 / 7)  # c1 (4) + k1 (3); found k1


def test_importance_weighted_recall_skips_queries_without_relevant_memories() -> None:
    v = agent.importance_weighted_recall({"q": ["a"]}, {"q": {"a": 1}}, TIERS, 5)
    assert v.value is None
    assert v.n == 0


def test_cold_warm_ratio() -> None:
    rr = {"cold1": 0.5, "cold2": 0.25, "warm1": 1.0, "warm2": 0.5}
    v = agent.cold_warm_mrr(rr, {"cold1", "cold2"})
    assert v.value == pytest.approx(0.375 / 0.75)
    assert v.detail == {"cold_mrr": 0.375, "warm_mrr": 0.75, "n_cold": 2, "n_warm": 2}
    assert agent.cold_warm_mrr({"w": 1.0}, set()).value is None
    assert agent.cold_warm_mrr({"c": 1.0, "w": 0.0}, {"c"}).value is None  # undefined ratio


def test_causal_chain_completeness_per_chain_and_query() -> None:
    chains = [
        CausalChain(id="ch1", memory_ids=["a", "b", "c"], query_ids=["q1", "q2"]),
        CausalChain(id="ch2", memory_ids=["d", "e"], query_ids=["q1"]),
    ]
    ranked = {"q1": ["a", "d", "b", "x"], "q2": ["c"]}
    v = agent.causal_chain_completeness(ranked, chains, k=3)
    # ch1|q1: a, b -> 2/3; ch1|q2: c -> 1/3; ch2|q1: d -> 1/2
    assert v.per_query == pytest.approx({"ch1|q1": 2 / 3, "ch1|q2": 1 / 3, "ch2|q1": 0.5})
    assert v.value == pytest.approx((2 / 3 + 1 / 3 + 0.5) / 3)


def test_tier_stratified_precision_and_the_expected_order() -> None:
    qrels = {"q": {"k1": 3, "i1": 2, "n1": 0, "n2": 2}}
    ranked = {"q": ["k1", "i1", "n1", "n2"]}
    v = agent.tier_stratified_precision(ranked, qrels, TIERS, k=4)
    assert v.detail["precision"] == {"critical": 1.0, "important": 1.0, "normal": 0.5}
    assert v.value == 0.0  # critical > important does not hold strictly
    ranked2 = {"q": ["k1", "n1", "n2"]}
    assert agent.tier_stratified_precision(ranked2, qrels, TIERS, 3).value is None  # no important


def test_tier_order_holds_counts_the_hits_its_verdict_rests_on_and_says_so() -> None:
    """The demo printed n=139 for 37 queries beside a definition that named no unit: the
    verdict is over pooled hits, so n is hits, and only those of the three ordered tiers."""
    tiers = {**TIERS, "c1": "constitutional", "t1": "temporary"}
    qrels = {"q": {"k1": 3, "i1": 2}, "r": {"n1": 2}}
    ranked = {"q": ["k1", "i1", "c1", "n1"], "r": ["n1", "t1", "n2"]}
    v = agent.tier_stratified_precision(ranked, qrels, tiers, k=4)
    assert v.detail["hits"]["constitutional"] == 1
    assert v.n == 5  # k1, i1, n1 of q and n1, n2 of r: not 7 hits, nor 2 queries
    assert "n counts those hits, not queries" in agent.AGENT_METRIC_DEFINITIONS["tier_order_holds"]


def test_tier_order_holds_n_a_says_which_tiers_had_no_hits() -> None:
    """A run whose hits held one ordered tier read `n/a (15 scored)` with the note "a tier had
    no hits": n (the hits, as README defines it) stands; the note names the missing tiers and
    what the hits were, so the n/a reads as nothing to order, not a failure."""
    qrels = {"q": {"k1": 3}, "r": {"k1": 3}}
    ranked = {"q": ["k1", "c1"], "r": ["k1"]}
    v = agent.tier_stratified_precision(ranked, qrels, TIERS, k=5)
    assert (v.value, v.n) == (None, 2)
    assert v.note == (
        "no important or normal memory in any top 5: nothing to order (its 2 hits: critical 2)"
    )


def test_folder_ils() -> None:
    folders = {"a": "billing", "b": "billing", "c": "auth", "d": None}
    v = agent.folder_ils({"q1": ["a", "b", "c"], "q2": ["d"], "q3": []}, folders, k=3)
    assert v.per_query == pytest.approx({"q1": 1 - 2 / 3})
    assert v.n == 1  # an empty result, and one without a folder, are not applicable


def test_folder_ils_is_na_with_the_reason_on_data_without_folders() -> None:
    """Issue 29: every hit its own folder read as a perfect 0.000; it is n/a, saying why."""
    ranked = {"q1": ["a", "b"], "q2": ["c"]}
    v = agent.folder_ils(ranked, {"a": None, "b": None, "c": None}, k=3)
    assert (v.value, v.n, v.per_query) == (None, 0, {})
    assert v.note == "no memory in the dataset has a folder"
    v = agent.folder_ils(ranked, {"a": None, "b": None, "c": None, "z": "auth"}, k=3)
    assert (v.value, v.n) == (None, 0)
    assert v.note == "no search returned a memory with a folder"


def test_channel_contribution_and_unique_contribution() -> None:
    hits = {
        "q1": [["lexical", "dense"], ["dense"], ["lexical"]],
        "q2": [["dense"]],
    }
    v = agent.channel_contribution(hits, k=5)
    assert v.n == 4
    assert v.detail["contribution"] == {"dense": 0.75, "lexical": 0.5}
    assert v.detail["unique"] == {"dense": 0.5, "lexical": 0.25}
    assert agent.channel_contribution({}, 5).value is None


def test_fusion_reorder_rate() -> None:
    ranks = {"q": [{"lexical": 1, "dense": 3}, {"dense": 1}, {"lexical": 3}]}
    v = agent.fusion_reorder_rate(ranks, k=3)
    # rank 1 from best channel rank 1: same; rank 2 from 1: moved; rank 3 from 3: same
    assert v.value == pytest.approx(1 / 3)
    assert agent.fusion_reorder_rate({"q": [{}, {}]}, 2).value is None


def test_equivalence_recall_counts_any_member() -> None:
    classes = [EquivalenceClass(id="e", memory_ids=["a", "a2"])]
    qrels = {"q": {"a": 3, "b": 2}}
    v = agent.equivalence_recall({"q": ["a2", "x"]}, qrels, classes, k=2)
    assert v.value == 0.5  # a found through a2, b missing
    assert v.detail["hit_rate"] == 1.0


def test_personalization_lift_over_common_queries() -> None:
    v = agent.personalization_lift({"q1": 1.0, "q2": 0.5, "q3": 1.0}, {"q1": 0.5, "q2": 0.5})
    assert v.value == pytest.approx(0.25)
    assert v.n == 2
    assert agent.personalization_lift({"q": 1.0}, {}).value is None


def test_dedup_token_savings_counts_repeats_within_a_session() -> None:
    sessions = {
        "s1": [
            (["a", "b"], {"a": "one two three", "b": "four"}),
            (["a", "c"], {"a": "one two three", "c": "five six"}),
        ],
        "s2": [(["a"], {"a": "one two three"})],
    }
    v = agent.dedup_token_savings(sessions)
    # tokens: s1 3+1+3+2 = 9, s2 3 -> 12 total; saved: a again in s1 -> 3
    assert v.detail == {"tokens_total": 12, "tokens_saved": 3, "tokens_filtered": 0}
    assert v.value == pytest.approx(3 / 12)
    assert agent.dedup_token_savings({}).value is None
    # a system that dedups returns no repeat and reports what it filtered: that is its saving
    deduped = {
        "s1": [
            (["a", "b"], {"a": "one two three", "b": "four"}, []),
            (["c"], {"c": "five six"}, ["one two three"]),
        ]
    }
    v = agent.dedup_token_savings(deduped)
    assert v.detail == {"tokens_total": 9, "tokens_saved": 3, "tokens_filtered": 3}
    assert v.value == pytest.approx(3 / 9)


def test_pooling_grades_unjudged_hits_and_counts_them() -> None:
    qrels = {"q": {"a": 3}, "r": {"b": 2}}
    runs = [{"q": ["a", "x", "y"]}, {"q": ["z"], "unjudged": ["w"]}]
    pooled, added = agent.pool_qrels(qrels, runs, depth=2, unjudged_grade=1)
    assert pooled["q"] == {"a": 3, "x": 1, "z": 1}
    assert pooled["r"] == {"b": 2}
    assert "unjudged" not in pooled
    assert added == 2
    assert qrels["q"] == {"a": 3}  # the input is not modified


def test_channel_attributed_recall_per_channel_from_judgment_channels() -> None:
    from memgauge.metrics.agent import channel_attributed_recall

    ranked = {"q1": ["a", "x", "b"], "q2": ["y", "c"]}
    qrels = {"q1": {"a": 3, "b": 2, "z": 1}, "q2": {"c": 2, "d": 3}}
    attributed = {
        "q1": {"a": ["vector"], "b": ["fts5", "vector"], "z": ["graph"]},  # z: below threshold
        "q2": {"c": ["fts5"], "d": ["vector"]},
    }
    got = channel_attributed_recall(ranked, qrels, attributed, k=2, threshold=2)
    assert set(got) == {"vector", "fts5"}  # graph named only a non-relevant memory
    # vector: q1 {a, b} -> a in top 2 (1/2); q2 {d} -> 0
    assert got["vector"].per_query == {"q1": 0.5, "q2": 0.0}
    assert got["vector"].value == 0.25
    # fts5: q1 {b} -> b at rank 3, outside k=2 (0); q2 {c} at rank 2 (1)
    assert got["fts5"].per_query == {"q1": 0.0, "q2": 1.0}
    assert got["vector"].detail["share"] == 3 / 4  # a, b, d of the 4 attributed relevant ones
    assert got["fts5"].detail["share"] == 2 / 4
    assert channel_attributed_recall(ranked, qrels, {}, k=2) == {}


def test_tier_stratified_precision_keeps_each_search_s_own_precision() -> None:
    from memgauge.metrics.agent import tier_stratified_precision

    tiers = {"a": "critical", "b": "critical", "c": "normal"}
    ranked = {"q1": ["a", "c"], "q2": ["b", "c"]}
    qrels = {"q1": {"a": 3, "c": 2}, "q2": {"b": 0}}
    v = tier_stratified_precision(ranked, qrels, tiers, k=2)
    assert v.detail["precision"] == {"critical": 0.5, "normal": 0.5}
    assert v.detail["per_query"] == {
        "q1": {"critical": 1.0, "normal": 1.0},
        "q2": {"critical": 0.0, "normal": 0.0},
    }


def test_every_agent_metric_has_one_one_line_definition() -> None:
    """Issue 29: every report states each agent-memory metric's definition, from one dict."""
    import json
    import re
    from pathlib import Path

    golden = Path(__file__).resolve().parents[1] / "golden" / "evaluate_demo.json"
    names = {
        m.group(1)
        for key in json.loads(golden.read_text())
        if (m := re.match(r"systems\..+\.agent_metrics\.(.+@\d+)\.value$", key))
    }
    # the families the demo does not produce (no sourceChannels, one tier per hit list)
    names |= {"tier_precision[critical]@5", "channel_recall[dense]@10", "channel_contribution@5"}
    assert len(names) >= 15
    for name in names:
        text = agent.agent_metric_definition(name)
        assert text is not None, name
        assert "\n" not in text, name
        assert len(text) <= 160, name
    bases = {n.split("@")[0].split("[")[0] for n in names}
    assert set(agent.AGENT_METRIC_DEFINITIONS) == bases
    assert agent.agent_metric_definition("nDCG@10") is None
    assert (
        agent.agent_metric_definition("folder_ils@5")
        == agent.AGENT_METRIC_DEFINITIONS["folder_ils"]
    )
