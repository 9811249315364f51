"""How far to trust a judge: re-judge frozen outputs k times, and calibrate against people.

Re-judging separates the judge's own noise from real differences between items. With k
verdicts per item (repeat indexes 1..k, so each is its own cached call):

- judge variance `s_w^2`: the mean over items of the variance of an item's k values;
- item variance `s_b^2 = max(0, var(item means) - s_w^2 / k)` (one-way random-effects ANOVA);
- judge share `s_w^2 / (s_w^2 + s_b^2)`: the part of the spread the judge adds by itself;
- flip rate: the share of items whose pass/fail changes between repeats;
- `sd_of_mean_from_judge = sqrt(s_w^2 / n)`: how much the headline mean moves with the judge
  alone; a difference between two systems smaller than about twice this is judge noise.

Verdicts the judge could not give are counted, never filled in. Calibration compares the
judge's pass/fail with human labels: confusion matrix, accuracy with a Wilson CI, Cohen's
kappa (`stats.agreement.calibrate`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from memgauge.data.models import JudgedOutput
from memgauge.scorers.base import EvalContext, Score
from memgauge.scorers.judges.base import JudgeBase, Verdict
from memgauge.stats.agreement import Calibration, calibrate

__all__ = ["CalibrationReport", "RejudgeReport", "acalibrate", "arejudge"]


def _ctx(row: JudgedOutput) -> EvalContext:
    return EvalContext(
        output=row.output,
        expected=row.expected,
        input=row.input,
        metadata={**row.metadata, "item_id": row.id},
    )


async def _score(judge: JudgeBase, row: JudgedOutput, repeat: int) -> Score:
    verdict = await judge.averdict(_ctx(row), repeat=repeat)
    if isinstance(verdict, Verdict):
        return Score(verdict.value, verdict.passed, verdict.reason, detail=verdict.detail)
    return Score.failure(f"judge failed: {verdict[0]}", **verdict[1])


@dataclass(frozen=True)
class RejudgeReport:
    """Judge variance against item variance over k re-judgements."""

    k: int
    n_items: int
    n_verdicts: int
    n_failed: int
    mean: float | None
    repeat_means: list[float | None]
    #: the items whose k verdicts all came back: the variances and the SD are over these alone
    n_complete: int
    judge_variance: float | None
    item_variance: float | None
    judge_share: float | None
    flip_rate: float | None
    sd_of_mean_from_judge: float | None
    values: dict[str, list[float | None]]

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return dict(self.__dict__)


async def arejudge(judge: JudgeBase, rows: Sequence[JudgedOutput], k: int) -> RejudgeReport:
    """Judge every row k times (repeat indexes 1 .. k)."""
    if k < 2:
        raise ValueError("re-judging needs k >= 2 to see any variance")
    repeats = range(1, k + 1)
    scores = await asyncio.gather(*(_score(judge, r, rep) for r in rows for rep in repeats))
    values: dict[str, list[float | None]] = {}
    passed: dict[str, list[bool]] = {}
    for i, row in enumerate(rows):
        mine = scores[i * k : (i + 1) * k]
        values[row.id] = [s.value if s.error is None else None for s in mine]
        passed[row.id] = [bool(s.passed) for s in mine if s.error is None and s.passed is not None]
    n_failed = sum(v is None for vs in values.values() for v in vs)
    complete = np.array(
        [vs for vs in values.values() if all(v is not None for v in vs)], dtype=np.float64
    )
    repeat_means: list[float | None] = []
    for j in range(k):
        col = [v for vs in values.values() if (v := vs[j]) is not None]
        repeat_means.append(float(np.mean(col)) if col else None)
    all_values = [v for vs in values.values() for v in vs if v is not None]
    judge_var = item_var = share = sd_mean = None
    if len(complete):
        # each variance of the values less their first (the same variance): values that never
        # vary give exactly 0, not numpy's rounding of their mean (0.8 three times: 1.2e-32),
        # which made a judge share of 1 out of no variance at all
        judge_var = float((complete - complete[:, :1]).var(axis=1, ddof=1).mean())
        sd_mean = float(np.sqrt(judge_var / len(complete)))
        if len(complete) >= 2:
            means = complete.mean(axis=1)
            item_var = max(0.0, float((means - means[0]).var(ddof=1)) - judge_var / k)
            total = judge_var + item_var
            share = judge_var / total if total > 0 else None
    flips = [len(set(p)) > 1 for p in passed.values() if len(p) >= 2]
    return RejudgeReport(
        k=k,
        n_items=len(rows),
        n_verdicts=len(scores),
        n_failed=n_failed,
        mean=float(np.mean(all_values)) if all_values else None,
        repeat_means=repeat_means,
        n_complete=len(complete),
        judge_variance=judge_var,
        item_variance=item_var,
        judge_share=share,
        flip_rate=sum(flips) / len(flips) if flips else None,
        sd_of_mean_from_judge=sd_mean,
        values=values,
    )


@dataclass(frozen=True)
class CalibrationReport:
    """A judge against human labels; items the judge could not judge are counted apart."""

    calibration: Calibration
    n_failed: int
    failures: list[dict[str, str]]

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return {**self.calibration.as_dict(), "n_failed": self.n_failed, "failures": self.failures}


async def acalibrate(judge: JudgeBase, rows: Sequence[JudgedOutput]) -> CalibrationReport:
    """Judge each labelled row once and compare pass/fail with the human label."""
    scores = await asyncio.gather(*(_score(judge, r, judge.repeat) for r in rows))
    human, machine, failures = [], [], []
    for row, s in zip(rows, scores, strict=True):
        if s.error is not None or s.passed is None:
            why = s.error or "the judge gives no pass/fail (set a threshold)"
            failures.append({"id": row.id, "reason": why})
            continue
        human.append(str(row.label))
        machine.append("pass" if s.passed else "fail")
    return CalibrationReport(calibrate(human, machine), len(failures), failures)
