"""The write path's files, from a run's record: `extraction.json` and `operations.json` (the
summary and every case); the terminal draws the aggregates' shapes."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from memgauge.aggregates.base import NOT_RUN
from memgauge.aggregates.facts import SubjectsFacts
from memgauge.data.records import ItemRecord, RunRecord

__all__ = ["extraction_report", "operations_report"]


def _summary(run: RunRecord, aggregate: str, task: str | None = None) -> tuple[str, dict[str, Any]]:
    agg = run.summary.aggregate(aggregate, task) if run.summary else None
    facts = agg.facts_as(SubjectsFacts) if agg else None
    subjects = facts.subjects if facts is not None else {}
    subject = next(iter(subjects), next(iter(run.suite.get("subjects", {})), "subject"))
    return subject, dict(subjects.get(subject, {}))


def _failed(item: ItemRecord, label: str) -> str | None:
    if item.status == "queued":
        return NOT_RUN
    if item.status == "failed":
        last = item.failures[-1] if item.failures else None
        return last.describe() if last else "failed"
    verdict = item.verdict(label)
    if verdict is None:
        return "not scored"
    return verdict.error


def extraction_report(
    run: RunRecord, items: Sequence[ItemRecord], *, cases: str, extractor: str
) -> dict[str, Any]:
    """`extraction.json`: the summary (P / R / F1, conflict, minimalism, targets) and every
    case's verdict (TP / FP / FN, matched pairs, invented and missed facts) or failure.

    A run over labelled cases and a production trace's unlabelled lines reports the cases at
    the top and the lines under `online` (their numbers come from the judge alone, so they are
    never pooled with the cases'); a run over a trace alone reports its lines at the top."""
    tasks = [str(t.get("name")) for t in run.suite.get("tasks", [])]
    doc = _extraction_task(run, items, tasks[0] if tasks else "extraction", cases, extractor)
    if len(tasks) > 1 and tasks[1] == "online":
        doc["online"] = _extraction_task(run, items, "online", cases, extractor)
    return doc


def _extraction_task(
    run: RunRecord, items: Sequence[ItemRecord], task: str, cases: str, extractor: str
) -> dict[str, Any]:
    _subject, summary = _summary(run, "extraction", task)
    per_case: list[dict[str, Any]] = []
    for it in (it for it in items if it.task == task):
        error = _failed(it, "extraction")
        verdict = it.verdict("extraction")
        if error is not None or verdict is None:
            per_case.append({"id": it.item_id, "error": error})
        else:
            per_case.append(dict(verdict.detail.get("case", {})))
    methods = [c["method"] for c in per_case if "method" in c]
    return {
        "schema_version": 1,
        "run_id": run.run_id,
        "cases": cases,
        "extractor": extractor,
        "matching": methods[0] if methods else None,
        **summary,
        "per_case": per_case,
    }


def operations_report(
    run: RunRecord, items: Sequence[ItemRecord], *, cases: str, decider: str
) -> dict[str, Any]:
    """`operations.json`: tier and check pass rates with Wilson CIs and targets, and every
    case's decision and checks (or failure)."""
    _subject, summary = _summary(run, "operations")
    per_case: list[dict[str, Any]] = []
    for it in items:
        scenario = (it.expected or {}).get("scenario") if isinstance(it.expected, dict) else None
        quality = (it.expected or {}).get("quality") if isinstance(it.expected, dict) else None
        row: dict[str, Any] = {"id": it.item_id, "scenario": scenario, "quality": quality}
        error = _failed(it, "operation-checks")
        verdict = it.verdict("operation-checks")
        if error is not None or verdict is None:
            row["error"] = error
        else:
            row["decision"] = verdict.detail.get("decision", {})
            row["checks"] = verdict.detail.get("checks", {})
        per_case.append(row)
    return {
        "schema_version": 1,
        "run_id": run.run_id,
        "cases": cases,
        "decider": decider,
        **summary,
        "per_case": per_case,
    }
