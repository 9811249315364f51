"""Who answers an audit and who decides its probes (seed 003, as memaudit does it).

The agent's model is `--model`, else MEMGAUGE_MODEL or MEMAUDIT_MODEL, else, when
OPENAI_API_KEY is set, memaudit's own default `gpt-4o-mini`. With no model and no key the agent
is the extractive baseline (no LLM), and its label says so.

The agent: `memory` when a memory subject is given, `chat` when there is a model, else the
extractive baseline. The probes are decided by the QA judge when `scoring` is `judge`, or when it
is `auto` and a model is known (`--judge-model`, or the agent's model: memaudit matches answers
"via the same model"); else offline (token F1, embeddings, abstention phrases).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from memgauge.errors import UsageError, argument
from memgauge.scorers.audit import AuditMatch

__all__ = ["MEMAUDIT_DEFAULT_MODEL", "AuditChoice", "audit_choice"]

#: memaudit's default model (`--model`, "default: gpt-4o-mini").
MEMAUDIT_DEFAULT_MODEL = "gpt-4o-mini"

_BASELINE = "extractive baseline (no LLM: answers with the best-matching turn)"


@dataclass(frozen=True)
class AuditChoice:
    """The audit's agent (subject spec and label) and its probes' evaluator (spec and how it
    decides, for the results)."""

    subject: dict[str, Any]
    agent_label: str
    evaluator: str | dict[str, Any]
    method: str
    model: str | None


def _agent_model(model: str | None) -> tuple[str | None, str | None]:
    """The agent's model and where it came from."""
    if model:
        return model, argument("model")
    for name in ("MEMGAUGE_MODEL", "MEMAUDIT_MODEL"):
        if os.environ.get(name):
            return os.environ[name], name
    if os.environ.get("OPENAI_API_KEY"):
        return MEMAUDIT_DEFAULT_MODEL, "memaudit's default (OPENAI_API_KEY is set)"
    return None, None


def audit_choice(
    *,
    agent: str | None = None,
    model: str | None = None,
    memory: Mapping[str, Any] | None = None,
    k: int = 10,
    scoring: str = "auto",
    judge_preset: str = "longmemeval",
    judge_model: str | None = None,
) -> AuditChoice:
    """The agent and evaluator of an audit (see the module docstring); UsageError when an LLM
    agent or judge is asked for and no model is known."""
    from memgauge.llm.config import check_model

    found, source = _agent_model(model)
    # a blank model (MEMGAUGE_MODEL=" ") is named as given, not as the spec built from it
    for given, where in ((found, source), (judge_model, argument("judge_model"))):
        if given is not None and where is not None and not where.startswith("memaudit"):
            check_model(given, where)
    agent = agent or ("memory" if memory is not None else "chat" if found else "extractive")
    if agent == "extractive":
        subject: dict[str, Any] = {"extractive": {}}
        label = _BASELINE
        if found is None:
            label += "; offline: no model named and no OPENAI_API_KEY"
    elif found is None:
        raise UsageError(
            f"{argument('agent', agent)} needs a model: give {argument('model')}, set"
            " MEMGAUGE_MODEL, or set OPENAI_API_KEY (memaudit's default model, gpt-4o-mini);"
            f" {argument('agent', 'extractive')} runs without one"
        )
    elif agent == "chat":
        subject, label = {"chat": {"model": found}}, f"chat: {found}"
    elif memory is None:
        raise UsageError(
            f"{argument('agent', 'memory')} needs {argument('subject')} (e.g. hybrid, or a"
            " subject spec file)"
        )
    else:
        subject = {"memory-agent": {"memory": dict(memory), "model": found, "k": k}}
        label = f"memory: {found}"
    if source is not None and source.startswith("memaudit") and agent != "extractive":
        label += f" ({source})"
    if scoring == "offline" and judge_model is not None:
        # no answer is judged offline: the model named would decide nothing, unsaid
        raise UsageError(
            f"{argument('judge_model', judge_model)} names the QA judge's model, and"
            f" {argument('scoring', 'offline')} judges nothing: drop one of them"
            f" ({argument('scoring', 'judge')} uses the judge)"
        )
    jm = judge_model or found
    if scoring == "judge" or (scoring == "auto" and jm is not None):
        if jm is None:
            raise UsageError(
                f"{argument('scoring', 'judge')} needs a model: {argument('judge_model')},"
                f" {argument('model')}, MEMGAUGE_MODEL or OPENAI_API_KEY (gpt-4o-mini)"
            )
        evaluator: str | dict[str, Any] = {"qa-judge": {"preset": judge_preset, "model": jm}}
        method = f"QA judge ({judge_preset} preset, model {jm})"
    else:
        evaluator, method = "audit-match", AuditMatch().method
    return AuditChoice(subject, label, evaluator, method, found)
