"""Compare two suite runs item by item: per subject, task and evaluator, the mean of each run,
the paired delta (B - A) with its bootstrap CI, and a paired randomization test, Holm-corrected across rows.

Items pair by (subject, task, item id). An item that failed or was not scored in either run is
dropped from that row and counted (`n_dropped`), never scored 0. When each run has a single
subject under different names (the same suite pointed at two systems), the subjects pair up.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from memgauge.data.records import ItemRecord
from memgauge.stats import compare_many

__all__ = ["compare_runs"]

Key = tuple[str, str, str]


def _values(items: Sequence[ItemRecord], rename: Mapping[str, str]) -> dict[Key, dict[str, float]]:
    out: dict[Key, dict[str, float]] = {}
    for it in items:
        subject = rename.get(it.subject, it.subject)
        for s in it.scores:
            value = s.value if s.value is not None and not s.error else float("nan")
            out.setdefault((subject, it.task, s.evaluator), {})[it.item_id] = float(value)
    return out


def compare_runs(
    items_a: Sequence[ItemRecord],
    items_b: Sequence[ItemRecord],
    *,
    seed: int = 0,
) -> list[dict[str, Any]]:
    """Rows of the comparison, in subject, task, evaluator order (see the module docstring)."""
    subjects_a = sorted({it.subject for it in items_a if it.scores})
    subjects_b = sorted({it.subject for it in items_b if it.scores})
    rename: dict[str, str] = {}
    if len(subjects_a) == 1 and len(subjects_b) == 1 and subjects_a != subjects_b:
        rename = {subjects_b[0]: subjects_a[0]}
    a, b = _values(items_a, {}), _values(items_b, rename)
    keys = sorted(a.keys() & b.keys())
    va: dict[str, np.ndarray] = {}
    vb: dict[str, np.ndarray] = {}
    for n, key in enumerate(keys):
        ids = sorted(a[key].keys() | b[key].keys())
        va[str(n)] = np.array([a[key].get(i, np.nan) for i in ids], dtype=np.float64)
        vb[str(n)] = np.array([b[key].get(i, np.nan) for i in ids], dtype=np.float64)
    # randomization test per row, Holm across all rows of the comparison
    results = compare_many(va, vb, seed=seed)
    rows: list[dict[str, Any]] = []
    for n, key in enumerate(keys):
        cmp = results[str(n)]
        rows.append(
            {
                "subject": key[0] if not rename else f"{subjects_a[0]} / {subjects_b[0]}",
                "task": key[1],
                "evaluator": key[2],
                "mean_a": cmp.mean_a,
                "mean_b": cmp.mean_b,
                "delta": cmp.delta,
                "delta_ci_low": cmp.delta_ci_low,
                "delta_ci_high": cmp.delta_ci_high,
                "p_value": cmp.p_value,
                "p_holm": cmp.p_holm,
                "mark": cmp.mark,
                "n": cmp.n,
                "n_dropped": cmp.n_dropped,
                "note": cmp.note,
            }
        )
    return rows
