"""Seed 003's audit of an agent's memory as a suite the one engine runs: which agent answers
(a chat model shown the whole history, a reader over a memory subject, or the extractive
baseline that needs no LLM), how its answers are decided (the QA judge, or offline matching),
and the results document (`results.json`) made from the run's record."""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from memgauge.errors import UsageError
from memgauge.probes.sources import AuditSource, load_audit_source
from memgauge.runs.builders import audit_suite
from memgauge.runs.engine import RunReport
from memgauge.runs.suite import Suite
from memgauge.scorers.audit import AuditMatch
from memgauge.subjects.parse import one_spec

__all__ = [
    "AGENT_LABELS",
    "AUDIT_MATCH_METHOD",
    "AuditPlan",
    "audit_result",
    "configured_model",
    "plan_audit",
]

AGENT_LABELS = {
    "extractive": "extractive baseline (no LLM: answers with the best-matching turn)",
}

#: how the offline audit decides a probe (`audit --scoring offline`)
AUDIT_MATCH_METHOD: str = AuditMatch().method


def configured_model(model: str | None) -> str | None:
    """`model`, else MEMGAUGE_MODEL, else memaudit's MEMAUDIT_MODEL."""
    return model or os.environ.get("MEMGAUGE_MODEL") or os.environ.get("MEMAUDIT_MODEL")


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
    """

    dataset: Path
    source: AuditSource
    agent: str
    subject: dict[str, Any]
    method: str
    suite: Suite

    @property
    def agent_label(self) -> str:
        """The agent in words: the baseline's description, or `kind: model`."""
        model = next(iter(self.subject.values())).get("model")
        return AGENT_LABELS.get(self.agent, f"{self.agent}: {model}")


def _subject(agent: str, model: str | None, subject_text: str | None, k: int) -> dict[str, Any]:
    if agent == "extractive":
        return {"extractive": {}}
    if model is None:
        raise UsageError(
            f"--agent {agent} needs a model: give --model or set MEMGAUGE_MODEL (and "
            "OPENAI_BASE_URL / OPENAI_API_KEY); --agent extractive runs without one"
        )
    if agent == "chat":
        return {"chat": {"model": model}}
    if subject_text is None:
        raise UsageError("--agent memory needs --subject (e.g. hybrid, or a subject spec file)")
    memory = one_spec(subject_text, "--subject")
    return {"memory-agent": {"memory": memory, "model": model, "k": k}}


def plan_audit(
    dataset: Path,
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
) -> AuditPlan:
    """The audit of `dataset` (memaudit JSON / JSONL, LoCoMo, LongMemEval) as a suite.

    The agent, unless given: memory-backed when `subject` names a memory, a chat model when a
    model is configured (`configured_model`), else the extractive baseline. Scoring `auto` uses
    the QA judge (`judge_preset`, `judge_model` or the agent's model) when a judge model is
    configured, else offline matching; a LoCoMo file is also scored LoCoMo's own way. At most
    half the probes may fail (`max_failure_rate`) unless told otherwise.
    """
    source = load_audit_source(dataset, seed=seed)
    configured = configured_model(model)
    agent = agent or ("memory" if subject else "chat" if configured else "extractive")
    spec = _subject(agent, configured, subject, k)
    use_judge = scoring == "judge" or (
        scoring == "auto" and configured_model(judge_model) is not None
    )
    evaluator: Any
    if use_judge:
        jm = judge_model or configured
        if jm is None:
            raise UsageError(
                "--scoring judge needs a model: --judge-model, --model or MEMGAUGE_MODEL"
            )
        evaluator = {"qa-judge": {"preset": judge_preset, "model": jm}}
        method = f"QA judge ({judge_preset} preset, model {jm})"
    else:
        evaluator, method = "audit-match", AUDIT_MATCH_METHOD
    suite = audit_suite(
        dataset,
        spec,
        evaluator,
        name=source.name,
        locomo=source.format == "locomo",
        limit=limit,
        seed=seed,
        concurrency=concurrency,
        max_failure_rate=0.5 if max_failure_rate is None else max_failure_rate,
    )
    return AuditPlan(dataset, source, agent, spec, method, suite)


def audit_result(plan: AuditPlan, report: RunReport) -> dict[str, Any]:
    """The audit's results document (memaudit's results.json, schema version 1) from its run:
    per probe type the rate with n and a Wilson 95% interval, LoCoMo's QA scores where they
    apply, the LLM spend, and every probe with its verdict."""
    source = plan.source
    audit = report.summary.aggregate("audit")
    per_subject = audit.detail["subjects"]["agent"] if audit is not None else {}
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
        "metrics": per_subject.get("metrics", {}),
        "counts": per_subject.get("counts", {}),
        **({"locomo_qa": per_subject["locomo_qa"]} if "locomo_qa" in per_subject else {}),
        "llm_usage": report.summary.llm_usage,
        "notes": source.notes,
        "probes": per_subject.get("probes", []),
    }
