"""A shadow experiment's summary as rows of a label and a cell: what `memgauge shadow summary`
prints and the viewer's shadow page shows, named and formatted in this one place."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from memgauge.report.fmt import fmt_pct, fmt_signed

__all__ = ["DROPPED", "SHADOW_ROWS", "shadow_cells"]

#: the row of the shadowed queries a full queue dropped (counted per experiment, no intent)
DROPPED = "dropped (queue full)"


def _share(s: Mapping[str, Any], cls: str) -> str:
    if not s["n"]:
        return "n/a (0 compared)"
    count = s["classes"][cls]
    return f"{count} ({count / s['n']:.0%})"


def _f(s: Mapping[str, Any], x: float | None, digits: int = 3) -> str:
    """A mean over the comparisons; n/a with their count where there is none, never 0."""
    return f"n/a ({s['n']} compared)" if x is None else f"{x:.{digits}f}"


def _judged(s: Mapping[str, Any], key: str) -> str:
    """A delta over the judged comparisons alone, with their count: `-0.500 (n=3)`, or
    `n/a (0 judged)`."""
    n = s.get("n_judged") or 0
    x = s.get(key)
    return f"n/a ({n} judged)" if x is None else f"{fmt_signed(x)} (n={n})"


def _latency(s: Mapping[str, Any], side: str) -> str:
    return _f(s, (s.get("p95_latency_ms") or {}).get(side), 1)


#: The rows of an experiment's summary: a label, and how its summary (`summarize_shadow`, with
#: `n_errors` and `n_dropped`) fills the cell (n/a for a number with no data, never 0).
SHADOW_ROWS: list[tuple[str, Callable[[Mapping[str, Any]], str]]] = [
    ("queries compared", lambda s: str(s["n"])),
    ("identical", lambda s: _share(s, "identical")),
    ("minor change", lambda s: _share(s, "minor")),
    ("major change", lambda s: _share(s, "major")),
    ("incompatible", lambda s: _share(s, "incompatible")),
    (
        "top-1 changed",
        lambda s: "n/a (0 compared)" if not s["n"] else fmt_pct(s["top1_changed_rate"]),
    ),
    ("mean Kendall tau-b", lambda s: _f(s, s.get("mean_kendall_tau_b"))),
    ("mean Spearman rho", lambda s: _f(s, s.get("mean_spearman_rho"))),
    ("mean Jaccard", lambda s: _f(s, s.get("mean_jaccard"))),
    ("mean positions that differ", lambda s: _f(s, s.get("mean_order_differences"), 1)),
    ("mean MRR delta (judged)", lambda s: _judged(s, "mean_mrr_delta")),
    ("mean nDCG delta (judged)", lambda s: _judged(s, "mean_ndcg_delta")),
    ("p95 latency ms, control", lambda s: _latency(s, "control")),
    ("p95 latency ms, treatment", lambda s: _latency(s, "treatment")),
    ("treatment errors", lambda s: str(s["n_errors"])),
    (DROPPED, lambda s: str(s["n_dropped"])),
]


def shadow_cells(summary: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The summary's rows as (label, cell) text."""
    return [(label, cell(summary)) for label, cell in SHADOW_ROWS]
