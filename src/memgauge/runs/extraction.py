"""Run a fact-extraction evaluation (seed 001) over cases: a live extractor, or outputs
recorded from production (the seed's online phase), scored by a matcher or the
fact-enumeration judge.

Aggregates: precision / recall / F1 micro (from summed TP / FP / FN) and macro (mean over
cases), each with a 95% bootstrap CI over cases (2,000 resamples, seeded); conflict-resolution
accuracy and minimalism with Wilson intervals; the seed's targets beside them (P > 0.95,
R > 0.85, F1 > 0.90, conflict 100%, minimalism 100%). A case whose extractor or judge failed
is counted in `n_failed`, never scored.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from memgauge.data.models import ExtractionCase
from memgauge.llm._loop import run_sync
from memgauge.scorers.base import EvalContext
from memgauge.scorers.extraction import CaseScore, FactMatcher, facts_of, prf, score_case
from memgauge.scorers.judges import FactsJudge
from memgauge.scorers.judges.base import Verdict
from memgauge.stats.proportion import wilson_ci

__all__ = ["TARGETS", "evaluate_extraction", "summarize_extraction"]

TARGETS = {"precision": 0.95, "recall": 0.85, "f1": 0.90, "conflict": 1.0, "minimalism": 1.0}


def _judge_counts(
    judge: FactsJudge, case: ExtractionCase, output: list[str]
) -> tuple[int, int, int] | str:
    ctx = EvalContext(
        output="\n".join(f"- {o}" for o in output) or "(empty)",
        input="\n".join(f"{t.role}: {t.content}" for t in case.conversation),
        metadata={
            "existing_memory": "\n".join(f"- {m}" for m in case.existing_memory) or "(empty)"
        },
    )
    verdict = run_sync(judge.averdict(ctx))
    if not isinstance(verdict, Verdict):
        return f"judge failed: {verdict[0]}"
    d = verdict.detail
    return int(d["tp"]), int(d["fp"]), int(d["fn"])


def evaluate_extraction(
    cases: Sequence[ExtractionCase],
    outputs: Mapping[str, Any],
    matcher: FactMatcher,
    *,
    judge: FactsJudge | None = None,
    concurrency: int = 4,
) -> list[CaseScore | dict[str, str]]:
    """Score each case's output (`outputs[case.id]`: the memory after the conversation, or an
    exception / missing: a failure). Returns a CaseScore or `{"id", "error"}` per case."""

    def one(case: ExtractionCase) -> CaseScore | dict[str, str]:
        raw = outputs.get(case.id)
        if raw is None:
            return {"id": case.id, "error": "no output for this case"}
        if isinstance(raw, BaseException):
            return {"id": case.id, "error": f"{type(raw).__name__}: {raw}"}
        if isinstance(raw, dict) and "error" in raw:
            # a production trace that recorded a failed extraction: not "extracted nothing"
            return {"id": case.id, "error": f"recorded error: {raw['error']}"}
        facts = facts_of(raw)
        if judge is None:
            return score_case(case, facts, matcher)
        counts = _judge_counts(judge, case, facts)
        if isinstance(counts, str):
            return {"id": case.id, "error": counts}
        return score_case(
            case, facts, matcher, counts=counts, method=f"facts judge (+{matcher.name})"
        )

    with ThreadPoolExecutor(max_workers=max(1, concurrency)) as pool:
        return list(pool.map(one, cases))


def _wilson(flags: list[bool]) -> dict[str, Any]:
    n, k = len(flags), sum(flags)
    ci = wilson_ci(k, n)
    return {"value": k / n if n else None, "n": n, "ci95": list(ci) if ci else None}


def summarize_extraction(
    results: Sequence[CaseScore | dict[str, str]], *, seed: int = 0
) -> dict[str, Any]:
    """Micro and macro P / R / F1 with bootstrap CIs, conflict and minimalism, targets."""
    scored = [r for r in results if isinstance(r, CaseScore)]
    failed = [r for r in results if not isinstance(r, CaseScore)]
    out: dict[str, Any] = {
        "n_cases": len(results),
        "n_scored": len(scored),
        "n_failed": len(failed),
    }
    if scored:
        counts = np.array([[r.tp, r.fp, r.fn] for r in scored], dtype=np.float64)
        per_case = np.array([[r.precision, r.recall, r.f1] for r in scored], dtype=np.float64)
        rng = np.random.default_rng(seed)
        idx = rng.integers(0, len(scored), size=(2000, len(scored)))
        sums = counts[idx].sum(axis=1)  # (B, 3)
        tp, fp, fn = sums[:, 0], sums[:, 1], sums[:, 2]
        with np.errstate(invalid="ignore", divide="ignore"):
            bp = np.where(tp + fp > 0, tp / (tp + fp), 1.0)
            br = np.where(tp + fn > 0, tp / (tp + fn), 1.0)
            bf = np.where(bp + br > 0, 2 * bp * br / (bp + br), 0.0)
        micro = prf(*(int(x) for x in counts.sum(axis=0)))
        macro_boot = per_case[idx].mean(axis=1)
        for i, name in enumerate(("precision", "recall", "f1")):
            boot = (bp, br, bf)[i]
            out[name] = {
                "micro": micro[i],
                "micro_ci95": [float(np.percentile(boot, 2.5)), float(np.percentile(boot, 97.5))],
                "macro": float(per_case[:, i].mean()),
                "macro_ci95": [
                    float(np.percentile(macro_boot[:, i], 2.5)),
                    float(np.percentile(macro_boot[:, i], 97.5)),
                ],
                "target": TARGETS[name],
                "met": micro[i] > TARGETS[name],
            }
        out["tp"], out["fp"], out["fn"] = (int(x) for x in counts.sum(axis=0))
    else:
        for name in ("precision", "recall", "f1"):
            out[name] = {"micro": None, "macro": None, "target": TARGETS[name], "met": None}
    conflict = _wilson([bool(r.conflict_ok) for r in scored if r.conflict_ok is not None])
    minimal = _wilson([bool(r.minimal_ok) for r in scored if r.minimal_ok is not None])
    for name, entry in (("conflict", conflict), ("minimalism", minimal)):
        entry["target"] = TARGETS[name]
        entry["met"] = None if entry["value"] is None else entry["value"] >= TARGETS[name]
        out[name] = entry
    out["failures"] = failed
    return out
