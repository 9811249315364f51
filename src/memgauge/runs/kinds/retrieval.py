"""Retrieval tasks: one item per judged query of a retrieval dataset (queries nobody judged are
counted as skipped, not scored); the expected value is the query's grades `{memory_id: grade}`,
and queries of a corpus (LoCoMo's conversations) search only that corpus's memories. This is
what `memgauge evaluate` builds.

A memory subject is asked `search(input, k, session=...)`; the output is the ranked hits (id,
rank, text, score, channels, channel ranks). A query with a session context is also searched
without it (`extra["without_session"]`, for seed 002's personalization lift); a failure of that
second search is ignored. A system that reports its ranking before query expansion
(`SearchResult.pre_expansion`) has it kept in `extra["pre_expansion"]`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar, TypedDict

from memgauge._util.numbers import MAX_FAILURE_RATE, N_RESAMPLES
from memgauge.aggregates.ir import DEFAULT_MEASURES, dataset_sha256
from memgauge.data.readers import load_retrieval_source
from memgauge.data.records import ItemRecord
from memgauge.errors import UsageError, argument
from memgauge.metrics import parse_measure
from memgauge.metrics.agent import DEFAULT_AGENT_K
from memgauge.metrics.conventions import (
    DEFAULT_DEPTH,
    DEFAULT_GAIN,
    DEFAULT_NO_RELEVANT,
    DEFAULT_REL_THRESHOLD,
    Gain,
    NoRelevant,
)
from memgauge.metrics.ir import NO_RELEVANT
from memgauge.metrics.measures import SESSION_MEASURES
from memgauge.runs.builders import command_suite, pool_spec, subject_map
from memgauge.runs.hit_texts import remember
from memgauge.runs.kinds.base import (
    Asked,
    DatasetKind,
    PlannedItem,
    PlannedTask,
    Planning,
    hit_record,
)
from memgauge.runs.suite import Suite, TaskSpec

__all__ = ["RetrievalKind", "evaluate_suite"]


class RetrievalKind(DatasetKind):
    """Judged queries of a retrieval dataset, searched by memory subjects."""

    name: ClassVar[str] = "retrieval"
    description: ClassVar[str] = "judged queries of a retrieval dataset: the ranked hits scored"
    dataset_is = "a retrieval dataset with judged queries"
    # as deep as `evaluate` searches: AP or R-prec (no cutoff) then has one value whichever
    # command computed it, and the default measures fit
    default_k: ClassVar[int] = DEFAULT_DEPTH

    def reads(self, task: TaskSpec) -> str | None:
        return "retrieval"

    def default_aggregates(self, task: TaskSpec) -> list[Any]:
        return ["ir"]

    def plan(self, planning: Planning) -> PlannedTask:
        task = planning.task
        sha256 = None
        if planning.given is not None:
            ds = planning.given
        else:
            ds = load_retrieval_source(planning.dataset_path(), task.dataset_kind)
            # its report's hits read their texts from the dataset: the one just read
            sha256 = dataset_sha256(ds)
            remember(planning.dataset_path(), task.dataset_kind, sha256, ds)
        for agg in planning.aggregates:
            check = getattr(agg, "check", None)
            if callable(check):
                check(ds)
        qrels = ds.qrels()
        judged = [q for q in ds.queries if q.id in qrels]
        items = [
            PlannedItem(
                id=q.id,
                input=q.text,
                expected=qrels[q.id],
                category=q.category,
                corpus=q.corpus,
                session=q.session_context,
                metadata={"intent": q.intent} if q.intent else {},
            )
            for q in judged
        ]
        return planning.planned(
            items,
            # an evaluator that follows a dataset's conventions (a retrieval measure on a
            # LongMemEval `paper` dataset) says so with `for_dataset`, so that its rows equal
            # the ir aggregate's values of the same measure
            evaluators=[(label, _for_dataset(ev, ds), w) for label, ev, w in planning.evaluators],
            memories=ds.memories if task.ingest else None,
            dataset_sha256=sha256 or dataset_sha256(ds),
            n_skipped=len(ds.queries) - len(judged),
            dataset=ds,
        )

    def ask(self, subject: Any, answers: bool, task: PlannedTask, item: PlannedItem) -> Asked:
        k = task.spec.k
        result = subject.search(item.input, k, session=item.session)
        extra: dict[str, Any] = {}
        if item.session is not None:
            try:
                plain = subject.search(item.input, k, session=None)
            except Exception:  # the personalization baseline is optional; the item is not
                pass
            else:
                extra["without_session"] = [h.id for h in plain.hits]
        if result.pre_expansion is not None:  # seed 002's query-expansion impact
            extra["pre_expansion"] = list(result.pre_expansion)
        if result.dedup_filtered is not None:  # seed 002's dedup token savings
            extra["dedup_filtered"] = [{"id": h.id, "text": h.text} for h in result.dedup_filtered]
        known = task.memory_texts()
        hits = [hit_record(h, i, known) for i, h in enumerate(result.hits, 1)]
        return hits, dict(result.latency_ms), extra

    def found_nothing(self, row: ItemRecord) -> bool | None:
        return not row.output if isinstance(row.output, list) else None


def _for_dataset(evaluator: Any, ds: Any) -> Any:
    bind = getattr(evaluator, "for_dataset", None)
    return bind(ds) if callable(bind) else evaluator


class RetrievalSettings(TypedDict, total=False):
    """The settings of `evaluate_suite` that `api.evaluate` takes as keywords and hands to it
    unchanged: its defaults are theirs."""

    name: str | None
    measures: Sequence[str]
    k: int
    rel_threshold: int
    gain: Gain
    agent_k: int
    seed: int
    no_relevant: NoRelevant
    pool_depth: int | None
    pool_grade: int
    pool_judge: str | Mapping[str, Any] | None
    ingest: bool
    concurrency: int
    max_failure_rate: float
    dataset_kind: str | None
    corpora: Sequence[str]
    limit: int | None


def evaluate_suite(
    dataset: Path,
    systems: Sequence[tuple[str, Mapping[str, Any]]],
    *,
    name: str | None = None,
    measures: Sequence[str] = DEFAULT_MEASURES,
    k: int = DEFAULT_DEPTH,
    rel_threshold: int = DEFAULT_REL_THRESHOLD,
    gain: str = DEFAULT_GAIN,
    agent_k: int = DEFAULT_AGENT_K,
    n_resamples: int = N_RESAMPLES,
    seed: int = 0,
    no_relevant: str = DEFAULT_NO_RELEVANT,
    pool_depth: int | None = None,
    pool_grade: int = 1,
    pool_judge: str | Mapping[str, Any] | None = None,
    ingest: bool = True,
    concurrency: int = 4,
    max_failure_rate: float = MAX_FAILURE_RATE,
    timeout: float = 60.0,
    dataset_kind: str | None = None,
    sprt: Mapping[str, Any] | None = None,
    pipeline: Mapping[str, Any] | None = None,
    corpora: Sequence[str] = (),
    limit: int | None = None,
) -> Suite:
    """A retrieval task over `dataset` for every system: per query one verdict per measure,
    and the IR aggregate (CIs, breakdowns, agent-memory metrics, paired comparisons).
    `sprt`: the comparisons' sequential test settings (`sprt_delta`, `sprt_bounds`) that differ
    from the aggregate's defaults.
    `pipeline`: seed 002's EvalPipelineConfig as the IR aggregate takes it (`sampling_rate`,
    `feature_id`, `run_type`); a sampling rate below 1 also samples the queries asked.

    `no_relevant` (zero, one, skip: `metrics.ir`) goes to the evaluators and the aggregate
    alike; the default is left out of the suite, which stays as it was before the option.
    `dataset_kind`: what `dataset` is (dataset-dir, bundle, locomo, longmemeval; default:
    detected from its content).
    `corpora` (LoCoMo's conversations, e.g. conv-26) and `limit` (the first N judged queries
    of those) keep a run small: only those corpora's memories are ingested."""
    canonical = [str(parse_measure(m)) for m in measures]
    cutoffs = [c for c in (parse_measure(m).cutoff for m in canonical) if c is not None]
    if cutoffs and k < max(cutoffs):
        raise UsageError(
            f"search depth k={k} is below the largest cutoff @{max(cutoffs)}; "
            f"use {argument('k', max(cutoffs))} or more"
        )
    if pool_depth is not None and (pool_depth < 1 or not 0 <= pool_grade <= 3):
        raise UsageError("pool depth must be >= 1 and the pool grade 0-3")
    if pool_judge is not None and pool_depth is None:
        raise UsageError(
            f"{argument('pool_judge')} grades a pool: give {argument('pool_depth', 'N')} as well"
        )
    if no_relevant not in NO_RELEVANT:
        raise UsageError(
            f"{argument('no_relevant')} {no_relevant!r}: use one of {', '.join(NO_RELEVANT)}"
        )
    retrieval = {"rel_threshold": rel_threshold, "gain": gain, "no_relevant": no_relevant}
    ir: dict[str, Any] = {
        "measures": canonical,
        "rel_threshold": rel_threshold,
        "gain": gain,
        "agent_k": agent_k,
        "n_resamples": n_resamples,
        "pool_depth": pool_depth,
        "pool_grade": pool_grade,
        **({"no_relevant": no_relevant} if no_relevant != DEFAULT_NO_RELEVANT else {}),
        **({"pool_judge": pool_spec(pool_judge)} if pool_judge is not None else {}),
        **(sprt or {}),
        **(pipeline or {}),
    }
    rate = (pipeline or {}).get("sampling_rate")
    only: dict[str, Any] = {"corpora": list(corpora)} if corpora else {}
    if rate is not None:
        only |= {"sample": rate, "sample_seed": seed}
    task = {
        "name": "retrieval",
        "kind": "retrieval",
        "dataset": str(dataset.resolve()),
        **({"dataset_kind": dataset_kind} if dataset_kind else {}),
        "k": k,
        "timeout": timeout,
        "ingest": ingest,
        **({"only": only} if only else {}),
        **({"limit": limit} if limit is not None else {}),
        # a verdict per query and measure; LongMemEval's session measures need the query's
        # whole corpus, so only the aggregate computes them
        "evaluators": [
            {"spec": {"retrieval": {"measure": m, **retrieval}}, "label": m}
            for m in canonical
            if parse_measure(m).name not in SESSION_MEASURES
        ]
        or [{"spec": {"retrieval": {"measure": "RR@10", **retrieval}}, "label": "RR@10"}],
        "aggregates": [{"ir": ir}, {"cost": {}}],
    }
    return command_suite(
        name or f"evaluate:{dataset.resolve().name}",
        f"memgauge evaluate {dataset}",
        subject_map(systems),
        [task],
        concurrency=concurrency,
        seed=seed,
        max_failure_rate=max_failure_rate,
    )
