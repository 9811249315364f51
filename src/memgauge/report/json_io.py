"""The JSON result file: written atomically, read back with a clear error when it is not one."""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import ValidationError

from memgauge._util.files import atomic_write_text
from memgauge.errors import DataError, Problem
from memgauge.runs.result import RetrievalEvalResult

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
        raw = json.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise DataError(Problem(str(p), None, None, "no such file")) from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        line = getattr(exc, "lineno", None)
        raise DataError(Problem(str(p), line, None, f"not a JSON result file: {exc}")) from None
    try:
        return RetrievalEvalResult.model_validate(raw)
    except ValidationError as exc:
        raise DataError(
            [
                Problem(str(p), None, ".".join(str(x) for x in e["loc"]), e["msg"])
                for e in exc.errors()
            ]
        ) from None
