"""A constrained objective: maximize a measure subject to a bound on another (`--constraint
'context_tokens.p50<=2000'`, `constraint:` in the optimization block).

Every candidate's run gives the bounded measure's value (`Evaluation.constraint_value`,
recorded in its row); the study reads it as met or not (`Evaluation.feasible`). A candidate
that misses the bound is never accepted as the point a local search moves to and never the
study's best; when the starting configuration misses it, the first candidate that meets it is
the best, and later ones replace it by a higher score. With Optuna 5 or later the samplers
(TPE) are told each candidate's violation too (`Trial.set_constraint`: <= 0 met).

The bounded measure must be one the objective's task computes: an evaluator's mean, or a
measure of one of its aggregates. A cost measure (`context_tokens.p50`, `latency_ms.p95`, ...)
on a task without the cost aggregate gets it added to the candidates' runs.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from memgauge._util.registry import RegistryError
from memgauge.aggregates import AGGREGATES, TaskView
from memgauge.aggregates.constraint import Constraint, parse_constraint
from memgauge.aggregates.cost import CostAggregate
from memgauge.errors import UsageError
from memgauge.optimize.space import load_optuna
from memgauge.runs.depth import default_aggregates
from memgauge.runs.suite import TaskSpec, evaluator_kinds

if TYPE_CHECKING:  # the objective's module reads the study's config, which reads this one
    from memgauge.optimize.objective import Evaluation

__all__ = [
    "CONSTRAINT_KEY",
    "constrained_task",
    "constraint_of",
    "feasibility",
    "known_constraint_attrs",
    "tell_constraint",
]

#: the constraint's name on an Optuna trial
CONSTRAINT_KEY = "memgauge"


def constraint_of(text: str | None) -> Constraint | None:
    """The study's constraint, from its recorded text."""
    return None if text is None else parse_constraint(text, where="constraint")


def constrained_task(task: TaskSpec, constraint: Constraint) -> TaskSpec:
    """`task` as its candidates run it under `constraint`: with the cost aggregate added when
    the bound names a cost measure the task does not compute; UsageError when the task gives
    no such measure or the bound names another task."""
    if constraint.task is not None and constraint.task != task.name:
        raise UsageError(
            f"constraint {constraint.text()!r}: a candidate runs the objective's task "
            f"({task.name!r}) only; bound one of its measures"
        )
    kinds = evaluator_kinds(task)
    view = TaskView(name=task.name, kind=task.kind, subjects=(), evaluators=kinds, k=task.k)
    given = task.aggregates
    specs: list[Any] = list(given if given is not None else default_aggregates(task))
    names = {label for label, _kind in kinds} | {"score"}
    for spec in specs:
        try:
            names.update(AGGREGATES.build(spec).measure_names(view))
        except (RegistryError, UsageError):
            continue
    if constraint.measure in names:
        return task
    if constraint.measure in CostAggregate().measure_names(view):
        return task.model_copy(update={"aggregates": [*specs, {"cost": {}}]})
    shown = ", ".join(sorted(names))
    raise UsageError(
        f"constraint {constraint.text()!r}: task {task.name!r} has no measure "
        f"{constraint.measure!r} (it gives {shown}; the cost aggregate's, such as "
        "context_tokens.p50 and latency_ms.p95, are added when named)"
    )


def feasibility(ev: Evaluation, constraint: Constraint | None) -> Evaluation:
    """`ev` with `feasible` set from its constraint value (None without a constraint)."""
    if constraint is None:
        return ev
    return replace(ev, feasible=constraint.met(ev.constraint_value))


def tell_constraint(trial: Any, constraint: Constraint | None, value: float | None) -> None:
    """Tell an Optuna trial (before it is told its score) how far it is from the bound."""
    if constraint is not None and hasattr(trial, "set_constraint"):  # Optuna >= 5
        trial.set_constraint(CONSTRAINT_KEY, constraint.violation(value))


def known_constraint_attrs(constraint: Constraint | None, value: float | None) -> dict[str, Any]:
    """The system attributes of a trial told after the fact (`space.tell_known`) that carry
    its violation, as `Trial.set_constraint` sets them (none before Optuna 5)."""
    if constraint is None:
        return {}
    optuna = load_optuna()
    if not hasattr(optuna.trial.Trial, "set_constraint"):
        return {}
    # where Trial.set_constraint keeps a constraint (Optuna's own key, not exported)
    from optuna.samplers._base import _CONSTRAINTS_KEY  # type: ignore[attr-defined]

    return {f"{_CONSTRAINTS_KEY}:{CONSTRAINT_KEY}": constraint.violation(value)}
