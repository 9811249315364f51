"""What every importer reports back."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memgauge.errors import DataError, Problem

__all__ = ["ImportReport", "read_json_file"]


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


def read_json_file(path: str | Path, what: str) -> Any:
    """Parse a JSON file or raise DataError naming the file, line and what it should be."""
    p = Path(path)
    if not p.is_file():
        raise DataError(Problem(str(p), None, None, f"no such file; expected {what}"))
    try:
        return json.loads(p.read_text(encoding="utf-8-sig"))
    except UnicodeDecodeError as exc:
        raise DataError(
            Problem(str(p), None, None, f"not UTF-8 text ({exc.reason} at byte {exc.start})")
        ) from None
    except json.JSONDecodeError as exc:
        raise DataError(
            Problem(str(p), exc.lineno, None, f"not valid JSON ({exc.msg}); expected {what}")
        ) from None
