"""What a candidate scores: an ordinary recorded run of the suite's task on the one engine.

A candidate is the subject's spec with the candidate's FIELDs set (and the task's `k`, when it
is searched), run on one side of the split (`only:` on the task) as a suite of its own named
`optimize:SUITE` (kind `optimize`), so its runs stay out of the suite's own history and gates.
Its score is the mean of the objective's per-item values (an evaluator's verdicts, or the
task's weighted `score`) with a 95% bootstrap CI; an item that failed or could not be scored
has no value (n/a, never 0), and the paired comparisons drop it. A run that failed (too many
failed items) is a failed candidate: recorded, never accepted.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol

import numpy as np
from pydantic import ValidationError

from memgauge._util.numbers import fmean
from memgauge.data.jsonio import problems_from_validation
from memgauge.data.models import RetrievalDataset
from memgauge.data.records import ItemRecord, mean_of_repeats
from memgauge.errors import DataError, UsageError
from memgauge.llm.context import llm_context
from memgauge.llm.scope import CallScope
from memgauge.llm.usage import priced
from memgauge.optimize.config import StudyConfig, subject_params
from memgauge.optimize.feasible import constrained_task, constraint_of
from memgauge.optimize.split import Split
from memgauge.runs.engine import RunReport, run_suite
from memgauge.runs.options import RunOptions
from memgauge.runs.optspec import apply_params
from memgauge.runs.plan import plan_suite
from memgauge.runs.pools import ShardPool
from memgauge.runs.recording import Recorder
from memgauge.runs.suite import ItemFilter, Suite
from memgauge.stats import bootstrap_ci

__all__ = [
    "Candidate",
    "CandidateRun",
    "Evaluation",
    "Objective",
    "SuiteObjective",
    "evaluation_of",
    "refused",
]


@dataclass(frozen=True)
class Candidate:
    """A configuration to score: searched FIELDs, and the text fields' texts.

    `unusable` says why a proposer could not make the candidate it was asked for (the
    optimizer model's reply held no text): a failed candidate, recorded with that reason and
    never scored; its params and texts are the point it was proposed from."""

    params: dict[str, Any]
    texts: dict[str, str] = field(default_factory=dict)
    unusable: str | None = None


@dataclass(frozen=True)
class Evaluation:
    """How a candidate scored on one side of the split.

    Attributes:
        score: mean of the per-item values (None: no item could be scored, or the run failed).
        ci_low, ci_high: its 95% bootstrap CI.
        values: item id -> value (None: n/a).
        run_id: the candidate's run.
        status: completed or failed.
        reason: why it failed.
        invalid: the task or the subject refused the candidate before its run started (its
            spec failed validation: bad input, no run exists).
        failures: the worst items, with their evaluators' reasons (for text proposers).
        cost_usd: the run's priced LLM spend (None: no priced model).
        constraint_value: under a constrained objective, the bounded measure's value in the
            candidate's run (None: n/a).
        feasible: whether it meets the bound (None: no constraint; `optimize.feasible`).
    """

    score: float | None
    ci_low: float | None = None
    ci_high: float | None = None
    values: dict[str, float | None] = field(default_factory=dict)
    run_id: str | None = None
    status: str = "completed"
    reason: str | None = None
    failures: list[dict[str, Any]] = field(default_factory=list)
    cost_usd: float | None = None
    invalid: bool = False
    constraint_value: float | None = None
    feasible: bool | None = None


@dataclass(frozen=True)
class CandidateRun:
    """How a candidate's run goes: `on_run` is told the run's id as soon as it exists,
    `resume` finishes that run instead of starting one, `scope` is its LLM calls' scope."""

    on_run: Callable[[str], None]
    resume: str | None
    scope: CallScope


def refused(reason: str) -> Evaluation:
    """The evaluation of a candidate refused before its run (see `Evaluation.invalid`)."""
    return Evaluation(None, status="failed", reason=reason, invalid=True)


def evaluation_of(
    values: Mapping[str, float | None],
    *,
    seed: int = 0,
    run_id: str | None = None,
    failures: Sequence[dict[str, Any]] = (),
    cost_usd: float | None = None,
) -> Evaluation:
    """An evaluation from per-item values: their mean and its bootstrap CI (n/a items out)."""
    scored = np.array([v for v in values.values() if v is not None], dtype=np.float64)
    if scored.size == 0:
        return Evaluation(None, values=dict(values), run_id=run_id, failures=list(failures))
    ci = bootstrap_ci(scored, seed=seed)
    return Evaluation(
        score=fmean(scored),
        ci_low=ci.low,
        ci_high=ci.high,
        values=dict(values),
        run_id=run_id,
        failures=list(failures),
        cost_usd=cost_usd,
    )


class Objective(Protocol):
    """Scores candidates (a suite's runs; or, in tests and benchmarks, a function)."""

    def evaluate(self, candidate: Candidate, phase: str, run: CandidateRun) -> Evaluation:
        """Score `candidate` on the tuning (`phase="tune"`) or held-out side, in `run`."""
        ...

    def items(self) -> list[tuple[str, str | None]]:
        """(item id, corpus) of every item of the objective's task, for the split."""
        ...


class _RunStarted:
    """A `Progress` that tells the study the candidate's run id the moment it exists."""

    def __init__(self, on_run: Callable[[str], None]) -> None:
        self.on_run = on_run

    def start(self, run_id: str, total: int, done: int) -> None:
        self.on_run(run_id)

    def phase(self, subject: str, task: str, corpus: str | None) -> None:
        pass

    def advance(self, row: ItemRecord) -> None:
        pass


def _text(value: Any, limit: int = 400) -> str:
    text = value if isinstance(value, str) else str(value)
    return text if len(text) <= limit else text[:limit] + "..."


class SuiteObjective:
    """Candidates as runs of the suite's objective task (see the module docstring)."""

    def __init__(
        self,
        suite: Suite,
        config: StudyConfig,
        recorder: Recorder,
        base: Path,
        split: Split | None = None,
        pool: ShardPool | None = None,
    ) -> None:
        self.suite, self.config, self.recorder, self.base = suite, config, recorder, base
        self.split = split
        #: where each candidate's shards run (`--workers`, `--executor`): one pool for the whole
        #: study, so a candidate does not start processes or a cluster of its own
        self.pool = pool
        task = next(t for t in suite.tasks if t.name == config.task)
        self.task = task.model_copy(update={"optimization": None, "subjects": None})
        self.constraint = constraint_of(config.constraint)
        if self.constraint is not None:
            self.task = constrained_task(self.task, self.constraint)
        (planned,) = plan_suite(self._suite(self.task, config.base_spec), base)
        # the dataset's items: with `repeat: N` the plan also holds each repeat (`ID#rR`),
        # which no side of a split (a task's `only:`) names
        self._items = [(it.id, it.corpus) for it in planned.items if not it.repeat]
        # a retrieval dataset is loaded once for every candidate
        self.datasets: dict[str, RetrievalDataset] | None = (
            {task.name: planned.dataset} if planned.dataset is not None else None
        )

    def items(self) -> list[tuple[str, str | None]]:
        """See `Objective.items`."""
        return list(self._items)

    def use_split(self, split: Split | None) -> None:
        """Score candidates on the sides of `split` from now on."""
        self.split = split

    def _suite(self, task: Any, spec: Mapping[str, Any]) -> Suite:
        return self.suite.model_copy(
            update={
                "name": f"optimize:{self.suite.name}",
                "subjects": {self.config.subject: dict(spec)},
                "tasks": [task],
                "optimization": None,
                "concurrency": self.config.concurrency or self.suite.concurrency,
            }
        )

    def candidate_suite(self, candidate: Candidate, phase: str) -> Suite:
        """The suite a candidate's run is: its subject spec, its `k`, one side of the split."""
        params = subject_params(self.config, candidate.params)
        spec = apply_params(self.config.base_spec, {**params, **candidate.texts})
        only: ItemFilter | None = None
        if self.split is not None:
            only = self.split.tune if phase == "tune" else self.split.holdout
        k = params.get("k", self.task.k)
        if isinstance(k, float) and k.is_integer():
            k = int(k)  # a hook's 20.0; anything else is the validation's to refuse
        task = self.task.model_copy(update={"k": k, "only": only})
        # a fresh validation: the copy's fields are checked as a suite file's are
        try:
            return Suite.model_validate(self._suite(task, spec).model_dump(mode="json"))
        except ValidationError as exc:
            raise UsageError(
                "; ".join(
                    str(p) for p in problems_from_validation(exc, "the candidate's suite", None)
                )
            ) from None

    def evaluate(self, candidate: Candidate, phase: str, run: CandidateRun) -> Evaluation:
        """See `Objective.evaluate`. A candidate whose spec the task or the subject refuses
        before its run is created (a k below the largest cutoff, a value its argument model
        or its factory's signature refuses) is a failed evaluation with the reason, not an
        error: a search may propose it, and goes on. Errors once its run exists (or while
        resuming one) are the study's."""
        started: list[str] = []

        def told(run_id: str) -> None:
            started.append(run_id)
            run.on_run(run_id)

        try:
            report = self._run(candidate, phase, replace(run, on_run=told))
        except (UsageError, DataError) as exc:
            if run.resume is not None or started:
                raise
            return refused(str(exc))
        return self._evaluation(report)

    def _run(self, candidate: Candidate, phase: str, run: CandidateRun) -> RunReport:
        return run_suite(
            self.candidate_suite(candidate, phase),
            self.recorder,
            options=RunOptions(
                resume=run.resume,
                workers=self.pool.workers if self.pool is not None else 1,
                executor=self.pool.executor if self.pool is not None else None,
            ),
            base=self.base,
            kind="optimize",
            progress=_RunStarted(run.on_run),
            # workers load the dataset from its path; in this process it is loaded once
            datasets=self.datasets if self.pool is None else None,
            scope=run.scope,
        )

    def _evaluation(self, report: RunReport) -> Evaluation:
        measure = self.config.measure
        own: dict[str, float | None] = {}  # each item-repeat's value
        repeats: dict[str, list[float]] = {}  # each item's scored repeats
        for it in report.items:
            if measure == "score":
                value = it.score if it.status == "completed" else None
            else:
                verdict = it.verdict(measure) if it.status == "completed" else None
                value = verdict.value if verdict is not None and verdict.error is None else None
            own[it.item_id] = value
            scored = repeats.setdefault(it.source_id, [])
            if value is not None:
                scored.append(value)
        # an item weighs one, the mean of its scored repeats (`repeat: N`), as in the run's
        # own number; items are what candidates are paired on
        values = {k: mean_of_repeats(v) if v else None for k, v in repeats.items()}
        usage = priced(self.recorder.usage(report.run_id), llm_context().meter.prices)
        costs = [row["cost_usd"] for row in usage.values() if row["cost_usd"] is not None]
        worst = sorted(
            (it for it in report.items if (own.get(it.item_id) or 0.0) < 1.0),
            key=lambda it: (own.get(it.item_id) is not None, own.get(it.item_id) or 0.0),
        )[:8]
        failures = [
            {
                "item_id": it.item_id,
                "input": _text(it.input.get("text", it.input)),
                "expected": _text(it.expected),
                "output": _text(it.output),
                "value": own.get(it.item_id),
                "reasons": [s.reason or s.error or "" for s in it.scores]
                + [f.message for f in it.failures],
            }
            for it in worst
        ]
        evaluation = evaluation_of(
            values,
            seed=self.suite.seed,
            run_id=report.run_id,
            failures=failures,
            cost_usd=sum(costs) if costs else None,
        )
        if self.constraint is not None:
            value = self.constraint.value_in(
                report.summary.measures(), self.config.subject, self.config.task
            )
            evaluation = replace(evaluation, constraint_value=value)
        if report.status != "completed":
            return Evaluation(
                None,
                values=values,
                run_id=report.run_id,
                status="failed",
                reason=report.reason or report.status,
                failures=failures,
                cost_usd=evaluation.cost_usd,
            )
        return evaluation
