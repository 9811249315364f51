"""A run's items as one flat table: a row per item, a column per field and per evaluator's
value, passed and reason. The CSV export writes it as text; the Parquet export as typed
columns, for pandas, polars, DuckDB and Spark.

Parquet needs pyarrow, an optional extra (`pip install 'memgauge[parquet]'`): about 170 MB
installed, which most users of the CSV never need. Without it the export is `UnavailableError` (exit 3), saying
what to install.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from memgauge._util.files import atomic_write_bytes
from memgauge._util.jsonout import dumps_strict
from memgauge.errors import UnavailableError

__all__ = ["flat_item", "write_parquet"]

#: the item's own columns, in order, with their Parquet types (pyarrow type names)
ITEM_COLUMNS: dict[str, str] = {
    "run_id": "string",
    "subject": "string",
    "task": "string",
    "item_id": "string",
    "source_id": "string",
    "repeat": "int64",
    "status": "string",
    "attempts": "int64",
    "category": "string",
    "score": "float64",
    "duration_ms": "float64",
    "input": "string",
    "expected": "string",
    "output": "string",
}
#: the three columns of each evaluator, by suffix
_EVALUATOR_COLUMNS = {"": "float64", ".passed": "bool_", ".reason": "string"}


def flat_item(record: Mapping[str, Any]) -> dict[str, Any]:
    """One exported item (`SuiteRunStore.iter_export`) as a flat row: structured input,
    expected and output as JSON text; `EVALUATOR`, `EVALUATOR.passed`, `EVALUATOR.reason`
    per verdict (the error instead of the reason when the evaluator failed)."""
    out = {k: record[k] for k in ITEM_COLUMNS if k not in ("input", "expected", "output")}
    out["input"] = (
        record["input"].get("text") if isinstance(record["input"], dict) else record["input"]
    )
    for key in ("expected", "output"):
        value = record[key]
        out[key] = value if isinstance(value, str) or value is None else dumps_strict(value)
    for s in record["scores"]:
        out[s["evaluator"]] = s["value"]
        out[f"{s['evaluator']}.passed"] = s["passed"]
        out[f"{s['evaluator']}.reason"] = s["error"] or s["reason"]
    return out


def write_parquet(records: Iterable[Mapping[str, Any]], path: Path, run: Mapping[str, Any]) -> int:
    """Write the items as a Parquet file at `path` (atomically); the number of rows.

    Item columns have fixed types (`ITEM_COLUMNS`); each evaluator adds a float64 value, a
    bool `passed` and a string `reason`; a missing value is null, never 0. An input that is not
    text is stored as its JSON. The run's id, suite, kind and status are in the file's
    key-value metadata (`memgauge.run`).
    """
    try:
        import pyarrow as pa  # an optional extra: loaded for this export only
        import pyarrow.parquet as pq
    except ImportError:
        raise UnavailableError(
            "Parquet export needs pyarrow: pip install 'memgauge[parquet]' "
            "(or use --format csv or jsonl)"
        ) from None
    rows = [flat_item(r) for r in records]
    types = dict(ITEM_COLUMNS)
    for row in rows:
        for column in row:
            if column not in types:
                base = next(
                    column.removesuffix(s) for s in (".passed", ".reason", "") if column.endswith(s)
                )
                for suffix, kind in _EVALUATOR_COLUMNS.items():
                    types.setdefault(base + suffix, kind)
    for row in rows:
        if not isinstance(row["input"], str | None):
            row["input"] = dumps_strict(row["input"])
    schema = pa.schema([(name, getattr(pa, kind)()) for name, kind in types.items()])
    meta = {k: run.get(k) for k in ("run_id", "suite_name", "kind", "status", "created_at")}
    table = pa.Table.from_pylist(rows, schema=schema).replace_schema_metadata(
        {"memgauge.run": dumps_strict(meta, sort_keys=True)}
    )
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink)
    atomic_write_bytes(path, sink.getvalue().to_pybytes())
    return len(rows)
