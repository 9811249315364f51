"""Two stored runs compared as the compare page shows them: each measure's paired comparison
(`suite_compare.compare_measures`) and the verdicts that changed, regressions first.

The same function makes it on a request (`memgauge.view`) and when a run is recorded
(`payload`, kept by the store for the run and the suite's run before it: `store.compared_rows`),
so the numbers are the same whichever path made them; the kept form is JSON (floats
round-trip exactly).
"""

from __future__ import annotations

import heapq
from collections.abc import Mapping, Sequence
from dataclasses import astuple, dataclass
from typing import Any

from memgauge.runs.recording import KeepsComparisons
from memgauge.runs.suite_compare import Measures, compare_measures
from memgauge.store.run_pages import RunReader, VerdictPair

__all__ = [
    "MAX_CHANGED",
    "ChangedVerdict",
    "Comparison",
    "changed_of",
    "compared",
    "keep",
    "payload",
]

MAX_CHANGED = 500  # verdict changes listed on the compare page (the items page filters the rest)


@dataclass(frozen=True)
class ChangedVerdict:
    """One evaluator's verdict on one item that differs between runs A and B."""

    subject: str
    task: str
    item_id: str
    evaluator: str
    a: str
    b: str
    regressed: bool


@dataclass(frozen=True)
class Comparison:
    """What the compare page shows of two runs' verdicts: a row per measure, the first
    `MAX_CHANGED` changed verdicts and how many changed in all."""

    rows: list[dict[str, Any]]
    changed: list[ChangedVerdict]
    n_changed: int

    def to_json(self) -> dict[str, Any]:
        """The kept form (`from_json` reads it back equal)."""
        return {
            "rows": self.rows,
            "changed": [list(astuple(c)) for c in self.changed],
            "n_changed": self.n_changed,
        }

    @classmethod
    def from_json(cls, found: Mapping[str, Any]) -> Comparison:
        """A comparison from its kept form."""
        return cls(
            [dict(r) for r in found["rows"]],
            [ChangedVerdict(*c) for c in found["changed"]],
            int(found["n_changed"]),
        )


def _verdict_text(value: float | None, passed: bool | int | None, error: str | None) -> str:
    if error:
        return "error"
    head = "n/a" if value is None else f"{value:.3f}"
    return head if passed is None else f"{head} {'pass' if passed else 'fail'}"


def changed_of(pairs: Sequence[VerdictPair]) -> tuple[list[ChangedVerdict], int]:
    """The verdicts whose value, pass or error differs between the runs' paired verdicts (any
    subset holding every pair that differs), regressions first; and how many there are."""
    out: list[tuple[bool, str, str, str, str, str, str]] = []
    for pair in pairs:
        if pair[4:7] == pair[7:]:  # the same value, pass and error: the same text
            continue
        subject, task, item_id, evaluator, value, passed, error, o_value, o_passed, o_error = pair
        ta = _verdict_text(o_value, o_passed, o_error)
        tb = _verdict_text(value, passed, error)
        if ta == tb:
            continue
        # passed may be 0/1 as stored: == compares a truth value either way
        regressed = (o_error is None and error is not None) or (
            o_passed is not None and o_passed == 1 and passed is not None and passed == 0
        )
        if o_passed is None and passed is None and o_value is not None and value is not None:
            regressed = value < o_value
        out.append((not regressed, subject, task, item_id, evaluator, ta, tb))
    # the first MAX_CHANGED in (regressions first, subject, task, item, evaluator) order: a
    # verdict's key is unique, so its texts are never compared; only those shown are built
    # (100,000 items that differ: 110,000 changed verdicts, not all sorted)
    shown = heapq.nsmallest(MAX_CHANGED, out)
    return [ChangedVerdict(*c[1:], not c[0]) for c in shown], len(out)


def compared(rows: list[dict[str, Any]], pairs: Sequence[VerdictPair]) -> Comparison:
    """The comparison of measure rows already computed and the runs' verdict pairs."""
    changed, n_changed = changed_of(pairs)
    return Comparison(rows, changed, n_changed)


def keep(store: KeepsComparisons, run_id: str) -> bool:
    """Keep a finished run's comparison with the suite's run before it in `store`, when the
    run is big enough to need it (`compared_rows.KEEP_FROM` items) and none is kept for the
    runs as they are; whether one was kept. An interruption keeps nothing (one row, written
    once made)."""
    with RunReader(store.url) as reader:
        found = reader.comparison_inputs(run_id)
    if found is None:
        return False
    made = payload(found.measures_a, found.measures_b, found.pairs, found.seed)
    return store.keep_compared(found.baseline, run_id, found.seed, found.key, made)


def payload(
    measures_a: Measures, measures_b: Measures, pairs: Sequence[VerdictPair], seed: int
) -> dict[str, Any]:
    """The kept form of run B's comparison with run A (`Comparison.to_json`): what the store
    keeps when a run is recorded (`keep`)."""
    rows = compare_measures(measures_a, measures_b, seed=seed)
    return compared(rows, pairs).to_json()
