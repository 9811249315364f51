"""The gate's pull-request summary (Markdown, every name escaped: `report.escape`)."""

from __future__ import annotations

from memgauge.report.escape import md_text
from memgauge.track.gate import GateResult

__all__ = ["gate_markdown"]


def _fmt(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.3f}"


def gate_markdown(result: GateResult) -> str:
    """A summary fit for a pull-request comment."""
    icon = {"pass": "✅", "fail": "❌"}.get(result.status, "⚠️")
    rule = "the run's value" if result.by == "point" else "the favourable bound of its 95% CI"
    n_base = len(result.baseline_runs)
    lines = [
        f"### {icon} memgauge gate: {result.status}",
        "",
        f"Suite {md_text(result.suite)}, run `{result.run_id}`, against the rolling baseline of "
        f"{n_base} earlier run{'' if n_base == 1 else 's'} ({result.n_history} in history); a "
        f"drop of its threshold or more, judged on {rule}, fails.",
    ]
    if result.excluded:
        lines += [
            "",
            "Left out of the baseline as failed gates: "
            + ", ".join(md_text(r) for r in result.excluded)
            + " (`memgauge gate --accept RUN` counts one again).",
        ]
    lines += [
        "",
        "| subject | task | measure | baseline | current (95% CI) | change | threshold | power | |",
        "|---|---|---|---:|---:|---:|---:|---:|---|",
    ]
    for c in result.checks:
        ci = f" [{c.ci[0]:.3f}, {c.ci[1]:.3f}]" if c.ci else ""
        change = "" if c.drop is None else f"{-c.drop:+.1%}"
        power = "" if c.power is None else f"{c.power:.0%}"
        mark = "regression" if c.regressed else ""
        if c.within_ci and c.reached:
            mark = f"{mark} (inside CI)".strip()
        lines.append(
            f"| {md_text(c.subject)} | {md_text(c.task)} | {md_text(c.evaluator)} "
            f"| {_fmt(c.baseline)} | {_fmt(c.current)}{ci} | {change} | {c.threshold:.0%} "
            f"| {power} | {mark} |"
        )
    notes = [
        f"- {md_text(c.evaluator)} ({md_text(c.subject)} / {md_text(c.task)}): {md_text(c.note)}"
        for c in result.checks
        if c.reached
    ]
    if notes:
        lines += ["", *notes]
    if result.warnings:
        lines += ["", "Warnings:", *(f"- ⚠️ {md_text(w)}" for w in result.warnings)]
    if not result.baseline_runs:
        lines += ["", "No earlier run to compare with: the gate passes until one exists."]
    return "\n".join(lines) + "\n"
