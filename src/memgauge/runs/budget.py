"""The failure budget of a run: `max_failure_rate` of each subject's own items.

A subject that fails more of its items than the rate allows is stopped (none of its items
still queued is started; they stay queued for `--resume`) and the run ends as failed (exit 4),
but the other subjects run to the end: one dead endpoint or a subject that breaks the search
contract does not cost the working subjects their numbers, whichever order they were given in.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable

from memgauge._util.listing import counted
from memgauge.data.records import ItemRecord
from memgauge.errors import argument

__all__ = ["FailureBudget", "counts_as_failed", "too_many_failed"]


def _percent(x: float) -> str:
    return f"{x * 100:.3g}%"


def too_many_failed(n_failed: int, total: int, max_rate: float, kinds: str = "") -> str:
    """`1 of 4 items failed (25%: 1 SubjectError), more than max_failure_rate 0.1 allows (10%:
    at most 0 of 4)`: the count, its rate (and the kinds of failure) and the limit, as the
    rule applies it (more than `max_rate * total` failed items fail)."""
    rate = n_failed / total if total else 0.0
    allowed = math.floor(max_rate * total)
    return (
        f"{n_failed} of {counted(total, 'item')} failed ({_percent(rate)}{': ' + kinds if kinds else ''}), "
        f"more than max_failure_rate {max_rate:g} allows ({_percent(max_rate)}: at most "
        f"{allowed} of {total})"
    )


def counts_as_failed(row: ItemRecord) -> bool:
    """An item counts toward `max_failure_rate` when it failed, or when an evaluator could not
    score it (a judge whose call failed); an opt-in fallback value does not count."""
    return row.status == "failed" or row.unscored


class FailureBudget:
    """How many items each subject has, how many of them failed, and which subjects are
    stopped.

    Args:
        rate: the suite's `max_failure_rate`.
        items: the key `(subject, task, item_id)` of every item of the run.
        failed: items already recorded as failed (a resumed run's), counted from the start.
    """

    def __init__(
        self,
        rate: float,
        items: Iterable[tuple[str, str, str]],
        failed: Iterable[ItemRecord] = (),
    ) -> None:
        self.rate = rate
        self.totals: Counter[str] = Counter(subject for subject, _task, _item in items)
        self.failed: Counter[str] = Counter()
        # subject -> the kinds of its failures (the last of each item), for the reason
        self.kinds: dict[str, Counter[str]] = {}
        # in the order they were stopped: the reason names the first one first
        self.stopped: dict[str, None] = {}
        for row in failed:
            self.count(row)

    @property
    def total(self) -> int:
        """Items of the run."""
        return sum(self.totals.values())

    @property
    def n_failed(self) -> int:
        """Items that count as failed so far."""
        return sum(self.failed.values())

    def allowed(self, subject: str) -> float:
        """How many of `subject`'s items may fail."""
        return self.rate * self.totals[subject]

    def count(self, row: ItemRecord) -> None:
        """Count a recorded item; stop its subject once past the rate."""
        if not counts_as_failed(row):
            return
        self.failed[row.subject] += 1
        if row.failures:
            self.kinds.setdefault(row.subject, Counter())[row.failures[-1].kind] += 1
        if self.failed[row.subject] > self.allowed(row.subject):
            self.stopped.setdefault(row.subject)

    def reason(self, run_id: str, *, stored: bool = True) -> str | None:
        """Why the run failed: each subject past its rate, with its count, rate, limit and
        the kinds of its failures, as they ended (items in flight when the rate was passed, or
        a whole subject failing at its setup, finish after it), and where the failures are
        (`stored`: the run is in a store `runs show` reads); None when none is past."""
        if not self.stopped:
            return None
        parts = []
        for subject in self.stopped:
            kinds = ", ".join(f"{c} {k}" for k, c in self.kinds.get(subject, Counter()).items())
            too_many = too_many_failed(self.failed[subject], self.totals[subject], self.rate, kinds)
            parts.append(f"subject {subject}: {too_many}")
        if not stored:  # `runs show` would not find it
            return "; ".join(parts) + (
                "; the run was kept in memory only"
                f" ({argument('store', False, flag='--no-store')}), not recorded: its failures are"
                " in its report"
            )
        return "; ".join(parts) + f"; see `memgauge runs show {run_id}` for the failures"
