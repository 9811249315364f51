"""The write path's aggregates, from the verdicts of the `extraction` and `operation-checks`
evaluators.

`extraction` (seed 001): precision / recall / F1 micro (from summed TP / FP / FN) and macro (mean
over cases), each with a 95% bootstrap CI over cases (`stats.bootstrap`'s); conflict
resolution and minimalism with Wilson intervals; the seed's targets beside them (P > 0.95,
R > 0.85, F1 > 0.90, conflict 100%, minimalism 100%). A case whose extractor or judge failed is
counted in `n_failed`, never scored.

`operations` (seed 000): pass rates per check, and per tier (the share of cases passing every
check of the tier that applies to them) with Wilson intervals, beside the tier targets (95% /
80% / 70%). A decider or judge that failed is a recorded failure for that case and check, never
a pass or a fail.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from memgauge._util.listing import counted
from memgauge.aggregates.base import (
    NOT_RUN,
    Target,
    TaskView,
    examples,
    failure_examples,
    shaped,
    subject_rows,
)
from memgauge.aggregates.facts import SubjectsFacts
from memgauge.data.models import OperationCase
from memgauge.data.records import AggregateResult, ItemRecord, MeasureValue
from memgauge.data.shapes import Cell, Example, Shape, Table, cell, text
from memgauge.scorers.base import EvalContext
from memgauge.scorers.extraction import prf, unmatched_notes
from memgauge.scorers.operations import TIER_SCORING, TIER_TARGETS, TIERS, checks_for
from memgauge.scorers.write_path import operation_case
from memgauge.stats.bootstrap import CONFIDENCE, N_RESAMPLES, bootstrap_cis
from memgauge.stats.proportion import wilson_ci
from memgauge.stats.shared_draws import drawn

__all__ = [
    "EXTRACTION_TARGETS",
    "ExtractionAggregate",
    "OperationsAggregate",
    "prf_summary",
    "summarize_extraction",
    "summarize_operations",
]

#: Seed 001's targets.
EXTRACTION_TARGETS = {
    "precision": 0.95,
    "recall": 0.85,
    "f1": 0.90,
    "conflict": 1.0,
    "minimalism": 1.0,
}


def _wilson(flags: list[bool]) -> dict[str, Any]:
    n, k = len(flags), sum(flags)
    ci = wilson_ci(k, n)
    return {"value": k / n if n else None, "n": n, "ci95": list(ci) if ci else None}


def prf_summary(cases: Sequence[Mapping[str, Any]], *, seed: int = 0) -> dict[str, Any] | None:
    """Micro (from summed TP / FP / FN) and macro (mean over cases) precision, recall and F1,
    each with a 95% bootstrap CI over cases, and the summed counts; None when no case was
    scored. `cases`: rows with tp, fp, fn, precision, recall, f1.

    The intervals are `stats.bootstrap`'s, with its resamples and seed: a macro interval is
    `bootstrap_ci` of the cases' values (so the evaluator's row of the same values, e.g. the
    `extraction` evaluator's mean F1, shows the same interval), and the micro ones resum the
    counts over the very same resampled cases."""
    if not cases:
        return None
    out: dict[str, Any] = {}
    counts = np.array([[r["tp"], r["fp"], r["fn"]] for r in cases], dtype=np.float64)
    per_case = np.array([[r["precision"], r["recall"], r["f1"]] for r in cases], dtype=np.float64)
    n = len(cases)
    (idx,) = drawn(seed, n, N_RESAMPLES, N_RESAMPLES)  # the indices the bootstrap draws
    sums = counts[idx].sum(axis=1)  # (B, 3)
    tp, fp, fn = sums[:, 0], sums[:, 1], sums[:, 2]
    with np.errstate(invalid="ignore", divide="ignore"):
        bp = np.where(tp + fp > 0, tp / (tp + fp), 1.0)
        br = np.where(tp + fn > 0, tp / (tp + fn), 1.0)
        bf = np.where(bp + br > 0, 2 * bp * br / (bp + br), 0.0)
    micro = prf(*(int(x) for x in counts.sum(axis=0)))
    macro = bootstrap_cis(per_case.T, seed=seed)
    tail = (1.0 - CONFIDENCE) / 2.0 * 100.0
    for i, name in enumerate(("precision", "recall", "f1")):
        boot = (bp, br, bf)[i]
        low, high = np.percentile(boot, [tail, 100.0 - tail])
        out[name] = {
            "micro": micro[i],
            "micro_ci95": [float(low), float(high)],
            "macro": macro[i].mean,
            "macro_ci95": [macro[i].low, macro[i].high],
        }
    out["tp"], out["fp"], out["fn"] = (int(x) for x in counts.sum(axis=0))
    return out


def summarize_extraction(
    cases: Sequence[Mapping[str, Any]],
    failed: Sequence[Mapping[str, str]],
    *,
    seed: int = 0,
    not_run: int = 0,
) -> dict[str, Any]:
    """Micro and macro P / R / F1 with bootstrap CIs, conflict and minimalism, targets.

    `cases`: the scored cases (tp, fp, fn, precision, recall, f1, conflict_ok, minimal_ok) in
    case order; `failed`: `{id, error}` of the cases that could not be scored; `not_run`: the
    cases never asked (the run stopped the extractor), counted as `n_not_run`, not as failed.
    """
    out: dict[str, Any] = {
        "n_cases": len(cases) + len(failed) + not_run,
        "n_scored": len(cases),
        "n_failed": len(failed),
    }
    if not_run:
        out["n_not_run"] = not_run
    block = prf_summary(cases, seed=seed)
    if block is not None:
        out.update(block)
        for name in ("precision", "recall", "f1"):
            target = EXTRACTION_TARGETS[name]
            out[name].update(target=target, met=out[name]["micro"] > target)
    else:
        for name in ("precision", "recall", "f1"):
            out[name] = {
                "micro": None,
                "macro": None,
                "target": EXTRACTION_TARGETS[name],
                "met": None,
            }
    conflict = _wilson([bool(r["conflict_ok"]) for r in cases if r["conflict_ok"] is not None])
    minimal = _wilson([bool(r["minimal_ok"]) for r in cases if r["minimal_ok"] is not None])
    for name, entry in (("conflict", conflict), ("minimalism", minimal)):
        entry["target"] = EXTRACTION_TARGETS[name]
        entry["met"] = (
            None if entry["value"] is None else entry["value"] >= EXTRACTION_TARGETS[name]
        )
        out[name] = entry
    out["failures"] = list(failed)
    return out


def _per_subject(
    agg: Any,
    task: TaskView,
    measures: list[MeasureValue],
    per_subject: dict[str, Any],
    title: str,
    cases: Sequence[Example | None],
) -> AggregateResult:
    """A write-path result: each subject's summary (its detail and facts) and the cases that
    went wrong, titled `title`."""
    detail = {"subjects": per_subject}
    facts = SubjectsFacts(subjects=per_subject)
    return shaped(agg, task, measures, detail, *examples(title, cases), facts=facts)


@dataclass(frozen=True)
class ExtractionAggregate:
    """Seed 001's P / R / F1 (micro and macro), conflict resolution and minimalism."""

    name: ClassVar[str] = "extraction"
    title: ClassVar[str] = "Extraction"

    def measure_names(self, task: TaskView) -> list[str]:
        """precision, recall, f1 (micro), their macro forms, conflict, minimalism."""
        return [
            "precision",
            "recall",
            "f1",
            "precision_macro",
            "recall_macro",
            "f1_macro",
            "conflict",
            "minimalism",
        ]

    def targets(self, task: TaskView) -> list[Target]:
        """P > 0.95, R > 0.85, F1 > 0.90, conflict and minimalism 100%."""
        out = [
            Target(name, ">", EXTRACTION_TARGETS[name], "seed 001")
            for name in ("precision", "recall", "f1")
        ]
        out += [Target(name, ">=", 1.0, "seed 001") for name in ("conflict", "minimalism")]
        return out

    def compute(self, task: TaskView, items: Mapping[str, Sequence[ItemRecord]]) -> AggregateResult:
        """Per subject: the summary and its measures."""
        per_subject: dict[str, Any] = {}
        measures: list[MeasureValue] = []
        cases: list[Example | None] = []
        for subject, rows, failed in subject_rows(task, items, "extraction"):
            # by item id, as the evaluator's row orders them (`aggregates.mean`): the
            # bootstrap then resamples the same cases for both, and macro F1 and the
            # `extraction` row (the mean of the same F1s) show one interval
            scored = [
                r["verdict"].detail["case"]
                for r in sorted(rows, key=lambda r: str(r["id"]))
                if r["error"] is None and "case" in r["verdict"].detail
            ]
            not_run = sum(r["status"] == "queued" for r in rows)
            summary = summarize_extraction(scored, failed, seed=task.seed, not_run=not_run)
            per_subject[subject] = summary
            measures += _extraction_measures(subject, task.name, summary)
            cases += [_case_example(subject, r) for r in rows if r["error"] is None]
        return _per_subject(
            self, task, measures, per_subject, "Cases with invented or missed facts", cases
        )

    @staticmethod
    def shapes_from(detail: Mapping[str, Any]) -> list[Shape]:
        """P / R / F1 micro and macro, conflict and minimalism per subject beside seed 001's
        targets; the cases that could not be scored."""
        subjects: Mapping[str, Any] = detail.get("subjects") or {}
        rows = []
        for name in ("precision", "recall", "f1"):
            for avg in ("micro", "macro"):
                row = [text(f"{name} ({avg})"), text(f"> {EXTRACTION_TARGETS[name]:g}")]
                for s in subjects.values():
                    e = s.get(name) or {}
                    met = e.get("met") if avg == "micro" else None
                    row.append(
                        cell(
                            e.get(avg),
                            e.get(f"{avg}_ci95"),
                            s.get("n_scored"),
                            s.get("n_failed", 0),
                            met=met,
                        )
                    )
                rows.append(row)
        for name in ("conflict", "minimalism"):
            row = [text(name), text(f">= {EXTRACTION_TARGETS[name]:.0%}")]
            for s in subjects.values():
                e = s.get(name) or {}
                row.append(
                    cell(e.get("value"), e.get("ci95"), e.get("n"), pct=True, met=e.get("met"))
                )
            rows.append(row)
        counts = "; ".join(
            f"{name}: {counted(s.get('n_cases') or 0, 'case')}, {s.get('n_scored')} scored, {s.get('n_failed')} failed"
            + (f", {s['n_not_run']} not run" if s.get("n_not_run") else "")
            + f" · TP {s.get('tp', 0)} · FP {s.get('fp', 0)} · FN {s.get('fn', 0)}"
            for name, s in subjects.items()
        )
        table = Table(
            title="Precision, recall and F1",
            note=counts,
            columns=["measure", "target", *subjects],
            rows=rows,
        )
        return [table, *failure_examples(subjects)]


def _case_example(subject: str, row: Mapping[str, Any]) -> Example | None:
    case = row["verdict"].detail.get("case") or {}
    if not (case.get("false_positives") or case.get("missed")):
        return None
    parts = [f"TP {case.get('tp')}, FP {case.get('fp')}, FN {case.get('fn')}"]
    parts += [f"{how.capitalize()}: {x}" for how, x in unmatched_notes(case)]
    parts += [f"Missed: {x}" for x in case.get("missed") or ()]
    return Example(id=str(row["id"]), subject=subject, text=" · ".join(parts), ok=False)


def _extraction_measures(subject: str, task: str, s: Mapping[str, Any]) -> list[MeasureValue]:
    n_failed = s["n_failed"]

    def measure(name: str, value: Any, ci: Any, n: int, *, primary: bool = True) -> MeasureValue:
        low, high = ci or (None, None)
        return MeasureValue(
            subject=subject,
            task=task,
            name=name,
            value=value,
            ci_low=low,
            ci_high=high,
            n_scored=n,
            n_failed=n_failed,
            source="extraction",
            primary=primary,
        )

    out = []
    for name in ("precision", "recall", "f1"):
        e = s[name]
        out.append(measure(name, e["micro"], e.get("micro_ci95"), s["n_scored"]))
        # seed 001's targets are on the micro averages
        out.append(
            measure(f"{name}_macro", e["macro"], e.get("macro_ci95"), s["n_scored"], primary=False)
        )
    for name in ("conflict", "minimalism"):
        e = s[name]
        out.append(measure(name, e["value"], e.get("ci95"), e["n"]))
    return out


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
    """Pass rates per check and per tier, with targets; n/a where nothing applied.

    `rows`: per case `{id, checks}`, or `{id, error, applies}` for a case whose decision failed
    (`applies`: the checks that case would have had, `checks_for`). Each check's and tier's
    `n_failed` (the count its measure carries too) is its cases that could not be checked: a
    failed decision on a case it applies to, or a check that could not be scored (a judge
    that failed).
    """
    failed = [r for r in rows if "error" in r]
    # a case the run never asked (stopped past max_failure_rate) is not a failure
    not_run = sum(1 for f in failed if f["error"] == NOT_RUN)
    failed = [f for f in failed if f["error"] != NOT_RUN]
    failed_ids = {f["id"] for f in failed}
    checks: dict[str, dict[str, Any]] = {}
    tiers: dict[str, dict[str, Any]] = {}
    for name, tier in TIERS.items():
        verdicts = [r["checks"][name] for r in rows if name in r.get("checks", {})]
        flags = [bool(v["passed"]) for v in verdicts if v.get("passed") is not None]
        n_failed = len(verdicts) - len(flags) + sum(name in f.get("applies", ()) for f in failed)
        checks[name] = {"tier": tier, **_rate(flags), "n_failed": n_failed}
    for tier, target in TIER_TARGETS.items():
        # per case, not per check: the checks of one decision are not independent trials; a
        # case passes a tier when every check of the tier that applies to it passes
        flags, n_failed = [], 0
        for r in rows:
            verdicts = [v for name, v in r.get("checks", {}).items() if TIERS.get(name) == tier]
            if verdicts and all(v.get("passed") is not None for v in verdicts):
                flags.append(all(bool(v["passed"]) for v in verdicts))
            elif verdicts or (
                r["id"] in failed_ids and tier in {TIERS[c] for c in r.get("applies", ())}
            ):
                n_failed += 1
        entry = {**_rate(flags), "n_failed": n_failed, "target": target}
        entry["met"] = None if entry["pass_rate"] is None else entry["pass_rate"] >= target
        tiers[tier] = entry
    out: dict[str, Any] = {"n_cases": len(rows), "n_failed": len(failed)}
    if not_run:
        out["n_not_run"] = not_run
    failures = [{"id": f["id"], "error": f["error"]} for f in failed]
    return {**out, "tiers": tiers, "checks": checks, "failures": failures}


def _operation_case(item: ItemRecord) -> OperationCase:
    """The case an item was made from, as its evaluator read it."""
    context = EvalContext(None, item.expected, item.input, {"item_id": item.item_id})
    return operation_case(context)


@dataclass(frozen=True)
class OperationsAggregate:
    """Seed 000's tier pass rates (heuristic 95%, operation 80%, judge 70%)."""

    name: ClassVar[str] = "operations"
    title: ClassVar[str] = "Operations"

    def measure_names(self, task: TaskView) -> list[str]:
        """`tier.heuristic`, `tier.operation`, `tier.judge`, and `check.NAME` per check."""
        return [f"tier.{t}" for t in TIER_TARGETS] + [f"check.{c}" for c in TIERS]

    def targets(self, task: TaskView) -> list[Target]:
        """The tier targets of seed 000."""
        return [Target(f"tier.{t}", ">=", v, "seed 000") for t, v in TIER_TARGETS.items()]

    def compute(self, task: TaskView, items: Mapping[str, Sequence[ItemRecord]]) -> AggregateResult:
        """Per subject: the summary and its measures."""
        per_subject: dict[str, Any] = {}
        measures: list[MeasureValue] = []
        wrong: list[Example] = []
        for subject, found, _failed in subject_rows(task, items, "operation-checks"):
            rows = []
            for r in found:
                if r["error"] is not None:
                    applies = checks_for(_operation_case(r["item"]))
                    rows.append({"id": r["id"], "error": r["error"], "applies": applies})
                else:
                    rows.append({"id": r["id"], "checks": r["verdict"].detail.get("checks", {})})
                    wrong += _failed_checks(subject, r)
            summary = summarize_operations(rows)
            per_subject[subject] = summary
            for prefix, group in (("tier", summary["tiers"]), ("check", summary["checks"])):
                for name, e in group.items():
                    ci = e.get("ci95") or [None, None]
                    measures.append(
                        MeasureValue(
                            subject=subject,
                            task=task.name,
                            name=f"{prefix}.{name}",
                            value=e["pass_rate"],
                            ci_low=ci[0],
                            ci_high=ci[1],
                            n_scored=e["n"],
                            n_failed=e["n_failed"],
                            source="operations",
                            # seed 000's success metrics are per tier; a check is a breakdown
                            primary=prefix == "tier",
                            scoring=TIER_SCORING[name if prefix == "tier" else TIERS[name]],
                        )
                    )
        return _per_subject(self, task, measures, per_subject, "Cases failing a check", wrong)

    @staticmethod
    def shapes_from(detail: Mapping[str, Any]) -> list[Shape]:
        """Tier pass rates beside seed 000's targets, check pass rates, failed cases."""
        subjects: Mapping[str, Any] = detail.get("subjects") or {}
        tiers, checks = [], []
        for tier, target in TIER_TARGETS.items():
            row = [text(tier), text(f">= {target:.0%}")]
            for s in subjects.values():
                e = (s.get("tiers") or {}).get(tier) or {}
                row.append(_pass_cell(e, e.get("met")))
            tiers.append(row)
        for check, tier in TIERS.items():
            row = [text(check), text(tier)]
            for s in subjects.values():
                row.append(_pass_cell((s.get("checks") or {}).get(check) or {}, None))
            checks.append(row)
        return [
            Table(title="Tiers (seed 000)", columns=["tier", "target", *subjects], rows=tiers),
            Table(title="Checks", columns=["check", "tier", *subjects], rows=checks),
            *failure_examples(subjects),
        ]


def _failed_checks(subject: str, row: Mapping[str, Any]) -> list[Example]:
    decision = row["verdict"].detail.get("decision") or {}
    failed = [
        f"{name}: {v.get('reason') or 'failed'}"
        for name, v in (row["verdict"].detail.get("checks") or {}).items()
        if v.get("passed") is False
    ]
    if not failed:
        return []
    said = f"{decision.get('action', '')} {decision.get('id') or ''}".strip()
    return [Example(id=str(row["id"]), subject=subject, text=" · ".join([said, *failed]), ok=False)]


def _pass_cell(e: Mapping[str, Any], met: bool | None) -> Cell:
    return cell(
        e.get("pass_rate"), e.get("ci95"), e.get("n"), e.get("n_failed", 0), pct=True, met=met
    )
