"""The agent-memory metrics of one system's searches, as report-ready `AgentMetric`s, and each
query's own values of the metrics that have one (`AgentMetrics.per_query`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from memgauge.aggregates.hits import Found
from memgauge.aggregates.retrieval_result import AgentMetric
from memgauge.data.models import EvalQuery, RetrievalDataset
from memgauge.metrics import agent
from memgauge.metrics.agent import AgentValue
from memgauge.metrics.ir import MetricConfig, evaluate_ranked
from memgauge.stats.proportion import wilson_ci

__all__ = ["AgentMetrics", "agent_metrics_for", "is_cold_start"]

#: Tiers whose precision is reported one by one (seed 002 3.3: critical > important > normal).
PRECISION_TIERS: tuple[str, ...] = (
    "constitutional",
    "critical",
    "important",
    "normal",
    "temporary",
)


@dataclass
class AgentMetrics:
    """The run-level metrics, and per query `{query_id: {metric: value}}` for the metrics
    whose value is a mean over queries (or, for tier precision, a per-query share)."""

    metrics: dict[str, AgentMetric] = field(default_factory=dict)
    per_query: dict[str, dict[str, float]] = field(default_factory=dict)

    def add_per_query(self, name: str, values: Mapping[str, float]) -> None:
        """Record each query's value of `name`."""
        for q, v in values.items():
            self.per_query.setdefault(q, {})[name] = v


def is_cold_start(q: EvalQuery) -> bool:
    """Seed 002: the first query of a new session. Category `cold-start`, or a session context
    at turn 0 with empty working memory."""
    if q.category == "cold-start":
        return True
    ctx = q.session_context
    return ctx is not None and ctx.turn_number == 0 and not ctx.working_memory_ids


def _metric(
    v: AgentValue,
    target: str | None = None,
    meets: bool | None = None,
    note: str | None = None,
    **detail: object,
) -> AgentMetric:
    return AgentMetric(
        value=v.value,
        n=v.n,
        target=target,
        meets_target=meets if v.value is not None else None,
        note=note or v.note,
        detail={**v.detail, **detail},
    )


def agent_metrics_for(
    dataset: RetrievalDataset,
    all_qrels: Mapping[str, Mapping[str, int]],
    queries: Sequence[EvalQuery],
    results: Mapping[str, Found],
    without_session: Mapping[str, Sequence[str]],
    k: int,
    threshold: int,
    attributed: Mapping[str, Mapping[str, Sequence[str]]] | None = None,
    rr: Mapping[str, float] | None = None,
) -> AgentMetrics:
    """Every agent-memory metric at cutoff `k` for the searched `queries`, with the per-query
    values of those that have them. `attributed`: the judgments' `sourceChannels`
    (`RetrievalDataset.source_channels`), for channel-attributed recall. `rr`: RR@k of each
    searched query, by query id in sorted order, where the caller has computed it with these
    qrels, this threshold and `no_relevant: zero` (the ir aggregate's own values of the
    measure); computed here otherwise."""
    qids = [q.id for q in queries if q.id in results]
    ranked = {q: results[q].ids for q in qids}
    qrels = {q: dict(v) for q, v in all_qrels.items() if q in ranked}
    tiers = {m.id: m.tier for m in dataset.memories}
    folders = {m.id: m.folder for m in dataset.memories}
    constitutional = {m.id for m in dataset.memories if m.tier == "constitutional"}
    rr_measure = f"RR@{k}"
    cfg = MetricConfig(rel_threshold=threshold)
    if rr is None:
        ev = evaluate_ranked(qrels, ranked, [rr_measure], cfg)
        rr = dict(zip(ev.query_ids, ev.per_query[rr_measure].tolist(), strict=True))
    result = AgentMetrics()
    out = result.metrics

    v = agent.constitutional_surfacing(ranked, constitutional, k)
    out[f"constitutional_surfacing@{k}"] = _metric(v, "= 1.00", v.value == 1.0)
    # a search's own term of the rate: all constitutional memories in its top k, or not
    result.add_per_query(
        f"constitutional_surfacing@{k}",
        {q: 1.0 if f == 1.0 else 0.0 for q, f in v.per_query.items()},
    )
    v = agent.importance_weighted_recall(ranked, qrels, tiers, k, threshold)
    out[f"importance_weighted_recall@{k}"] = _metric(v)
    result.add_per_query(f"importance_weighted_recall@{k}", v.per_query)
    v = agent.importance_weighted_recall(
        ranked, qrels, tiers, k, threshold, {"critical", "constitutional"}
    )
    out[f"iw_recall_critical@{k}"] = _metric(v, "> 0.90", (v.value or 0) > 0.90)
    result.add_per_query(f"iw_recall_critical@{k}", v.per_query)
    cold = {q.id for q in queries if is_cold_start(q)}
    v = agent.cold_warm_mrr(rr, cold)
    out[f"cold_start_mrr_ratio@{k}"] = _metric(v, ">= 0.70", (v.value or 0) >= 0.70)
    v = agent.causal_chain_completeness(ranked, dataset.causal_chains, k)
    out[f"causal_chain_completeness@{k}"] = _metric(v, "> 0.60", (v.value or 0) > 0.60)
    chains: dict[str, list[float]] = {}
    for key, value in v.per_query.items():  # keys are `chain|query`
        chains.setdefault(key.split("|", 1)[1], []).append(value)
    result.add_per_query(
        f"causal_chain_completeness@{k}", {q: sum(x) / len(x) for q, x in chains.items()}
    )
    v = agent.tier_stratified_precision(ranked, qrels, tiers, k, threshold)
    _tier_precision(result, v, k, set(tiers.values()))
    v = agent.folder_ils(ranked, folders, k)
    out[f"folder_ils@{k}"] = _metric(v)
    result.add_per_query(f"folder_ils@{k}", v.per_query)
    # both read the top k only
    channels = {q: results[q].channels[:k] for q in qids}
    v = agent.channel_contribution(channels, k)
    for kind in ("contribution", "unique"):
        for channel, rate in v.detail.get(kind, {}).items():
            name = "channel_contribution" if kind == "contribution" else "unique_contribution"
            out[f"{name}[{channel}]@{k}"] = AgentMetric(
                value=rate,
                n=v.n,
                note=f"share of top-{k} hits {'found' if kind == 'contribution' else 'found only'}"
                f" by the {channel} channel",
            )
    if not v.n:
        out[f"channel_contribution@{k}"] = _metric(v)
    # the hits' own channel ranks, read, not copied (15,000 of a LoCoMo run); a recorded
    # form other than a mapping made one as before
    ranks = {q: [_ranks_of(h.get("channel_ranks")) for h in results[q].hits[:k]] for q in qids}
    v = agent.fusion_reorder_rate(ranks, k)
    out[f"fusion_reorder_rate@{k}"] = _metric(v)
    for channel, cv in agent.channel_attributed_recall(
        ranked, qrels, attributed or {}, k, threshold
    ).items():
        name = f"channel_recall[{channel}]@{k}"
        out[name] = _metric(
            cv,
            note=f"Recall@{k} of the relevant memories whose judgment names the {channel} channel "
            f"(sourceChannels; {cv.detail['share']:.0%} of the attributed relevant memories)",
        )
        result.add_per_query(name, cv.per_query)
    v = agent.equivalence_recall(ranked, qrels, dataset.equivalence_classes, k, threshold)
    out[f"equivalence_recall@{k}"] = _metric(v)
    result.add_per_query(f"equivalence_recall@{k}", v.per_query)
    if without_session:
        ev_wo = evaluate_ranked(
            {q: qrels[q] for q in without_session if q in qrels}, without_session, [rr_measure], cfg
        )
        rr_wo = dict(zip(ev_wo.query_ids, ev_wo.per_query[rr_measure].tolist(), strict=True))
    else:
        rr_wo = {}
    v = agent.personalization_lift({q: rr[q] for q in rr_wo}, rr_wo)
    out[f"session_personalization_lift@{k}"] = _metric(v, "> 0", (v.value or 0) > 0)
    result.add_per_query(f"session_personalization_lift@{k}", v.per_query)
    sessions: dict[str, list[tuple[list[str], dict[str, str], list[str]]]] = {}
    texts: dict[str, str] | None = None
    for q in queries:
        if q.session_context is not None and q.id in results:
            if texts is None:
                texts = {m.id: m.text for m in dataset.memories}
            found = results[q.id]
            ids = found.ids[:k]
            # a hit recorded without its text had the dataset's text
            shown = {
                i: str(h["text"]) if "text" in h else texts.get(i, "")
                for i, h in zip(ids, found.hits, strict=False)
            }
            # what the system's own dedup filtered out (its text, else the dataset's)
            filtered = [
                str(h.get("text") or texts.get(str(h.get("id")), "")) for h in found.filtered or ()
            ]
            sessions.setdefault(q.session_context.session_id, []).append((ids, shown, filtered))
    out[f"dedup_token_savings@{k}"] = _metric(agent.dedup_token_savings(sessions))
    return result


def _ranks_of(ranks: Any) -> Mapping[str, int]:
    """A hit's recorded channel ranks as `fusion_reorder_rate` reads them."""
    return ranks if type(ranks) is dict else dict(ranks or {})


def _tier_precision(result: AgentMetrics, v: AgentValue, k: int, present: set[str]) -> None:
    """Seed 002's tier-stratified precision, one metric per tier of the dataset
    (`tier_precision[critical]@5`; n/a for a tier no search returned), and whether the seed's
    order critical > important > normal holds (`tier_order_holds`)."""
    per_query: dict[str, dict[str, float]] = v.detail.get("per_query", {})
    detail = {key: value for key, value in v.detail.items() if key != "per_query"}
    result.metrics[f"tier_order_holds@{k}"] = AgentMetric(
        value=v.value,
        n=v.n,
        target="critical > important > normal",
        meets_target=(v.value == 1.0) if v.value is not None else None,
        note=v.note,
        detail=detail,
    )
    precision: dict[str, float] = detail.get("precision", {})
    hits: dict[str, int] = detail.get("hits", {})
    relevant: dict[str, int] = detail.get("relevant", {})
    for tier in (t for t in PRECISION_TIERS if t in present):
        name = f"tier_precision[{tier}]@{k}"
        # a share of hits: the Wilson interval over them, each top-k hit one trial (the hits of
        # one search are not quite independent, so it is a little narrow where they cluster)
        ci = wilson_ci(relevant.get(tier, 0), hits.get(tier, 0))
        result.metrics[name] = AgentMetric(
            value=precision.get(tier),
            n=hits.get(tier, 0),
            ci_low=ci[0] if ci else None,
            ci_high=ci[1] if ci else None,
            note=f"share of the top-{k} hits of {tier} memories that are relevant"
            if tier in precision
            else f"no {tier} memory in any top {k}",
        )
        result.add_per_query(
            name, {q: by_tier[tier] for q, by_tier in per_query.items() if tier in by_tier}
        )
