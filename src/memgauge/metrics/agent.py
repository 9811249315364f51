"""Agent-memory metrics (seed 002 sections 3.2-3.4) over ranked hit lists.

Every function returns an `AgentValue`: the value, how many searches / chains / pairs it rests
on, and per-query values where they exist. A metric with nothing to measure has value None and
n = 0 (reported as n/a), never 0.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from memgauge._util.listing import counted
from memgauge._util.numbers import fmean
from memgauge.data.models import IMPORTANCE_WEIGHTS, CausalChain, EquivalenceClass
from memgauge.metrics.conventions import DEFAULT_REL_THRESHOLD

__all__ = [
    "AGENT_METRIC_DEFINITIONS",
    "DEFAULT_AGENT_K",
    "AgentValue",
    "agent_metric_definition",
    "causal_chain_completeness",
    "channel_attributed_recall",
    "channel_contribution",
    "cold_warm_mrr",
    "constitutional_surfacing",
    "dedup_token_savings",
    "equivalence_recall",
    "folder_ils",
    "fusion_reorder_rate",
    "importance_weighted_recall",
    "personalization_lift",
    "pool_qrels",
    "tier_stratified_precision",
]

Ranked = Mapping[str, Sequence[str]]

#: the agent-memory metrics' cutoff unless one is given (`evaluate --agent-k`, a suite's `ir`
#: aggregate's `agent_k`): seed 002 states their targets at K = 5
DEFAULT_AGENT_K: Final = 5

#: Each agent-memory metric's one-line definition, by its base name (`folder_ils` for
#: `folder_ils@5`, `tier_precision` for `tier_precision[critical]@5`): what every report states
#: beside the metric (HTML, Markdown, terminal), so the text is written once. K is the cutoff
#: the name carries (`@5`).
AGENT_METRIC_DEFINITIONS: dict[str, str] = {
    "constitutional_surfacing": "share of searches whose top K holds every constitutional memory",
    "importance_weighted_recall": "Recall@K with each relevant memory weighted by its tier"
    " (constitutional 4, critical 3, important 2, normal 1, temporary 0.5)",
    "iw_recall_critical": "importance-weighted Recall@K over the relevant critical and"
    " constitutional memories only",
    "cold_start_mrr_ratio": "MRR of the cold-start queries (a session's first) divided by"
    " MRR of the warm ones",
    "causal_chain_completeness": "share of a causal chain's memories in the top K of a query it"
    " applies to, averaged over (chain, query) pairs",
    "tier_order_holds": "1 when the top-K precision of critical hits > important > normal, else 0;"
    " one verdict over every search's hits pooled, so n counts those hits, not queries",
    "tier_precision": "of the top-K hits from memories of this tier, the share judged relevant",
    "folder_ils": "result redundancy: 1 - distinct folders / hits in the top K, averaged over"
    " searches (0 = every hit from another folder; lower is more diverse)",
    "channel_contribution": "share of the top-K hits this retrieval channel found",
    "unique_contribution": "share of the top-K hits only this retrieval channel found",
    "channel_recall": "Recall@K of the relevant memories whose judgment names this channel"
    " (sourceChannels)",
    "fusion_reorder_rate": "share of the top-K hits whose final rank differs from their best"
    " rank in a single channel",
    "equivalence_recall": "Recall@K where a relevant memory counts as found when any memory of"
    " its equivalence class is in the top K",
    "session_personalization_lift": "MRR with the session context minus MRR without it, on the"
    " same queries",
    "dedup_token_savings": "share of the tokens session dedup saved: of the results the system's"
    " own dedup filtered out, else of the hits it returned again within the same session",
}


def agent_metric_definition(name: str) -> str | None:
    """The one-line definition of an agent-memory metric named as reports name it
    (`folder_ils@5`, `tier_precision[critical]@5`, `channel_recall[dense]@10`); None for a
    name that is not one."""
    return AGENT_METRIC_DEFINITIONS.get(name.split("@", 1)[0].split("[", 1)[0])


@dataclass(frozen=True)
class AgentValue:
    """A metric value (None = n/a), the count it rests on, per-query values and detail."""

    value: float | None
    n: int
    per_query: dict[str, float] = field(default_factory=dict)
    detail: dict[str, Any] = field(default_factory=dict)
    note: str | None = None


def _mean(values: Sequence[float]) -> float | None:
    return fmean(values) if len(values) else None


def _query_mean(per: dict[str, float], empty: str) -> AgentValue:
    """The mean of the per-query values `per`; n/a, saying `empty`, when no query has one."""
    return AgentValue(
        _mean(list(per.values())), len(per), per_query=per, note=None if per else empty
    )


def constitutional_surfacing(ranked: Ranked, constitutional: set[str], k: int) -> AgentValue:
    """Share of searches whose top-k holds ALL constitutional memories (seed target 100% at K=5).

    value = |{q : C ⊆ top_k(q)}| / |Q| with C the constitutional set; `detail["mean_fraction"]`
    = mean_q |C ∩ top_k(q)| / |C|. n/a when there is no constitutional memory or no search.
    """
    if not constitutional or not ranked:
        return AgentValue(
            None, 0, note="no constitutional memories" if not constitutional else "no searches"
        )
    fractions = {
        q: len(constitutional & set(ids[:k])) / len(constitutional) for q, ids in ranked.items()
    }
    allin = [1.0 if f == 1.0 else 0.0 for f in fractions.values()]
    return AgentValue(
        _mean(allin),
        len(allin),
        per_query=fractions,
        detail={
            "mean_fraction": _mean(list(fractions.values())),
            "n_constitutional": len(constitutional),
        },
    )


def importance_weighted_recall(
    ranked: Ranked,
    qrels: Mapping[str, Mapping[str, int]],
    tiers: Mapping[str, str],
    k: int,
    threshold: int = DEFAULT_REL_THRESHOLD,
    only_tiers: set[str] | None = None,
) -> AgentValue:
    """IW-Recall@k = sum_{d relevant, in top k} w(tier d) / sum_{d relevant} w(tier d).

    Weights constitutional 4, critical 3, important 2, normal 1, temporary 0.5 (seed 002 3.3).
    With `only_tiers`, only relevant memories of those tiers count (the seed's target > 0.90 is
    for critical + constitutional). Queries with no (such) relevant memory are not applicable.
    """
    per: dict[str, float] = {}
    for q, judged in qrels.items():
        rel = [
            d
            for d, g in judged.items()
            if g >= threshold and (only_tiers is None or tiers.get(d, "normal") in only_tiers)
        ]
        if not rel or q not in ranked:
            continue
        top = set(ranked[q][:k])
        total = sum(IMPORTANCE_WEIGHTS[tiers.get(d, "normal")] for d in rel)
        found = sum(IMPORTANCE_WEIGHTS[tiers.get(d, "normal")] for d in rel if d in top)
        per[q] = found / total
    return _query_mean(per, "no query has a relevant memory of these tiers")


def cold_warm_mrr(rr: Mapping[str, float], cold: set[str]) -> AgentValue:
    """Cold-start MRR / warm MRR (seed target >= 0.70); detail has both means and counts."""
    cold_v = [v for q, v in rr.items() if q in cold]
    warm_v = [v for q, v in rr.items() if q not in cold]
    c, w = _mean(cold_v), _mean(warm_v)
    detail = {"cold_mrr": c, "warm_mrr": w, "n_cold": len(cold_v), "n_warm": len(warm_v)}
    if c is None or w is None:
        return AgentValue(None, 0, detail=detail, note="needs both cold-start and warm queries")
    if w == 0:
        return AgentValue(None, len(rr), detail=detail, note="warm MRR is 0: ratio undefined")
    return AgentValue(c / w, len(rr), detail=detail)


def causal_chain_completeness(ranked: Ranked, chains: Sequence[CausalChain], k: int) -> AgentValue:
    """Mean over (chain, query) pairs of |chain ∩ top_k(query)| / |chain| (seed target > 0.60).

    A chain applies to its `query_ids`; a chain with none applies to no query (n/a).
    """
    per: dict[str, float] = {}
    for chain in chains:
        for q in chain.query_ids:
            if q in ranked:
                top = set(ranked[q][:k])
                per[f"{chain.id}|{q}"] = sum(m in top for m in chain.memory_ids) / len(
                    chain.memory_ids
                )
    return _query_mean(per, "no causal chain applies to a searched query")


def tier_stratified_precision(
    ranked: Ranked,
    qrels: Mapping[str, Mapping[str, int]],
    tiers: Mapping[str, str],
    k: int,
    threshold: int = DEFAULT_REL_THRESHOLD,
) -> AgentValue:
    """Per tier: of all top-k hits in that tier (over all searches), the share judged relevant.

    precision(t) = sum_q |{d in top_k(q) : tier d = t, d relevant}| / sum_q |{d in top_k(q) :
    tier d = t}| (micro over searches), in `detail["precision"]` with the hit counts in
    `detail["hits"]` and the relevant ones in `detail["relevant"]`; `detail["per_query"]` has
    each search's own precision per tier. The seed expects critical > important > normal;
    `value` is 1.0 when that holds, 0.0 when not, None when a tier has no hits; `n` is the
    hits it rests on, of those three tiers over every search (pooled hits, not queries).
    """
    shown: dict[str, int] = {}
    good: dict[str, int] = {}
    per_query: dict[str, dict[str, float]] = {}
    for q, ids in ranked.items():
        judged = qrels.get(q, {})
        q_shown: dict[str, int] = {}
        q_good: dict[str, int] = {}
        for d in ids[:k]:
            t = tiers.get(d, "normal")
            q_shown[t] = q_shown.get(t, 0) + 1
            # an unjudged hit is never relevant, even at threshold 0 (trec_eval -l0)
            q_good[t] = q_good.get(t, 0) + (d in judged and judged[d] >= threshold)
        for t, n in q_shown.items():
            shown[t] = shown.get(t, 0) + n
            good[t] = good.get(t, 0) + q_good[t]
        per_query[q] = {t: q_good[t] / n for t, n in q_shown.items()}
    precision = {t: good[t] / shown[t] for t in shown}
    ordered = ("critical", "important", "normal")
    n = sum(shown.get(t, 0) for t in ordered)
    missing = [t for t in ordered if t not in precision]
    holds = note = None
    if not missing:
        critical, important, normal = (precision[t] for t in ordered)
        holds = 1.0 if critical > important > normal else 0.0
    else:
        of = ", ".join(f"{t} {shown[t]}" for t in ordered if t in shown)
        tiers_named = " or ".join(
            [", ".join(missing[:-1]), missing[-1]] if missing[:-1] else missing
        )
        note = f"no {tiers_named} memory in any top {k}: nothing to order" + (
            f" (its {counted(n, 'hit')}: {of})" if of else ""
        )
    return AgentValue(
        holds,
        n,
        detail={"precision": precision, "hits": shown, "relevant": good, "per_query": per_query},
        note=note,
    )


def channel_attributed_recall(
    ranked: Ranked,
    qrels: Mapping[str, Mapping[str, int]],
    attributed: Mapping[str, Mapping[str, Sequence[str]]],
    k: int,
    threshold: int = DEFAULT_REL_THRESHOLD,
) -> dict[str, AgentValue]:
    """Seed 002's channel attribution from judgments (`sourceChannels`): per channel c,
    Recall@k over the relevant memories whose judgment says c produced them.

    value(c) = mean over queries q with such memories of |{d in A_c(q) : d in top_k(q)}| /
    |A_c(q)|, with A_c(q) the relevant memories of q (grade >= threshold) attributed to c.
    `detail["share"]`: of all relevant memories that name a channel, the share naming c (what
    each channel produced in production). Queries without attributed relevant memories are
    not applicable; a dataset with no `sourceChannels` gives no channel.
    """
    per: dict[str, dict[str, float]] = {}
    named: dict[str, int] = {}
    n_named = 0
    for q, by_memory in attributed.items():
        judged = qrels.get(q, {})
        rel = {d: chans for d, chans in by_memory.items() if judged.get(d, -1) >= threshold}
        if not rel or q not in ranked:
            continue
        top = set(ranked[q][:k])
        n_named += len(rel)
        for c in sorted({c for chans in rel.values() for c in chans}):
            mine = [d for d, chans in rel.items() if c in chans]
            named[c] = named.get(c, 0) + len(mine)
            per.setdefault(c, {})[q] = sum(d in top for d in mine) / len(mine)
    return {
        c: AgentValue(
            _mean(list(values.values())),
            len(values),
            per_query=values,
            detail={"share": named[c] / n_named, "n_relevant": named[c]},
        )
        for c, values in sorted(per.items())
    }


def folder_ils(ranked: Ranked, folders: Mapping[str, str | None], k: int) -> AgentValue:
    """Seed 002's result-diversity ILS: 1 - unique_folders / result_count per search, at k.

    0 = every hit from a different folder (most diverse); near 1 = all from one folder. A hit
    without a folder counts as a folder of its own. Searches with no hits, or none of whose
    hits has a folder, are not applicable (every hit its own folder would read as a perfect
    0): on data without folders the metric is n/a with that reason, never 0. (Ziegler et al.
    2005 define ILS by pairwise similarity; the seed uses folder overlap as the similarity.)
    """
    if not any(folders.values()):
        return AgentValue(None, 0, note="no memory in the dataset has a folder")
    per: dict[str, float] = {}
    for q, ids in ranked.items():
        top = ids[:k]
        if any(folders.get(d) for d in top):
            per[q] = 1.0 - len({folders.get(d) or f"?{d}" for d in top}) / len(top)
    return _query_mean(per, "no search returned a memory with a folder")


def channel_contribution(hit_channels: Mapping[str, Sequence[Sequence[str]]], k: int) -> AgentValue:
    """Per channel: share of final top-k hits it produced, and share only it produced.

    detail = {"contribution": {channel: rate}, "unique": {channel: rate}}; value = None (the
    metric is the breakdown). n = number of hits considered.
    """
    total = 0
    contrib: dict[str, int] = {}
    unique: dict[str, int] = {}
    for channels_per_hit in hit_channels.values():
        for chans in channels_per_hit[:k]:
            total += 1
            for c in chans:
                contrib[c] = contrib.get(c, 0) + 1
            if len(chans) == 1:
                unique[chans[0]] = unique.get(chans[0], 0) + 1
    if total == 0:
        return AgentValue(None, 0, note="no hits")
    return AgentValue(
        None,
        total,
        detail={
            "contribution": {c: v / total for c, v in sorted(contrib.items())},
            "unique": {c: unique.get(c, 0) / total for c in sorted(contrib)},
        },
    )


def fusion_reorder_rate(
    hit_channel_ranks: Mapping[str, Sequence[Mapping[str, int]]], k: int
) -> AgentValue:
    """Share of final top-k hits whose final rank differs from their best channel rank.

    For hit at final rank r with channel ranks {c: r_c}: reordered iff r != min_c r_c. Only
    meaningful for fused (multi-channel) results; n/a when no hit has channel ranks.
    """
    n = changed = 0
    for ranks_per_hit in hit_channel_ranks.values():
        for r, ranks in enumerate(ranks_per_hit[:k], 1):
            if ranks:
                n += 1
                changed += r != min(ranks.values())
    return AgentValue(changed / n if n else None, n, note=None if n else "no channel ranks")


def equivalence_recall(
    ranked: Ranked,
    qrels: Mapping[str, Mapping[str, int]],
    classes: Sequence[EquivalenceClass],
    k: int,
    threshold: int = DEFAULT_REL_THRESHOLD,
) -> AgentValue:
    """Recall@k where a relevant memory counts as found if any member of its class is in top k.

    detail["hit_rate"] = share of queries with at least one relevant memory found that way.
    """
    member: dict[str, set[str]] = {}
    for c in classes:
        for m in c.memory_ids:
            member.setdefault(m, set()).update(c.memory_ids)
    per: dict[str, float] = {}
    hits = []
    for q, judged in qrels.items():
        rel = [d for d, g in judged.items() if g >= threshold]
        if not rel or q not in ranked:
            continue
        top = set(ranked[q][:k])
        found = [d for d in rel if top & member.get(d, {d})]
        per[q] = len(found) / len(rel)
        hits.append(1.0 if found else 0.0)
    return AgentValue(
        _mean(list(per.values())),
        len(per),
        per_query=per,
        detail={"hit_rate": _mean(hits), "n_classes": len(classes)},
    )


def personalization_lift(
    rr_with: Mapping[str, float], rr_without: Mapping[str, float]
) -> AgentValue:
    """MRR(with session context) - MRR(without), over queries searched both ways."""
    common = sorted(set(rr_with) & set(rr_without))
    deltas = {q: rr_with[q] - rr_without[q] for q in common}
    return _query_mean(deltas, "no query carries session context")


def dedup_token_savings(
    sessions: Mapping[
        str,
        Sequence[
            tuple[Sequence[str], Mapping[str, str]]
            | tuple[Sequence[str], Mapping[str, str], Sequence[str]]
        ],
    ],
    count_tokens: Callable[[str], int] = lambda s: len(s.split()),
) -> AgentValue:
    """Seed 002's dedup token savings: the tokens of the results session dedup filtered.

    `sessions` maps a session id to its searches in order, each (hit ids, {id: text}) or
    (hit ids, {id: text}, texts of the results the system's own dedup filtered out). Saved:
    the tokens of those filtered results (a system that dedups reports what it saved, and
    scores it), plus the tokens of returned hits already returned earlier in the same session
    (what a dedup would have filtered from a system without one). Total: every returned and
    filtered token. value = saved / total; detail has `tokens_total`, `tokens_saved` (the
    seed's sum) and `tokens_filtered` (the system's own part); per-session savings in tokens.
    """
    total = saved = filtered_tokens = 0
    per: dict[str, float] = {}
    for sid, searches in sessions.items():
        seen: set[str] = set()
        s_saved = 0
        for search in searches:
            ids, texts = search[0], search[1]
            for text in search[2] if len(search) > 2 else ():
                tokens = count_tokens(text)
                total += tokens
                s_saved += tokens
                filtered_tokens += tokens
            for d in ids:
                tokens = count_tokens(texts.get(d, ""))
                total += tokens
                if d in seen:
                    s_saved += tokens
                seen.add(d)
        saved += s_saved
        per[sid] = float(s_saved)
    if total == 0:
        return AgentValue(None, 0, note="no session has searches")
    return AgentValue(
        saved / total,
        len(per),
        per_query=per,
        detail={"tokens_total": total, "tokens_saved": saved, "tokens_filtered": filtered_tokens},
    )


def pool_qrels(
    qrels: Mapping[str, Mapping[str, int]],
    runs: Sequence[Ranked],
    depth: int = 20,
    unjudged_grade: int = 1,
) -> tuple[dict[str, dict[str, int]], int]:
    """Depth-k pooling (seed 002 3.4 item 5): unjudged docs in any run's top `depth` get
    `unjudged_grade` (1 = marginal). Returns the pooled qrels and how many were added."""
    pooled = {q: dict(j) for q, j in qrels.items()}
    added = 0
    for run in runs:
        for q, ids in run.items():
            if q not in pooled:
                continue
            for d in ids[:depth]:
                if d not in pooled[q]:
                    pooled[q][d] = unjudged_grade
                    added += 1
    return pooled, added
