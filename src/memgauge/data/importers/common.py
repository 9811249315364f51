"""What every importer reports back."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from memgauge._util.listing import counted
from memgauge.errors import DataError, Problem

if TYPE_CHECKING:
    from memgauge.data.models import RetrievalDataset

__all__ = ["ImportReport", "evaluable", "json_type", "require_evaluable", "wrong_type"]


@dataclass
class ImportReport:
    """Counts of what was imported, and notes on anything normalised or dropped.

    `changed`: every record whose value the import changed, with its value before and after
    (LoCoMo: one entry per question and field, `{conversation, question, query, field, before,
    after, changes}`), so numbers computed on the import can be reconciled with the source's
    own scripts; `dropped`: what was left out altogether."""

    source: str
    format: str
    protocol: str | None = None
    counts: dict[str, int] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    changed: list[dict[str, Any]] = field(default_factory=list)
    dropped: list[dict[str, Any]] = field(default_factory=list)

    def add(self, key: str, n: int = 1) -> None:
        """Increment a count."""
        self.counts[key] = self.counts.get(key, 0) + n

    def as_dict(self) -> dict[str, Any]:
        """JSON-able form (written beside the imported files; `protocol` only when set)."""
        out = asdict(self)
        if not self.protocol:
            del out["protocol"]
        return out


def evaluable(ds: RetrievalDataset) -> bool:
    """Whether an imported retrieval dataset has memories to search and judgments to score."""
    return bool(ds.memories and ds.judgments)


def require_evaluable(ds: RetrievalDataset, report: ImportReport, source: str) -> None:
    """Refuse an imported retrieval dataset with nothing to search or nothing judged: a dataset
    directory holding it would be refused by `memgauge evaluate` (an empty memories.jsonl or
    judgments.jsonl), so `import` and an `evaluate` of the file itself refuse it too, naming
    what the import left out (`validate` says so of a file that `audit` and `synth` still
    read)."""
    if evaluable(ds):
        return
    held = f"{counted(len(ds.memories), 'memory', 'memories')}, {counted(len(ds.queries), 'query', 'queries')}, {counted(len(ds.judgments), 'judgment')}"
    dropped = ""
    if report.dropped:
        first = ", ".join(_dropped_entry(entry) for entry in report.dropped[:3])
        more = f", and {len(report.dropped) - 3} more" if len(report.dropped) > 3 else ""
        dropped = f"; {len(report.dropped)} dropped ({first}{more})"
    raise DataError(
        Problem(
            source,
            None,
            None,
            f"nothing to evaluate: the {report.format} import holds {held}{dropped}; "
            f"a retrieval dataset needs memories and judged queries (is it the whole file?)",
        )
    )


def _dropped_entry(entry: dict[str, Any]) -> str:
    """One dropped item for a message: `query q-1: no user turn in the haystack` (the reason
    under the importers' `reason` or `why`)."""
    why = entry.get("reason", entry.get("why"))
    where = ", ".join(f"{k} {v}" for k, v in entry.items() if k not in ("reason", "why"))
    return f"{where}: {why}" if why is not None else where


_JSON_NAMES: dict[type, str] = {
    bool: "a boolean",
    int: "an integer",
    float: "a number",
    str: "a string",
    list: "a list",
    dict: "an object",
    type(None): "null",
}


def json_type(value: Any) -> str:
    """The JSON name of a parsed value's type, for messages ("a string", "null", ...)."""
    return _JSON_NAMES.get(type(value), type(value).__name__)


def wrong_type(
    file: str, where: str, value: Any, kinds: type | tuple[type, ...], expected: str
) -> Problem | None:
    """A Problem naming `where` if `value` is not one of `kinds`, else None.

    A boolean is never taken for a number (JSON `true` is not 1), unless `bool` is asked for.
    """
    allowed = kinds if isinstance(kinds, tuple) else (kinds,)
    ok = isinstance(value, allowed) and (bool in allowed or not isinstance(value, bool))
    return None if ok else Problem(file, None, where, f"must be {expected}, got {json_type(value)}")
