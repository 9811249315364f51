"""JSON that other tools can read: every `--json` output and JSON report goes through here.

Python's `json.dumps` writes `NaN`, `Infinity` and `-Infinity` for non-finite floats, which no
JSON parser but Python's accepts (`jq`, JavaScript's `JSON.parse`, Go, Rust all refuse them).
A non-finite number in an output means "no value" (a mean of nothing, a ratio over zero), so it
is written as `null`, as every n/a is; `allow_nan=False` then guarantees nothing slips through.
"""

from __future__ import annotations

import json
import math
from typing import Any

__all__ = ["dumps_strict", "finite_or_none"]


def finite_or_none(value: Any) -> Any:
    """`value` with every non-finite float (NumPy's too) inside dicts, lists and tuples
    replaced by None; everything else unchanged."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: finite_or_none(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [finite_or_none(v) for v in value]
    return value


def dumps_strict(value: Any, **kwargs: Any) -> str:
    """`json.dumps` that writes strict JSON: non-finite floats become null, never NaN."""
    return json.dumps(finite_or_none(value), allow_nan=False, **kwargs)
