"""The write path's reports, from a run's record: `extraction.json` and `operations.json` (the
summary and every case), and their terminal tables."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rich.table import Table

from memgauge.data.records import ItemRecord, RunRecord
from memgauge.report.escape import term
from memgauge.report.fmt import fmt_pct as pct

__all__ = [
    "extraction_lines",
    "extraction_report",
    "extraction_table",
    "operations_report",
    "operations_tables",
]


def _summary(run: RunRecord, aggregate: str, task: str | None = None) -> tuple[str, dict[str, Any]]:
    agg = run.summary.aggregate(aggregate, task) if run.summary else None
    subjects: dict[str, Any] = agg.detail.get("subjects", {}) if agg else {}
    subject = next(iter(subjects), next(iter(run.suite.get("subjects", {})), "subject"))
    return subject, dict(subjects.get(subject, {}))


def _failed(item: ItemRecord, label: str) -> str | None:
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


def extraction_table(report: Mapping[str, Any], title: str) -> Table:
    """One row per case: TP / FP / FN, P / R / F1 and what went wrong."""
    table = Table(title=term(title), title_justify="left")
    numeric = ("TP", "FP", "FN", "P", "R", "F1")
    for col in ("case", "scenario", *numeric, "notes"):
        table.add_column(col, justify="right" if col in numeric else "left")
    for r in report["per_case"]:
        if "error" in r:
            failed = term(f"failed: {r['error']}", "red")
            table.add_row(term(r["id"]), "", "", "", "", "", "", "", failed)
            continue
        notes = []
        if r.get("conflict_ok") is not None:
            notes.append("conflict " + ("ok" if r["conflict_ok"] else "WRONG"))
        if r.get("minimal_ok") is not None:
            notes.append("unchanged " + ("ok" if r["minimal_ok"] else "WRONG"))
        notes += [f"invented: {x}" for x in r.get("false_positives", [])[:2]]
        notes += [f"missed: {x}" for x in r.get("missed", [])[:2]]
        table.add_row(
            term(r["id"]),
            term(r.get("scenario") or ""),
            str(r["tp"]),
            str(r["fp"]),
            str(r["fn"]),
            f"{r['precision']:.2f}",
            f"{r['recall']:.2f}",
            f"{r['f1']:.2f}",
            term("; ".join(notes)),
        )
    return table


def extraction_lines(report: Mapping[str, Any]) -> list[str]:
    """The summary lines: micro and macro P / R / F1 with CIs, conflict, minimalism, targets."""
    lines = []
    for name in ("precision", "recall", "f1"):
        e = report[name]
        if e.get("micro") is None:
            lines.append(f"{name}: n/a (0 cases scored)")
            continue
        lines.append(
            f"{name}: micro {e['micro']:.3f} [{e['micro_ci95'][0]:.3f}, {e['micro_ci95'][1]:.3f}],"
            f" macro {e['macro']:.3f}; target > {e['target']} {'met' if e['met'] else 'NOT met'}"
        )
    for name in ("conflict", "minimalism"):
        e = report[name]
        value = f"{pct(e['value'])} of {e['n']}" if e["n"] else "n/a (0 cases)"
        met = "" if e["met"] is None else ("met" if e["met"] else "NOT met")
        lines.append(f"{name}: {value}; target {pct(e['target'])} {met}")
    lines.append(
        f"scored {report['n_scored']} of {report['n_cases']} cases; {report['n_failed']} failed;"
        f" matching: {report['matching']}"
    )
    return lines


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


def operations_tables(report: Mapping[str, Any], title: str) -> tuple[Table, Table]:
    """Per case its decision and checks; per tier its pass rate against the target."""
    table = Table(title=term(title), title_justify="left")
    for col in ("case", "scenario", "decision", "checks"):
        table.add_column(col)
    for r in report["per_case"]:
        if "error" in r:
            failed = term(f"failed: {r['error']}", "red")
            table.add_row(term(r["id"]), term(r["scenario"] or ""), "", failed)
            continue
        d = r["decision"]
        checks = "; ".join(
            f"{name} {'ok' if v.get('passed') else 'FAILED' if v.get('passed') is False else 'n/a'}"
            + ("" if v.get("passed") else f" ({v.get('reason') or v.get('error')})")
            for name, v in r["checks"].items()
        )
        decision = term(f"{d['action']} {d.get('id') or ''}".strip())
        table.add_row(term(r["id"]), term(r["scenario"] or ""), decision, term(checks))
    tiers = Table(title="Tiers (seed 000)", title_justify="left")
    for col in ("tier", "pass rate", "95% CI", "n", "target", ""):
        tiers.add_column(col)
    for tier, e in report["tiers"].items():
        ci = e["ci95"]
        tiers.add_row(
            term(tier),
            pct(e["pass_rate"]) if e["n"] else "n/a (0 checks)",
            f"{pct(ci[0])} - {pct(ci[1])}" if ci else "",
            str(e["n"]),
            pct(e["target"]),
            "" if e["met"] is None else ("met" if e["met"] else "NOT met"),
        )
    return table, tiers
