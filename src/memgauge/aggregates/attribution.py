"""Each wrong answer of a memory agent or a QA task attributed to its cause (seed 004): the
relevant memory was not retrieved (retrieval miss, with the rank where it would have been), it
was retrieved but cut by the context budget (budget cut), it was in context and the answer is
still wrong (reader error), or the memory itself is stale or conflicts with a newer one
(stale/conflicting); an item with no evidence to check is unattributable, with its reason.
How one item is decided: `aggregates.attribution_cause`.

Measures, per subject and cause: `failure_cause[retrieval_miss]` ... the share of the subject's
wrong answers with that cause, with its count and a Wilson 95% interval (lower is better;
secondary: the gate shows them as information unless named). Items whose call failed or whose
verdict could not be given are `n_failed`, never a cause. A subject with no wrong answer has
n/a shares.

In a task, the aggregate also asks the subject for more: each question is searched to `depth`
(a memory answers from its top `k` of them; an agent with a `search` is searched again), so a
miss has its rank; and each scored item keeps its cause in its record's `extra["attribution"]`
(the viewer's item page shows it).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from memgauge.aggregates.attribution_cause import CAUSES, Cause, attribute
from memgauge.aggregates.base import Target, TaskView, listed_examples, shaped
from memgauge.aggregates.facts import SubjectsFacts
from memgauge.data.records import AggregateResult, ItemRecord, MeasureValue
from memgauge.data.shapes import Breakdown, Shape, cell
from memgauge.errors import UsageError
from memgauge.metrics.tokens import DEFAULT_ENCODING, Encoding
from memgauge.stats.proportion import wilson_ci

__all__ = ["AttributionAggregate", "measure_name"]


def measure_name(cause: str) -> str:
    """`failure_cause[retrieval_miss]`."""
    return f"failure_cause[{cause}]"


@dataclass(frozen=True)
class AttributionAggregate:
    """Wrong answers by cause, per subject (module docstring).

    Attributes:
        evaluator: the evaluator (its label) whose verdict says right or wrong; default: the
            task's first that is not LoCoMo's own scoring.
        budget: a simulated context budget in tokens; None: no budget (an agent's own
            `context` ids still show its cuts).
        encoding: the encoding the budget counts tokens in.
        depth: how deep a question is searched to find the rank of a missed memory.
    """

    evaluator: str | None = None
    budget: int | None = None
    encoding: Encoding = DEFAULT_ENCODING
    depth: int = 50
    name: ClassVar[str] = "attribution"
    title: ClassVar[str] = "Attribution"

    def __post_init__(self) -> None:
        if self.budget is not None and self.budget < 1:
            raise UsageError(f"budget {self.budget}: give a token budget of 1 or more")
        if self.depth < 1:
            raise UsageError(f"depth {self.depth}: give a search depth of 1 or more")

    def search_depth(self) -> int:
        """How deep the kind searches each question for this aggregate."""
        return self.depth

    def measure_names(self, task: TaskView) -> list[str]:
        """`failure_cause[CAUSE]` for each cause."""
        return [measure_name(c) for c in CAUSES]

    def targets(self, task: TaskView) -> list[Target]:
        """None: how wrong answers split is shown, not enforced."""
        return []

    def _label(self, evaluators: Sequence[tuple[str, str]]) -> str | None:
        if self.evaluator is not None:
            return self.evaluator
        return next((lbl for lbl, kind in evaluators if kind != "locomo-qa"), None)

    def cause(self, record: ItemRecord, evaluators: Sequence[tuple[str, str]]) -> Cause | None:
        """The cause of one scored item's wrong answer (None: right, or not scored)."""
        return attribute(
            record, self._label(evaluators), budget=self.budget, encoding=self.encoding
        )

    def annotate(
        self, record: ItemRecord, evaluators: Sequence[tuple[str, str]]
    ) -> dict[str, Any] | None:
        """What the item's record keeps: its cause (None: nothing to keep)."""
        found = self.cause(record, evaluators)
        return None if found is None else found.as_dict()

    def compute(self, task: TaskView, items: Mapping[str, Sequence[ItemRecord]]) -> AggregateResult:
        """Per subject: each cause's count and share of the wrong answers, and every wrong
        answer with its cause."""
        labels = {label for label, _kind in task.evaluators}
        if self.evaluator is not None and labels and self.evaluator not in labels:
            raise UsageError(
                f"task {task.name!r}: the attribution aggregate's evaluator {self.evaluator!r} is"
                f" none of its evaluators ({', '.join(sorted(labels))})"
            )
        subjects: dict[str, Any] = {}
        measures: list[MeasureValue] = []
        for subject in task.subjects:
            summary = self._subject(items.get(subject, ()), task.evaluators)
            subjects[subject] = summary
            for c, row in summary["counts"].items():
                ci = row["ci95"] or (None, None)
                measures.append(
                    MeasureValue(
                        subject=subject,
                        task=task.name,
                        name=measure_name(c),
                        value=row["rate"],
                        ci_low=ci[0],
                        ci_high=ci[1],
                        n_scored=summary["n_wrong"],
                        n_failed=summary["n_failed"],
                        higher_is_better=False,
                        source=self.name,
                        primary=False,
                        note=None if summary["n_wrong"] else "no wrong answer",
                    )
                )
        detail = {"budget": self.budget, "encoding": self.encoding, "subjects": subjects}
        return shaped(self, task, measures, detail, facts=SubjectsFacts(subjects=subjects))

    def _subject(
        self, records: Sequence[ItemRecord], evaluators: Sequence[tuple[str, str]]
    ) -> dict[str, Any]:
        label = self._label(evaluators)
        wrong: list[dict[str, Any]] = []
        n_failed = n_right = 0
        for r in records:
            if r.status == "queued":
                continue
            verdict = r.verdict(label) if label else (r.scores[0] if r.scores else None)
            if r.status != "completed" or verdict is None or verdict.error or verdict.value is None:
                n_failed += 1
                continue
            found = self.cause(r, evaluators)
            if found is None:
                n_right += 1
            else:
                wrong.append({"id": r.item_id, "category": r.category, **found.as_dict()})
        n = len(wrong)
        counts = {}
        for c in CAUSES:
            k = sum(1 for w in wrong if w["cause"] == c)
            ci = wilson_ci(k, n)
            counts[c] = {"count": k, "rate": k / n if n else None, "ci95": list(ci) if ci else None}
        return {
            "n_wrong": n,
            "n_right": n_right,
            "n_failed": n_failed,
            "counts": counts,
            "items": wrong,
        }

    @staticmethod
    def shapes_from(detail: Mapping[str, Any]) -> list[Shape]:
        """The share of wrong answers per cause and subject (Wilson CIs), and every wrong
        answer with its cause."""
        subjects: Mapping[str, Any] = detail.get("subjects") or {}
        values = {
            label: [
                cell(
                    (row := (s.get("counts") or {}).get(c) or {}).get("rate"),
                    row.get("ci95"),
                    s.get("n_wrong"),
                    s.get("n_failed", 0),
                    pct=True,
                    note=f"{row.get('count', 0)} of {s.get('n_wrong', 0)} wrong answers",
                )
                for s in subjects.values()
            ]
            for c, label in CAUSES.items()
        }
        budget = detail.get("budget")
        shapes: list[Shape] = [
            Breakdown(
                title="Wrong answers by cause",
                note="share of each subject's wrong answers, 95% Wilson CI; failed calls are "
                "counted apart, never a cause"
                + (
                    f"; context budget {budget} tokens ({detail.get('encoding')})" if budget else ""
                ),
                key="attribution",
                measure="share of wrong answers",
                by="cause",
                subjects=list(subjects),
                values=values,
            )
        ]
        return shapes + listed_examples(
            "Wrong answers and their causes",
            subjects,
            "items",
            lambda w: f"{CAUSES.get(w['cause'], w['cause'])}: {w['text']}",
        )
