"""A synthetic objective with a known optimum, for the strategies' tests (no runs: a function
of the candidate's params, its per-item values shifted by fixed item offsets, so paired deltas
are exactly the function's differences)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from memgauge.optimize import Candidate, CandidateRun, Evaluation, StudyConfig, evaluation_of
from memgauge.optimize.split import Split
from memgauge.runs.optspec import SearchDim

SPACE = {
    "x": SearchDim.model_validate("int:0..40"),
    "w": SearchDim.model_validate("float:0..1"),
    "mode": SearchDim.model_validate("choice:a,b,c"),
}
START = {"x": 3, "w": 0.1, "mode": "a"}


def bowl(p: dict[str, Any]) -> float:
    """1 at x=27, w=0.65, mode=b; lower everywhere else."""
    return (
        1.0
        - abs(int(p["x"]) - 27) / 40
        - 0.3 * (p["mode"] != "b")
        - 0.5 * (float(p["w"]) - 0.65) ** 2
    )


def at_optimum(p: dict[str, Any]) -> bool:
    return p["x"] == 27 and p["mode"] == "b" and abs(float(p["w"]) - 0.65) < 0.15


class Synthetic:
    """An `Objective` over `f`; counts its evaluations, names each a run."""

    def __init__(self, f: Callable[[dict[str, Any]], float] = bowl, n_items: int = 20) -> None:
        self.f, self.n = f, n_items
        self.calls = 0
        self.split: Split | None = None

    def items(self) -> list[tuple[str, str | None]]:
        return [(f"i{j}", None) for j in range(self.n)]

    def use_split(self, split: Split | None) -> None:
        self.split = split

    def evaluate(self, candidate: Candidate, phase: str, run: CandidateRun) -> Evaluation:
        self.calls += 1
        run_id = run.resume or f"run-{self.calls}"
        run.on_run(run_id)
        value = self.f(candidate.params)
        ids = [i for i, _c in self.items()]
        if self.split is not None:
            side = self.split.tune if phase == "tune" else self.split.holdout
            assert side is not None
            ids = [i for i in ids if i in set(side.items or ids)]
        values = {i: value + 0.01 * (int(i[1:]) % 5) for i in ids}
        return evaluation_of(values, run_id=run_id)


def config(strategy: str, iterations: int, **extra: Any) -> StudyConfig:
    return StudyConfig(
        suite_name="synthetic",
        task="t",
        measure="m",
        subject="s",
        base_spec={"reference": dict(START)},
        base_k=10,
        space=dict(SPACE),
        strategy=strategy,
        max_iterations=iterations,
        holdout=0.0,
        **extra,
    )
