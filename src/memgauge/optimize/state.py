"""The pieces of a study's state: a scored candidate, the strategy's state, the progress and
proposer protocols, and the paired delta every accept rule rests on."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from memgauge.optimize.objective import Candidate, Evaluation
from memgauge.stats import paired_compare

__all__ = [
    "LOCAL",
    "REFUSED",
    "UNUSABLE",
    "Proposer",
    "Scored",
    "State",
    "StudyProgress",
    "paired_delta",
    "scored_from_row",
]

LOCAL = ("greedy", "best-of-n", "annealing")

#: the note of a candidate the task or subject refused before its run (`Evaluation.invalid`)
REFUSED = "refused before its run"
#: the note of a candidate its proposer could not make (`Candidate.unusable`)
UNUSABLE = "proposal refused"


class StudyProgress(Protocol):
    """What the CLI shows while a study goes."""

    def start(self, study_id: str, total: int, done: int) -> None: ...

    def step(self, step: int, best: float | None, note: str) -> None: ...


class Quiet:
    def start(self, study_id: str, total: int, done: int) -> None:
        pass

    def step(self, step: int, best: float | None, note: str) -> None:
        pass


class Proposer(Protocol):
    """Proposes rewrites of a non-numeric target (texts, code)."""

    def propose(
        self, target: str, current: Candidate, evaluation: Evaluation, n: int, step: int
    ) -> list[Candidate]: ...


@dataclass
class Scored:
    """A candidate with its evaluation and where it is in the history."""

    step: int
    candidate: int
    cand: Candidate
    evaluation: Evaluation


@dataclass
class State:
    baseline: Scored | None = None
    current: Scored | None = None  # where local search continues from
    best: Scored | None = None  # the reported best
    scale: float = 0.25
    since_best: int = 0
    seen: dict[str, Scored] = field(default_factory=dict)
    cost: float = 0.0
    prior_seconds: float = 0.0


def paired_delta(
    a: Mapping[str, float | None], b: Mapping[str, float | None], seed: int = 0
) -> tuple[float | None, float | None, float | None]:
    """(mean(b - a), CI low, CI high) over the items both scored (paired bootstrap)."""
    ids = sorted(set(a) & set(b))
    xa = np.array([np.nan if a[i] is None else a[i] for i in ids], dtype=np.float64)
    xb = np.array([np.nan if b[i] is None else b[i] for i in ids], dtype=np.float64)
    if not ids:
        return None, None, None
    cmp = paired_compare(xa, xb, seed=seed, n_permutations=200)
    return cmp.delta, cmp.delta_ci_low, cmp.delta_ci_high


def scored_from_row(row: Mapping[str, Any]) -> Scored:
    """A history row (a finished candidate) as a `Scored`."""
    values = row.get("values") or {}
    ev = Evaluation(
        score=row.get("score"),
        ci_low=row.get("ci_low"),
        ci_high=row.get("ci_high"),
        values=dict(values),
        run_id=row.get("run_id"),
        status="completed" if row["status"] == "completed" else "failed",
        reason=row.get("reason"),
        invalid=row["status"] == "failed" and row.get("note") == REFUSED,
        constraint_value=row.get("constraint_value"),
    )
    unusable = row.get("reason") if row.get("note") == UNUSABLE else None
    cand = Candidate(dict(row.get("params") or {}), dict(row.get("texts") or {}), unusable)
    return Scored(row["step"], row["candidate"], cand, ev)
