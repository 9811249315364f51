"""A CSV test sheet into task items: the items of an `expected-output` task (a question and the
answer a right reply gives) or a `script` task (the same items, scored by your script).

Columns (a header row is required; names are case-sensitive, in any order):

| column | becomes | required |
|---|---|---|
| `input` | `TaskItem.input`, the question or instruction | yes |
| `id` | `TaskItem.id`; an empty cell gets `row-<line>` | no |
| `expected` | `TaskItem.expected`, the reference answer; empty: no reference | no |
| `expected_2`, `expected_3`, ... | more acceptable answers: `expected` becomes the list of the non-empty ones (any of them is right) | no |
| `category` | `TaskItem.category`, for breakdowns | no |
| `corpus` | `TaskItem.corpus`, the memories' corpus it is asked against | no |
| `metadata.KEY` | `TaskItem.metadata[KEY]`, as text | no |

Every cell is text: a number in `expected` stays the text `"42"`, as the text scorers compare
it. Cells are stripped of surrounding blanks (counted), since a stray space fails an exact
match; blank rows are skipped (counted). UTF-8 with or without a byte-order mark (Excel writes
one); `,` separates, or a tab in a `.tsv` file, or `;` when the header has no comma and names
`input` between semicolons (Excel's CSV where the comma is the decimal mark). A first column with an empty name is pandas'
index (`DataFrame.to_csv` writes it so): its cells are ignored (counted).

Malformed: no header or no `input` column, an unknown or repeated column, a row with more or
fewer cells than the header, an empty `input`, a repeated id; each a `DataError` with the
file, line and column.
"""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path
from typing import Any

from memgauge._util.listing import counted
from memgauge.data.importers.common import ImportReport
from memgauge.data.jsonio import decode_text, existing
from memgauge.data.models import TaskItem
from memgauge.errors import DataError, Problem

__all__ = ["COLUMNS", "import_csv_items"]

#: the fixed columns; `expected_N` (N >= 2) and `metadata.KEY` are accepted besides
COLUMNS = ("id", "input", "expected", "category", "corpus")
_ALTERNATIVE = re.compile(r"expected_([2-9]|[1-9][0-9]+)")


def _check_header(header: list[str], file: str) -> list[Problem]:
    problems = []
    seen: set[str] = set()
    for name in header:
        if name in seen:
            problems.append(Problem(file, 1, name, "column appears twice; keep one"))
        seen.add(name)
        if not (name in COLUMNS or _ALTERNATIVE.fullmatch(name) or name.startswith("metadata.")):
            problems.append(
                Problem(
                    file,
                    1,
                    name or "(empty)",
                    f"unknown column; use {', '.join(COLUMNS)}, expected_2, expected_3, ... "
                    "or metadata.KEY",
                )
            )
    if "input" not in seen:
        problems.append(
            Problem(file, 1, "input", "no `input` column: each item needs its question")
        )
    return problems


def _separator(text: str) -> str:
    """`,`; or `;` when the header has no comma and names `input` between semicolons: Excel
    saves CSV so where the comma is the decimal mark (German, French, ... settings)."""
    header = text.split("\n", 1)[0]
    cells = [c.strip().strip('"') for c in header.split(";")]
    return ";" if "," not in header and "input" in cells else ","


def import_csv_items(path: str | Path) -> tuple[list[TaskItem], ImportReport]:
    """Read a CSV (or `.tsv`) sheet of task items (module docstring for the columns); the
    items and the import report."""
    p, file = existing(path)
    text = decode_text(p.read_bytes(), file)
    report = ImportReport(source=file, format="csv-items")
    delimiter = "\t" if p.suffix == ".tsv" else _separator(text)
    if delimiter == ";":
        report.notes.append("read with ';' between cells, as Excel saves CSV where ',' is decimal")
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    try:
        header = [h.strip() for h in next(reader)]
    except StopIteration:
        raise DataError(
            Problem(file, None, None, "file is empty; the first row names the columns")
        ) from None
    except csv.Error as exc:
        raise DataError(Problem(file, 1, None, f"not CSV: {exc}")) from None
    # pandas' `DataFrame.to_csv` writes its index first, under an empty name; read_csv(...,
    # index_col=0) reads it back so: its cells are row labels, not items' ids
    index = len(header) > 1 and header[0] == ""
    problems = _check_header(header[1:] if index else header, file)
    if problems:
        raise DataError(problems)
    alternatives = sorted(
        (h for h in header if _ALTERNATIVE.fullmatch(h)), key=lambda h: int(h.split("_")[1])
    )
    items: list[TaskItem] = []
    seen: dict[str, int] = {}
    while True:
        line = reader.line_num + 1
        try:
            row = next(reader)
        except StopIteration:
            break
        except csv.Error as exc:
            problems.append(Problem(file, line, None, f"not CSV: {exc}"))
            break
        if not any(cell.strip() for cell in row):
            report.add("blank_rows_skipped")
            continue
        if len(row) != len(header):
            problems.append(
                Problem(
                    file,
                    line,
                    None,
                    f"{counted(len(row), 'cell')}, but the header has {len(header)}",
                )
            )
            continue
        if index:
            report.add("index_cells_ignored")
        cells = {}
        for name, raw in zip(header, row, strict=True):
            if index and not name:
                continue
            cells[name] = raw.strip()
            if cells[name] != raw:
                report.add("cells_trimmed")
        if not cells["input"]:
            problems.append(Problem(file, line, "input", "empty: each item needs its question"))
            continue
        item_id = cells.get("id") or ""
        if not item_id:
            item_id = f"row-{line}"
            report.add("ids_generated")
        if item_id in seen:
            problems.append(
                Problem(file, line, "id", f"id {item_id!r} repeats line {seen[item_id]}")
            )
            continue
        seen[item_id] = line
        answers = [a for a in [cells.get("expected", ""), *(cells[h] for h in alternatives)] if a]
        expected: Any = None if not answers else answers[0] if len(answers) == 1 else answers
        if expected is None:
            report.add("items_without_expected")
        elif isinstance(expected, list):
            report.add("items_with_alternatives")
        metadata = {
            h.removeprefix("metadata."): v
            for h, v in cells.items()
            if h.startswith("metadata.") and v
        }
        items.append(
            TaskItem(
                id=item_id,
                input=cells["input"],
                expected=expected,
                category=cells.get("category") or None,
                corpus=cells.get("corpus") or None,
                metadata=metadata,
            )
        )
    if problems:
        raise DataError(problems)
    if not items:
        raise DataError(Problem(file, None, None, "no items below the header"))
    report.counts["items"] = len(items)
    return items, report
