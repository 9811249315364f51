"""Seed 003's audit of an agent's memory as a suite the one engine runs: which agent answers
(a chat model shown the whole history, a reader over a memory subject, or the extractive
baseline that needs no LLM), how its answers are decided (the QA judge, or offline matching),
and the results document (`results.json`) made from the run's record."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from memgauge._util.numbers import AUDIT_MAX_FAILURE_RATE
from memgauge.aggregates.facts import AuditFacts, AuditSubject, SubjectsFacts
from memgauge.errors import argument, check_path
from memgauge.probes.sources import AuditSource, load_audit_source
from memgauge.runs.audit_choice import audit_choice
from memgauge.runs.engine import RunReport
from memgauge.runs.kinds.expected_output import audit_suite
from memgauge.runs.suite import Suite
from memgauge.scorers.audit import AuditMatch
from memgauge.subjects.parse import one_spec

__all__ = [
    "AUDIT_MATCH_METHOD",
    "AuditPlan",
    "audit_result",
    "plan_audit",
]

#: how the offline audit decides a probe (`audit --scoring offline`)
AUDIT_MATCH_METHOD: str = AuditMatch().method


@dataclass(frozen=True)
class AuditPlan:
    """An audit ready to run: its dataset, the agent and scoring chosen, and the suite.

    Attributes:
        dataset: the dataset file as given.
        source: what was read of it (name, format, probes, notes).
        agent: chat, memory or extractive.
        subject: the agent's subject spec.
        method: how a probe is decided, in words (the report shows it).
        suite: the suite the engine runs.
        agent_label: the agent in words (the baseline's description, or `kind: model` and
            where the model came from).
    """

    dataset: Path
    source: AuditSource
    agent: str
    subject: dict[str, Any]
    method: str
    suite: Suite
    agent_label: str


def plan_audit(
    dataset: str | Path,
    *,
    agent: Literal["chat", "memory", "extractive"] | None = None,
    model: str | None = None,
    subject: str | None = None,
    k: int = 10,
    scoring: Literal["auto", "judge", "offline"] = "auto",
    judge_preset: str = "longmemeval",
    judge_model: str | None = None,
    limit: int | None = None,
    seed: int = 0,
    concurrency: int = 8,
    max_failure_rate: float | None = None,
    dataset_kind: str | None = None,
    attribution: Mapping[str, Any] | None = None,
) -> AuditPlan:
    """The audit of `dataset` (memaudit JSON / JSONL, LoCoMo, LongMemEval) as a suite.

    The agent and the scoring are chosen as memaudit does (`runs.audit_choice`): a memory-backed
    agent when `subject` names a memory, a chat model when a model is known (`model`,
    MEMGAUGE_MODEL, MEMAUDIT_MODEL, or gpt-4o-mini when OPENAI_API_KEY is set), else the
    extractive baseline; scoring `auto` uses the QA judge whenever a model is known, else offline
    matching. A LoCoMo file is also scored LoCoMo's own way. At most half the probes may fail
    (`max_failure_rate`) unless told otherwise. `dataset_kind` (conversations, locomo,
    longmemeval) says what `dataset` is; by default its content shows it. `attribution`: the
    arguments of an attribution aggregate (`{}` for its defaults, `{"budget": 400}`): each wrong
    answer attributed to its cause (retrieval miss, budget cut, reader error, stale); None: not
    attributed.
    """
    check_path("dataset", dataset)
    dataset = Path(dataset)
    source = load_audit_source(dataset, seed=seed, kind=dataset_kind)
    choice = audit_choice(
        agent=agent,
        model=model,
        memory=one_spec(subject, argument("subject")) if subject else None,
        k=k,
        scoring=scoring,
        judge_preset=judge_preset,
        judge_model=judge_model,
    )
    suite = audit_suite(
        dataset,
        choice.subject,
        choice.evaluator,
        name=source.name,
        locomo=source.format == "locomo",
        limit=limit,
        seed=seed,
        concurrency=concurrency,
        max_failure_rate=AUDIT_MAX_FAILURE_RATE if max_failure_rate is None else max_failure_rate,
        dataset_kind=dataset_kind,
        attribution=attribution,
    )
    kind = next(iter(choice.subject))
    agent_name = {"extractive": "extractive", "chat": "chat"}.get(kind, "memory")
    return AuditPlan(
        dataset, source, agent_name, choice.subject, choice.method, suite, choice.agent_label
    )


def audit_result(plan: AuditPlan, report: RunReport) -> dict[str, Any]:
    """The audit's results document (memaudit's results.json, schema version 1) from its run:
    per probe type the rate with n and a Wilson 95% interval, LoCoMo's QA scores where they
    apply, the LLM spend, and every probe with its verdict."""
    source = plan.source
    audit = report.summary.aggregate("audit")
    facts = audit.facts_as(AuditFacts) if audit is not None else None
    agent = facts.subjects.get("agent") if facts is not None else None
    per_subject = agent or AuditSubject()
    return {
        "schema_version": 1,
        "dataset": source.name,
        "dataset_path": str(plan.dataset),
        "format": source.format,
        **({"protocol": source.notes["protocol"]} if "protocol" in source.notes else {}),
        "agent": plan.agent_label,
        "subject": plan.subject,
        "scoring": plan.method,
        "run_id": report.run_id,
        "status": report.status,
        "timestamp": datetime.now(UTC).isoformat(timespec="seconds"),
        "metrics": per_subject.metrics,
        "counts": per_subject.counts,
        **({"locomo_qa": per_subject.locomo_qa} if per_subject.locomo_qa is not None else {}),
        **_attribution(report),
        "llm_usage": report.summary.llm_usage,
        "notes": source.notes,
        "probes": per_subject.probes,
    }


def _attribution(report: RunReport) -> dict[str, Any]:
    """The wrong answers by cause, where the audit attributed them (`attribution`: counts,
    shares with Wilson intervals, and each wrong answer's cause)."""
    found = report.summary.aggregate("attribution")
    if found is None:
        return {}
    facts = found.facts_as(SubjectsFacts)
    return {"attribution": facts.subjects.get("agent", {}) if facts is not None else {}}
