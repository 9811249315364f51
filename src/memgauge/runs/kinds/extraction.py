"""Extraction tasks (seed 001): the subject extracts facts from a conversation, given the memory
that exists before it; the expected value is the facts a correct extraction finds. The cases are
seed 001's, or LoCoMo's sessions with their observations as silver facts; with `trace:`, the
unlabelled lines of a production trace, scored by the fact-enumeration judge alone. This is what
`memgauge extraction` builds.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

from memgauge._util.numbers import MAX_FAILURE_RATE
from memgauge.data.detect import read_as
from memgauge.data.importers.locomo import locomo_extraction_cases
from memgauge.data.io import load_extraction_cases
from memgauge.data.models import ExtractionCase, Turn
from memgauge.data.traces import unlabelled_cases
from memgauge.errors import UsageError, check_path
from memgauge.runs.builders import command_suite
from memgauge.runs.kinds.base import DatasetKind, PlannedItem, PlannedTask, Planning
from memgauge.runs.suite import Suite, TaskSpec

__all__ = ["ExtractionKind", "extraction_suite"]


class ExtractionKind(DatasetKind):
    """Conversations whose facts the subject extracts."""

    name: ClassVar[str] = "extraction"
    description: ClassVar[str] = (
        "seed 001 cases: the subject extracts facts from a conversation (with trace: a "
        "production trace's unlabelled lines, judged)"
    )
    fields = frozenset({"trace"})
    dataset_is = "extraction cases (seed 001) or a LoCoMo file"
    calls = "extract"

    def reads(self, task: TaskSpec) -> str | None:
        return "extraction" if task.trace is None else None

    def plan(self, planning: Planning) -> PlannedTask:
        task, path = planning.task, planning.dataset_path()
        if task.trace is not None:
            opts = task.trace
            cases, n = unlabelled_cases(path, tags=opts.tags, sample=opts.sample, seed=opts.seed)
            items = _extraction_items(cases, unlabelled=True)
            return planning.planned(items, notes={"trace_lines": n, "selected": len(cases)})
        cases = (
            locomo_extraction_cases(path)
            if read_as(path, task.dataset_kind, "extraction") == "locomo"
            else load_extraction_cases(path)
        )
        return planning.planned(_extraction_items(cases))

    def arguments(self, item: PlannedItem) -> tuple[Any, ...]:
        case = item.input
        conversation = [Turn.model_validate(t) for t in case["conversation"]]
        return conversation, list(case["existing_memory"])


def _extraction_items(
    cases: list[ExtractionCase], *, unlabelled: bool = False
) -> list[PlannedItem]:
    """`unlabelled`: production trace lines, whose expected value says only that nobody
    labelled them (an empty `expected_facts` would mean "nothing to extract")."""
    return [
        PlannedItem(
            id=c.id,
            input={
                "conversation": [
                    t.model_dump(mode="json", exclude_none=True) for t in c.conversation
                ],
                "existing_memory": list(c.existing_memory),
            },
            expected={"unlabelled": True}
            if unlabelled
            else {
                "expected_facts": [
                    f.model_dump(mode="json", exclude_none=True) for f in c.expected_facts
                ],
                "expected_output": c.expected_output,
                "scenario": c.scenario,
            },
            category="unlabelled" if unlabelled else c.scenario,
            metadata=dict(c.metadata),
        )
        for c in cases
    ]


def _task(
    name: str,
    dataset: Path,
    scorer: Mapping[str, Any],
    judge_model: str | None,
    limit: int | None,
    **more: Any,
) -> dict[str, Any]:
    """An extraction task of `extraction_suite`, scored by the extraction scorer as `scorer`
    says (with `judge_model` when one is given)."""
    args = {**scorer, **({"judge_model": judge_model} if judge_model else {})}
    return {
        "name": name,
        "kind": "extraction",
        "dataset": str(dataset.resolve()),
        **more,
        "limit": limit,
        "evaluators": [{"spec": {"extraction": args}, "label": "extraction"}],
    }


def extraction_suite(
    cases: str | Path | None,
    subject: Mapping[str, Any],
    *,
    subject_name: str = "extractor",
    match: str = "semantic",
    threshold: float = 0.75,
    judge_model: str | None = None,
    limit: int | None = None,
    concurrency: int = 4,
    max_failure_rate: float = MAX_FAILURE_RATE,
    seed: int = 0,
    trace: str | Path | None = None,
    tags: Sequence[str] = (),
    sample: float = 1.0,
    dataset_kind: str | None = None,
) -> Suite:
    """Seed 001's fact extraction over `cases` for one extractor (live or recorded); and, with
    `trace` (a production trace), its unlabelled lines tagged with any of `tags`, a `sample`
    share of them (seeded by `seed`), scored by the fact-enumeration judge alone in a task of
    their own (`online`), so judged and labelled numbers are never pooled. `dataset_kind`:
    what `cases` is (extraction or locomo; default: detected from its content).

    UsageError when neither is given, or when `trace` is alone and has no unlabelled line."""
    if cases is not None:
        check_path("cases", cases)
        cases = Path(cases)
    if trace is not None:
        check_path("trace", trace)
        trace = Path(trace)
    if cases is None and trace is None:
        raise UsageError(
            "give CASES (labelled cases) or --outputs TRACE.jsonl (a production trace)"
        )
    tasks: list[dict[str, Any]] = []
    if cases is not None:
        scorer = {"match": match, "threshold": threshold}
        more = {"dataset_kind": dataset_kind} if dataset_kind else {}
        tasks.append(_task("extraction", cases, scorer, judge_model, limit, **more))
    if trace is not None:
        selected, n_unlabelled = unlabelled_cases(trace, tags=tags, sample=sample, seed=seed)
        if not selected and cases is None:
            raise UsageError(
                f"{trace} has no unlabelled line (one with its conversation and no case_id); "
                "give the labelled CASES its case_ids refer to"
                if n_unlabelled == 0
                else f"none of the {n_unlabelled} unlabelled lines of {trace} has a turn with"
                f" text, is tagged {' or '.join(tags) or '(any)'} and is in the {sample:g} sample"
                f" (seed {seed})"
            )
        if selected:
            opts = {"tags": list(tags), "sample": sample, "seed": seed}
            tasks.append(_task("online", trace, {"match": "judge"}, judge_model, limit, trace=opts))
    named = cases if cases is not None else trace
    assert named is not None
    return command_suite(
        f"extraction:{named.resolve().stem}",
        f"memgauge extraction {named}",
        {subject_name: dict(subject)},
        tasks,
        concurrency=concurrency,
        seed=seed,
        max_failure_rate=max_failure_rate,
    )
