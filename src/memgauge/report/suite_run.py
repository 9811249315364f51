"""Terminal views of a suite run: its state, its aggregates, its failures, and comparisons.

Every name, message and reason in them is data, drawn as `Text` (`escape.term`): it prints as
itself on any console, `[...]` included."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rich.table import Table

from memgauge._util.listing import counted
from memgauge._util.numbers import ALPHA
from memgauge.data.records import RunSummary
from memgauge.report.escape import term
from memgauge.report.fmt import conventions_lines, fallbacks_text, fmt_signed
from memgauge.report.fmt import fmt_num as _fmt
from memgauge.report.liveness import liveness

__all__ = [
    "comparison_table",
    "conventions_lines",
    "counts_line",
    "failures_table",
    "liveness",
    "repeat_notes",
    "result_rows",
    "shown_failures",
    "summary_table",
]


def counts_line(summary: Mapping[str, Any], queued: str = "to do") -> str:
    """`14 completed (11 not scored: ...), 0 failed, 0 to do, of 14`: items by status, and
    the completed ones an evaluator could not score (they count as failed for
    `max_failure_rate`, as items that failed do)."""
    unscored = summary.get("n_unscored") or 0
    return (
        f"{summary['n_completed']} completed"
        + (f" ({unscored} not scored: an evaluator failed)" if unscored else "")
        + f", {summary['n_failed']} failed, {summary['n_queued']} {queued}, "
        f"of {summary['n_items']}"
    )


def result_rows(summary: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One row per subject, task and evaluator (what `--json` prints)."""
    return [
        {
            key: row[key]
            for key in (
                "subject",
                "task",
                "evaluator",
                "mean",
                "ci_low",
                "ci_high",
                "n_scored",
                "n_failed",
                "pass_rate",
                "conventions",
            )
        }
        | ({"n_fallback": row["n_fallback"]} if row.get("n_fallback") else {})
        for row in summary.get("evaluators", [])
    ]


def summary_table(summary: Mapping[str, Any]) -> Table:
    """Per subject, task and evaluator: mean with its CI, pass rate, n scored / failed."""
    table = Table(title="Results (95% bootstrap CI)", title_justify="left")
    for col in ("subject", "task", "evaluator"):
        table.add_column(col)
    for col in ("mean", "95% CI", "pass", "scored", "failed"):
        table.add_column(col, justify="right")
    combined = {(t["subject"], t["task"]): t for t in summary.get("tasks", [])}
    for (subject, task), t in combined.items():
        rows = [r for r in summary["evaluators"] if (r["subject"], r["task"]) == (subject, task)]
        for r in rows:
            ci = "n/a" if r["ci_low"] is None else f"[{r['ci_low']:.3f}, {r['ci_high']:.3f}]"
            table.add_row(
                term(subject),
                term(task),
                term(r["evaluator"]),
                _fmt(r["mean"]) + fallbacks_text(r.get("n_fallback")),
                ci,
                _fmt(r["pass_rate"], 2) if r["pass_rate"] is not None else "-",
                str(r["n_scored"]),
                str(r["n_failed"]),
            )
        if len(rows) > 1:
            s = t["score"]
            ci = "n/a" if s["ci_low"] is None else f"[{s['ci_low']:.3f}, {s['ci_high']:.3f}]"
            table.add_row(
                term(subject),
                term(task),
                term("combined", "bold"),
                _fmt(s["mean"]),
                ci,
                "-",
                str(s["n_scored"]),
                str(s["n_failed"]),
            )
    lines = conventions_lines(summary)
    if lines:
        table.caption = term("\n".join(lines))
        table.caption_justify = "left"
    return table


def repeat_notes(summary: RunSummary) -> list[str]:
    """A line per subject whose outputs differed across repeats (`repeat: N`)."""
    return [f"{f.subject} / {f.task}: {f.describe()}" for f in summary.nondeterminism()]


def judge_notes(summary: Mapping[str, Any]) -> list[str]:
    """Lines about LLM judging: stand-in values kept out of means, panel agreement, spending."""
    lines = []
    for t in summary.get("tasks", []):
        if t["score"].get("n_fallback"):
            whose = counted(t["score"]["n_fallback"], "item's", "items'")
            lines.append(
                f"{t['subject']} / {t['task']} / combined: {whose}"
                " combined score includes a judge's neutral 0.5 stand-in (on_failure: neutral)"
            )
    for r in summary.get("evaluators", []):
        where = f"{r['subject']} / {r['task']} / {r['evaluator']}"
        if r.get("n_fallback"):
            lines.append(
                f"{where}: {r['n_fallback']} of its {r['n_scored']} scores are the opt-in neutral"
                " 0.5 of a judge that failed (on_failure: neutral), counted in its mean (no CI);"
                f" its real verdicts alone average {_fmt(r.get('mean_without_fallback'))}"
            )
        agreement = r.get("agreement")
        if agreement:
            lines.append(
                f"{where}: panel of {agreement['n_judges']} on {counted(agreement['n_items'], 'item')}, "
                f"percent agreement {_fmt(agreement['percent_agreement'])}, Fleiss' kappa "
                f"{_fmt(agreement['fleiss_kappa'])}"
            )
    for model, u in sorted((summary.get("llm_usage") or {}).items()):
        cost = (
            "n/a (no price for this model)"
            if u.get("cost_usd") is None
            else f"${u['cost_usd']:.4f}"
        )
        lines.append(
            f"LLM {model}: {counted(u['calls'], 'call')} ({u['cached']} from the cache), {u['requests']} HTTP "
            f"requests, {u['failures']} failed, {u['prompt_tokens']:,} prompt + "
            f"{u['completion_tokens']:,} completion tokens, cost {cost}"
        )
    return lines


def shown_failures(failures: Sequence[Mapping[str, Any]], n: int) -> list[Mapping[str, Any]]:
    """Up to `n` failures: each subject and task's first before any one's second, so that
    every failing subject is seen (a dead one's hundreds do not hide another's message)."""
    groups: dict[tuple[Any, Any], list[Mapping[str, Any]]] = {}
    for f in failures:
        groups.setdefault((f["subject"], f["task"]), []).append(f)
    out: list[Mapping[str, Any]] = []
    depth = 0
    while len(out) < n and any(len(g) > depth for g in groups.values()):
        out.extend(g[depth] for g in groups.values() if len(g) > depth)
        depth += 1
    return out[:n]


def failures_table(failures: Sequence[Mapping[str, Any]], total: int) -> Table:
    """The failures shown (of `total`), with stage and reason."""
    title = f"Failures ({len(failures)} of {total} shown)" if total > len(failures) else "Failures"
    table = Table(title=title, title_justify="left")
    for col in ("subject", "task", "item", "stage", "kind", "attempt", "message"):
        table.add_column(col, overflow="fold")
    for f in failures:
        table.add_row(
            *(term(f[k]) for k in ("subject", "task", "item_id", "stage", "kind", "attempt")),
            term(f["message"][:300]),
        )
    return table


_CORRECTED = {"holm": "Holm-corrected", "bonferroni": "Bonferroni-corrected", "none": "uncorrected"}


def comparison_table(
    rows: Sequence[Mapping[str, Any]],
    a: str,
    b: str,
    *,
    test: str = "fisher",
    correction: str = "holm",
    family: str = "table",
    alpha: float = ALPHA,
) -> Table:
    """Deltas B - A per subject, task and evaluator, with paired significance: the test, and
    the correction over every row (family `table`) or none needed (`measure`: one per row).
    Run `a` is the baseline, and the title and columns say so: "B vs A" alone left a reader
    to guess which run the deltas were measured from."""
    from memgauge.stats.systems import TEST_NAMES  # NumPy: only when there is a comparison

    corrected = _CORRECTED[correction] if family == "table" or test == "tukey" else "uncorrected"
    test_name = {str(k): v for k, v in TEST_NAMES.items()}.get(test, test)
    table = Table(
        title=term(
            f"A (baseline): run {a}\nB: run {b}\ndelta = B - A, paired by item "
            f"({test_name}, {corrected}; * p < {alpha:g}, ** p < {alpha / 5:g})"
        ),
        title_justify="left",
    )
    for col in ("subject", "task", "evaluator"):
        table.add_column(col)
    p_label = "p" if corrected == "uncorrected" else f"p ({corrected.split('-')[0]})"
    for col in ("A (baseline)", "B", "delta B - A", "95% CI", p_label, "n"):
        table.add_column(col, justify="right")
    for r in rows:
        ci = (
            "n/a"
            if r["delta_ci_low"] is None
            else f"[{fmt_signed(r['delta_ci_low'])}, {fmt_signed(r['delta_ci_high'])}]"
        )
        delta = "n/a" if r["delta"] is None else f"{fmt_signed(r['delta'])}{r['mark']}"
        table.add_row(
            term(r["subject"]),
            term(r["task"]),
            term(r["evaluator"]),
            _fmt(r["mean_a"]),
            _fmt(r["mean_b"]),
            delta,
            ci,
            _fmt(r["p_adjusted"], 4),
            str(r["n"]),
        )
    return table
