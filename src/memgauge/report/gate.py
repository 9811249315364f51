"""The gate's pull-request summary (Markdown, every name escaped: `report.escape`)."""

from __future__ import annotations

from memgauge.report.escape import md_text
from memgauge.track.gate import GateResult

__all__ = ["gate_markdown"]


def _fmt(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.3f}"


def gate_markdown(result: GateResult) -> str:
    """A summary fit for a pull-request comment."""
    icon = {"pass": "✅", "warn": "⚠️", "fail": "❌"}[result.status]
    lines = [
        f"### {icon} memgauge gate: {result.status} ({result.phase} phase)",
        "",
        f"Suite {md_text(result.suite)}, run `{result.run_id}`, against the rolling "
        f"baseline of up to {len(result.checks[0].history) if result.checks else 0} earlier runs "
        f"({result.n_history} in history).",
        "",
        "| subject | task | measure | baseline | current (95% CI) | change | threshold | |",
        "|---|---|---|---:|---:|---:|---:|---|",
    ]
    for c in result.checks:
        ci = f" [{c.ci[0]:.3f}, {c.ci[1]:.3f}]" if c.ci else ""
        change = "" if c.drop is None else f"{-c.drop:+.1%}"
        mark = "regression" if c.regressed else ("noise" if c.within_ci else "")
        lines.append(
            f"| {md_text(c.subject)} | {md_text(c.task)} | {md_text(c.evaluator)} "
            f"| {_fmt(c.baseline)} | {_fmt(c.current)}{ci} | {change} | {c.threshold:.0%} "
            f"| {mark} |"
        )
    notes = [
        f"- {md_text(c.evaluator)} ({md_text(c.subject)} / {md_text(c.task)}): {md_text(c.note)}"
        for c in result.checks
        if c.regressed or c.within_ci
    ]
    if notes:
        lines += ["", *notes]
    if result.phase == "bootstrap":
        lines += ["", "The baseline is still forming: the gate passes until enough runs exist."]
    return "\n".join(lines) + "\n"
