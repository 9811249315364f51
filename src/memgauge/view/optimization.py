"""The optimization pages (`memgauge optimize`'s history): the list of studies, and one study's
score per iteration, holdout comparison, current best and the diff between two iterations.

Everything is read through the store's history methods and `memgauge.optimize`'s own readers
(`study_json`, `diff_iterations`), so the page shows exactly what `memgauge optimize show` and
`--diff` print, and no SQL of the optimization tables lives in the viewer.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from markupsafe import Markup

from memgauge._util.listing import counted
from memgauge.optimize import diff_iterations, study_json
from memgauge.optimize.history import History
from memgauge.report.fmt import fmt_num
from memgauge.view import charts

__all__ = ["iteration_label", "score_chart", "study_page"]


def iteration_label(row: Mapping[str, Any]) -> str:
    """`STEP` for a step's only (first) candidate, `STEP.CANDIDATE` otherwise: the labels
    `memgauge optimize show --diff` takes."""
    cand = int(row.get("candidate") or 0)
    return str(row["step"]) if cand == 0 else f"{row['step']}.{cand}"


def best_so_far(iterations: Sequence[Mapping[str, Any]]) -> list[float | None]:
    """Per step (0..last), the highest score of any candidate scored up to that step (None
    before the first score). A failed candidate has no score and moves nothing."""
    last = max((int(r["step"]) for r in iterations), default=-1)
    by_step: dict[int, list[float]] = {}
    for r in iterations:
        if r.get("score") is not None:
            by_step.setdefault(int(r["step"]), []).append(float(r["score"]))
    out: list[float | None] = []
    best: float | None = None
    for step in range(last + 1):
        for v in by_step.get(step, []):
            best = v if best is None else max(best, v)
        out.append(best)
    return out


def score_chart(objective: str, iterations: Sequence[Mapping[str, Any]]) -> Markup:
    """Every candidate's score on the tuning split as a dot at its step (several per step under
    best-of-n), and the highest score so far as a line."""
    line = best_so_far(iterations)
    if not line:
        return Markup("")
    points = [
        charts.Point(
            int(r["step"]),
            float(r["score"]),
            f"iteration {iteration_label(r)} ({r.get('target')}): {r['score']:.4g}"
            + ("" if r.get("accepted") is None else " accepted" if r["accepted"] else ""),
            color=charts.PALETTE[2] if r.get("accepted") else charts.PALETTE[0],
        )
        for r in iterations
        if r.get("score") is not None
    ]
    return charts.line_chart(
        f"{objective} per iteration (tuning split)",
        [f"step {i}" for i in range(len(line))],
        [
            charts.Line("candidates (green: accepted)", [None] * len(line), markers=False),
            charts.Line("best so far", line, color=charts.PALETTE[1], markers=False),
        ],
        points=points,
    )


def _holdout_chart(holdout: Mapping[str, Any]) -> Markup:
    """The held-out split's score of the starting configuration and of the best."""
    return charts.bar_chart(
        f"held-out split ({counted(holdout.get('n') or 0, 'item')})",
        [
            charts.Bar(label, i, holdout.get(label), note=fmt_num(holdout.get(label)))
            for i, label in enumerate(("baseline", "best"))
        ],
    )


def study_page(history: History, study_id: str, a: str | None, b: str | None) -> dict[str, Any]:
    """One study for its page: the study as `optimize --json` prints it, each iteration's
    label, the chart, and the diff from iteration `a` to `b` (defaults: the baseline and the
    best). Raises UsageError for an iteration the study does not have."""
    study = study_json(history, study_id)
    iterations = study["iterations"]
    labels = [iteration_label(r) for r in iterations]
    best = study.get("best")
    a = a or (labels[0] if labels else None)
    b = b or (iteration_label(best) if best else labels[-1] if labels else None)
    diff = diff_iterations(history, study_id, a, b) if a is not None and b is not None else None
    holdout = study.get("holdout")
    return {
        "study": study,
        "row": history.get_study(study_id),
        "labels": labels,
        "chart": score_chart(study["objective"], iterations),
        "holdout_chart": _holdout_chart(holdout) if holdout else Markup(""),
        "a": a,
        "b": b,
        "diff": diff,
        "text_diffs": {k: v.splitlines() for k, v in (diff or {}).get("texts", {}).items()},
    }
