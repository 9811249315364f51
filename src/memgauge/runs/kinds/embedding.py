"""Embedding tasks (seed 004): known pairs of texts, similar or different; the subject embeds
both, and the vectors are compared with the reference embedder's."""

from __future__ import annotations

from typing import Any, ClassVar

from memgauge._util.listing import counted
from memgauge.data.vectors import load_pairs
from memgauge.errors import SubjectError
from memgauge.runs.kinds.base import (
    Asked,
    DatasetKind,
    PlannedItem,
    PlannedTask,
    Planning,
)

__all__ = ["EmbeddingKind"]


class EmbeddingKind(DatasetKind):
    """Known similar and different pairs, embedded by the subject."""

    name: ClassVar[str] = "embedding"
    description: ClassVar[str] = "known similar / different pairs: the subject embeds both texts"
    dataset_is = "known pairs {a, b, label: similar|different}"
    calls = "embed"

    def plan(self, planning: Planning) -> PlannedTask:
        items = [
            PlannedItem(
                id=str(p.id), input={"a": p.a, "b": p.b}, expected=p.label, category=p.label
            )
            for p in load_pairs(planning.dataset_path())
        ]
        return planning.planned(items)

    def arguments(self, item: PlannedItem) -> tuple[Any, ...]:
        return ([item.input["a"], item.input["b"]],)

    def ask(self, subject: Any, answers: bool, task: PlannedTask, item: PlannedItem) -> Asked:
        out, latency, _ = super().ask(subject, answers, task, item)
        vectors = [[float(x) for x in v] for v in out]
        if len(vectors) != 2:
            raise SubjectError(f"embed() gave {counted(len(vectors), 'vector')} for 2 texts")
        return {"a": vectors[0], "b": vectors[1]}, latency, {}
