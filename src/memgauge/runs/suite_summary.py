"""A suite run's aggregates, computed from its stored item and score rows.

Always from the rows, never from counters kept while running: a resumed run and an
uninterrupted one with the same rows get the same numbers (rows are sorted; bootstrap CIs use
the suite's seed). Per subject and task: item counts by status and the weighted combined score;
per evaluator: mean with a 95% bootstrap CI, `n_scored`, `n_failed` (failed items plus verdicts
the evaluator could not give) and the pass rate where the evaluator passes or fails items.
A mean with no scored item is None (shown as n/a), never 0.

A judge that failed and was allowed an opt-in stand-in value (seed 000's neutral 0.5) is
counted in `n_fallback` and kept out of `mean`; `mean_with_fallback` shows what the average
would be with them, so the two are never confused. A deliberation panel's evaluator also gets
`agreement`: percent agreement and Fleiss' kappa of the judges' final pass/fail votes.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from memgauge.stats import bootstrap_ci
from memgauge.stats.agreement import fleiss_kappa, percent_agreement

__all__ = ["summarize"]


def _ci(values: list[float], seed: int) -> dict[str, Any]:
    if not values:
        return {"mean": None, "ci_low": None, "ci_high": None, "n_scored": 0}
    ci = bootstrap_ci(np.asarray(values, dtype=np.float64), seed=seed)
    return {"mean": ci.mean, "ci_low": ci.low, "ci_high": ci.high, "n_scored": len(values)}


def summarize(
    items: Sequence[Mapping[str, Any]],
    scores: Sequence[Mapping[str, Any]],
    evaluators: Mapping[str, Sequence[str]],
    *,
    seed: int = 0,
) -> dict[str, Any]:
    """Aggregates of one run.

    Args:
        items: item rows (subject, task, item_id, status, score).
        scores: verdict rows (subject, task, item_id, evaluator, value, passed, error).
        evaluators: task -> its evaluator labels, in suite order (so an evaluator that never
            scored still gets a row).
        seed: seed of the bootstrap.
    """
    by_pair: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
    for it in sorted(items, key=lambda r: (r["subject"], r["task"], r["item_id"])):
        by_pair.setdefault((it["subject"], it["task"]), []).append(it)
    verdicts: dict[tuple[str, str, str], list[Mapping[str, Any]]] = {}
    for s in sorted(scores, key=lambda r: (r["subject"], r["task"], r["evaluator"], r["item_id"])):
        verdicts.setdefault((s["subject"], s["task"], s["evaluator"]), []).append(s)
    counts = {"completed": 0, "failed": 0, "queued": 0}
    tasks_out: list[dict[str, Any]] = []
    evals_out: list[dict[str, Any]] = []
    for (subject, task), rows in by_pair.items():
        status = [r["status"] for r in rows]
        n_completed, n_failed = status.count("completed"), status.count("failed")
        n_queued = len(rows) - n_completed - n_failed
        counts["completed"] += n_completed
        counts["failed"] += n_failed
        counts["queued"] += n_queued
        combined = [float(r["score"]) for r in rows if r["score"] is not None]
        tasks_out.append(
            {
                "subject": subject,
                "task": task,
                "n_items": len(rows),
                "n_completed": n_completed,
                "n_failed": n_failed,
                "n_queued": n_queued,
                "score": {
                    **_ci(combined, seed),
                    "n_failed": n_failed + (n_completed - len(combined)),
                },
            }
        )
        for label in evaluators.get(task, ()):
            got = verdicts.get((subject, task, label), [])
            real = [v for v in got if v["value"] is not None and not v["error"]]
            values = [float(v["value"]) for v in real if not v.get("fallback")]
            stand_in = [float(v["value"]) for v in real if v.get("fallback")]
            judged = [
                bool(v["passed"]) for v in got if v["passed"] is not None and not v.get("fallback")
            ]
            entry: dict[str, Any] = {
                "subject": subject,
                "task": task,
                "evaluator": label,
                **_ci(values, seed),
                "n_failed": n_failed + sum(1 for v in got if v["error"] or v["value"] is None),
                "n_passed": sum(judged),
                "pass_rate": sum(judged) / len(judged) if judged else None,
            }
            if stand_in:
                entry["n_fallback"] = len(stand_in)
                entry["mean_with_fallback"] = float(np.mean(values + stand_in))
            votes = [_votes(v.get("panel_passed")) for v in got]
            votes = [x for x in votes if x]
            if votes:
                entry["agreement"] = _agreement(votes)
            evals_out.append(entry)
    total = sum(counts.values())
    return {
        "n_items": total,
        "n_completed": counts["completed"],
        "n_failed": counts["failed"],
        "n_queued": counts["queued"],
        "failure_rate": counts["failed"] / total if total else None,
        "tasks": tasks_out,
        "evaluators": evals_out,
    }


def _votes(raw: Any) -> list[bool]:
    if raw is None:
        return []
    if isinstance(raw, str):
        raw = json.loads(raw)
    return [bool(x) for x in raw]


def _agreement(votes: list[list[bool]]) -> dict[str, Any]:
    same = [v for v in votes if len(v) == len(votes[0])]
    return {
        "n_items": len(votes),
        "n_judges": len(votes[0]),
        "percent_agreement": percent_agreement(votes),
        "fleiss_kappa": fleiss_kappa(same) if len(same) == len(votes) else None,
    }
