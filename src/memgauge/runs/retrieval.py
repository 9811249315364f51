"""Retrieval evaluation end to end: ingest a corpus into each system, search every query,
score with IR and agent-memory metrics, attach bootstrap CIs and breakdowns, and compare systems
pairwise with paired significance tests (Holm-corrected across measures).

A query whose search fails is recorded as failed with its error and is never scored 0; a query
with no relevant memories, or judged but given no result, is scored 0 by default and counted.
"""

from __future__ import annotations

import hashlib
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal

import numpy as np

from memgauge import __version__
from memgauge.data.models import EvalQuery, Memory, RetrievalDataset
from memgauge.errors import UnavailableError, UsageError
from memgauge.metrics import parse_measure
from memgauge.metrics.agent import pool_qrels
from memgauge.metrics.measures import SESSION_MEASURES
from memgauge.runs.agent_summary import agent_metrics_for
from memgauge.runs.ir_values import ir_values, protocol_label
from memgauge.runs.result import (
    Comparison,
    DatasetInfo,
    EvalSettings,
    LatencySummary,
    MetricComparison,
    MetricSummary,
    QueryResult,
    RetrievalEvalResult,
    SystemResult,
)
from memgauge.stats import bootstrap_cis, breakdown, compare_many
from memgauge.subjects.protocol import MemorySystem, SearchResult

__all__ = [
    "DEFAULT_MEASURES",
    "ProgressCallback",
    "RetrievalEvalConfig",
    "SystemEntry",
    "dataset_sha256",
    "evaluate_retrieval",
]

#: Seed 002 section 3.1: MRR@5/10, nDCG@5/10/20, Recall@5/10.
DEFAULT_MEASURES: tuple[str, ...] = (
    "RR@5",
    "RR@10",
    "nDCG@5",
    "nDCG@10",
    "nDCG@20",
    "Recall@5",
    "Recall@10",
)

#: (event, system name, done, total). Events: "ingest", "search", "system-done".
ProgressCallback = Callable[[str, str, int, int], None]


@dataclass(frozen=True)
class RetrievalEvalConfig:
    """Settings of a retrieval evaluation.

    Attributes:
        measures: canonical measure strings (see `memgauge.metrics.parse_measure`).
        k: how many hits to ask every system for; at least the largest cutoff.
        rel_threshold: grade at or above which a memory counts as relevant (seed 002: 2).
        gain: nDCG gain, "exp" (2^g - 1, seed 002) or "linear" (trec_eval).
        agent_k: cutoff of the agent-memory metrics (seed 002 targets are at K=5).
        n_resamples: bootstrap resamples for CIs.
        confidence: CI level.
        seed: seed of every random draw.
        alpha: significance level of the marks.
        primary_test: the paired test whose p is Holm-corrected and marked.
        pool_depth: when set, memories in any system's top `pool_depth` that nobody judged
            are graded `pool_grade` for every system (seed 002 3.4 depth pooling); off by
            default because it changes what "relevant" means when pool_grade >= rel_threshold.
        pool_grade: the grade pooled memories get (1 = marginal, below the default threshold).
        ingest: reset each system and ingest the dataset's memories (per corpus). False
            searches each system as it stands, never resetting it: for a live memory system
            that already holds the memories (the golden set of `memgauge logs export
            --dump-from`), whose memories the dataset then describes, not feeds.
    """

    measures: tuple[str, ...] = DEFAULT_MEASURES
    k: int = 20
    rel_threshold: int = 2
    gain: Literal["exp", "linear"] = "exp"
    agent_k: int = 5
    n_resamples: int = 1000
    confidence: float = 0.95
    seed: int = 0
    alpha: float = 0.05
    primary_test: Literal["randomization", "t", "wilcoxon"] = "randomization"
    pool_depth: int | None = None
    pool_grade: int = 1
    ingest: bool = True


@dataclass(frozen=True)
class SystemEntry:
    """A subject configuration to evaluate: its label, its spec, and how to build it.

    `build` may raise `UnavailableError` (e.g. no embedder for a dense channel): the system is
    then reported as unavailable with the reason, and the others still run.
    """

    name: str
    spec: dict[str, Any]
    build: Callable[[], MemorySystem]
    extra: dict[str, Any] = field(default_factory=dict)


def dataset_sha256(dataset: RetrievalDataset) -> str:
    """A content hash of the dataset (canonical JSON), recorded with every run. A dataset with
    no protocol hashes as it did before datasets could carry one."""
    exclude = {"protocol"} if dataset.protocol is None else None
    return hashlib.sha256(dataset.model_dump_json(exclude=exclude).encode("utf-8")).hexdigest()


def _latency(samples: dict[str, list[float]]) -> dict[str, LatencySummary]:
    out: dict[str, LatencySummary] = {}
    for stage, values in samples.items():
        arr = np.asarray(values, dtype=np.float64)
        if arr.size == 0:
            continue
        p50, p95, p99 = np.percentile(arr, [50, 95, 99])
        out[stage] = LatencySummary(
            p50=float(p50), p95=float(p95), p99=float(p99), mean=float(arr.mean()), n=arr.size
        )
    return out


def _summaries(
    values: dict[str, np.ndarray[Any, Any]], n_failed: int, config: RetrievalEvalConfig
) -> dict[str, MetricSummary]:
    names = list(values)
    if not names:
        return {}
    matrix = np.vstack([values[m] for m in names])
    cis = bootstrap_cis(
        matrix, n_resamples=config.n_resamples, confidence=config.confidence, seed=config.seed
    )
    return {
        name: MetricSummary(
            value=ci.mean, ci_low=ci.low, ci_high=ci.high, n_scored=ci.n, n_failed=n_failed
        )
        for name, ci in zip(names, cis, strict=True)
    }


def _breakdowns(
    queries: Sequence[EvalQuery],
    values: dict[str, np.ndarray[Any, Any]],
    config: RetrievalEvalConfig,
) -> dict[str, dict[str, dict[str, MetricSummary]]]:
    out: dict[str, dict[str, dict[str, MetricSummary]]] = {}
    for dimension in ("category", "intent"):
        groups = [getattr(q, dimension) for q in queries]
        if all(g is None for g in groups):
            continue
        per_group: dict[str, dict[str, MetricSummary]] = {}
        for measure, vals in values.items():
            stats = breakdown(vals, groups, n_resamples=config.n_resamples, seed=config.seed)
            for group, st in stats.items():
                per_group.setdefault(group, {})[measure] = MetricSummary(
                    value=st.mean,
                    ci_low=st.ci.low if st.ci is not None else None,
                    ci_high=st.ci.high if st.ci is not None else None,
                    n_scored=st.n_scored,
                    n_failed=st.n - st.n_scored,
                )
        out[dimension] = per_group
    return out


def _corpus_groups(
    memories: Sequence[Memory], queries: Sequence[EvalQuery]
) -> list[tuple[str | None, list[Memory], list[EvalQuery]]]:
    """Split the evaluation by corpus: each corpus's queries search its memories plus shared ones.

    With no corpora (the usual case) there is one group holding everything. LoCoMo, for example,
    is ten conversations, and each question is asked of its own conversation only.
    """
    corpora = sorted({q.corpus for q in queries if q.corpus is not None})
    if not corpora:
        return [(None, list(memories), list(queries))]
    groups: list[tuple[str | None, list[Memory], list[EvalQuery]]] = []
    unscoped = [q for q in queries if q.corpus is None]
    if unscoped:
        groups.append((None, list(memories), unscoped))
    for corpus in corpora:
        groups.append(
            (
                corpus,
                [m for m in memories if m.corpus in (corpus, None)],
                [q for q in queries if q.corpus == corpus],
            )
        )
    return groups


def _search_all(
    system: MemorySystem,
    queries: Sequence[EvalQuery],
    k: int,
    *,
    with_session: bool,
    progress: ProgressCallback | None,
    name: str,
) -> tuple[dict[str, SearchResult], dict[str, str]]:
    results: dict[str, SearchResult] = {}
    errors: dict[str, str] = {}
    for i, q in enumerate(queries, 1):
        try:
            results[q.id] = system.search(
                q.text, k, session=q.session_context if with_session else None
            )
        except Exception as exc:
            errors[q.id] = f"{type(exc).__name__}: {exc}"
        if progress is not None:
            progress("search", name, i, len(queries))
    return results, errors


@dataclass
class _Searched:
    """One system's raw outcome before scoring (scoring may wait for pooled judgments)."""

    entry: SystemEntry
    failure: SystemResult | None = None
    results: dict[str, SearchResult] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)
    without: dict[str, SearchResult] = field(default_factory=dict)
    ingest_seconds: float | None = 0.0


def _search_system(
    entry: SystemEntry,
    dataset: RetrievalDataset,
    judged: Sequence[EvalQuery],
    config: RetrievalEvalConfig,
    progress: ProgressCallback | None,
) -> _Searched:
    try:
        system = entry.build()
    except UnavailableError as exc:
        return _Searched(
            entry,
            SystemResult(name=entry.name, spec=entry.spec, status="unavailable", reason=str(exc)),
        )
    try:
        return _drive(entry, system, dataset, judged, config, progress)
    finally:
        close = getattr(system, "close", None)  # subprocess subjects hold a child process
        if callable(close):
            close()


def _drive(
    entry: SystemEntry,
    system: MemorySystem,
    dataset: RetrievalDataset,
    judged: Sequence[EvalQuery],
    config: RetrievalEvalConfig,
    progress: ProgressCallback | None,
) -> _Searched:
    results: dict[str, SearchResult] = {}
    errors: dict[str, str] = {}
    without: dict[str, SearchResult] = {}
    ingest_seconds: float | None = 0.0 if config.ingest else None
    groups = (
        _corpus_groups(dataset.memories, judged)
        if config.ingest
        else [(None, list(dataset.memories), list(judged))]
    )
    for _corpus, memories, queries in groups:
        if ingest_seconds is not None:
            t0 = time.perf_counter()
            try:
                system.reset()
                system.ingest(memories)
                system.flush()
            except Exception as exc:
                reason = f"ingest failed: {type(exc).__name__}: {exc}"
                return _Searched(
                    entry,
                    SystemResult(name=entry.name, spec=entry.spec, status="failed", reason=reason),
                )
            ingest_seconds += time.perf_counter() - t0
            if progress is not None:
                progress("ingest", entry.name, len(memories), len(memories))
        res, err = _search_all(
            system, queries, config.k, with_session=True, progress=progress, name=entry.name
        )
        results.update(res)
        errors.update(err)
        # Personalisation: the same session queries searched again without their context.
        session_queries = [q for q in queries if q.session_context is not None and q.id in res]
        res_without, _ = _search_all(
            system, session_queries, config.k, with_session=False, progress=None, name=entry.name
        )
        without.update(res_without)
    return _Searched(entry, None, results, errors, without, ingest_seconds)


def _score_system(
    searched: _Searched,
    dataset: RetrievalDataset,
    qrels: dict[str, dict[str, int]],
    config: RetrievalEvalConfig,
    progress: ProgressCallback | None,
) -> tuple[SystemResult, dict[str, np.ndarray[Any, Any]], list[str]]:
    entry = searched.entry
    if searched.failure is not None:
        return searched.failure, {}, []
    results, errors, without = searched.results, searched.errors, searched.without
    ingest_seconds = searched.ingest_seconds
    judged = [q for q in dataset.queries if q.id in qrels]
    ok_queries = [q for q in judged if q.id not in errors]
    ranked = {qid: [h.id for h in r.hits] for qid, r in results.items()}
    query_ids, per_measure, ev_counts, protocol_notes = ir_values(
        dataset, qrels, ranked, ok_queries, config
    )
    order = {qid: i for i, qid in enumerate(query_ids)}
    idx = np.asarray([order[q.id] for q in ok_queries], dtype=np.int64)
    values = {m: np.asarray(v, dtype=np.float64)[idx] for m, v in per_measure.items()}

    agent = agent_metrics_for(
        dataset,
        qrels,
        ok_queries,
        results,
        {qid: [h.id for h in r.hits] for qid, r in without.items()},
        config.agent_k,
        config.rel_threshold,
    )

    latency: dict[str, list[float]] = {}
    for r in results.values():
        for stage, ms in r.latency_ms.items():
            latency.setdefault(stage, []).append(ms)

    per_query: list[QueryResult] = []
    by_id = {q.id: q for q in judged}
    for q in judged:
        rel = sorted(m for m, g in qrels[q.id].items() if g >= config.rel_threshold)
        if q.id in errors:
            per_query.append(
                QueryResult(
                    query_id=q.id,
                    text=q.text,
                    intent=q.intent,
                    category=q.category,
                    metrics=dict.fromkeys(values),
                    hits=[],
                    relevant=rel,
                    error=errors[q.id],
                )
            )
            continue
        r = results[q.id]
        i = order[q.id]
        per_query.append(
            QueryResult(
                query_id=q.id,
                text=by_id[q.id].text,
                intent=q.intent,
                category=q.category,
                metrics={
                    m: (None if np.isnan(v[i]) else float(v[i])) for m, v in per_measure.items()
                },
                hits=[h.id for h in r.hits],
                channels=[list(h.channels) for h in r.hits],
                relevant=rel,
                latency_ms=dict(r.latency_ms),
            )
        )

    counts = {
        "n_queries": len(dataset.queries),
        "n_judged": len(judged),
        "n_unjudged": len(dataset.queries) - len(judged),
        "n_failed": len(errors),
        **{k: v for k, v in ev_counts.as_dict().items() if isinstance(v, int)},
    }
    notes = [*ev_counts.notes(), *protocol_notes]
    if errors:
        notes.append(f"{len(errors)} searches failed and are not scored (see per-query errors).")
    if counts["n_unjudged"]:
        notes.append(f"{counts['n_unjudged']} queries have no judgments and were not evaluated.")
    if not config.ingest:
        notes.append("Searched as it stood: not reset, the dataset's memories not ingested.")
    result = SystemResult(
        name=entry.name,
        spec=entry.spec,
        status="ok",
        metrics=_summaries(values, len(errors), config),
        agent_metrics=agent,
        breakdown=_breakdowns(ok_queries, values, config),
        counts=counts,
        notes=notes,
        latency_ms=_latency(latency),
        ingest_seconds=ingest_seconds,
        per_query=per_query,
    )
    if progress is not None:
        progress("system-done", entry.name, 1, 1)
    return result, values, [q.id for q in ok_queries]


def _compare(
    base: tuple[str, dict[str, np.ndarray[Any, Any]], list[str]],
    cand: tuple[str, dict[str, np.ndarray[Any, Any]], list[str]],
    config: RetrievalEvalConfig,
) -> Comparison:
    common = sorted(set(base[2]) & set(cand[2]))
    ia = {q: i for i, q in enumerate(base[2])}
    ib = {q: i for i, q in enumerate(cand[2])}
    a_idx = np.asarray([ia[q] for q in common], dtype=np.int64)
    b_idx = np.asarray([ib[q] for q in common], dtype=np.int64)
    a = {m: v[a_idx] for m, v in base[1].items()}
    b = {m: v[b_idx] for m, v in cand[1].items()}
    compared = compare_many(
        a,
        b,
        primary_test=config.primary_test,
        seed=config.seed,
        alpha=config.alpha,
        n_resamples=config.n_resamples,
    )
    rows = [
        MetricComparison(
            measure=m,
            mean_a=c.mean_a,
            mean_b=c.mean_b,
            delta=c.delta,
            ci_low=c.delta_ci_low,
            ci_high=c.delta_ci_high,
            p_value=c.p_value,
            p_holm=c.p_holm,
            p_t=c.p_t,
            p_wilcoxon=c.p_wilcoxon,
            effect_size=c.effect_size,
            mark=c.mark,
            n=c.n,
        )
        for m, c in compared.items()
    ]
    return Comparison(baseline=base[0], candidate=cand[0], test=config.primary_test, metrics=rows)


def evaluate_retrieval(
    dataset: RetrievalDataset,
    systems: Sequence[SystemEntry],
    config: RetrievalEvalConfig | None = None,
    *,
    source: str | None = None,
    progress: ProgressCallback | None = None,
) -> RetrievalEvalResult:
    """Evaluate every system on `dataset`; the first system that runs is the baseline."""
    config = config or RetrievalEvalConfig()
    measures = [str(parse_measure(m)) for m in config.measures]
    cutoffs = [c for c in (parse_measure(m).cutoff for m in measures) if c is not None]
    if cutoffs and config.k < max(cutoffs):
        raise UsageError(
            f"search depth k={config.k} is below the largest cutoff @{max(cutoffs)}; "
            f"use --k {max(cutoffs)} or more"
        )
    if config.pool_depth is not None and (config.pool_depth < 1 or not 0 <= config.pool_grade <= 3):
        raise UsageError("pool depth must be >= 1 and the pool grade 0-3")
    session = [m for m in measures if parse_measure(m).name in SESSION_MEASURES]
    if session and (dataset.protocol is None or dataset.protocol.turn_ids != "longmemeval"):
        raise UsageError(
            f"{', '.join(session)} map turns to sessions as LongMemEval does: they need a "
            "dataset of LongMemEval turns, imported with `memgauge import longmemeval SRC "
            "--protocol paper --granularity turn`"
        )
    names = [s.name for s in systems]
    if len(set(names)) != len(names):
        raise UsageError(f"system names must be unique, got {names}; give each a distinct label")
    started = datetime.now(UTC)
    t0 = time.perf_counter()
    qrels = dataset.qrels()
    judged = [q for q in dataset.queries if q.id in qrels]
    searched = [_search_system(s, dataset, judged, config, progress) for s in systems]
    pool_note = None
    if config.pool_depth:
        runs = [{q: [h.id for h in r.hits] for q, r in s.results.items()} for s in searched]
        qrels, added = pool_qrels(qrels, runs, config.pool_depth, config.pool_grade)
        pool_note = (
            f"pooling: {added} unjudged memories in some system's top {config.pool_depth} "
            f"were graded {config.pool_grade}"
        )
    outcomes = [_score_system(s, dataset, qrels, config, progress) for s in searched]
    if pool_note:
        for r, _, _ in outcomes:
            if r.status == "ok":
                r.notes.append(pool_note)
    ran = [(r.name, vals, qids) for r, vals, qids in outcomes if r.status == "ok"]
    comparisons = [_compare(ran[0], other, config) for other in ran[1:]] if ran else []
    return RetrievalEvalResult(
        run_id=f"{started:%Y%m%dT%H%M%S}-{uuid.uuid4().hex[:8]}",
        created_at=started,
        memgauge_version=__version__,
        dataset=DatasetInfo(
            name=dataset.name,
            source=source,
            sha256=dataset_sha256(dataset),
            n_memories=len(dataset.memories),
            n_queries=len(dataset.queries),
            n_judgments=len(dataset.judgments),
            protocol=protocol_label(dataset),
        ),
        settings=EvalSettings(
            measures=measures,
            k=config.k,
            rel_threshold=config.rel_threshold,
            gain=config.gain,
            n_resamples=config.n_resamples,
            confidence=config.confidence,
            seed=config.seed,
            alpha=config.alpha,
            ingested=config.ingest,
        ),
        systems=[r for r, _, _ in outcomes],
        comparisons=comparisons,
        duration_seconds=time.perf_counter() - t0,
    )
