"""Rolling baselines and regression gates over a suite's run history (seed 000).

For each metric (subject / task / evaluator mean) the baseline is the mean of the same metric
in the last `window` completed runs before the current one (5 by default). The drop is
`(baseline - current) / baseline`; it is a regression when the drop reaches the metric's
threshold (15% by default; 10% for exact-match evaluators, whose scores should not move; 20%
for LLM judges, which vary more) **and** the baseline lies above the current run's own 95% CI,
so that a drop the run's noise can explain is reported as such, not called a regression.

Gate phases, progressive: `bootstrap` while the baseline forms (fewer than `min_history` runs
before the current one): always pass; `stabilization` (fewer than `production_after`): a
regression warns; `production`: a regression fails the gate.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from memgauge.data.records import MeasureValue, RunRecord

__all__ = [
    "EXACT_EVALUATORS",
    "JUDGE_EVALUATORS",
    "GateConfig",
    "GateResult",
    "MetricCheck",
    "evaluate_gate",
    "metric_key",
    "sparkline",
]

EXACT_EVALUATORS = frozenset({"exact", "contains", "icontains", "regex"})
JUDGE_EVALUATORS = frozenset({"rubric", "qa-judge", "facts", "pairwise", "panel"})


@dataclass(frozen=True)
class GateConfig:
    """How the gate decides.

    Attributes:
        window: runs in the rolling baseline.
        threshold: relative drop that is a regression (default metrics).
        exact_threshold: for exact-match evaluators.
        judge_threshold: for LLM judges.
        overrides: evaluator label or name -> threshold.
        min_history: runs before the current one needed to leave the bootstrap phase.
        production_after: runs needed to leave stabilization.
        phase: force a phase (`bootstrap`, `stabilization`, `production`), or None for auto.
    """

    window: int = 5
    threshold: float = 0.15
    exact_threshold: float = 0.10
    judge_threshold: float = 0.20
    overrides: Mapping[str, float] = field(default_factory=dict)
    min_history: int = 3
    production_after: int = 10
    phase: str | None = None

    def threshold_for(self, label: str, kind: str | None) -> float:
        """The threshold of one evaluator (label, then its kind, then its tier)."""
        for key in (label, kind):
            if key is not None and key in self.overrides:
                return float(self.overrides[key])
        if kind in EXACT_EVALUATORS:
            return self.exact_threshold
        if kind in JUDGE_EVALUATORS:
            return self.judge_threshold
        return self.threshold


@dataclass(frozen=True)
class MetricCheck:
    """One metric of the current run against its baseline."""

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

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        d = dict(self.__dict__)
        d["ci"] = list(self.ci) if self.ci else None
        return d


@dataclass(frozen=True)
class GateResult:
    """The gate's verdict on a run."""

    run_id: str
    suite: str
    phase: str
    status: str
    n_history: int
    checks: list[MetricCheck]

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready (`status`, `phase`, per metric `baseline`, `current`, `drop`,
        `threshold`, `regressed`)."""
        return {
            "run_id": self.run_id,
            "suite": self.suite,
            "status": self.status,
            "phase": self.phase,
            "n_history": self.n_history,
            "metrics": [c.as_dict() for c in self.checks],
        }


def metric_key(m: MeasureValue) -> tuple[str, str, str]:
    """(subject, task, measure) of a run-level number."""
    return m.subject, m.task, m.name


def _phase(n_history: int, cfg: GateConfig) -> str:
    if cfg.phase:
        return cfg.phase
    if n_history < cfg.min_history:
        return "bootstrap"
    if n_history < cfg.production_after:
        return "stabilization"
    return "production"


def _measures(run: RunRecord) -> dict[tuple[str, str, str], MeasureValue]:
    return {metric_key(m): m for m in (run.summary.measures() if run.summary else [])}


def evaluate_gate(
    current: RunRecord,
    history: Sequence[RunRecord],
    cfg: GateConfig,
    kinds: Mapping[tuple[str, str], str] | None = None,
) -> GateResult:
    """Gate `current` against `history` (earlier completed runs of its suite, oldest first):
    every run-level number (evaluator means, IR metrics, P / R / F1, tier pass rates, audit
    rates). `kinds`: (task, evaluator label) -> evaluator name, for per-kind thresholds.

    A measure where lower is better (a hallucination rate) regresses when it rises: its drop is
    `(current - baseline) / baseline`.
    """
    kinds = kinds or {}
    past = list(history)[-cfg.window :]
    past_values = [_measures(run) for run in past]
    phase = _phase(len(history), cfg)
    checks = []
    for key, m in _measures(current).items():
        values = [
            float(v.value)
            for run in past_values
            if (v := run.get(key)) is not None and v.value is not None
        ]
        kind = m.kind if m.kind not in (None, "agent") else kinds.get((key[1], key[2]))
        threshold = cfg.threshold_for(key[2], kind)
        cur = m.value
        ci = (m.ci_low, m.ci_high) if m.ci_low is not None and m.ci_high is not None else None
        baseline = sum(values) / len(values) if values else None
        drop = None
        regressed, within, note = False, None, ""
        if cur is None:
            note = "no score in this run (n/a)"
        elif baseline is None:
            note = "no history yet: the baseline is forming"
        elif baseline <= 0:
            note = "baseline is 0: a relative change is undefined"
        else:
            sign = 1.0 if m.higher_is_better else -1.0
            drop = sign * (baseline - float(cur)) / baseline
            if drop >= threshold:
                within = ci is not None and ci[0] <= baseline <= ci[1]
                regressed = not within
                if ci is None:
                    note = (
                        f"worse by {drop:.1%} >= {threshold:.0%}; this run has no CI (too few"
                        " items), so the call rests on the threshold alone"
                    )
                elif within:
                    note = (
                        f"worse by {drop:.1%} (threshold {threshold:.0%}), but the baseline "
                        f"{baseline:.3f} is inside this run's 95% CI [{ci[0]:.3f}, {ci[1]:.3f}]:"
                        " noise"
                    )
                else:
                    note = f"worse by {drop:.1%} >= {threshold:.0%}, outside this run's 95% CI"
            else:
                note = (
                    f"{-drop:+.1%} against the baseline"
                    if drop < 0
                    else f"-{drop:.1%}, under {threshold:.0%}"
                )
        checks.append(
            MetricCheck(
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
            )
        )
    any_regressed = any(c.regressed for c in checks)
    if not any_regressed or phase == "bootstrap":
        status = "pass"
    elif phase == "stabilization":
        status = "warn"
    else:
        status = "fail"
    return GateResult(current.run_id, current.suite_name, phase, status, len(history), checks)


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
