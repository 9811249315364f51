"""The JSON result file: written atomically, read back with a clear error when it is not one."""

from __future__ import annotations

from pathlib import Path

from pydantic import ValidationError

from memgauge._util.files import atomic_write_text
from memgauge.aggregates.retrieval_result import RetrievalEvalResult
from memgauge.data.jsonio import load_structured
from memgauge.errors import DataError, Problem

__all__ = ["read_json", "write_json"]


def write_json(result: RetrievalEvalResult, path: str | Path) -> Path:
    """Write `result` as indented JSON (all or nothing)."""
    p = Path(path)
    atomic_write_text(p, result.model_dump_json(indent=2) + "\n")
    return p


def read_json(path: str | Path) -> RetrievalEvalResult:
    """Read a result written by `write_json`; DataError naming the field when it is not valid."""
    p = Path(path)
    try:
        raw, _ = load_structured(p)
    except DataError as exc:
        raise DataError(
            [
                Problem(q.file, q.line, q.field, f"not a JSON result file: {q.message}")
                for q in exc.problems
            ]
        ) from None
    try:
        return RetrievalEvalResult.model_validate(raw)
    except ValidationError as exc:
        raise DataError(
            [
                Problem(str(p), None, ".".join(str(x) for x in e["loc"]), e["msg"])
                for e in exc.errors()
            ]
        ) from None
