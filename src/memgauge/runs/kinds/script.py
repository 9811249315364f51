"""Script tasks: questions answered as in an expected-output task, scored by a program of the
user's (`{script: {command: [...]}}`), which is what a script task must have."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from memgauge.runs.kinds.base import ItemsKind

if TYPE_CHECKING:
    from memgauge.runs.suite import TaskSpec

__all__ = ["ScriptKind", "evaluator_names"]


def evaluator_names(task: TaskSpec) -> list[str]:
    """The registered names of the task's evaluators (`exact`, `script`, ...)."""
    return [
        e.spec if isinstance(e.spec, str) else str(next(iter(e.spec), "?")) for e in task.evaluators
    ]


class ScriptKind(ItemsKind):
    """Questions scored by a script of the user's."""

    name: ClassVar[str] = "script"
    description: ClassVar[str] = "questions scored by a script evaluator of the user's"

    def problems(self, task: TaskSpec) -> list[tuple[str, str]]:
        out = super().problems(task)
        if "script" not in evaluator_names(task):
            need = "a script task needs a script evaluator: {script: {command: [...]}}"
            out.append(("evaluators", need))
        return out
