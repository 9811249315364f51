"""Rolling baselines and regression gates over a suite's run history (seed 000).

The seed's rule decides, on the measures the user asked about. For each run-level number
(subject / task / measure) the baseline is the mean of the same number in the last `window` (5)
earlier runs that have it, from the first earlier run on (with 1 to 4 earlier runs, their mean).
The drop is
`(baseline - current) / baseline` (for a measure where lower is better, a hallucination rate,
`(current - baseline) / baseline`), and the gate fails when any drop reaches its threshold
(up to float round-off):
15% by default, 10% for exact-match evaluators (whose scores should not move), 20% for LLM judges
(which vary more), or a per-evaluator override. A number whose aggregate knows how its verdicts
are reached says so (`MeasureValue.scoring`: an operations run's heuristic tier is exact-match,
its judge tier an LLM judge); else its evaluator's kind tells.

Which numbers decide: the run's enforced targets' measures, those named with `--measure`
(`GateConfig.measures`), and the primary measures of each task (`MeasureValue.primary`: an
evaluator's mean, a retrieval task's own measures, seed 000's tiers, seed 001's P / R / F1 ...).
Every other number (seed 002's agent-memory metrics, macro averages, per-check and per-category
rates) is compared the same way and shown as information: it never fails the gate. A change is
told as better or worse by the measure's own direction (`MeasureValue.higher_is_better`), never by
a sign.

Earlier runs that failed the gate are left out of the baseline, so that one regression does not
drag the baseline down and let the next one through; `memgauge gate --accept RUN` puts a run
back (a deliberate trade-off, say a cheaper model, becomes the new normal).

The CI-aware view is kept beside the decision: each check says whether the baseline lies inside
the current run's 95% CI (a drop the run's own noise could explain). With `by="ci-upper"` it
decides instead, by the one rule of `aggregates.targets`: the run regresses only when the
favourable CI bound (the upper bound; the lower for a lower-is-better measure) has dropped by
the threshold, i.e. the whole interval lies past it.

A run with repeats (`repeat: N`) is decided on its repeat-aware numbers: the repeats aggregate
gives each evaluator's mean over every repeat under the evaluator's name, with a CI that
resamples items (each with all its repeats), and a run's measure of a name is the aggregate's
(`RunSummary.measures`); its `n_scored` counts items, so the power below is that of the items.

Power: for each measure the gate estimates the chance that a suite of this size detects a drop
of the threshold's size (delta = threshold * baseline) at the spread the run showed. The per-item
sd is read back from the run's 95% CI, sd = (ci_high - ci_low) / (2 * 1.96) * sqrt(n) (exact
for a normal interval, an approximation for a bootstrap or Wilson one), and the power is that of a
two-sided t-test on n items at effect delta / sd (`stats.samplesize.paired_t_power`). Below
`min_power` (0.8) the gate warns, with the number of items that would reach it (not for a
measure that regressed: the drop was big enough to see).
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from memgauge._util.listing import counted
from memgauge._util.numbers import POWER, fmean
from memgauge.aggregates.targets import By, MeasureRef, compared_value, unmatched_error
from memgauge.data.records import MeasureValue, RunRecord
from memgauge.errors import UsageError, argument

__all__ = [
    "EXACT_EVALUATORS",
    "JUDGE_EVALUATORS",
    "GateConfig",
    "GateResult",
    "MetricCheck",
    "StoredMemory",
    "baseline_of",
    "change_text",
    "check_measure",
    "detection_power",
    "evaluate_gate",
    "metric_key",
    "sparkline",
    "with_unended",
]

EXACT_EVALUATORS = frozenset({"exact", "contains", "icontains", "regex"})
JUDGE_EVALUATORS = frozenset({"rubric", "qa-judge", "facts", "pairwise", "panel", "relevance"})

_Z975 = 1.959963984540054  # the 97.5% normal quantile: a 95% CI is mean +- _Z975 * se
# a drop is compared with its threshold up to float round-off: 1.0 -> 0.9 computes as a drop of
# 0.09999999999999998, and is the 10% it reads as
_EPS = 1e-9


@dataclass(frozen=True)
class GateConfig:
    """How the gate decides.

    Attributes:
        window: earlier runs in the rolling baseline (up to this many, as many as exist).
        threshold: relative drop that is a regression (default metrics).
        exact_threshold: for exact-match evaluators.
        judge_threshold: for LLM judges.
        overrides: evaluator label or name -> threshold.
        by: `point` (the seed's rule: the run's value) or `ci-upper` (the favourable bound of
            its 95% CI, so that a drop the run's noise can explain passes).
        min_power: below this power to detect a threshold-sized drop, the gate warns.
        measures: measures that decide besides the run's targets and the primary measures
            (`--measure [SUBJECT/][TASK/]NAME`); one that names no measure of the run is a
            usage error.
    """

    window: int = 5
    threshold: float = 0.15
    exact_threshold: float = 0.10
    judge_threshold: float = 0.20
    overrides: Mapping[str, float] = field(default_factory=dict)
    by: By = "point"
    min_power: float = POWER
    measures: tuple[MeasureRef, ...] = ()

    def threshold_for(self, label: str, kind: str | None, scoring: str | None = None) -> float:
        """The threshold of one measure: an override for its label or its evaluator's kind, else
        by how its verdicts are reached (`scoring`, where its aggregate says; else its
        evaluator's kind): exact-match, LLM judge, or the default."""
        for key in (label, kind):
            if key is not None and key in self.overrides:
                return float(self.overrides[key])
        if scoring == "exact" or (scoring is None and kind in EXACT_EVALUATORS):
            return self.exact_threshold
        if scoring == "judge" or (scoring is None and kind in JUDGE_EVALUATORS):
            return self.judge_threshold
        return self.threshold


def change_text(drop: float | None) -> str:
    """A change against the baseline in words, by the measure's direction: `worse by 6.1%`,
    `better by 8.6%`, `unchanged` ('' with no baseline). `drop` is the relative change towards
    worse (the gate's drop: positive is worse, whichever way the measure runs)."""
    if drop is None:
        return ""
    size = f"{abs(drop):.1%}"
    if size == "0.0%":
        return "unchanged"
    return f"{'worse' if drop > 0 else 'better'} by {size}"


@dataclass(frozen=True)
class MetricCheck:
    """One metric of the current run against its baseline.

    `deciding`: whether it can fail the gate; `basis` says why (`target`, `--measure`,
    `primary`) or `information` (shown, never failing). `regressed`: it decides and dropped by
    its threshold by the rule; `reached` (`past_threshold` in JSON): the point drop reached the
    threshold, whether or not it decides.
    """

    subject: str
    task: str
    evaluator: str
    current: float | None
    ci: tuple[float, float] | None
    baseline: float | None
    history: list[float]
    drop: float | None
    threshold: float
    regressed: bool
    within_ci: bool | None
    note: str
    power: float | None = None
    deciding: bool = True
    basis: str = "primary"
    higher_is_better: bool = True
    n_scored: int = 0
    n_fallback: int = 0

    @property
    def reached(self) -> bool:
        """Whether the point drop reached the threshold (a regression by the seed's rule)."""
        return self.drop is not None and self.drop >= self.threshold - _EPS

    @property
    def change(self) -> str:
        """The change against the baseline in words (`worse by 6.1%`, `better by 8.6%`)."""
        return change_text(self.drop)

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        d = dict(self.__dict__)
        d["ci"] = list(self.ci) if self.ci else None
        d["change"] = self.change
        d["past_threshold"] = self.reached
        return d


@dataclass(frozen=True)
class StoredMemory:
    """A failure memory the gate keeps for one regressed measure (seed 000: "Stored to memory:
    <memory_id>"). `new` is False when the memory already held it (the same run gated again)."""

    id: str
    subject: str
    task: str
    measure: str
    new: bool = True

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready: `id`, `subject`, `task`, `measure`, `new`."""
        return asdict(self)


@dataclass(frozen=True)
class GateResult:
    """The gate's verdict on a run. `memories`: the failure memories kept for its regressions
    (filled in after learning; empty with `--no-learn` or no regression)."""

    run_id: str
    suite: str
    status: str
    n_history: int
    checks: list[MetricCheck]
    by: By = "point"
    baseline_runs: list[str] = field(default_factory=list)
    excluded: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    memories: list[StoredMemory] = field(default_factory=list)

    @property
    def deciding(self) -> list[MetricCheck]:
        """The checks that decide the verdict."""
        return [c for c in self.checks if c.deciding]

    @property
    def information(self) -> list[MetricCheck]:
        """The checks shown as information only."""
        return [c for c in self.checks if not c.deciding]

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready (`status`, `by`, the runs the baseline averaged and those left out as
        failed gates, `warnings`, `failure_memories` (the ids stored for the regressions), per
        metric `deciding` and its `basis`, `baseline`, `current`,
        `drop`, `change`, `threshold`, `regressed`, `past_threshold`, `within_ci`, `power`)."""
        return {
            "run_id": self.run_id,
            "suite": self.suite,
            "status": self.status,
            "by": self.by,
            "n_history": self.n_history,
            "baseline_runs": self.baseline_runs,
            "excluded": self.excluded,
            "warnings": self.warnings,
            "metrics": [c.as_dict() for c in self.checks],
            "failure_memories": [m.as_dict() for m in self.memories],
        }


def metric_key(m: MeasureValue) -> tuple[str, str, str]:
    """(subject, task, measure) of a run-level number."""
    return m.subject, m.task, m.name


def _measures(run: RunRecord) -> dict[tuple[str, str, str], MeasureValue]:
    return {metric_key(m): m for m in (run.summary.measures() if run.summary else [])}


def detection_power(n: int, ci: tuple[float, float], delta: float) -> tuple[float, float] | None:
    """(power, sd): the power of a two-sided t-test on `n` items to detect a mean change of
    `delta`, at the per-item sd read back from a 95% CI; None when it cannot be told (fewer than
    2 items, or an interval of zero width: no spread was observed)."""
    from memgauge.stats.samplesize import paired_t_power

    sd = (ci[1] - ci[0]) / (2 * _Z975) * math.sqrt(n)
    if n < 2 or sd <= 0 or delta <= 0:
        return None
    if delta / sd * math.sqrt(n) > 40:  # noncentrality past 40: power is 1 to machine precision
        return 1.0, sd
    try:
        return paired_t_power(n, delta / sd), sd
    except ArithmeticError:
        return None


def _power_warning(
    key: tuple[str, str, str], m: MeasureValue, baseline: float, threshold: float, min_power: float
) -> tuple[float | None, str | None]:
    if m.ci_low is None or m.ci_high is None:
        if m.n_scored < 2:
            return None, (
                f"{'/'.join(key)}: {m.n_scored} item(s), no spread to judge from: the suite is too"
                f" small to tell a {threshold:.0%} drop from noise"
            )
        return None, None
    delta = threshold * baseline
    found = detection_power(m.n_scored, (m.ci_low, m.ci_high), delta)
    if found is None:
        return None, None
    power, sd = found
    if power >= min_power:
        return power, None
    from memgauge.stats.samplesize import MAX_N, sample_size_paired

    try:
        needed = f"about {sample_size_paired(delta, sd, power=min_power).n_t}"
    except ValueError:  # a drop so small that no suite of any size could detect it
        needed = f"more than {MAX_N:,}"
    return power, (
        f"{'/'.join(key)}: {m.n_scored} items give {power:.0%} power to detect a {threshold:.0%}"
        f" drop ({delta:.3f}) at this run's spread (sd {sd:.3f}); {needed} items would"
        f" give {min_power:.0%}: a pass can hide a real drop"
    )


def _no_ci(m: MeasureValue) -> str:
    """Why a number has no CI, as it is: too few items, stand-in values, or none computed."""
    if m.n_fallback:
        return f"no CI ({m.n_fallback} of its {m.n_scored} values are neutral stand-ins)"
    if m.n_scored < 2:
        return f"this run has no CI ({m.n_scored} item(s): too few)"
    return f"no CI is computed for this measure (over {m.n_scored})"


def _basis(
    m: MeasureValue, targeted: Collection[tuple[str, str, str]], named: Sequence[MeasureRef]
) -> str:
    """Why a number decides the gate (`target`, `--measure`, `primary`), or `information`."""
    if metric_key(m) in targeted:
        return "target"
    if any(ref.matches(m) for ref in named):
        return "--measure"
    return "primary" if m.primary else "information"


def _decide(
    m: MeasureValue, baseline: float, threshold: float, by: By, unit: str = "run"
) -> tuple[float, bool, bool | None, str]:
    """(drop, regressed, within_ci, note) of one measure against a positive baseline; `unit`:
    what the measure is of, in the note (a run, a watch's window)."""
    assert m.value is not None  # a measure with no value is n/a before it is decided
    cur = float(m.value)
    sign = 1.0 if m.higher_is_better else -1.0
    drop = sign * (baseline - cur) / baseline
    ci = (m.ci_low, m.ci_high) if m.ci_low is not None and m.ci_high is not None else None
    within = None if ci is None else ci[0] <= baseline <= ci[1]
    op = ">" if m.higher_is_better else "<"
    bound = compared_value(cur, m.ci_low, m.ci_high, op, by)
    decisive = sign * (baseline - bound) / baseline
    regressed = decisive >= threshold - _EPS
    if drop < threshold - _EPS:
        under = f", under {threshold:.0%}" if change_text(drop).startswith("worse") else ""
        return drop, False, within, change_text(drop) + under
    note = f"worse by {drop:.1%}, at or past its {threshold:.0%} threshold"
    if ci is None:
        note += f"; {_no_ci(m)}, so the call rests on the threshold alone"
    elif by == "ci-upper":
        side = "upper" if m.higher_is_better else "lower"
        note += f"; the CI's {side} bound {bound:.3f} is {decisive:.1%} worse: " + (
            "a regression by --by ci-upper" if regressed else "noise by --by ci-upper"
        )
    elif within:
        note += (
            f"; the baseline {baseline:.3f} lies inside this {unit}'s 95% CI"
            f" [{ci[0]:.3f}, {ci[1]:.3f}]: the {unit}'s noise could explain it (--by ci-upper"
            " would pass it)"
        )
    else:
        note += f", outside this {unit}'s 95% CI"
    return drop, regressed, within, note


def baseline_of(values: Sequence[float]) -> float | None:
    """The rolling baseline of a number's values in the window's earlier runs (the gate's,
    `gate history`'s, a watch's): their mean, as every mean is taken (`fmean`); None when
    there are none."""
    return fmean(values) if values else None


def check_measure(
    m: MeasureValue,
    history: Sequence[float],
    threshold: float,
    *,
    basis: str = "primary",
    by: By = "point",
    min_power: float = POWER,
    unit: str = "run",
) -> tuple[MetricCheck, str | None]:
    """The gate's rule on one number: `m` against the mean of `history` (its values in the
    earlier runs of the window, oldest first), with the power warning where it decides and did
    not regress. `basis` `information` shows the check without letting it fail. The one
    decision `evaluate_gate` makes per measure, and what `memgauge watch` applies to each window
    of the query log (`unit` "window": what the notes call the number's source)."""
    key = metric_key(m)
    deciding = basis != "information"
    cur = m.value
    ci = (m.ci_low, m.ci_high) if m.ci_low is not None and m.ci_high is not None else None
    values = list(history)
    baseline = baseline_of(values)
    drop: float | None = None
    regressed, within, power, warning = False, None, None, None
    if cur is None:
        note = f"no score in this {unit} (n/a)"
    elif baseline is None:
        note = f"no earlier {unit} has it: no baseline yet"
    elif baseline <= 0:
        note = "baseline is 0: a relative change is undefined"
    else:
        drop, regressed, within, note = _decide(m, baseline, threshold, by, unit)
        if not deciding:
            # shown beside the verdict, never part of it
            regressed = False
            if drop >= threshold - _EPS:
                note += "; information: it does not decide the gate (--measure gates it)"
        else:
            power, warning = _power_warning(key, m, baseline, threshold, min_power)
            if regressed:  # a drop it caught needs no warning about power
                warning = None
    check = MetricCheck(
        *key,
        current=None if cur is None else float(cur),
        ci=ci,
        baseline=baseline,
        history=values,
        drop=drop,
        threshold=threshold,
        regressed=regressed,
        within_ci=within,
        note=note,
        power=power,
        deciding=deciding,
        basis=basis,
        higher_is_better=m.higher_is_better,
        n_scored=m.n_scored,
        n_fallback=m.n_fallback,
    )
    return check, warning


def _unscored(check: MetricCheck, m: MeasureValue, run_id: str) -> str:
    """The warning for a deciding measure the baseline has a value of and this run has none
    (its subject failed every item it was asked): n/a is no regression, so it cannot fail the
    gate, which must not pass it unsaid."""
    return (
        f"{check.subject}/{check.task}/{check.evaluator}: no score in this run"
        f" ({m.n_failed} failed, {m.n_scored} scored) where the baseline has"
        f" {check.baseline:.3f}: it cannot fail the gate; see why with"
        f" `memgauge runs show {run_id}`"
    )


def _unmatched(
    checks: Sequence[MetricCheck], past: Sequence[Mapping[tuple[str, str, str], MeasureValue]]
) -> list[str]:
    """A warning per subject / task of the run whose deciding measures no baseline run has,
    when there are baseline runs: a renamed task or subject (another version of the suite)
    would otherwise pass the gate with nothing compared, unsaid."""
    if not past:
        return []
    measured = {(key[0], key[1]) for run in past for key in run}
    missing = dict.fromkeys(
        (c.subject, c.task) for c in checks if c.deciding and (c.subject, c.task) not in measured
    )
    held = ", ".join(f"{s}/{t}" for s, t in sorted(measured)[:10]) or "nothing"
    return [
        f"{subject}/{task}: no run of the baseline measured this subject and task (they have"
        f" {held}): its measures were compared with nothing, so they cannot fail the gate; if"
        " the suite renamed them, the gate compares them once runs of this version form the"
        " baseline"
        for subject, task in missing
    ]


def _other_data(current: RunRecord, past: Sequence[RunRecord]) -> list[str]:
    """A warning per task whose dataset (its content's sha256, as the run recorded it) is not
    the one the baseline's runs read: a change of the data moves the numbers as much as one of
    the system, and the gate cannot tell them apart."""
    mine = current.provenance.get("datasets") or {}
    out = []
    for task, sha in mine.items():
        other = [
            r.run_id
            for r in past
            if (theirs := (r.provenance.get("datasets") or {}).get(task)) and sha and theirs != sha
        ]
        if other:
            out.append(
                f"task {task}: its dataset is not the one {len(other)} of the baseline's"
                f" {counted(len(past), 'run')} read (sha256 {str(sha)[:12]} here; {', '.join(other[:3])}"
                f"{' ...' if len(other) > 3 else ''} read another): a change may be the data's,"
                " not the system's; if it fails the gate for that reason alone, `memgauge gate"
                " --accept RUN` counts the run in later baselines"
            )
    return out


def evaluate_gate(
    current: RunRecord,
    history: Sequence[RunRecord],
    cfg: GateConfig,
    kinds: Mapping[tuple[str, str], str] | None = None,
    excluded: Collection[str] = (),
) -> GateResult:
    """Gate `current` against `history` (earlier completed runs of its suite, oldest first):
    every run-level number (evaluator means, IR metrics, P / R / F1, tier pass rates, audit
    rates), the deciding ones and the rest as information (see the module docstring).
    `kinds`: (task, evaluator label) -> evaluator name, for per-kind thresholds. `excluded`: ids
    of earlier runs that failed the gate and were not accepted; the baseline leaves them out.

    Raises:
        UsageError: a `cfg.measures` entry names no measure of the run, or a `cfg.overrides`
            key no evaluator or measure of it.
    """
    kinds = kinds or {}
    current_measures = _measures(current)
    measures = argument("measures", flag="--measure")  # as its caller wrote it
    error = unmatched_error(list(current_measures.values()), cfg.measures, measures)
    if error is not None:
        raise error
    names = {key[2] for key in current_measures} | {
        k
        for key, m in current_measures.items()
        if (k := m.kind if m.kind not in (None, "agent") else kinds.get((key[1], key[2])))
    }
    unknown = sorted(set(cfg.overrides) - names)
    if unknown:  # a typo must not leave the default threshold in force unsaid
        raise UsageError(
            f"--threshold-for {', '.join(unknown)}: no evaluator or measure of this run is "
            f"named so; it has {', '.join(sorted(names)[:20])}"
            + (" ..." if len(names) > 20 else "")
        )
    targeted = current.summary.targeted() if current.summary else set()
    counted = [r for r in history if r.run_id not in excluded]
    past = counted[-cfg.window :] if cfg.window > 0 else []
    past_values = [_measures(run) for run in past]
    checks, warnings = [], []
    for key, m in current_measures.items():
        values = [
            float(v.value)
            for run in past_values
            if (v := run.get(key)) is not None and v.value is not None
        ]
        kind = m.kind if m.kind not in (None, "agent") else kinds.get((key[1], key[2]))
        check, warning = check_measure(
            m,
            values,
            cfg.threshold_for(key[2], kind, m.scoring),
            basis=_basis(m, targeted, cfg.measures),
            by=cfg.by,
            min_power=cfg.min_power,
        )
        checks.append(check)
        if warning:
            warnings.append(warning)
        if check.deciding and check.current is None and check.baseline is not None:
            warnings.append(_unscored(check, m, current.run_id))
    warnings += _unmatched(checks, past_values)
    warnings += _other_data(current, past)
    return GateResult(
        current.run_id,
        current.suite_name,
        "fail" if any(c.regressed for c in checks) else "pass",
        len(history),
        checks,
        by=cfg.by,
        baseline_runs=[r.run_id for r in past],
        excluded=[r.run_id for r in history if r.run_id in excluded],
        warnings=warnings,
    )


def with_unended(result: GateResult, earlier: Sequence[Mapping[str, Any]]) -> GateResult:
    """`result`, when it has no baseline, warning of its suite's earlier runs that did not
    complete (`earlier`: the runs made before it, newest first, each with its `run_id` and
    `status`): "no earlier run to compare with" hid them (only a completed run counts).
    `memgauge gate` and the viewer's run page say it in these words."""
    unended = [r for r in earlier if r["status"] != "completed"]
    if result.baseline_runs or not unended:
        return result
    by = ", ".join(f"{r['run_id']} {r['status']}" for r in unended[:5])
    more = f" and {len(unended) - 5} more" if len(unended) > 5 else ""
    said = (
        f"{counted(len(unended), 'earlier run')} of suite {result.suite!r} did not complete"
        f" ({by}{more}): only a completed run counts in the baseline"
    )
    return replace(result, warnings=[*result.warnings, said])


_BLOCKS = "▁▂▃▄▅▆▇█"


def sparkline(values: Sequence[float | None]) -> str:
    """A row of block characters, one per value (a space for n/a)."""
    real = [v for v in values if v is not None]
    if not real:
        return ""
    lo, hi = min(real), max(real)
    span = hi - lo
    return "".join(
        " "
        if v is None
        else _BLOCKS[0 if span == 0 else round((v - lo) / span * (len(_BLOCKS) - 1))]
        for v in values
    )
