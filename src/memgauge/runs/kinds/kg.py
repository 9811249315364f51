"""Knowledge-graph tasks (seed 004's write pipeline beyond facts): a writer's output for each
item is the triples it extracted, scored by `kg-triples` (P / R / F1 over normalized triples,
entities and relations) and summed per level by the `kg` aggregate."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from memgauge.runs.kinds.base import ItemsKind
from memgauge.runs.kinds.script import evaluator_names

if TYPE_CHECKING:
    from memgauge.runs.suite import TaskSpec

__all__ = ["KGKind"]


class KGKind(ItemsKind):
    """Texts with the triples a writer should extract from them."""

    name: ClassVar[str] = "kg"
    description: ClassVar[str] = (
        "texts with expected knowledge-graph triples: the subject's triples scored per level"
    )

    def problems(self, task: TaskSpec) -> list[tuple[str, str]]:
        out = super().problems(task)
        if "kg-triples" not in evaluator_names(task):
            out.append(("evaluators", "a kg task needs the kg-triples evaluator: - kg-triples"))
        return out

    def default_aggregates(self, task: TaskSpec) -> list[Any]:
        return ["kg"]
