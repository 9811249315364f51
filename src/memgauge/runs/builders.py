"""Suite builders: `evaluate`, `demo`, `extraction`, `operations` and `audit` each build a suite
in memory, and the one engine runs it like any suite file, so every evaluation is stored,
resumable (the same command with `--resume ID` rebuilds the same suite), gated, compared and
shown the same way.

Paths in built suites are absolute, so a resume from another directory finds the same files. A
built suite's name groups its runs for `history` and `gate`: `evaluate:<dataset>`,
`extraction:<cases>`, `operations:<cases>`, `audit:<dataset>`, `demo`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from memgauge.aggregates.ir import DEFAULT_MEASURES
from memgauge.data.parsing import ParseError, load_yaml
from memgauge.data.traces import unlabelled_cases
from memgauge.errors import UsageError
from memgauge.metrics import parse_measure
from memgauge.metrics.conventions import (
    DEFAULT_GAIN,
    DEFAULT_NO_RELEVANT,
    DEFAULT_REL_THRESHOLD,
)
from memgauge.metrics.ir import NO_RELEVANT
from memgauge.metrics.measures import SESSION_MEASURES
from memgauge.runs.suite import Suite

__all__ = [
    "audit_suite",
    "evaluate_suite",
    "extraction_suite",
    "learnings_arg",
    "operations_suite",
    "pool_spec",
    "subject_map",
]


def subject_map(systems: Sequence[tuple[str, Mapping[str, Any]]]) -> dict[str, Any]:
    """`{label: spec}` in order; UsageError when two share a label."""
    out: dict[str, Any] = {}
    for label, spec in systems:
        if label in out:
            names = [name for name, _ in systems]
            raise UsageError(
                f"system names must be unique, got {names}; give each a distinct label (@LABEL)"
            )
        out[label] = dict(spec)
    return out


def evaluate_suite(
    dataset: Path,
    systems: Sequence[tuple[str, Mapping[str, Any]]],
    *,
    name: str | None = None,
    measures: Sequence[str] = DEFAULT_MEASURES,
    k: int = 20,
    rel_threshold: int = DEFAULT_REL_THRESHOLD,
    gain: str = DEFAULT_GAIN,
    agent_k: int = 5,
    n_resamples: int = 1000,
    seed: int = 0,
    no_relevant: str = DEFAULT_NO_RELEVANT,
    pool_depth: int | None = None,
    pool_grade: int = 1,
    pool_judge: str | Mapping[str, Any] | None = None,
    ingest: bool = True,
    concurrency: int = 4,
    max_failure_rate: float = 0.1,
    timeout: float = 60.0,
    dataset_kind: str | None = None,
    sprt: Mapping[str, Any] | None = None,
    pipeline: Mapping[str, Any] | None = None,
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
    detected from its content)."""
    canonical = [str(parse_measure(m)) for m in measures]
    cutoffs = [c for c in (parse_measure(m).cutoff for m in canonical) if c is not None]
    if cutoffs and k < max(cutoffs):
        raise UsageError(
            f"search depth k={k} is below the largest cutoff @{max(cutoffs)}; "
            f"use --k {max(cutoffs)} or more"
        )
    if pool_depth is not None and (pool_depth < 1 or not 0 <= pool_grade <= 3):
        raise UsageError("pool depth must be >= 1 and the pool grade 0-3")
    if pool_judge is not None and pool_depth is None:
        raise UsageError("--pool-judge grades a pool: give --pool-depth N as well")
    if no_relevant not in NO_RELEVANT:
        raise UsageError(f"--no-relevant {no_relevant!r}: use one of {', '.join(NO_RELEVANT)}")
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
    sample = {"only": {"sample": rate, "sample_seed": seed}} if rate is not None else {}
    return Suite.model_validate(
        {
            "name": name or f"evaluate:{dataset.resolve().name}",
            "description": f"memgauge evaluate {dataset}",
            "subjects": subject_map(systems),
            "concurrency": concurrency,
            "seed": seed,
            "max_failure_rate": max_failure_rate,
            "tasks": [
                {
                    "name": "retrieval",
                    "kind": "retrieval",
                    "dataset": str(dataset.resolve()),
                    **({"dataset_kind": dataset_kind} if dataset_kind else {}),
                    "k": k,
                    "timeout": timeout,
                    "ingest": ingest,
                    **sample,
                    # a verdict per query and measure; LongMemEval's session measures need the
                    # query's whole corpus, so only the aggregate computes them
                    "evaluators": [
                        {"spec": {"retrieval": {"measure": m, **retrieval}}, "label": m}
                        for m in canonical
                        if parse_measure(m).name not in SESSION_MEASURES
                    ]
                    or [
                        {"spec": {"retrieval": {"measure": "RR@10", **retrieval}}, "label": "RR@10"}
                    ],
                    "aggregates": [{"ir": ir}],
                }
            ],
        }
    )


def pool_spec(value: str | Mapping[str, Any]) -> str | dict[str, Any]:
    """The relevance judge of `--pool-judge`: a name (`relevance`) or YAML flow text
    (`'{relevance: {model: m}}'`)."""
    return _flow_arg(value, "--pool-judge", "'relevance' or '{relevance: {model: m}}'")


def _flow_arg(value: str | Mapping[str, Any], flag: str, hint: str) -> str | dict[str, Any]:
    """A flag's value: a mapping as is, YAML flow text (`{...}`) parsed into one, any other
    text stripped; UsageError naming the flag for empty text or flow text that is no mapping."""
    if isinstance(value, Mapping):
        return dict(value)
    text = value.strip()
    if not text:
        raise UsageError(f"{flag}: give {hint}")
    if not text.startswith("{"):
        return text
    try:
        parsed = load_yaml(text)[0]
    except ParseError as exc:
        raise UsageError(f"{flag}: not a mapping ({exc.message}); give {hint}") from None
    if not isinstance(parsed, dict):
        raise UsageError(f"{flag}: give {hint}")
    return parsed


def extraction_suite(
    cases: Path | None,
    subject: Mapping[str, Any],
    *,
    subject_name: str = "extractor",
    match: str = "semantic",
    threshold: float = 0.75,
    judge_model: str | None = None,
    limit: int | None = None,
    concurrency: int = 4,
    max_failure_rate: float = 0.1,
    seed: int = 0,
    trace: Path | None = None,
    tags: Sequence[str] = (),
    sample: float = 1.0,
    dataset_kind: str | None = None,
) -> Suite:
    """Seed 001's fact extraction over `cases` for one extractor (live or recorded); and, with
    `trace` (a production trace), its unlabelled lines tagged with any of `tags`, a `sample`
    share of them (seeded by `seed`), scored by the fact-enumeration judge alone in a task of
    their own (`online`), so judged and labelled numbers are never pooled. `dataset_kind`:
    what `cases` is (extraction or locomo; default: detected from its content).

    UsageError when neither is given, or when `trace` is alone and has no unlabelled line."""
    if cases is None and trace is None:
        raise UsageError(
            "give CASES (labelled cases) or --outputs TRACE.jsonl (a production trace)"
        )
    tasks: list[dict[str, Any]] = []
    if cases is not None:
        args: dict[str, Any] = {"match": match, "threshold": threshold}
        if judge_model:
            args["judge_model"] = judge_model
        tasks.append(
            {
                "name": "extraction",
                "kind": "extraction",
                "dataset": str(cases.resolve()),
                **({"dataset_kind": dataset_kind} if dataset_kind else {}),
                "limit": limit,
                "evaluators": [{"spec": {"extraction": args}, "label": "extraction"}],
            }
        )
    if trace is not None:
        selected, n_unlabelled = unlabelled_cases(trace, tags=tags, sample=sample, seed=seed)
        if not selected and cases is None:
            raise UsageError(
                f"{trace} has no unlabelled line (one with its conversation and no case_id); "
                "give the labelled CASES its case_ids refer to"
                if n_unlabelled == 0
                else f"none of the {n_unlabelled} unlabelled lines of {trace} is tagged "
                f"{' or '.join(tags) or '(any)'} and in the {sample:g} sample (seed {seed})"
            )
        if selected:
            judge: dict[str, Any] = {"match": "judge"}
            if judge_model:
                judge["judge_model"] = judge_model
            tasks.append(
                {
                    "name": "online",
                    "kind": "extraction",
                    "dataset": str(trace.resolve()),
                    "trace": {"tags": list(tags), "sample": sample, "seed": seed},
                    "limit": limit,
                    "evaluators": [{"spec": {"extraction": judge}, "label": "extraction"}],
                }
            )
    named = cases if cases is not None else trace
    assert named is not None
    return Suite.model_validate(
        {
            "name": f"extraction:{named.resolve().stem}",
            "description": f"memgauge extraction {named}",
            "subjects": {subject_name: dict(subject)},
            "concurrency": concurrency,
            "seed": seed,
            "max_failure_rate": max_failure_rate,
            "tasks": tasks,
        }
    )


def operations_suite(
    cases: Path,
    subject: Mapping[str, Any],
    *,
    subject_name: str = "decider",
    judge: bool = False,
    judge_model: str | None = None,
    judge_learnings: str | Mapping[str, Any] | None = None,
    concurrency: int = 4,
    max_failure_rate: float = 0.1,
    seed: int = 0,
) -> Suite:
    """Seed 000's merge decisions over `cases` for one decider (live or recorded);
    `judge_learnings` (a query, or `{query, k, budget, memory, path}`) adds past failures to
    the merge judge's prompt."""
    args: dict[str, Any] = {"judge": judge}
    if judge_model:
        args["judge_model"] = judge_model
    if judge_learnings is not None:
        if not judge:
            raise UsageError("--judge-learnings needs --judge (it goes into the judge's prompt)")
        args["learnings"] = learnings_arg(judge_learnings, "--judge-learnings")
    return Suite.model_validate(
        {
            "name": f"operations:{cases.resolve().stem}",
            "description": f"memgauge operations {cases}",
            "subjects": {subject_name: dict(subject)},
            "concurrency": concurrency,
            "seed": seed,
            "max_failure_rate": max_failure_rate,
            "tasks": [
                {
                    "name": "operations",
                    "kind": "operations",
                    "dataset": str(cases.resolve()),
                    "evaluators": [
                        {"spec": {"operation-checks": args}, "label": "operation-checks"}
                    ],
                }
            ],
        }
    )


def learnings_arg(value: str | Mapping[str, Any], flag: str) -> dict[str, Any]:
    """A `learnings:` argument from a flag: a plain query (`'memory merge judge'`) or YAML
    flow text of the whole argument (`'{query: merge, k: 2, path: l.db}'`); its keys are
    checked with the suite."""
    got = _flow_arg(value, flag, "a query, or {query: ..., k: N, budget: N}")
    return {"query": got} if isinstance(got, str) else got


def audit_suite(
    dataset: Path,
    subject: Mapping[str, Any],
    evaluator: str | Mapping[str, Any],
    *,
    name: str,
    locomo: bool = False,
    limit: int | None = None,
    seed: int = 0,
    concurrency: int = 8,
    max_failure_rate: float = 0.5,
    dataset_kind: str | None = None,
) -> Suite:
    """Seed 003's audit of an agent: the dataset's probes, asked against its turns; on a
    LoCoMo file (`locomo`), LoCoMo's own QA scoring beside the verdict (it needs no LLM).
    `dataset_kind`: conversations, locomo or longmemeval (default: detected)."""
    return Suite.model_validate(
        {
            "name": f"audit-{name}",
            "description": f"memory audit of {dataset.name}",
            "concurrency": concurrency,
            "seed": seed,
            "max_failure_rate": max_failure_rate,
            "subjects": {"agent": dict(subject)},
            "tasks": [
                {
                    "name": "audit",
                    "kind": "expected-output",
                    "dataset": str(dataset.resolve()),
                    **({"dataset_kind": dataset_kind} if dataset_kind else {}),
                    "probes": {"seed": seed},
                    "limit": limit,
                    "evaluators": [evaluator, *(["locomo-qa"] if locomo else [])],
                }
            ],
        }
    )
