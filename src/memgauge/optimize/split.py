"""The validation split: which items a study tunes on and which it holds out.

Where a task's items have corpora (LoCoMo's conversations, LongMemEval's questions), the split
goes by corpus, so that no conversation straddles both sides: a configuration that learned a
conversation's quirks on the tuning side is not scored on the same conversation. Otherwise it
goes by item. round(holdout * n) units are held out (at least one when holdout > 0 and there are
two units or more), drawn by a `numpy.random.Generator` seeded with the study's seed; or the
units an explicit split names.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from memgauge.errors import UsageError
from memgauge.runs.suite import ItemFilter

__all__ = ["Split", "split_items"]


@dataclass(frozen=True)
class Split:
    """The two sides, as the `only:` filters of the candidates' tasks.

    Attributes:
        by: "corpus" or "item".
        tune: the tuning side (all items when nothing is held out).
        holdout: the held-out side, or None.
    """

    by: str
    tune: ItemFilter
    holdout: ItemFilter | None

    def record(self) -> dict[str, Any]:
        """As the study stores it (`from_record` reads it back)."""
        return {
            "by": self.by,
            "tune": self.tune.model_dump(mode="json"),
            "holdout": self.holdout.model_dump(mode="json") if self.holdout else None,
        }

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> Split:
        """The split a study stored."""
        held = record.get("holdout")
        return cls(
            str(record.get("by", "item")),
            ItemFilter.model_validate(record.get("tune") or {}),
            ItemFilter.model_validate(held) if held else None,
        )

    def describe(self) -> str:
        """`12 items tuned on, 5 held out` (or corpora)."""
        unit = "corpora" if self.by == "corpus" else "items"
        n_tune = len((self.tune.corpora if self.by == "corpus" else self.tune.items) or [])
        if self.holdout is None:
            return f"all {n_tune} {unit} tuned on, none held out"
        held = self.holdout.corpora if self.by == "corpus" else self.holdout.items
        return f"{n_tune} {unit} tuned on, {len(held or [])} held out"


def split_items(
    items: Sequence[tuple[str, str | None]],
    holdout: float,
    seed: int,
    explicit: Sequence[str] | None = None,
) -> Split:
    """Split `(item id, corpus)` pairs (see the module docstring); UsageError when a side
    would be empty or an explicit split names an unknown unit."""
    corpora = sorted({c for _i, c in items if c is not None})
    by = "corpus" if corpora else "item"
    units = corpora if corpora else sorted({i for i, _c in items})
    if not units:
        raise UsageError("the task has no items to tune on")
    if explicit is not None:
        unknown = sorted(set(explicit) - set(units))
        if unknown:
            raise UsageError(
                f"split.holdout names {', '.join(unknown[:5])}, which are not "
                f"{'corpora' if by == 'corpus' else 'item ids'} of the task"
            )
        held = sorted(set(explicit))
    elif holdout <= 0 or len(units) < 2:
        held = []
    else:
        n = min(len(units) - 1, max(1, round(holdout * len(units))))
        rng = np.random.default_rng(seed)
        held = sorted(units[i] for i in rng.choice(len(units), size=n, replace=False))
    tune = [u for u in units if u not in set(held)]
    if not tune:
        raise UsageError("the split holds out every item: nothing is left to tune on")

    def only(chosen: list[str]) -> ItemFilter:
        return ItemFilter(corpora=chosen) if by == "corpus" else ItemFilter(items=chosen)

    return Split(by, only(tune), only(held) if held else None)
