"""A constrained objective (`--constraint`): maximize the objective subject to a bound on
another measure. The synthetic objective's optimum is at x=27; its bounded measure is x, so
under `x_cost <= 20` the optimum is out of reach and no candidate past 20 may be the best."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from optsynth import START, Synthetic, config

from memgauge.aggregates.constraint import parse_constraint
from memgauge.errors import UsageError
from memgauge.optimize import Candidate, CandidateRun, Evaluation, MemoryHistory, run_study


class Bounded(Synthetic):
    """The synthetic objective, each candidate's bounded measure its x."""

    def evaluate(self, candidate: Candidate, phase: str, run: CandidateRun) -> Evaluation:
        ev = super().evaluate(candidate, phase, run)
        return replace(ev, constraint_value=float(candidate.params["x"]))


@pytest.mark.parametrize("strategy", ["greedy", "annealing", "tpe", "best-of-n"])
def test_a_candidate_that_misses_the_bound_is_never_the_best(strategy: str) -> None:
    iterations = 30 if strategy == "best-of-n" else 80
    free, _ = run_study(config(strategy, iterations, seed=2), Bounded(), MemoryHistory())
    assert free["best"]["params"]["x"] > 20  # unconstrained, the search goes past the bound
    history = MemoryHistory()
    data, _ = run_study(
        config(strategy, iterations, seed=2, constraint="x_cost <= 20"), Bounded(), history
    )
    values = [it["constraint_value"] for it in data["iterations"] if it["status"] == "completed"]
    assert any(v > 20 for v in values), "the search never tried past the bound"
    best = data["best"]
    assert best["constraint_value"] == best["params"]["x"] <= 20
    assert data["constraint"] == {"text": "x_cost <= 20", "best_meets": True}
    # a local search never moved to a candidate that misses the bound
    for it in data["iterations"]:
        if it["accepted"]:
            assert it["constraint_value"] <= 20
    # the bound is recorded with the study (a resume reads it back)
    (study,) = history.studies.values()
    assert study["config"]["constraint"] == "x_cost <= 20"


def test_a_start_that_misses_the_bound_gives_way_to_the_first_that_meets_it() -> None:
    """The start (x=3) misses `x_cost >= 10`: the best is a candidate that meets it, even one
    that scores below the start."""
    data, _ = run_study(
        config("greedy", 40, seed=1, constraint="x_cost >= 10"), Bounded(), MemoryHistory()
    )
    assert data["baseline"]["params"]["x"] == START["x"]
    assert data["best"]["params"]["x"] >= 10
    assert data["constraint"]["best_meets"] is True


def test_no_candidate_meeting_the_bound_is_said() -> None:
    data, _ = run_study(
        config("greedy", 5, seed=1, constraint="x_cost < -1"), Bounded(), MemoryHistory()
    )
    assert data["best"]["step"] == 0
    assert data["constraint"] == {"text": "x_cost < -1", "best_meets": False}


@pytest.mark.parametrize(
    ("text", "parsed"),
    [
        ("context_tokens.p50<=2000", ("context_tokens.p50", "<=", 2000.0, None)),
        ("retrieval/latency_ms.p95 < 250.5", ("latency_ms.p95", "<", 250.5, "retrieval")),
        (" Recall@10 >= 0.6 ", ("Recall@10", ">=", 0.6, None)),
    ],
)
def test_constraint_text(text: str, parsed: tuple[Any, ...]) -> None:
    c = parse_constraint(text)
    assert (c.measure, c.op, c.bound, c.task) == parsed


@pytest.mark.parametrize(
    "text", ["context_tokens.p50", "context_tokens.p50 == 3", "<= 5", "a/b/c.p50<=1", "x <= y"]
)
def test_bad_constraint_text_is_a_usage_error(text: str) -> None:
    with pytest.raises(UsageError, match="--constraint"):
        parse_constraint(text)


def test_optuna_is_told_how_far_a_candidate_is_from_the_bound() -> None:
    c = parse_constraint("context_tokens.p50<=2000")
    assert (c.violation(1500.0), c.violation(2000.0), c.violation(2600.0)) == (-500.0, 0.0, 600.0)
    assert c.violation(None) > 0  # n/a misses it
    strict = parse_constraint("latency_ms.p95<250")
    assert strict.violation(250.0) > 0
    assert not strict.met(250.0)
