"""The gate's summary: a pull-request comment (Markdown, every name escaped: `report.escape`) and,
shorter, what `memgauge gate` prints.

The measures that decide come first; the rest are information. A pull-request comment lists them
all, folded away; the terminal lists only those that got worse by their threshold or more, and
counts the others (`--json` and `--markdown` carry every one).
"""

from __future__ import annotations

from typing import Literal

from memgauge.report.escape import md_text
from memgauge.report.fmt import fallbacks_text
from memgauge.report.fmt import fmt_num as _fmt
from memgauge.track.gate import GateResult, MetricCheck

__all__ = ["gate_markdown", "no_baseline_note"]

_BASIS = {"target": "target", "--measure": "--measure", "primary": "primary measure"}


def _current(c: MetricCheck) -> str:
    if c.current is None:  # nothing scored: n/a with its count, as every report gives it
        return f"n/a ({c.n_scored} scored){fallbacks_text(c.n_fallback)}"
    ci = f" [{c.ci[0]:.3f}, {c.ci[1]:.3f}]" if c.ci else ""
    return f"{_fmt(c.current)}{ci}{fallbacks_text(c.n_fallback)}"


def _row(c: MetricCheck, *, deciding: bool) -> str:
    cells = [md_text(c.subject), md_text(c.task), md_text(c.evaluator)]
    if deciding:
        cells.append(_BASIS.get(c.basis, c.basis))
    cells += [_fmt(c.baseline), _current(c), c.change, f"{c.threshold:.0%}"]
    if deciding:
        cells.append("" if c.power is None else f"{c.power:.0%}")
        mark = "regression" if c.regressed else ""
        if c.within_ci and c.reached:
            mark = f"{mark} (inside CI)".strip()
    else:
        mark = "worse past its threshold" if c.reached else ""
    cells.append(mark)
    return "| " + " | ".join(cells) + " |"


def _table(checks: list[MetricCheck], *, deciding: bool) -> list[str]:
    if deciding:
        head = "| subject | task | measure | decides as | baseline | current (95% CI) | change "
        head += "| threshold | power | |"
        rule = "|---|---|---|---|---:|---:|---|---:|---:|---|"
    else:
        head = "| subject | task | measure | baseline | current (95% CI) | change | threshold | |"
        rule = "|---|---|---|---:|---:|---|---:|---|"
    return [head, rule, *(_row(c, deciding=deciding) for c in checks)]


def _information(result: GateResult, shown: Literal["all", "moved"]) -> list[str]:
    info = result.information
    if not info:
        return []
    moved = [c for c in info if c.reached]
    n, worse = len(info), len(moved)
    title = (
        f"Information: {n} more measure{'' if n == 1 else 's'} that do not decide the gate"
        f" ({worse} worse by their threshold or more)"
    )
    if shown == "all":
        return ["", f"<details><summary>{title}</summary>", "", *_table(info, deciding=False)]
    out = ["", title + ("." if not moved else ":")]
    if moved:
        out += ["", *_table(moved, deciding=False)]
    if n > worse:
        out += [
            "",
            f"The other {n - worse} stayed within their thresholds (`--json` and"
            " `--markdown FILE` list every one).",
        ]
    return out


def gate_markdown(result: GateResult, *, information: Literal["all", "moved"] = "all") -> str:
    """The gate's summary. `information`: `all` lists every information measure in a folded
    section (a pull-request comment); `moved` only those worse by their threshold or more (the
    terminal)."""
    icon = {"pass": "✅", "fail": "❌"}.get(result.status, "⚠️")
    rule = "the run's value" if result.by == "point" else "the favourable bound of its 95% CI"
    n_base = len(result.baseline_runs)
    deciding = result.deciding
    lines = [
        f"### {icon} memgauge gate: {result.status}",
        "",
        f"Suite {md_text(result.suite)}, run `{result.run_id}`, against the rolling baseline of "
        f"{n_base} earlier run{'' if n_base == 1 else 's'} ({result.n_history} in history); a "
        f"drop of its threshold or more, judged on {rule}, fails. It decides on "
        f"{len(deciding)} measure{'' if len(deciding) == 1 else 's'}: the run's targets, those "
        "named with `--measure`, and each task's primary measures.",
    ]
    if result.excluded:
        lines += [
            "",
            "Left out of the baseline as failed gates: "
            + ", ".join(md_text(r) for r in result.excluded)
            + " (`memgauge gate --accept RUN` counts one again).",
        ]
    if deciding:
        lines += ["", *_table(deciding, deciding=True)]
    else:
        lines += ["", "No measure of this run decides the gate: it passes."]
    # past its threshold, or not compared although the gate had a baseline (n/a now, or in
    # every baseline run): the table's change column is empty for those, the reason unsaid
    notes = [
        f"- {md_text(c.evaluator)} ({md_text(c.subject)} / {md_text(c.task)}): {md_text(c.note)}"
        for c in deciding
        if c.reached or (c.drop is None and result.baseline_runs)
    ]
    if notes:
        lines += ["", *notes]
    lines += _information(result, information)
    if information == "all" and result.information:
        lines += ["", "</details>"]
    if result.memories:
        lines += [
            "",
            "Failure memories (eval-to-learning; `memgauge learnings query` recalls them):",
            *(
                f"- `{m.id}`: {md_text(m.measure)} ({md_text(m.subject)} / {md_text(m.task)})"
                + ("" if m.new else ", already stored")
                for m in result.memories
            ),
        ]
    if result.warnings:
        lines += ["", "Warnings:", *(f"- ⚠️ {md_text(w)}" for w in result.warnings)]
    note = no_baseline_note(result)
    if note is not None:
        lines += ["", note]
    return "\n".join(lines) + "\n"


def no_baseline_note(result: GateResult) -> str | None:
    """Why the gate passed with no earlier run in its baseline (None when it had one): the
    gate's comment and the viewer's run page say it in these words."""
    if result.baseline_runs:
        return None
    if result.excluded:
        return (
            "No earlier run counts in the baseline (each failed its gate): the gate passes"
            " until one does."
        )
    return "No earlier run to compare with: the gate passes until one exists."
