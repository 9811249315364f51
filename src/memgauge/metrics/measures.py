"""Measures as value objects with one canonical string each (`nDCG@10`, `RR@5`, `AP@100`, ...).

`parse_measure` accepts the canonical form and common aliases (`MRR@10` -> `RR@10`,
`MAP@100` -> `AP@100`, `ndcg_cut_10` -> `nDCG@10`, `recip_rank` -> `RR`) and always prints back
the canonical form, so a measure string is a stable key in files, the store and reports.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from memgauge.errors import UsageError

__all__ = ["MEASURE_NAMES", "SESSION_MEASURES", "Measure", "parse_measure"]

#: canonical name -> whether a cutoff is required
MEASURE_NAMES: dict[str, bool] = {
    "nDCG": False,
    "RR": False,
    "Recall": True,
    "P": True,
    "AP": False,
    "R-prec": False,
    "Hit": True,
    "recall_any": True,
    "recall_all": True,
    "ndcg_any": True,
    "session_recall_any": True,
    "session_recall_all": True,
    "session_ndcg_any": True,
}

#: Session-level measures computed from a turn ranking (LongMemEval's turn2session): they need
#: each query's corpus, so `memgauge.metrics.longmemeval` computes them, not `evaluate`.
SESSION_MEASURES: frozenset[str] = frozenset(
    {"session_recall_any", "session_recall_all", "session_ndcg_any"}
)

_ALIASES: dict[str, str] = {
    "ndcg": "nDCG",
    "ndcg_cut": "nDCG",
    "rr": "RR",
    "mrr": "RR",
    "recip_rank": "RR",
    "recall": "Recall",
    "r": "Recall",
    "p": "P",
    "precision": "P",
    "ap": "AP",
    "map": "AP",
    "map_cut": "AP",
    "r-prec": "R-prec",
    "rprec": "R-prec",
    "r_prec": "R-prec",
    "hit": "Hit",
    "success": "Hit",
    "recall_any": "recall_any",
    "recall_all": "recall_all",
    "ndcg_any": "ndcg_any",
    "session_recall_any": "session_recall_any",
    "session_recall_all": "session_recall_all",
    "session_ndcg_any": "session_ndcg_any",
}

_PATTERN = re.compile(r"^\s*([A-Za-z_\-]+?)(?:[@_](\d+))?\s*$")


@dataclass(frozen=True, order=True, slots=True)
class Measure:
    """A retrieval measure and its rank cutoff (None = the whole ranking)."""

    name: str
    cutoff: int | None = None

    def __str__(self) -> str:
        return self.name if self.cutoff is None else f"{self.name}@{self.cutoff}"


def _valid_forms() -> str:
    return ", ".join(
        f"{name}@K" if needs else f"{name}[@K]" for name, needs in MEASURE_NAMES.items()
    )


def parse_measure(text: str | Measure) -> Measure:
    """Parse `text` into a Measure; raises UsageError naming the valid forms if it is not one."""
    if isinstance(text, Measure):
        return text
    match = _PATTERN.match(text)
    name = _ALIASES.get(match.group(1).lower()) if match else None
    if match is None or name is None:
        raise UsageError(f"unknown measure {text!r}; valid forms: {_valid_forms()}")
    if name == "R-prec" and match.group(2) is not None:
        raise UsageError(f"measure {text!r}: R-prec takes no cutoff (its cutoff is R)")
    cutoff = int(match.group(2)) if match.group(2) is not None else None
    if cutoff is None and MEASURE_NAMES[name]:
        raise UsageError(f"measure {text!r} needs a cutoff, e.g. {name}@10")
    if cutoff is not None and cutoff < 1:
        raise UsageError(f"measure {text!r}: the cutoff must be 1 or more")
    return Measure(name, cutoff)
