"""What every importer reports back."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["ImportReport"]


@dataclass
class ImportReport:
    """Counts of what was imported, and notes on anything normalised or dropped."""

    source: str
    format: str
    counts: dict[str, int] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    dropped: list[dict[str, Any]] = field(default_factory=list)

    def add(self, key: str, n: int = 1) -> None:
        """Increment a count."""
        self.counts[key] = self.counts.get(key, 0) + n

    def as_dict(self) -> dict[str, Any]:
        """JSON-able form (written beside the imported files)."""
        return {
            "source": self.source,
            "format": self.format,
            "counts": self.counts,
            "notes": self.notes,
            "dropped": self.dropped,
        }
