"""Run a memory-operation evaluation (seed 000): each case's decision (live or recorded) through
the heuristic, operation and judge tiers; pass rates per check, and per tier (the share of
cases passing every check of the tier that applies to them) with Wilson intervals, beside the
tier targets (95% / 80% / 70%). A decider or judge that failed is a
recorded failure for that case and check, never a pass or a fail."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from memgauge.data.models import OperationCase
from memgauge.scorers.base import EvalContext
from memgauge.scorers.judges import RubricJudge
from memgauge.scorers.operations import (
    TIER_TARGETS,
    TIERS,
    decision_of,
    heuristic_checks,
    operation_check,
    similarity_check,
)
from memgauge.stats.proportion import wilson_ci

__all__ = ["evaluate_operations", "summarize_operations"]


def _judge(
    judge: RubricJudge, case: OperationCase, decision: dict[str, Any]
) -> dict[str, Any] | None:
    if decision["action"] != "UPDATE" or not decision.get("content"):
        return None
    original = next((m.content for m in case.existing if m.id == decision.get("id")), None)
    if original is None:
        original = "\n".join(m.content for m in case.existing)
    inc = case.incoming
    incoming = inc.content if hasattr(inc, "content") else str(dict(inc).get("content", ""))
    score = judge.evaluate(
        EvalContext(
            output=str(decision["content"]),
            input=f"ORIGINAL MEMORY:\n{original}\n\nINCOMING MEMORY:\n{incoming}",
            expected=case.expected.merged,
        )
    )
    if score.error is not None or score.value is None:
        return {"passed": None, "error": score.error or "no verdict"}
    return {"passed": bool(score.passed), "value": score.value, "reason": score.reason}


def evaluate_operations(
    cases: Sequence[OperationCase],
    outputs: Mapping[str, Any],
    *,
    judge: RubricJudge | None = None,
    concurrency: int = 4,
) -> list[dict[str, Any]]:
    """One row per case: the decision and every check's verdict (`passed` None = failed)."""

    def one(case: OperationCase) -> dict[str, Any]:
        raw = outputs.get(case.id)
        row: dict[str, Any] = {"id": case.id, "scenario": case.scenario, "quality": case.quality}
        if raw is None or isinstance(raw, BaseException):
            row["error"] = (
                "no decision for this case" if raw is None else f"{type(raw).__name__}: {raw}"
            )
            return row
        decision = decision_of(raw)
        if decision["action"] not in ("CREATE", "UPDATE", "DELETE", "NOOP"):
            row["error"] = f"no decision could be read from {str(raw)[:200]!r}"
            return row
        checks: dict[str, Any] = {}
        for name, verdict in heuristic_checks(case, decision).items():
            if verdict is not None:
                checks[name] = {"passed": verdict[0], "reason": verdict[1]}
        ok, why = operation_check(case, decision)
        checks["action"] = {"passed": ok, "reason": why}
        similar = similarity_check(case, decision)
        if similar is not None:
            checks["similarity"] = {"passed": similar[0], "reason": similar[1]}
        if judge is not None:
            judged = _judge(judge, case, decision)
            if judged is not None:
                checks["merge-quality"] = judged
        row["decision"] = {k: v for k, v in decision.items() if k != "raw"}
        row["checks"] = checks
        return row

    with ThreadPoolExecutor(max_workers=max(1, concurrency)) as pool:
        return list(pool.map(one, cases))


def _rate(flags: list[bool]) -> dict[str, Any]:
    n, k = len(flags), sum(flags)
    ci = wilson_ci(k, n)
    return {
        "pass_rate": k / n if n else None,
        "n": n,
        "passed": k,
        "ci95": list(ci) if ci else None,
    }


def summarize_operations(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Pass rates per check and per tier, with targets; n/a where nothing applied."""
    checks: dict[str, dict[str, Any]] = {}
    tiers: dict[str, dict[str, Any]] = {}
    for name, tier in TIERS.items():
        verdicts = [r["checks"][name] for r in rows if name in r.get("checks", {})]
        flags = [bool(v["passed"]) for v in verdicts if v.get("passed") is not None]
        checks[name] = {"tier": tier, **_rate(flags), "n_failed": len(verdicts) - len(flags)}
    for tier, target in TIER_TARGETS.items():
        # per case, not per check: the checks of one decision are not independent trials; a
        # case passes a tier when every check of the tier that applies to it passes
        flags = []
        for r in rows:
            verdicts = [v for name, v in r.get("checks", {}).items() if TIERS.get(name) == tier]
            if verdicts and all(v.get("passed") is not None for v in verdicts):
                flags.append(all(bool(v["passed"]) for v in verdicts))
        entry = {**_rate(flags), "target": target}
        entry["met"] = None if entry["pass_rate"] is None else entry["pass_rate"] >= target
        tiers[tier] = entry
    failed = [{"id": r["id"], "error": r["error"]} for r in rows if "error" in r]
    return {
        "n_cases": len(rows),
        "n_failed": len(failed),
        "tiers": tiers,
        "checks": checks,
        "failures": failed,
    }
