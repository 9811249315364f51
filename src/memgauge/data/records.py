"""The records every evaluation is made of: a failure, a score, an item and a run, with the run's
aggregates. Every command that evaluates writes these through one engine, the store keeps them,
and reports, the viewer, gates and history read them back.

```
RunRecord                one execution (resumable) of a suite: settings, provenance, status
├── ItemRecord           one (subject, task, item): input, expected, output, latency, status
│   ├── ScoreRecord      one evaluator's verdict: value, pass, reason, raw judge reply
│   └── Failure          why a stage failed (setup, subject, evaluate, timeout), per attempt
└── RunSummary           aggregates computed from the stored item records
    ├── AggregateResult  one aggregate of one task (IR metrics, P/R/F1, tiers, audit rates)
    │   ├── MeasureValue a number with its CI and counts: what gates, history and targets read
    │   └── Shape        what reports draw: a table, breakdown, paired comparison ... (shapes)
    └── TargetCheck      a target (seed 000 / 001 / 002, a suite's, --fail-under) and whether met
```

A value that could not be computed is None (shown as n/a with its count), never 0.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any, Literal, NamedTuple, TypeVar, cast

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    SerializationInfo,
    SerializeAsAny,
    SerializerFunctionWrapHandler,
    model_serializer,
    model_validator,
)

from memgauge._util.clock import utc_now
from memgauge._util.listing import counted
from memgauge._util.model import Model
from memgauge._util.numbers import fmean
from memgauge._util.redact import redact
from memgauge.data.facts import Facts
from memgauge.data.shapes import FORM, Shape

__all__ = [
    "ENDED",
    "RUN_ID",
    "USAGE_COUNTERS",
    "AggregateResult",
    "EvaluatorSummary",
    "Failure",
    "ItemRecord",
    "ItemStatus",
    "MeasureValue",
    "Nondeterminism",
    "RepeatsFacts",
    "RunPlan",
    "RunRecord",
    "RunStatus",
    "RunSummary",
    "ScoreRecord",
    "TargetCheck",
    "TaskSummary",
    "mean_of_repeats",
    "repeat_id",
    "repeat_source",
    "run_id_problem",
    "utc_now",
]

ItemStatus = Literal["queued", "completed", "failed"]
RunStatus = Literal["queued", "running", "completed", "failed", "cancelled"]
#: the statuses of a run that has ended (completed or not): what a bundle holds, what `runs
#: list` stops following
ENDED: tuple[RunStatus, ...] = ("completed", "failed", "cancelled")


class _Record(Model):
    model_config = ConfigDict(extra="forbid")


class Failure(_Record):
    """Why one stage of one item failed, on one attempt: data, never an exception."""

    stage: str = Field(
        description="Where: setup (reset/ingest), subject (the call), evaluate (an evaluator), "
        "timeout, or unavailable (the subject could not be built)."
    )
    kind: str = Field(description="What: the exception type, `timeout`, or the evaluator label.")
    message: str = Field(description="What happened, for a person (secrets redacted).")
    attempt: int = Field(default=1, ge=1, description="Which attempt of the item (1-based).")
    at: str = Field(default_factory=utc_now, description="UTC time it happened.")

    @classmethod
    def of(cls, stage: str, exc: BaseException | str, attempt: int = 1) -> Failure:
        """A failure from an exception (its `failure_kind`, else its type, is the kind) or a
        message (the stage is)."""
        if isinstance(exc, BaseException):
            kind = str(getattr(exc, "failure_kind", "") or type(exc).__name__)
            message = str(exc) or type(exc).__name__
        else:
            kind, message = stage, exc
        return cls(stage=stage, kind=kind, message=redact(message, limit=4000), attempt=attempt)

    def describe(self) -> str:
        """The failure in a line: `Kind: message`, or the message alone where the kind adds
        nothing (a subject's own error, a timeout, a stage's plain message)."""
        if self.kind in ("SubjectError", self.stage, "timeout", "unavailable"):
            return self.message
        return f"{self.kind}: {self.message}"


class ScoreRecord(_Record):
    """One evaluator's verdict on one item."""

    evaluator: str = Field(description="The evaluator's label in the task.")
    value: float | None = Field(description="The score, 0-1; None when it could not score.")
    passed: bool | None = Field(default=None, description="Pass/fail, when it decides one.")
    reason: str = Field(default="", description="Why, in words a person can read.")
    error: str | None = Field(default=None, description="Why it could not score, if it failed.")
    fallback: bool = Field(
        default=False,
        description="An opt-in stand-in value of a judge that failed (on_failure: neutral); "
        "kept out of the evaluator's mean, averaged into the item's combined score.",
    )
    detail: dict[str, Any] = Field(default_factory=dict, description="Evaluator-specific data.")
    raw_reply: str | None = Field(
        default=None, description="A judge's reply as the model gave it, beside the verdict."
    )


def repeat_id(item_id: str, repeat: int) -> str:
    """The id a repeat of an item is stored under: the first time its own id (so a run without
    repeats is stored as it always was), repeat r > 0 `ID#rR`."""
    return item_id if repeat == 0 else f"{item_id}#r{repeat}"


def repeat_source(item_id: str, repeat: int) -> str:
    """The dataset's id of the item stored as `item_id` on repeat `repeat` (`repeat_id`'s
    inverse)."""
    return item_id if repeat == 0 else item_id.removesuffix(f"#r{repeat}")


def mean_of_repeats(values: Sequence[float]) -> float:
    """An item's value from its repeats' (`repeat: N`): the mean of those scored, NaN when
    none is; one value as it is."""
    if len(values) == 1:
        return values[0]
    scored = [v for v in values if v == v]
    return fmean(scored) if scored else float("nan")


class ItemRecord(_Record):
    """One item of one task as one subject answered it, and every verdict on it."""

    subject: str = Field(description="The subject's name in the suite.")
    task: str = Field(description="The task's name.")
    item_id: str = Field(description="The item's id within the task.")
    seq: int = Field(default=0, description="Position of the item in its task.")
    status: ItemStatus = Field(default="queued", description="queued, completed or failed.")
    category: str | None = Field(default=None, description="Category, for breakdowns.")
    input: dict[str, Any] = Field(default_factory=dict, description="What the subject was given.")
    expected: Any = Field(default=None, description="The reference: grades, answer, facts.")
    output: Any = Field(default=None, description="What the subject returned.")
    latency_ms: dict[str, float] = Field(default_factory=dict, description="Per-stage latency.")
    extra: dict[str, Any] = Field(
        default_factory=dict,
        description="Anything else the subject call gave: e.g. the ranking of a session query "
        "searched again without its session (`without_session`).",
    )
    scores: list[ScoreRecord] = Field(default_factory=list, description="Every verdict.")
    score: float | None = Field(
        default=None,
        description="Weighted combined score; None unless every evaluator scored (a judge's "
        "opt-in neutral stand-in counts, and `fallback` says so).",
    )
    failures: list[Failure] = Field(default_factory=list, description="Failures, every attempt.")
    attempts: int = Field(default=0, ge=0, description="Attempts made.")
    started_at: str | None = Field(default=None, description="UTC time the subject started.")
    finished_at: str | None = Field(default=None, description="UTC time it was recorded.")
    duration_ms: float | None = Field(default=None, description="Subject start to recorded.")
    repeat: int = Field(
        default=0,
        ge=0,
        description="Which time the item went through its subject (`repeat: N`; 0 the first). "
        "Repeat r > 0 is stored under `item_id` `ID#rR`; `source_id` is `ID`.",
    )

    @property
    def source_id(self) -> str:
        """The item's id in its dataset: `item_id` without its repeat's suffix."""
        return repeat_source(self.item_id, self.repeat)

    @property
    def key(self) -> tuple[str, str, str]:
        """(subject, task, item_id): the item's identity in its run."""
        return (self.subject, self.task, self.item_id)

    @property
    def unscored(self) -> bool:
        """Completed, but an evaluator could not give its verdict (its call failed; an opt-in
        stand-in is a verdict): it counts as failed for `max_failure_rate`."""
        return self.status == "completed" and any(s.error is not None for s in self.scores)

    @property
    def fallback(self) -> bool:
        """Whether the combined score rests on a judge's opt-in stand-in value."""
        return self.score is not None and any(s.fallback for s in self.scores)

    def verdict(self, evaluator: str) -> ScoreRecord | None:
        """This evaluator's verdict, if it gave one."""
        return next((s for s in self.scores if s.evaluator == evaluator), None)


class Nondeterminism(_Record):
    """A subject whose outputs for the same item differed across repeats (`repeat: N`): a
    system that is not reproducible, named as such beside its numbers."""

    subject: str = Field(description="The subject.")
    task: str = Field(description="The task whose repeats showed it.")
    n_items: int = Field(description="Items answered on at least two repeats.")
    n_varied: int = Field(description="Of those, items whose outputs were not all the same.")
    temperature: float | None = Field(
        default=None, description="The temperature its spec sets, where it sets one."
    )
    seed: int | None = Field(default=None, description="The seed its spec sets, where it sets one.")

    def describe(self) -> str:
        """One line: what varied, and under which settings."""
        settings = []
        if self.temperature is not None:
            settings.append(f"temperature {self.temperature:g}")
        if self.seed is not None:
            settings.append(f"seed {self.seed}")
        at = f" at {' and '.join(settings)}" if settings else ""
        return (
            f"nondeterministic{at}: outputs differed across repeats on {self.n_varied} of "
            f"{counted(self.n_items, 'item')}"
        )


class RepeatsFacts(Facts):
    """The repeats aggregate's facts: the subjects whose outputs varied across repeats."""

    model_config = ConfigDict(extra="ignore")

    nondeterminism: list[Nondeterminism] = Field(
        default_factory=list, description="One per subject whose outputs varied."
    )

    @model_validator(mode="before")
    @classmethod
    def _from_detail(cls, data: Any) -> Any:
        # form 1 and 2 kept them in `detail`, under each subject's summary
        if isinstance(data, dict) and "nondeterminism" not in data and "subjects" in data:
            subjects = data.get("subjects") or ()
            return {
                "nondeterminism": [s["nondeterminism"] for s in subjects if s.get("nondeterminism")]
            }
        return data


class MeasureValue(_Record):
    """A run-level number: what gates, history, targets and `--fail-under` read."""

    subject: str = Field(description="The subject it measures.")
    task: str = Field(description="The task.")
    name: str = Field(description="The measure, e.g. nDCG@10, exact, precision, recall_accuracy.")
    value: float | None = Field(description="The value; None = n/a.")
    ci_low: float | None = Field(default=None, description="Lower bound of its 95% CI.")
    ci_high: float | None = Field(default=None, description="Upper bound of its 95% CI.")
    n_scored: int = Field(default=0, description="Items (or checks) it is computed over.")
    n_failed: int = Field(default=0, description="Items that could not contribute.")
    higher_is_better: bool = Field(
        default=True,
        description="Its direction, set by the aggregate that computes it: False for rates of bad"
        " events and other measures where lower is better. Every report and the gate read it"
        " from here.",
    )
    source: str = Field(default="mean", description="The aggregate that computed it.")
    kind: str | None = Field(
        default=None, description="The evaluator's registered name, where it is an evaluator's."
    )
    primary: bool = Field(
        default=True,
        description="A headline number of its task: an evaluator's mean, a measure the task asked"
        " for, a seed's primary measure. False for breakdowns and secondary numbers (seed 002's"
        " agent-memory metrics, macro averages, per-check and per-category rates), which the gate"
        " shows as information unless a target or `--measure` names them.",
    )
    scoring: Literal["exact", "judge"] | None = Field(
        default=None,
        description="How its verdicts are reached, where the aggregate knows it and it sets the"
        " gate's threshold (seed 000): `exact` deterministic exact-match heuristics (10%),"
        " `judge` LLM judges (20%); None: by its evaluator's kind, else the default (15%).",
    )
    n_fallback: int = Field(
        default=0,
        description="Of `n_scored`, the opt-in stand-in values (a judge that failed under"
        " `on_failure: neutral`, scored seed 000's neutral 0.5); shown beside the value.",
    )
    note: str | None = Field(
        default=None,
        description="Why the value is n/a, where its aggregate says (`no memory in the dataset"
        " has a folder`); shown beside it.",
    )

    def is_mean(self, mean: float | None, n: int) -> bool:
        """Whether `mean`, over `n` values, is this number summed in another order: the same
        count and equal to 1e-12. A view that shows it (a row, a comparison) then shows this
        value, so that one number prints one way everywhere (a float sum depends on its order:
        0.33749999999999997 is 0.337 beside 0.3375's 0.338)."""
        return (
            self.value is not None
            and mean is not None
            and self.n_scored == n
            and math.isclose(self.value, mean, rel_tol=1e-12, abs_tol=1e-15)
        )


class TargetCheck(_Record):
    """A target beside its measure: whether the run met it, by the one rule."""

    subject: str = Field(description="Subject.")
    task: str = Field(description="Task.")
    measure: str = Field(description="Measure name.")
    op: Literal[">", ">=", "<", "<=", "=="] = Field(description="How the value must compare.")
    target: float = Field(description="The target value.")
    value: float | None = Field(description="The measured value (None: n/a, not met).")
    bound: float | None = Field(
        default=None, description="With by=ci-upper, the CI bound the rule compared."
    )
    by: Literal["point", "ci-upper"] = Field(default="point", description="The rule.")
    met: bool | None = Field(description="Met; None when the measure is n/a.")
    source: str = Field(description="Who set it: seed 001, the suite, --fail-under, ...")
    enforced: bool = Field(
        default=True, description="Whether missing it fails the run (exit 1) or is only shown."
    )


F = TypeVar("F", bound=BaseModel)


class AggregateResult(_Record):
    """One aggregate of one task over every subject that ran it."""

    aggregate: str = Field(description="The aggregate's registered name (mean, ir, ...).")
    task: str = Field(description="The task.")
    measures: list[MeasureValue] = Field(default_factory=list, description="Its numbers.")
    facts: SerializeAsAny[Facts] | None = Field(
        default=None,
        description="What programs read of it beyond its measures (the ir aggregate's settings "
        "and systems, the cost aggregate's encoding ...), typed by its aggregate "
        "(`memgauge.data.facts`); read with `facts_as`. None where it has none.",
    )
    detail: dict[str, Any] = Field(
        default_factory=dict,
        description="Forms 1 and 2 only (results stored before facts): what programs read of "
        "it, as a free dict; `facts_as` reads it. Not written any more.",
    )
    shapes: list[Shape] = Field(default_factory=list, description="What reports draw, by type.")
    form: int = Field(
        default=1,
        description="Stored form: 1 detail only (before shapes), 2 detail with shapes, 3 typed "
        "facts with shapes.",
    )
    _typed: dict[type[BaseModel], tuple[object, BaseModel]] = PrivateAttr(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _form(cls, data: Any) -> Any:
        # a result made with shapes or facts is of the current form; one read back without
        # them was written before shapes existed (its aggregate's `shapes_from` draws them from
        # its `detail`)
        if isinstance(data, dict) and "form" not in data and ("shapes" in data or "facts" in data):
            return {**data, "form": FORM}
        return data

    @model_serializer(mode="wrap")
    def _stored(self, handler: SerializerFunctionWrapHandler, info: SerializationInfo) -> Any:
        # each form is written as it was: no `facts` before form 3, no `detail` from it on
        out = handler(self)
        if isinstance(out, dict):
            if self.facts is None:
                out.pop("facts", None)
            if not self.detail and self.form >= FORM:
                out.pop("detail", None)
        return out

    def __eq__(self, other: object) -> bool:
        # equal as stored: facts given typed equal the same facts read back untyped, and the
        # typed models it has read of them are a cache, not part of the result
        if not isinstance(other, AggregateResult):
            return NotImplemented
        mine, theirs = dict(self.__dict__), dict(other.__dict__)
        facts = mine.pop("facts"), theirs.pop("facts")
        stored = [f.model_dump(mode="json") if f is not None else None for f in facts]
        return mine == theirs and stored[0] == stored[1]

    __hash__ = None  # type: ignore[assignment]

    def facts_json(self, exclude: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """Its facts in their stored form, JSON (a form 1 or 2 result's detail): what a
        document other tools read is written from (seed 002's `eval_results` rows). `exclude`
        (pydantic's form): fields the reader does not read, left out of typed facts (facts
        read back untyped, and a detail, come whole)."""
        if self.facts is None:
            return dict(self.detail)
        if type(self.facts) is Facts:
            return dict(self.facts.__pydantic_extra__ or {})
        return self.facts.model_dump(mode="json", exclude=exclude)

    def facts_as(self, model: type[F]) -> F | None:
        """Its facts as `model` (the aggregate's own facts model, or a view of them): as they
        were given, or read from what was stored (`facts`, or a form 1 or 2 result's `detail`);
        None when it has neither."""
        if isinstance(self.facts, model):
            return self.facts
        source: Any = self.facts if self.facts is not None else self.detail
        if not source:
            return None
        # read once per model and stored facts (a copy given other facts reads them anew)
        seen = self._typed.get(model)
        if seen is not None and seen[0] is source:
            return cast(F, seen[1])
        key = source
        if type(source) is Facts:
            # read back without its model: the stored fields are its extras, as they were
            source = source.__pydantic_extra__ or {}
        elif isinstance(source, BaseModel):
            source = source.model_dump()
        typed = model.model_validate(source)
        self._typed[model] = (key, typed)
        return typed


#: the name of a task's weighted combined score, where it has several evaluators
COMBINED = "combined"


class TaskSummary(_Record):
    """Item counts and the combined score of one subject on one task."""

    subject: str = Field(description="Subject.")
    task: str = Field(description="Task.")
    n_items: int = Field(description="Items.")
    n_completed: int = Field(description="Items completed.")
    n_failed: int = Field(description="Items failed.")
    n_queued: int = Field(description="Items not run (yet).")
    score: dict[str, Any] = Field(description="The weighted combined score: mean, CI, counts.")


class EvaluatorSummary(_Record):
    """One evaluator of one task for one subject: mean with CI, pass rate, counts."""

    subject: str = Field(description="Subject.")
    task: str = Field(description="Task.")
    evaluator: str = Field(description="The evaluator's label.")
    mean: float | None = Field(
        description="Mean of the scores (opt-in stand-ins included and counted); None = n/a."
    )
    ci_low: float | None = Field(default=None, description="Lower CI bound.")
    ci_high: float | None = Field(default=None, description="Upper CI bound.")
    n_scored: int = Field(description="Scored items.")
    n_failed: int = Field(description="Failed items plus verdicts it could not give.")
    n_passed: int = Field(default=0, description="Items passed (where it decides pass/fail).")
    pass_rate: float | None = Field(default=None, description="Share passed; None = n/a.")
    n_fallback: int | None = Field(
        default=None,
        description="Opt-in stand-in values (on_failure: neutral), counted in `mean` and "
        "`n_scored`.",
    )
    mean_with_fallback: float | None = Field(
        default=None, description="The same as `mean` where stand-ins were given (older name)."
    )
    mean_without_fallback: float | None = Field(
        default=None, description="The mean of the real verdicts alone, where stand-ins were given."
    )
    agreement: dict[str, Any] | None = Field(
        default=None, description="A panel's agreement (percent, Fleiss' kappa)."
    )
    conventions: str | None = Field(
        default=None,
        description="A retrieval evaluator's IR conventions (`relevant: grade >= 2, gain: exp`), "
        "printed beside its numbers; None for other evaluators.",
    )


class RunSummary(_Record):
    """A run's aggregates, always recomputed from its stored item records."""

    schema_version: Literal[1] = Field(default=1, description="Format version.")
    n_items: int = Field(default=0, description="Items in the run.")
    n_completed: int = Field(default=0, description="Completed items.")
    n_failed: int = Field(default=0, description="Failed items.")
    n_unscored: int = Field(
        default=0,
        description="Completed items an evaluator could not score (counted in n_completed; "
        "they count as failed for max_failure_rate).",
    )
    n_queued: int = Field(default=0, description="Items not run.")
    failure_rate: float | None = Field(default=None, description="Failed / items.")
    tasks: list[TaskSummary] = Field(default_factory=list, description="Per subject and task.")
    evaluators: list[EvaluatorSummary] = Field(
        default_factory=list, description="Per subject, task and evaluator."
    )
    aggregates: list[AggregateResult] = Field(
        default_factory=list, description="Task-level aggregates."
    )
    targets: list[TargetCheck] = Field(default_factory=list, description="Targets and verdicts.")
    llm_usage: dict[str, Any] = Field(
        default_factory=dict, description="LLM calls, tokens and cost, over every attempt."
    )

    def measures(self) -> list[MeasureValue]:
        """Every run-level number, one per (subject, task, name): an aggregate's value wins
        over an evaluator's plain mean of the same name."""
        out: dict[tuple[str, str, str], MeasureValue] = {}
        for e in self.evaluators:
            out[(e.subject, e.task, e.evaluator)] = _evaluator_measure(e)
        for agg in self.aggregates:
            for m in agg.measures:
                out[(m.subject, m.task, m.name)] = m
        return list(out.values())

    def combined(self) -> list[MeasureValue]:
        """Per subject and task of several evaluators, its weighted combined score (the bold
        `combined` row `run` and `runs show` print): its mean, CI and counts as stored. Not
        one of `measures()`: the gate decides on each evaluator's."""
        counts = Counter((e.subject, e.task) for e in self.evaluators)
        return [
            MeasureValue(
                subject=t.subject,
                task=t.task,
                name=COMBINED,
                value=t.score.get("mean"),
                ci_low=t.score.get("ci_low"),
                ci_high=t.score.get("ci_high"),
                n_scored=t.score.get("n_scored") or 0,
                n_failed=t.score.get("n_failed") or 0,
                n_fallback=t.score.get("n_fallback") or 0,
                source=COMBINED,
            )
            for t in self.tasks
            if counts[(t.subject, t.task)] > 1
        ]

    def targeted(self) -> set[tuple[str, str, str]]:
        """The (subject, task, measure) of its enforced targets: the gate decides on them
        whether or not they are primary."""
        return {(t.subject, t.task, t.measure) for t in self.targets if t.enforced}

    def headline(self, measures: Sequence[MeasureValue]) -> list[MeasureValue]:
        """Of `measures` (its own), the ones the gate decides on by default: a task's primary
        measures and those an enforced target names (the others, breakdowns and secondary
        numbers, it shows as information unless `--measure` names them)."""
        targeted = self.targeted()
        return [m for m in measures if m.primary or (m.subject, m.task, m.name) in targeted]

    def beyond_evaluators(self) -> list[MeasureValue]:
        """The run-level numbers its evaluators' rows do not show as they are: an aggregate's
        own measures (an audit's rates, a tier's pass rate, pass@k, a cost), and one named like
        an evaluator whose value or counts differ from that evaluator's row. With the rows,
        they are every number of `measures()`: what the gate can decide on."""
        rows = {(e.subject, e.task, e.evaluator): e for e in self.evaluators}

        def shown(m: MeasureValue) -> bool:
            e = rows.get((m.subject, m.task, m.name))
            if e is None or (e.n_scored, e.n_failed) != (m.n_scored, m.n_failed):
                return False
            return m.is_mean(e.mean, e.n_scored) or (m.value is None and e.mean is None)

        return [m for m in self.measures() if not shown(m)]

    def nondeterminism(self) -> list[Nondeterminism]:
        """The subjects whose outputs differed across repeats (`repeat: N`), per task."""
        return [
            flag
            for agg in self.aggregates
            if agg.aggregate == "repeats"
            for facts in [agg.facts_as(RepeatsFacts)]
            if facts is not None
            for flag in facts.nondeterminism
        ]

    def aggregate(self, name: str, task: str | None = None) -> AggregateResult | None:
        """The first aggregate called `name` (of `task`, when given)."""
        return next(
            (a for a in self.aggregates if a.aggregate == name and task in (None, a.task)), None
        )


def _evaluator_measure(e: EvaluatorSummary) -> MeasureValue:
    """An evaluator's run-level number: its row's mean and counts (with opt-in stand-ins, the
    mean the user opted into, counted in `n_fallback`, with no CI)."""
    return MeasureValue(
        subject=e.subject,
        task=e.task,
        name=e.evaluator,
        value=e.mean,
        ci_low=e.ci_low,
        ci_high=e.ci_high,
        n_scored=e.n_scored,
        n_failed=e.n_failed,
        n_fallback=e.n_fallback or 0,
    )


#: what a run id may be: what the engine makes (`20261129-141159-c3ba5465`) and any other word
#: of letters, digits, '.', '_' and '-' that starts with a letter or digit: typed after `runs
#: show`, put in a viewer's URL and an exported file's name as it is (no '/', no '..', not empty)
RUN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,199}")

#: the counters of a run's LLM usage per model (`RunSummary.llm_usage`): what `llm.usage`
#: counts, the store keeps (`suite_run_usage`, a run bundle's `usage`) and the cost prices
USAGE_COUNTERS = ("calls", "cached", "requests", "failures", "prompt_tokens", "completion_tokens")


def run_id_problem(run_id: str) -> str | None:
    """Why `run_id` cannot be a run's id (`RUN_ID`), or None."""
    if RUN_ID.fullmatch(run_id):
        return None
    return (
        f"{run_id!r} cannot be a run id: a run id is up to 200 letters, digits, '.', '_' and"
        " '-', starting with a letter or digit (memgauge makes them as 20261129-141159-c3ba5465)"
    )


class RunRecord(_Record):
    """One run: what was run, by whom, how it ended, and its summary."""

    schema_version: Literal[1] = Field(default=1, description="Format version.")
    run_id: str = Field(description="Unique id (time-ordered).")
    suite_name: str = Field(description="The suite's name: runs are grouped by it.")
    kind: str = Field(
        default="suite",
        description="What started it: suite, evaluate, demo, extraction, operations, audit.",
    )
    status: RunStatus = Field(default="queued", description="Where it stands.")
    reason: str | None = Field(default=None, description="Why it failed or stopped.")
    created_at: str = Field(default_factory=utc_now, description="UTC creation time.")
    started_at: str | None = Field(default=None, description="UTC time of the first start.")
    finished_at: str | None = Field(default=None, description="UTC time it ended.")
    heartbeat_at: str | None = Field(default=None, description="Last sign of life.")
    pid: int | None = Field(default=None, description="The driving process.")
    host: str | None = Field(default=None, description="The driving host.")
    pid_start: str | None = Field(
        default=None, description="The driving process's start time (tells a reused pid apart)."
    )
    owner: str | None = Field(
        default=None, description="Token of the attempt driving it now; None when none does."
    )
    suite_sha256: str = Field(description="Hash of the suite as parsed (resume checks it).")
    suite: dict[str, Any] = Field(description="The suite, as run.")
    suite_path: str | None = Field(default=None, description="Where the suite file was.")
    settings: dict[str, Any] = Field(default_factory=dict, description="Concurrency, seed...")
    provenance: dict[str, Any] = Field(
        default_factory=dict,
        description="Version, seeds, dataset sha256, git commit, model ids, prompt hashes.",
    )
    n_items: int = Field(default=0, description="Items planned.")
    summary: RunSummary | None = Field(default=None, description="Aggregates, once computed.")


class RunPlan(NamedTuple):
    """What a new run will do, recorded with it as queued (`Recorder.create_run`): its subjects
    (name -> spec), its tasks (in the suite's order) and every item it will execute."""

    subjects: Mapping[str, Any]
    tasks: Sequence[Mapping[str, Any]]
    items: Sequence[ItemRecord]
