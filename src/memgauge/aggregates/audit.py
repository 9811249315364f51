"""The audit aggregate (seed 003): recall accuracy, hallucinated-memory rate, conflict-resolution
accuracy and temporal accuracy, each with its count and a Wilson 95% interval, from the verdicts
on the probes (an item's category is its probe type).

A probe is correct when its evaluator passed it (or, for an evaluator that gives no pass/fail,
scored at least 0.5). Probes that could not be asked or judged are counted in `n_failed` and left
out of the rates; a probe type with no probe is n/a, never 0.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from memgauge.aggregates.base import NOT_RUN, Target, TaskView, listed_examples, shaped
from memgauge.aggregates.facts import AuditFacts
from memgauge.data.records import AggregateResult, ItemRecord, MeasureValue, ScoreRecord
from memgauge.data.shapes import Breakdown, Shape, Table, cell, text
from memgauge.probes.metrics import METRICS, audit_metrics, locomo_qa_summary

__all__ = ["LABELS", "LOCOMO_QA", "AuditAggregate", "probe_rows"]


LOCOMO_QA = "locomo-qa"

LABELS = {
    "recall_accuracy": "Recall accuracy",
    "hallucinated_memory_rate": "Hallucinated-memory rate (lower is better)",
    "conflict_resolution_accuracy": "Conflict-resolution accuracy",
    "temporal_accuracy": "Temporal accuracy",
}


def probe_rows(items: Sequence[ItemRecord], evaluator: str | None) -> list[dict[str, Any]]:
    """One row per probe: id, type, question, expected, answer, correct (None = failed),
    reason and the verdict's detail, as the audit's results.json lists them; a LoCoMo probe
    also carries its category and LoCoMo's own score of the answer (`locomo_qa`)."""
    rows = []
    for it in items:
        score = it.verdict(evaluator) if evaluator else (it.scores[0] if it.scores else None)
        failed = it.status != "completed" or score is None or score.error is not None
        correct = None
        if not failed and score is not None:
            correct = bool(score.passed) if score.passed is not None else (score.value or 0) >= 0.5
        row: dict[str, Any] = {
            "id": it.item_id,
            "type": it.category,
            "question": it.input.get("text"),
            "expected": it.expected,
            "answer": it.output,
            "correct": correct,
            "reason": _reason(it, score),
            "detail": dict(score.detail) if score is not None else {},
        }
        related = (it.input.get("metadata") or {}).get("related_facts")
        if related:
            row["related_facts"] = list(related)
        category = (it.input.get("metadata") or {}).get("locomo_category")
        if category is not None:
            locomo = it.verdict(LOCOMO_QA)
            row["locomo_category"] = category
            row["locomo_qa"] = None if locomo is None or locomo.error else locomo.value
        rows.append(row)
    return rows


def _reason(it: ItemRecord, score: ScoreRecord | None) -> str:
    """Why the probe was scored so, or why it failed: the agent's failure as recorded (its
    LLM call's error), not the bare status 'failed' results.json and memaudit.json said."""
    if it.status == "failed" and it.failures:
        return it.failures[-1].describe()
    if it.status == "queued":
        return NOT_RUN
    return (score.reason if score is not None else None) or it.status


@dataclass(frozen=True)
class AuditAggregate:
    """Seed 003's four audit metrics per subject."""

    name: ClassVar[str] = "audit"
    title: ClassVar[str] = "Audit"

    def measure_names(self, task: TaskView) -> list[str]:
        """recall_accuracy, hallucinated_memory_rate, conflict_resolution_accuracy,
        temporal_accuracy."""
        return list(METRICS)

    def targets(self, task: TaskView) -> list[Target]:
        """Seed 003 sets no numeric target."""
        return []

    def compute(self, task: TaskView, items: Mapping[str, Sequence[ItemRecord]]) -> AggregateResult:
        """Per subject: the metrics with counts, and every probe row."""
        # the verdict: the first evaluator that is not LoCoMo's own scoring (shown beside it)
        label = next((lbl for lbl, kind in task.evaluators if kind != LOCOMO_QA), None)
        per_subject: dict[str, Any] = {}
        measures: list[MeasureValue] = []
        for subject in task.subjects:
            probes = probe_rows(items.get(subject, ()), label)
            result = audit_metrics(probes)
            locomo = locomo_qa_summary(probes)
            per_subject[subject] = {
                **result,
                **({"locomo_qa": locomo} if locomo is not None else {}),
                "probes": probes,
            }
            if locomo is not None:
                for name, c in [("overall", locomo["overall"]), *locomo["by_category"].items()]:
                    measures.append(
                        MeasureValue(
                            subject=subject,
                            task=task.name,
                            name="locomo_qa" if name == "overall" else f"locomo_qa[{name}]",
                            value=c["mean"],
                            n_scored=c["n_scored"],
                            n_failed=c["n_failed"],
                            source="audit",
                            kind=LOCOMO_QA,
                            primary=name == "overall",
                        )
                    )
            for name, c in result["counts"].items():
                ci = c["ci95"] or [None, None]
                measures.append(
                    MeasureValue(
                        subject=subject,
                        task=task.name,
                        name=name,
                        value=c["value"],
                        ci_low=ci[0],
                        ci_high=ci[1],
                        n_scored=c["n_scored"],
                        n_failed=c["n_failed"],
                        higher_is_better=not METRICS[name][1],
                        source="audit",
                    )
                )
        detail = {"subjects": per_subject}
        return shaped(self, task, measures, detail, facts=AuditFacts.model_validate(detail))

    @staticmethod
    def shapes_from(detail: Mapping[str, Any]) -> list[Shape]:
        """The metrics per subject (Wilson CIs), LoCoMo's own scoring by category, every
        probe with its answer and verdict."""
        subjects: Mapping[str, Any] = detail.get("subjects") or {}
        names = list(subjects)
        rows = []
        for metric in METRICS:
            row = [text(LABELS[metric])]
            for s in names:
                c = (subjects[s].get("counts") or {}).get(metric) or {}
                row.append(
                    cell(
                        c.get("value"),
                        c.get("ci95"),
                        c.get("n_scored"),
                        c.get("n_failed", 0),
                        pct=True,
                    )
                )
            rows.append(row)
        shapes: list[Shape] = [
            Table(
                title="Audit metrics",
                note="95% Wilson CI; a probe type with no scored probe is n/a",
                columns=["measure", *names],
                rows=rows,
            )
        ]
        locomo = {s: d["locomo_qa"] for s, d in subjects.items() if d.get("locomo_qa")}
        if locomo:
            first = next(iter(locomo.values()))
            cats = [*first["by_category"], "overall"]

            def one(d: Mapping[str, Any], cat: str) -> Any:
                c = d["overall"] if cat == "overall" else d["by_category"].get(cat, {})
                return cell(c.get("mean"), None, c.get("n_scored"), c.get("n_failed", 0))

            values = {c: [one(d, c) for d in locomo.values()] for c in cats}
            shapes.append(
                Breakdown(
                    title=str(first.get("label") or "LoCoMo QA"),
                    measure="locomo_qa",
                    by="category",
                    subjects=list(locomo),
                    values=values,
                )
            )
        return shapes + listed_examples("Probes", subjects, "probes", _probe_text, "correct")


def _probe_text(p: Mapping[str, Any]) -> str:
    answered = f"answered {p['answer'] or ''}"
    return f"{p['type']}: {p['question']} · expected {p['expected']} · {answered} · {p['reason']}"
