"""The retrieval aggregate: IR metrics with bootstrap CIs, breakdowns by category and intent,
the agent-memory metrics of seed 002, latency per stage, and paired comparisons of every subject
against the first (Holm-corrected across measures), overall and per query category
(`aggregates.ir_compare`), from the ranked hits each item recorded.

A query whose search failed is counted in `n_failed` and never scored 0; a judged query with no
relevant memory, or given no hit, scores 0 by default and is counted. The conventions (relevance
threshold, gain, queries with nothing relevant) are those of the task's retrieval evaluators
that give the same measures (`align`): one measure has one value and one n in every view of a
run. With `pool_depth`, memories in any subject's top `pool_depth` that nobody judged are
graded `pool_grade` for every subject (seed 002 section 3.4) before anything is scored; with
`pool_judge` as well, the relevance judge grades them instead, and its grades are recorded as
bootstrapped judgments (`aggregates.pool_judge`).
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar, Literal

import numpy as np

from memgauge._util.listing import counted, some
from memgauge._util.numbers import (
    ALPHA,
    CONFIDENCE,
    MAX_K,
    MDE,
    N_RESAMPLES,
    resamples_out_of_range,
)
from memgauge.aggregates.agent_summary import agent_metrics_for
from memgauge.aggregates.base import Target, TaskView, shaped
from memgauge.aggregates.expansion import expansion_impact, pre_expansion_of
from memgauge.aggregates.hits import Found, hit_channels, hits_of
from memgauge.aggregates.ir_align import CONVENTIONS, shared_conventions
from memgauge.aggregates.ir_compare import compare_pair
from memgauge.aggregates.ir_facts import IrFacts
from memgauge.aggregates.ir_shapes import ir_shapes
from memgauge.aggregates.ir_values import ir_values, protocol_label
from memgauge.aggregates.retrieval_result import (
    AgentMetric,
    DatasetInfo,
    EvalSettings,
    LatencySummary,
    MetricSummary,
    QueryResult,
    SystemResult,
)
from memgauge.data.facts import IrPipeline
from memgauge.data.models import EvalQuery, RetrievalDataset
from memgauge.data.records import AggregateResult, ItemRecord, MeasureValue
from memgauge.data.shapes import Shape
from memgauge.errors import UsageError, argument
from memgauge.metrics import parse_measure
from memgauge.metrics.agent import DEFAULT_AGENT_K, pool_qrels
from memgauge.metrics.conventions import (
    DEFAULT_GAIN,
    DEFAULT_NO_RELEVANT,
    DEFAULT_REL_THRESHOLD,
    Gain,
    NoRelevant,
)
from memgauge.metrics.ir import check_rel_threshold
from memgauge.metrics.measures import SESSION_MEASURES, is_measure, refuse_run_level
from memgauge.scorers.retrieval import RetrievalMeasure
from memgauge.stats import bootstrap_cis
from memgauge.stats.breakdown import breakdowns
from memgauge.stats.coverage import category_coverage
from memgauge.stats.sequential import DEFAULT_BOUNDS, SPRT, Bounds

__all__ = [
    "DEFAULT_MEASURES",
    "IRAggregate",
    "dataset_sha256",
    "hit_channels",
    "hits_of",
    "without_session_of",
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

#: Seed 002 section 3.3's targets of the agent-memory metrics: shown beside them, not enforced
#: unless asked (`--fail-under`).
AGENT_TARGETS: dict[str, tuple[Literal[">", ">=", "=="], float]] = {
    "constitutional_surfacing": ("==", 1.0),
    "iw_recall_critical": (">", 0.90),
    "cold_start_mrr_ratio": (">=", 0.70),
    "causal_chain_completeness": (">", 0.60),
    "session_personalization_lift": (">", 0.0),
}


def without_session_of(record: ItemRecord) -> list[str] | None:
    """The ids a session query found when searched again without its session context."""
    found = record.extra.get("without_session")
    return [str(x) for x in found] if isinstance(found, list) else None


def _coverage(dataset: RetrievalDataset, asked: Collection[str]) -> dict[str, Any]:
    """The judged queries asked (all judged ones when none was: every subject failed before
    searching) per category against seed 002's rule (`stats.coverage`, as `memgauge health`
    holds the golden set to it), and its warnings."""
    judged = dataset.qrels()
    counts: dict[str | None, int] = {}
    for q in dataset.queries:
        if q.id in judged and (not asked or q.id in asked):
            counts[q.category] = counts.get(q.category, 0) + 1
    coverage, warnings = category_coverage(counts, "dataset")
    return {"coverage": coverage, "warnings": warnings}


def _asked(searched: Sequence[_Searched]) -> set[str]:
    """The queries some subject was asked (searched, or failed searching)."""
    return {q for s in searched for q in (*s.results, *s.errors)}


def _foreign_ids(dataset: RetrievalDataset, ranked: Mapping[str, Sequence[str]]) -> list[str]:
    """A note when hits name no memory of the dataset (a memory that gives ingested memories
    ids of its own scores 0 everywhere, and nothing else says why); [] when every hit does."""
    known = {m.id for m in dataset.memories}
    returned = [i for ids in ranked.values() for i in ids]
    foreign = list(dict.fromkeys(i for i in returned if i not in known))
    if not foreign:
        return []
    n = sum(1 for i in returned if i not in known)
    examples = some(foreign, 3)
    return [
        f"{n} of {len(returned)} hits name no memory of the dataset ({examples}); they count as "
        "not relevant. search must return the ids ingest was given (each Memory's id), not ids "
        "of the system's own."
    ]


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


@dataclass
class _Searched:
    """One subject's outcome before scoring (scoring may wait for pooled judgments)."""

    name: str
    failure: SystemResult | None = None
    results: dict[str, Found] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)
    without: dict[str, list[str]] = field(default_factory=dict)
    pre: dict[str, list[str]] = field(default_factory=dict)
    ingest_seconds: float | None = None
    spec: dict[str, Any] = field(default_factory=dict)
    not_asked: int = 0  # queued when the run stopped this subject (past max_failure_rate)


@dataclass(frozen=True)
class IRAggregate:
    """IR and agent-memory metrics of a retrieval task, with CIs and paired comparisons.

    Attributes:
        measures: canonical measure strings (default: the task's retrieval evaluators, else
            seed 002's MRR@5/10, nDCG@5/10/20, Recall@5/10).
        rel_threshold: grade at or above which a memory counts as relevant (seed 002: 2).
        gain: nDCG gain, "exp" (2^g - 1, seed 002) or "linear" (trec_eval).
        agent_k: cutoff of the agent-memory metrics (seed 002's targets are at K=5).
        n_resamples: bootstrap resamples for CIs.
        confidence: CI level.
        alpha: significance level of the marks.
        primary_test: the paired test whose p is Holm-corrected and marked.
        pool_depth: grade unjudged memories in any subject's top `pool_depth` (off: None).
        pool_grade: the grade pooled memories get (1 = marginal, below the default threshold).
        pool_judge: grade pooled memories with this relevance judge (`relevance`,
            `{relevance: {model: m}}`) instead of `pool_grade`.
        no_relevant: what a judged query with no relevant memory scores: "zero" (default),
            "one" where the measure is 0/0 (seed 002's Recall), "skip" (left out of the
            means and comparisons; counted), or "fail" (left out and counted as failed, as a
            retrieval evaluator with `no_relevant: fail` counts it). See `metrics.ir`.
        sprt_delta: the minimum detectable effect of the comparisons' sequential test (seed
            002: 0.05 MRR).
        sprt_bounds: its stopping bounds, "ville" or "wald" (`stats.sequential`).
        sampling_rate: the share of the judged queries the task asked (seed 002's samplingRate;
            the task's `only: {sample: ...}` does the sampling), recorded with the run.
        feature_id: the feature the run evaluates (seed 002's featureId), recorded with the
            run and in its `eval_results` rows.
        run_type: seed 002's run type (full, shadow, regression, ab_test), likewise.

    `rel_threshold`, `gain` and `no_relevant` left unset in a suite are those of the task's
    retrieval evaluators whose labels are measures this aggregate computes (`align`).
    """

    measures: tuple[str, ...] | None = None
    rel_threshold: int = DEFAULT_REL_THRESHOLD
    gain: Gain = DEFAULT_GAIN
    agent_k: int = DEFAULT_AGENT_K
    n_resamples: int = N_RESAMPLES
    confidence: float = CONFIDENCE
    alpha: float = ALPHA
    primary_test: Literal["randomization", "t", "wilcoxon"] = "randomization"
    pool_depth: int | None = None
    pool_grade: int = 1
    pool_judge: str | dict[str, Any] | None = None
    no_relevant: NoRelevant | Literal["fail"] = DEFAULT_NO_RELEVANT
    sprt_delta: float = MDE
    sprt_bounds: Bounds = DEFAULT_BOUNDS
    sampling_rate: float | None = None
    feature_id: str | None = None
    run_type: Literal["full", "shadow", "regression", "ab_test"] | None = None
    name: ClassVar[str] = "ir"
    title: ClassVar[str] = "Retrieval"
    #: it reads the recorded hits and verdicts only (not inputs or expected values)
    needs_detail: ClassVar[bool] = False

    def __post_init__(self) -> None:
        if instead := resamples_out_of_range(self.n_resamples):
            raise UsageError(f"n_resamples {self.n_resamples}: {instead}")
        if not 1 <= self.agent_k <= MAX_K:
            raise UsageError(f"agent_k {self.agent_k}: give a cutoff of 1 to {MAX_K}")
        check_rel_threshold(self.rel_threshold)  # before anything is scored
        if self.pool_depth is not None and (self.pool_depth < 1 or not 0 <= self.pool_grade <= 3):
            raise UsageError("pool depth must be >= 1 and the pool grade 0-3")
        if self.pool_judge is not None:
            if self.pool_depth is None:
                raise UsageError(f"a pool judge needs a pool depth ({argument('pool_depth', 'N')})")
            # the judges (and the LLM layer's scorers) load only for a run that pools with one
            from memgauge.aggregates.pool_judge import relevance_judge

            relevance_judge(self.pool_judge)  # a bad spec fails before the run
        for m in self.measures or ():
            refuse_run_level(m, "ir aggregate")
        if self.sampling_rate is not None and not 0 < self.sampling_rate <= 1:
            raise UsageError(f"sampling_rate {self.sampling_rate}: give a share in (0, 1]")
        if self.feature_id is not None and not self.feature_id.strip():
            raise UsageError("feature_id: give the feature's id, or leave it out")
        if not (math.isfinite(self.sprt_delta) and self.sprt_delta > 0):
            # nan passed `<= 0`: every comparison recorded a sequential decision with no delta
            raise UsageError(
                f"sprt_delta {self.sprt_delta}: the minimum effect must be a finite number > 0"
            )

    def _pipeline(
        self, dataset: RetrievalDataset, searched: Sequence[_Searched]
    ) -> IrPipeline | None:
        """Seed 002's EvalPipelineConfig as the run had it (only when a sampling rate, feature
        or run type was given), with how many of the judged queries were asked."""
        if self.sampling_rate is None and self.feature_id is None and self.run_type is None:
            return None
        judged = dataset.qrels()
        return IrPipeline(
            sampling_rate=1.0 if self.sampling_rate is None else self.sampling_rate,
            feature_id=self.feature_id,
            run_type=self.run_type or "full",
            n_judged=sum(q.id in judged for q in dataset.queries),
            n_asked=len(_asked(searched)),
        )

    @staticmethod
    def shapes_from(detail: Mapping[str, Any]) -> list[Shape]:
        """What reports draw of a stored detail (`aggregates.ir_shapes`)."""
        return ir_shapes(detail)

    def imports(self, task: TaskView) -> tuple[str, ...]:
        """The paired tests' module, when there is a pair to test: a run of one subject never
        imports SciPy (about half a CPU-second, even on a background thread)."""
        return ("scipy.stats",) if len(task.subjects) > 1 else ()

    def check(self, dataset: RetrievalDataset) -> None:
        """Before the run: the session measures need a LongMemEval paper-protocol turn dataset."""
        session = [m for m in self.measures or () if parse_measure(m).name in SESSION_MEASURES]
        if session and (dataset.protocol is None or dataset.protocol.turn_ids != "longmemeval"):
            raise UsageError(
                f"{', '.join(session)} map turns to sessions as LongMemEval does: they need a "
                "dataset of LongMemEval turns, imported with `memgauge import longmemeval SRC "
                "--protocol paper --granularity turn`"
            )

    def align(
        self, task: str, evaluators: Sequence[tuple[str, object]], given: Collection[str]
    ) -> IRAggregate:
        """This aggregate with the conventions of the task's retrieval evaluators that give a
        measure it computes (`aggregates.ir_align`): one measure, one value and one n, whether
        read from the evaluator's row or from this aggregate. `given`: the keys its spec sets."""
        mine = [str(parse_measure(m)) for m in self.measures] if self.measures else None
        shared = [
            (label, ev)
            for label, ev in evaluators
            if isinstance(ev, RetrievalMeasure)
            and is_measure(label)
            and (mine is None or str(parse_measure(label)) in mine)
        ]
        ours = {key: getattr(self, key) for key in CONVENTIONS}
        changes = shared_conventions(task, ours, given, shared)
        return replace(self, **changes) if changes else self

    def _measures(self, task: TaskView) -> list[str]:
        if self.measures:
            return [str(parse_measure(m)) for m in self.measures]
        from_evaluators = [label for label, kind in task.evaluators if kind == "retrieval"]
        picked = [str(parse_measure(m)) for m in from_evaluators if is_measure(m)]
        return picked or list(DEFAULT_MEASURES)

    def least_k(self, task: TaskView) -> tuple[int, str] | None:
        """The least search depth the task's measures can be computed at, and the measure
        that asks it: the largest cutoff (`Recall@10` needs the top 10 hits); None when no
        measure has a cutoff. Planning refuses a task whose `k` is below it."""
        cut = [(c, m) for m in self._measures(task) if (c := parse_measure(m).cutoff) is not None]
        return max(cut, key=lambda p: p[0]) if cut else None

    def measure_names(self, task: TaskView) -> list[str]:
        """The IR measures, then the agent-memory metrics at `agent_k`."""
        k = self.agent_k
        agent = [
            f"{n}@{k}"
            for n in (
                "constitutional_surfacing",
                "importance_weighted_recall",
                "iw_recall_critical",
                "cold_start_mrr_ratio",
                "causal_chain_completeness",
                "tier_order_holds",
                "folder_ils",
                "fusion_reorder_rate",
                "equivalence_recall",
                "session_personalization_lift",
                "dedup_token_savings",
            )
        ]
        return [*self._measures(task), *agent]

    def targets(self, task: TaskView) -> list[Target]:
        """Seed 002's agent-memory targets, shown beside the values (not enforced)."""
        return [
            Target(f"{name}@{self.agent_k}", op, value, "seed 002 section 3.3", enforced=False)
            for name, (op, value) in AGENT_TARGETS.items()
        ]

    def compute(self, task: TaskView, items: Mapping[str, Sequence[ItemRecord]]) -> AggregateResult:
        """Per subject a `SystemResult` (as `memgauge evaluate` reports it) and the paired
        comparisons of every subject that ran against the first."""
        dataset = task.dataset
        if dataset is None:
            raise UsageError(f"task {task.name!r}: the ir aggregate needs a retrieval dataset")
        measures = self._measures(task)
        least = self.least_k(task)
        if least is not None and task.k < least[0]:
            # planning refuses such a task before its run starts; kept for a task view made
            # by hand
            raise UsageError(
                f"task {task.name!r}: search depth k={task.k} is below the largest cutoff "
                f"@{least[0]} ({least[1]}); use k: {least[0]} or more"
            )
        qrels = dataset.qrels()
        searched = [self._searched(s, items.get(s, ()), task) for s in task.subjects]
        pool_note, judged_pool = None, None
        if self.pool_depth and self.pool_judge is not None:
            runs = [{q: r.ids for q, r in s.results.items()} for s in searched]
            from memgauge.aggregates.pool_judge import judge_pool, relevance_judge

            judge = relevance_judge(self.pool_judge)
            judged_pool = judge_pool(dataset, qrels, runs, self.pool_depth, judge)
            qrels, pool_note = judged_pool.qrels, judged_pool.note(self.pool_depth)
        elif self.pool_depth:
            runs = [{q: r.ids for q, r in s.results.items()} for s in searched]
            qrels, added = pool_qrels(qrels, runs, self.pool_depth, self.pool_grade)
            pool_note = (
                f"pooling: {added} unjudged memories in some system's top {self.pool_depth} "
                f"were graded {self.pool_grade}"
            )
        outcomes = [self._score(s, dataset, qrels, measures, task) for s in searched]
        if pool_note:
            for r, _, _ in outcomes:
                if r.status == "ok":
                    r.notes.append(pool_note)
        ran = [(r.name, vals, qids) for r, vals, qids in outcomes if r.status == "ok"]
        categories = {q.id: q.category for q in dataset.queries}
        comparisons = [
            compare_pair(
                ran[0],
                other,
                categories,
                primary_test=self.primary_test,
                seed=task.seed,
                alpha=self.alpha,
                n_resamples=self.n_resamples,
                sprt=SPRT(delta=self.sprt_delta, bounds=self.sprt_bounds),
            )
            for other in ran[1:]
        ]
        systems = [r for r, _, _ in outcomes]
        facts = IrFacts(
            dataset=DatasetInfo(
                name=dataset.name,
                protocol=protocol_label(dataset),
                synthetic=dataset.synthetic.label() if dataset.synthetic else None,
                sha256=task.dataset_sha256 or dataset_sha256(dataset),
                n_memories=len(dataset.memories),
                n_queries=len(dataset.queries),
                n_judgments=len(dataset.judgments),
                **_coverage(dataset, _asked(searched)),
            ),
            pipeline=self._pipeline(dataset, searched),
            settings=EvalSettings(
                measures=measures,
                k=task.k,
                rel_threshold=self.rel_threshold,
                gain=self.gain,
                no_relevant=self.no_relevant,
                n_resamples=self.n_resamples,
                confidence=self.confidence,
                seed=task.seed,
                alpha=self.alpha,
                ingested=task.ingested,
            ),
            systems=systems,
            comparisons=comparisons,
            pool_judge=(
                judged_pool.facts(self.pool_judge)
                if judged_pool is not None and self.pool_judge is not None
                else None
            ),
        )
        # what its shapes are drawn from: the form a result stored before facts kept, less
        # the per-query rows, which no shape reads (1,536 of them in a LoCoMo run, dumped for
        # nothing)
        detail = {
            "measures": measures,
            **facts.model_dump(mode="json", exclude={"systems": {"__all__": {"per_query"}}}),
        }
        return shaped(self, task, _measure_values(task.name, systems), detail, facts=facts)

    # --- one subject ---------------------------------------------------------------------

    def _searched(self, subject: str, rows: Sequence[ItemRecord], task: TaskView) -> _Searched:
        out = _Searched(subject, ingest_seconds=task.setup_seconds.get(subject))
        out.spec = dict(task.specs.get(subject, {}))
        asked = [r for r in rows if r.status != "queued"]  # never asked (a run that stopped)
        out.not_asked = len(rows) - len(asked)
        rows = asked
        if rows and all(r.status == "failed" for r in rows):
            first = rows[0].failures[0] if rows[0].failures else None
            if first is not None and first.stage in ("unavailable", "setup"):
                status: Literal["unavailable", "failed"] = (
                    "unavailable" if first.stage == "unavailable" else "failed"
                )
                reason = (
                    first.message
                    if status == "unavailable"
                    else f"setup failed: {first.describe()}"
                )
                out.failure = SystemResult(
                    name=subject,
                    spec=dict(task.specs.get(subject, {})),
                    status=status,
                    reason=reason,
                )
                return out
        for r in rows:
            hits = hits_of(r.output) if r.status == "completed" else None
            if hits is None:
                last = r.failures[-1] if r.failures else None
                out.errors[r.item_id] = (
                    f"{last.kind}: {last.message}" if last else "no ranked hits recorded"
                )  # as evaluate always wrote a failed search: `Type: message`
                continue
            filtered = r.extra.get("dedup_filtered")
            out.results[r.item_id] = Found(
                hits, r.latency_ms, filtered if isinstance(filtered, list) else None
            )
            without = without_session_of(r)
            if without is not None:
                out.without[r.item_id] = without
            pre = pre_expansion_of(r)
            if pre is not None:
                out.pre[r.item_id] = pre
        return out

    def _score(
        self,
        searched: _Searched,
        dataset: RetrievalDataset,
        qrels: dict[str, dict[str, int]],
        measures: list[str],
        task: TaskView,
    ) -> tuple[SystemResult, dict[str, np.ndarray[Any, Any]], list[str]]:
        if searched.failure is not None:
            return searched.failure, {}, []
        results, errors, without = searched.results, searched.errors, searched.without
        judged = [q for q in dataset.queries if q.id in qrels]
        n_in_dataset = len(judged)
        # a query the run never asked (a subject limited to some items) is not scored
        judged = [q for q in judged if q.id in results or q.id in errors]
        ok_queries = [q for q in judged if q.id not in errors]
        ranked = {qid: r.ids for qid, r in results.items()}
        # `fail` scores such a query as `skip` does (no value) and counts it as failed, as a
        # retrieval evaluator with `no_relevant: fail` counts its verdict
        no_relevant: NoRelevant = "skip" if self.no_relevant == "fail" else self.no_relevant
        query_ids, per_measure, ev_counts, protocol_notes = ir_values(
            dataset,
            qrels,
            ranked,
            ok_queries,
            measures,
            rel_threshold=self.rel_threshold,
            gain=self.gain,
            k=task.k,
            no_relevant=no_relevant,
        )
        order = {qid: i for i, qid in enumerate(query_ids)}
        idx = np.asarray([order[q.id] for q in ok_queries], dtype=np.int64)
        values = {m: np.asarray(v, dtype=np.float64)[idx] for m, v in per_measure.items()}
        attributed = dataset.source_channels()
        # each measure's values as Python floats once (a NumPy scalar read and tested per
        # query and measure was 10,000 of each for LoCoMo)
        as_floats = {m: np.asarray(v, dtype=np.float64).tolist() for m, v in per_measure.items()}
        # the agent metrics' RR@agent_k is this measure's value where it was just computed
        # over the same queries, qrels and threshold, with its convention (RR is 0 without a
        # relevant memory): per query it does not depend on the gain or the depth
        rr_name = f"RR@{self.agent_k}"
        rr = (
            dict(zip(query_ids, as_floats[rr_name], strict=True))
            if rr_name in as_floats and no_relevant == DEFAULT_NO_RELEVANT
            else None
        )
        agent = agent_metrics_for(
            dataset,
            qrels,
            ok_queries,
            results,
            without,
            self.agent_k,
            self.rel_threshold,
            attributed,
            rr=rr,
        )
        latency: dict[str, list[float]] = {}
        for r in results.values():
            for stage, ms in r.latency_ms.items():
                latency.setdefault(stage, []).append(ms)
        per_query = [
            self._query(
                q,
                qrels,
                results,
                errors,
                as_floats,
                order,
                values,
                agent=agent.per_query,
                attributed=attributed,
                pre=searched.pre,
            )
            for q in judged
        ]
        for row in per_query:  # the failed ones (validated) get these keys the same way
            if row.error is not None:
                row.agent_metrics = agent.per_query.get(row.query_id, {})
                row.relevant_channels = dict(attributed.get(row.query_id, {}))
                row.pre_expansion = searched.pre.get(row.query_id)
        expansion = expansion_impact(
            dataset,
            qrels,
            ok_queries,
            ranked,
            searched.pre,
            measures,
            rel_threshold=self.rel_threshold,
            gain=self.gain,
            no_relevant=no_relevant,
            k=task.k,
            stats={
                "primary_test": self.primary_test,
                "seed": task.seed,
                "alpha": self.alpha,
                "n_resamples": self.n_resamples,
            },
        )
        counts = {
            "n_queries": len(dataset.queries),
            "n_judged": len(judged),
            "n_unjudged": len(dataset.queries) - len([q for q in dataset.queries if q.id in qrels]),
            "n_failed": len(errors),
            **{k: v for k, v in ev_counts.as_dict().items() if isinstance(v, int)},
        }
        # the scored queries' own count (`n_evaluated`, `n_scored`) leaves the failed searches
        # out: the judged queries asked are still every one asked, failed or not
        counts["n_judged"] = len(judged)
        notes = [*ev_counts.notes(self.no_relevant), *protocol_notes]
        n_unscored = len(errors) + (len(ev_counts.no_relevant) if self.no_relevant == "fail" else 0)
        if errors:
            # the first reason in full: it names the contract a reply broke, which is what
            # the reader must fix (every one is in the per-query errors)
            first = next(iter(errors.values()))  # the rows come in the dataset's order
            notes.append(
                f"{counted(len(errors), 'search', 'searches')} failed and"
                f" {'is' if len(errors) == 1 else 'are'} not scored (each in the per-query "
                f"errors); the first: {first}"
            )
        if searched.not_asked:
            notes.append(
                f"{counted(searched.not_asked, 'query', 'queries')}"
                f" {'was' if searched.not_asked == 1 else 'were'} not asked: the run stopped this"
                " subject "
                "once more of its searches failed than max_failure_rate allows."
            )
        left_out = n_in_dataset - len(judged) - searched.not_asked
        if left_out > 0 and self.sampling_rate is None:
            # the dataset's line counts the whole dataset: say that the run asked a part of it
            notes.append(
                f"{len(judged) + searched.not_asked} of the dataset's {n_in_dataset} judged "
                "queries were planned (the task's only: or limit:, evaluate's --corpus or "
                f"--limit); the other {left_out} were not asked."
            )
        if counts["n_unjudged"]:
            notes.append(
                f"{counted(counts['n_unjudged'], 'query', 'queries')} "
                + (
                    "has no judgments and was"
                    if counts["n_unjudged"] == 1
                    else "have no judgments and were"
                )
                + " not evaluated."
            )
        if not task.ingested:
            notes.append("Searched as it stood: not reset, the dataset's memories not ingested.")
        else:
            notes.extend(_foreign_ids(dataset, ranked))
        result = SystemResult(
            name=searched.name,
            spec=searched.spec,
            status="ok",
            metrics=self._summaries(values, n_unscored, task.seed),
            agent_metrics=agent.metrics,
            breakdown=self._breakdowns(ok_queries, values, task.seed),
            counts=counts,
            notes=notes,
            latency_ms=_latency(latency),
            ingest_seconds=searched.ingest_seconds,
            per_query=per_query,
            expansion=expansion,
        )
        return result, values, [q.id for q in ok_queries]

    def _query(
        self,
        q: EvalQuery,
        qrels: Mapping[str, Mapping[str, int]],
        results: Mapping[str, Found],
        errors: Mapping[str, str],
        per_query: Mapping[str, list[float]],
        order: Mapping[str, int],
        values: Mapping[str, np.ndarray[Any, Any]],
        *,
        agent: Mapping[str, dict[str, float]],
        attributed: Mapping[str, Mapping[str, list[str]]],
        pre: Mapping[str, list[str]],
    ) -> QueryResult:
        rel = sorted(m for m, g in qrels[q.id].items() if g >= self.rel_threshold)
        if q.id in errors:
            return QueryResult(
                query_id=q.id,
                text=q.text,
                intent=q.intent,
                category=q.category,
                metrics=dict.fromkeys(values),
                hits=[],
                relevant=rel,
                error=errors[q.id],
            )
        r = results[q.id]
        i = order[q.id]
        # values of the declared types, not validated (thousands per run): a copy of a record
        # with every field set, every field given anew (what `model_construct` of every field
        # makes, without its walk of the fields' aliases per call)
        return _QUERY.model_copy(
            update={
                "query_id": q.id,
                "text": q.text,
                "intent": q.intent,
                "category": q.category,
                # NaN (not scored) is the one float unequal to itself
                "metrics": {m: (None if v[i] != v[i] else v[i]) for m, v in per_query.items()},
                "hits": list(r.ids),
                "channels": r.channels,
                "relevant": rel,
                "relevant_channels": dict(attributed.get(q.id, {})),
                "agent_metrics": agent.get(q.id, {}),
                "latency_ms": {s: float(v) for s, v in r.latency_ms.items()},
                "pre_expansion": pre.get(q.id),
                "error": None,
            }
        )

    def _summaries(
        self, values: dict[str, np.ndarray[Any, Any]], n_failed: int, seed: int
    ) -> dict[str, MetricSummary]:
        names = list(values)
        if not names:
            return {}
        matrix = np.vstack([values[m] for m in names])
        cis = bootstrap_cis(
            matrix, n_resamples=self.n_resamples, confidence=self.confidence, seed=seed
        )
        return {
            name: MetricSummary(
                value=ci.mean, ci_low=ci.low, ci_high=ci.high, n_scored=ci.n, n_failed=n_failed
            )
            for name, ci in zip(names, cis, strict=True)
        }

    def _breakdowns(
        self, queries: Sequence[EvalQuery], values: dict[str, np.ndarray[Any, Any]], seed: int
    ) -> dict[str, dict[str, dict[str, MetricSummary]]]:
        out: dict[str, dict[str, dict[str, MetricSummary]]] = {}
        for dimension in ("category", "intent"):
            groups = [getattr(q, dimension) for q in queries]
            if all(g is None for g in groups):
                continue
            per_group: dict[str, dict[str, MetricSummary]] = {}
            names = list(values)
            # every measure's groups from one bootstrap per group (the same numbers as one
            # per measure and group: 28 bootstraps of a LoCoMo run were 4)
            every = (
                breakdowns(
                    np.vstack([values[m] for m in names]),
                    groups,
                    n_resamples=self.n_resamples,
                    seed=seed,
                )
                if names
                else []
            )
            for measure, stats in zip(names, every, strict=True):
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


#: a searched query's record with every field set: each query's is a copy of it (`_query`)
_QUERY = QueryResult.model_construct(
    query_id="",
    text="",
    intent=None,
    category=None,
    metrics={},
    hits=[],
    channels=[],
    relevant=[],
    relevant_channels={},
    agent_metrics={},
    latency_ms={},
    pre_expansion=None,
    error=None,
)


def dataset_sha256(dataset: RetrievalDataset) -> str:
    """A content hash of the dataset (canonical JSON), recorded with every run."""
    # a dataset with no protocol hashes as it did before datasets could carry one
    exclude: dict[str, Any] = {"protocol": True} if dataset.protocol is None else {}
    # and one that is not synthetic as it did before datasets could say they were
    if dataset.synthetic is None:
        exclude["synthetic"] = True
    # and one whose judgments name no channels as it did before judgments could name them
    if not any(j.source_channels for j in dataset.judgments):
        exclude["judgments"] = {"__all__": {"source_channels"}}
    return hashlib.sha256(
        dataset.model_dump_json(exclude=exclude or None).encode("utf-8")
    ).hexdigest()


def _measure_values(task: str, systems: Sequence[SystemResult]) -> list[MeasureValue]:
    return [v for s in systems if s.status == "ok" for v in _system_values(task, s)]


def _system_values(task: str, s: SystemResult) -> list[MeasureValue]:
    def value(
        name: str, m: MetricSummary | AgentMetric, n_scored: int, **more: Any
    ) -> MeasureValue:
        return MeasureValue(
            subject=s.name,
            task=task,
            name=name,
            value=m.value,
            ci_low=m.ci_low,
            ci_high=m.ci_high,
            n_scored=n_scored,
            source="ir",
            **more,
        )

    ir = [
        value(name, m, m.n_scored, n_failed=m.n_failed, kind="retrieval")
        for name, m in s.metrics.items()
    ]
    # seed 002 section 3.1's measures are the task's own; its 3.2 and 3.3 metrics are
    # secondary: shown, and gated only where a target names them
    agent = [
        value(
            name,
            a,
            a.n,
            higher_is_better=name.split("@")[0].split("[")[0] not in ("folder_ils",),
            kind="agent",
            note=a.note if a.value is None else None,
            primary=False,
        )
        for name, a in s.agent_metrics.items()
    ]
    return ir + agent
