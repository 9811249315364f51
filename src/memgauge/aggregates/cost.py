"""Cost beside accuracy: the context tokens a memory returns, its latency, and accuracy per
1,000 context tokens, per subject, as memory-system write-ups print them (Zep's LongMemEval
results give p50 / p95 latency and the median context beside accuracy; Mem0's paper tokens per
query); with a token budget, seed 002 Layer 4's context errors under token pressure.

Measures (per subject; every one with a 95% percentile bootstrap CI over queries, the suite's
seed):
- `context_tokens.mean`, `context_tokens.p50`, `context_tokens.p95`: tokens of the hits' text a
  search returned at the task's `k` (`aggregates.cost_values`), in `encoding` (o200k_base by
  default; which one is in the detail, in every table's title, and in the spec).
- `latency_ms.mean`, `latency_ms.p50`, `latency_ms.p95`: the subject's latency at `stage`
  (`total` by default: the subject's call as the engine timed it, or the sum of the stages a
  subject timed itself, an agent's search and LLM call).
- `ACCURACY_per_1k_tokens`: 1000 * mean(accuracy) / mean(context tokens) over the queries with
  both, ACCURACY the evaluator named by `accuracy` (default: the task's first evaluator, e.g.
  `RR@5_per_1k_tokens`); n/a when no query has a context token.
- for a subject whose own LLM calls were metered (`llm.tally`): `llm_tokens.mean` and `.p95`
  (prompt + completion tokens per query, as the provider counted them: no encoding of ours)
  and `llm_cost_usd.mean` (priced by the price table, `llm.usage`; n/a for a model without a
  price).
- with `budget: N`: `token_usage_ratio.mean` and `.p95` (context tokens / N: seed 002's
  `tokenUsageRatio`), `context_overflow_rate` (the share of queries whose context exceeds N),
  `budget_cut_relevant.mean` (relevant memories a search found that the budget cut, per judged
  query) and `budget_cut_relevant_rate` (of the relevant memories found, the share cut).

A task where no subject returns a context (agents answering) gets no context-token
measures, and one where no LLM call was metered no LLM measures: they are left out, not
shown as n/a for every subject. Token and latency measures are lower-is-better and, like every cost measure, secondary: the
gate shows them as information unless a target, `--fail-under` or `--measure` names them.
A failed search is counted in `n_failed` and has no value (never 0 tokens); a query with no
context (an answer, not hits) is not counted at all.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import numpy.typing as npt

from memgauge._util.numbers import CONFIDENCE, N_RESAMPLES, resamples_out_of_range
from memgauge.aggregates.base import Target, TaskView, shaped
from memgauge.aggregates.cost_shapes import (
    CostFacts,
    cost_point,
    cost_shapes,
    measures_table,
)
from memgauge.aggregates.cost_values import QueryCost, SubjectCosts, costs_of
from memgauge.data.records import AggregateResult, ItemRecord, MeasureValue
from memgauge.data.shapes import Shape
from memgauge.errors import UsageError
from memgauge.llm.context import llm_context
from memgauge.llm.usage import Price
from memgauge.metrics.conventions import DEFAULT_REL_THRESHOLD
from memgauge.metrics.tokens import DEFAULT_ENCODING, PRESSURE_LEVELS, Encoding, pressure_level
from memgauge.stats.bootstrap import ConfidenceInterval, bootstrap_cis
from memgauge.stats.resampled import quantile_cis, ratio_ci
from memgauge.stats.shared_draws import shared_draws

__all__ = ["BUDGET_MEASURES", "COST_MEASURES", "LLM_MEASURES", "CostAggregate"]

_F64 = npt.NDArray[np.float64]

#: the measures every cost aggregate gives (`ACCURACY_per_1k_tokens` beside them)
COST_MEASURES: tuple[str, ...] = (
    "context_tokens.mean",
    "context_tokens.p50",
    "context_tokens.p95",
    "latency_ms.mean",
    "latency_ms.p50",
    "latency_ms.p95",
)
#: those an LLM-backed subject adds (its own calls, as the provider counted them)
LLM_MEASURES: tuple[str, ...] = ("llm_tokens.mean", "llm_tokens.p95", "llm_cost_usd.mean")
#: and those a token budget adds
BUDGET_MEASURES: tuple[str, ...] = (
    "token_usage_ratio.mean",
    "token_usage_ratio.p95",
    "context_overflow_rate",
    "budget_cut_relevant.mean",
    "budget_cut_relevant_rate",
)


@dataclass(frozen=True)
class CostAggregate:
    """Context tokens, latency and accuracy per 1,000 tokens per subject (module docstring).

    Attributes:
        encoding: the OpenAI encoding tokens are counted in (o200k_base or cl100k_base).
        budget: a simulated context budget in tokens (seed 002 Layer 4); None: no budget.
        accuracy: the evaluator (its label in the task) whose verdicts are the accuracy of
            `ACCURACY_per_1k_tokens`; default: the task's first evaluator.
        rel_threshold: grade at or above which a memory counts as relevant (budget cuts).
        stage: the latency stage read (`total`: the subject's call).
        n_resamples: bootstrap resamples for CIs.
        confidence: CI level.
    """

    encoding: Encoding = DEFAULT_ENCODING
    budget: int | None = None
    accuracy: str | None = None
    rel_threshold: int = DEFAULT_REL_THRESHOLD
    stage: str = "total"
    n_resamples: int = N_RESAMPLES
    confidence: float = CONFIDENCE
    name: ClassVar[str] = "cost"
    #: it reads outputs, latencies, extras and verdict values only
    needs_detail: ClassVar[bool] = False

    def __post_init__(self) -> None:
        if self.budget is not None and self.budget < 1:
            raise UsageError(f"budget {self.budget}: give a token budget of 1 or more")
        if instead := resamples_out_of_range(self.n_resamples):
            raise UsageError(f"n_resamples {self.n_resamples}: {instead}")
        if not 0.0 < self.confidence < 1.0:
            raise UsageError(f"confidence {self.confidence}: give a level between 0 and 1")

    def _accuracy(self, task: TaskView) -> str | None:
        if self.accuracy is not None:
            return self.accuracy
        return task.evaluators[0][0] if task.evaluators else None

    def measure_names(self, task: TaskView) -> list[str]:
        """See the module docstring."""
        accuracy = self._accuracy(task)
        per_1k = [f"{accuracy}_per_1k_tokens"] if accuracy is not None else []
        budget = list(BUDGET_MEASURES) if self.budget is not None else []
        return [*COST_MEASURES, *per_1k, *LLM_MEASURES, *budget]

    def targets(self, task: TaskView) -> list[Target]:
        """None of its own: a bound on tokens or latency is the suite's to set."""
        return []

    def compute(self, task: TaskView, items: Mapping[str, Sequence[ItemRecord]]) -> AggregateResult:
        """Per subject its measures; the detail has every query's context tokens, latency and
        (with a budget) usage ratio, pressure level and cuts."""
        # its intervals over the same queries draw the same indices: drawn once
        with shared_draws():
            return self._compute(task, items)

    def _compute(
        self, task: TaskView, items: Mapping[str, Sequence[ItemRecord]]
    ) -> AggregateResult:
        if (
            self.accuracy is not None
            and task.evaluators
            and self.accuracy not in {label for label, _kind in task.evaluators}
        ):
            labels = ", ".join(label for label, _kind in task.evaluators)
            raise UsageError(
                f"task {task.name!r}: the cost aggregate's accuracy {self.accuracy!r} is none "
                f"of its evaluators ({labels})"
            )
        accuracy = self._accuracy(task)
        dataset = task.dataset
        known = {m.id: m.text for m in dataset.memories} if dataset is not None else {}
        # which hits are relevant: read by the budget's cuts alone
        qrels = dataset.qrels() if dataset is not None and self.budget is not None else None
        measures: list[MeasureValue] = []
        systems: list[dict[str, object]] = []
        every = {
            subject: costs_of(
                items.get(subject, ()),
                encoding=self.encoding,
                known=known,
                qrels=qrels,
                rel_threshold=self.rel_threshold,
                accuracy=accuracy,
                stage=self.stage,
            )
            for subject in task.subjects
        }
        queries = [q for costs in every.values() for q in costs.queries]
        models = {m for q in queries for m in q.llm_usage or {}}
        prices = llm_context().meter.prices
        seen = _Seen(
            accuracy=accuracy,
            # the measures no subject of the task can give are left out, not shown n/a
            context=any(q.hit_tokens is not None for q in queries),
            llm=bool(models),
            prices=prices,
            unpriced=sorted(m for m in models if m not in prices),
        )
        points: list[dict[str, object]] = []
        for subject, costs in every.items():
            own = self._measures(task, subject, costs, seen)
            measures += own
            systems.append(self._system(subject, costs))
            points.append(cost_point(subject, self._accuracy_ci(costs, task.seed), own))
        detail = {
            "encoding": self.encoding,
            "budget": self.budget,
            "stage": self.stage,
            "accuracy": accuracy,
            "pressure_levels": [
                {"level": n, "below": None if b == float("inf") else b} for n, b in PRESSURE_LEVELS
            ],
            "systems": systems,
            # each subject's dot on the accuracy-against-cost charts (`cost_shapes`)
            "points": points if accuracy is not None else [],
        }
        # the facts are the detail's encoding, budget, stage, accuracy and systems
        facts = CostFacts.model_validate(detail)
        return shaped(self, task, measures, detail, measures_table(measures), facts=facts)

    @staticmethod
    def shapes_from(detail: Mapping[str, object]) -> list[Shape]:
        """Accuracy against context tokens and latency per subject: a table and two scatter
        charts (`aggregates.cost_shapes`)."""
        return cost_shapes(detail)

    def _accuracy_ci(self, costs: SubjectCosts, seed: int) -> ConfidenceInterval | None:
        """The subject's mean accuracy over its answered queries, with its bootstrap CI."""
        acc = np.asarray(
            [np.nan if q.accuracy is None else q.accuracy for q in costs.queries], np.float64
        )
        if not acc.size:
            return None
        (ci,) = bootstrap_cis(
            acc[None, :], n_resamples=self.n_resamples, confidence=self.confidence, seed=seed
        )
        return ci

    # --- one subject -------------------------------------------------------------------------

    def _system(self, subject: str, costs: SubjectCosts) -> dict[str, object]:
        out: dict[str, object] = {
            "name": subject,
            "n_queries": len(costs.queries),
            "n_failed": costs.n_failed,
            "n_no_context": len(costs.queries) - len(costs.with_context),
            "per_query": [q.row(self.budget) for q in costs.queries],
        }
        if self.budget is not None:
            levels = [pressure_level((q.tokens or 0) / self.budget) for q in costs.with_context]
            out["pressure"] = {n: levels.count(n) for n, _b in PRESSURE_LEVELS}
        return out

    def _measures(
        self, task: TaskView, subject: str, costs: SubjectCosts, seen: _Seen
    ) -> list[MeasureValue]:
        seed, accuracy = task.seed, seen.accuracy
        queries = costs.with_context
        tokens = np.asarray([q.tokens for q in queries], dtype=np.float64)
        latency = np.asarray(
            [np.nan if q.latency_ms is None else q.latency_ms for q in costs.queries],
            dtype=np.float64,
        )
        out: list[tuple[str, ConfidenceInterval, bool]] = []
        if seen.context:
            out += self._spread("context_tokens", tokens, seed, (50.0, 95.0))
        out += self._spread("latency_ms", latency, seed, (50.0, 95.0))
        if seen.llm:
            out += self._llm(costs.queries, seen.prices, seed)
        if accuracy is not None and seen.context:
            acc = np.asarray(
                [np.nan if q.accuracy is None else q.accuracy for q in queries], dtype=np.float64
            )
            ci = ratio_ci(
                acc,
                tokens,
                scale=1000.0,
                n_resamples=self.n_resamples,
                confidence=self.confidence,
                seed=seed,
            )
            out.append((f"{accuracy}_per_1k_tokens", ci, True))
        if self.budget is not None and seen.context:
            out += self._budget(queries, tokens, seed)
        return [
            MeasureValue(
                subject=subject,
                task=task.name,
                name=name,
                value=ci.mean,
                ci_low=ci.low,
                ci_high=ci.high,
                n_scored=ci.n,
                n_failed=costs.n_failed,
                higher_is_better=higher,
                source=self.name,
                primary=False,
                note=_why_na(name, ci, self.encoding, seen) if ci.mean is None else None,
            )
            for name, ci, higher in out
        ]

    def _llm(
        self, queries: Sequence[QueryCost], prices: Mapping[str, Price], seed: int
    ) -> list[tuple[str, ConfidenceInterval, bool]]:
        """The subject's own LLM tokens per query, and their cost where every model is priced
        (`llm.usage`); a query with no metered call is n/a, not 0."""
        used = np.asarray(
            [np.nan if q.llm_tokens is None else q.llm_tokens for q in queries], np.float64
        )
        cost = np.asarray([_cost(q.llm_usage, prices) for q in queries], dtype=np.float64)
        (dollars,) = bootstrap_cis(
            cost[None, :], n_resamples=self.n_resamples, confidence=self.confidence, seed=seed
        )
        return [
            *self._spread("llm_tokens", used, seed, (95.0,)),
            ("llm_cost_usd.mean", dollars, False),
        ]

    def _spread(
        self, base: str, values: _F64, seed: int, quantiles: tuple[float, ...]
    ) -> list[tuple[str, ConfidenceInterval, bool]]:
        """`base.mean` and `base.pNN` of `values` (NaN: not recorded), lower is better."""
        (mean,) = bootstrap_cis(
            values[None, :],
            n_resamples=self.n_resamples,
            confidence=self.confidence,
            seed=seed,
        )
        qs = quantile_cis(
            values, quantiles, n_resamples=self.n_resamples, confidence=self.confidence, seed=seed
        )
        return [
            (f"{base}.mean", mean, False),
            *((f"{base}.p{q:g}", ci, False) for q, ci in zip(quantiles, qs, strict=True)),
        ]

    def _budget(
        self, queries: Sequence[QueryCost], tokens: _F64, seed: int
    ) -> list[tuple[str, ConfidenceInterval, bool]]:
        budget = self.budget
        assert budget is not None
        out = self._spread("token_usage_ratio", tokens / budget, seed, (95.0,))
        over = (tokens > budget).astype(np.float64)
        judged = [q.relevant for q in queries if q.relevant is not None]
        kept = [q.kept(budget) for q in queries if q.relevant is not None]
        cut = np.asarray([sum(r[k:]) for r, k in zip(judged, kept, strict=True)], np.float64)
        found = np.asarray([sum(r) for r in judged], dtype=np.float64)
        n, level = self.n_resamples, self.confidence
        overflow, cut_mean = (
            bootstrap_cis(v[None, :], n_resamples=n, confidence=level, seed=seed)[0]
            for v in (over, cut)
        )
        cut_rate = ratio_ci(cut, found, n_resamples=n, confidence=level, seed=seed)
        return [
            out[0],
            out[1],
            ("context_overflow_rate", overflow, False),
            ("budget_cut_relevant.mean", cut_mean, False),
            ("budget_cut_relevant_rate", cut_rate, False),
        ]


@dataclass(frozen=True)
class _Seen:
    """What the task's records hold, over every subject: which measures it gets."""

    accuracy: str | None
    context: bool
    llm: bool
    prices: Mapping[str, Price]
    unpriced: list[str]


def _cost(usage: Mapping[str, Mapping[str, int]] | None, prices: Mapping[str, Price]) -> float:
    """USD of one query's LLM calls; NaN when none was metered or a model has no price."""
    if not usage or any(m not in prices for m in usage):
        return float("nan")
    return sum(
        prices[m].usd(row.get("prompt_tokens") or 0, row.get("completion_tokens") or 0)
        for m, row in usage.items()
    )


def _why_na(name: str, ci: ConfidenceInterval, encoding: str, seen: _Seen) -> str:
    if name.startswith("llm_cost_usd"):
        unpriced = ", ".join(seen.unpriced) or "its models"
        return f"no price for {unpriced}: give a price table (MEMGAUGE_PRICES)"
    if name.startswith("llm_tokens"):
        return "no LLM call of this subject was metered (a client of its own is not seen)"
    if name.startswith("latency_ms"):
        return "no search recorded a latency at this stage"
    if name.startswith("budget_cut"):
        return (
            "no judged query found a relevant memory"
            if ci.n
            else "no judged query (the budget's cuts are counted on judged queries)"
        )
    if name.endswith("_per_1k_tokens") and ci.n:
        return f"no query returned a context token ({encoding})"
    return "no query returned a context (every search failed, or none was asked)"
