"""Reading one run's rates back through every view, for the one-value tests of the kinds whose
numbers are an aggregate's measures (audit, operations): each view gives, per (subject,
measure), the value and interval it shows and the counts it has, to compare with a reference.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

from starlette.testclient import TestClient
from tests.helpers import cli_output, last_json

from memgauge.view.app import create_app


@dataclass(frozen=True)
class Seen:
    """One rate as one view shows it: the value and CI (exact, or the text printed as `fmt`:
    `pct` a percentage to 0.1%, else a format spec), and the counts where the view has them."""

    value: float | str | None
    ci: tuple[float | str, float | str] | None = None
    fmt: str | None = None
    n_scored: int | None = None
    n_failed: int | None = None


Key = tuple[str, str]  # (subject, measure)
Views = dict[str, dict[Key, Seen]]
#: a table's rows, the header first
Rows = list[list[str]]

_RATE = re.compile(
    r"(n/a|[\d.]+)%?(?: \[([\d.]+)%?, ([\d.]+)%?\])? "
    r"(?:\((?:n=)?(\d+)(?: scored)?(?:, (\d+) failed)?\)|(?:pass [\d.]+% · )?n (\d+)(?: · (\d+) failed)?)"
)


def cli(argv: list[str], ok: int = 0) -> str:
    """Run a command in-process; its stdout and stderr, one after the other."""
    return cli_output(argv, ok, with_stderr=True)


def cell(text: str, fmt: str) -> Seen:
    """`80.0% [37.6%, 96.4%] (n=5)`, `0.750 [0.301, 0.954] (n=4, 1 failed)`, `n/a (0 scored,
    1 failed)` or the grid's `0.800 [0.376, 0.964] n 5 · 1 failed`."""
    found = _RATE.search(text)
    assert found, text
    value, low, high, n1, f1, n2, f2 = found.groups()
    ci = (low, high) if low is not None else None
    return Seen(value, ci, fmt, int(n1 or n2), int(f1 or f2 or 0))


def table_cells(rows: Rows, labels: dict[str, str], lead: int, fmt: str = "pct") -> dict[Key, Seen]:
    """A table of a measure per row (its label first, `lead` columns before the subjects')
    and a subject per column."""
    header = rows[0]
    return {
        (subject, labels[row[0]]): cell(c, fmt)
        for row in rows[1:]
        if row[0] in labels
        for subject, c in zip(header[lead:], row[lead:], strict=True)
    }


def _key(tables: dict[str, Rows], header: list[str]) -> str:
    """A table's name: its header, with its place where two tables have the same header."""
    name = " | ".join(header)
    return name if name not in tables else f"{name} #{len(tables)}"


def find(tables: dict[str, Rows], *lead: str) -> Rows:
    """The one table whose header starts with the columns `lead`."""
    (rows,) = [r for r in tables.values() if r and tuple(r[0][: len(lead)]) == lead]
    return rows


def terminal_tables(text: str) -> dict[str, Rows]:
    """Each rich table printed on the terminal, by its header."""
    tables: dict[str, Rows] = {}
    rows: Rows | None = None
    for line in text.splitlines():
        cells = [c.strip() for c in re.split(r"[│┃]", line)[1:-1]]
        if line.startswith("┃") and cells:
            rows = tables.setdefault(_key(tables, cells), [])
            rows.append(cells)
        elif line.startswith("│") and rows is not None and cells and cells[0]:
            rows.append(cells)
        elif not line.startswith(("│", "┃", "┡", "┏")):
            rows = None
    return tables


def markdown_tables(text: str) -> dict[str, Rows]:
    """Each Markdown table, by its header."""
    tables: dict[str, Rows] = {}
    rows: Rows | None = None
    for line in text.splitlines():
        if not line.startswith("|"):
            rows = None
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if rows is None:
            rows = tables.setdefault(_key(tables, cells), [])
        if not set("".join(cells)) <= {"-", ":"}:
            rows.append(cells)
    return tables


class Tables(HTMLParser):
    """Every `<table>` of a page: its rows, each a list of cell texts, by the table's id (or
    `tableN`)."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: dict[str, Rows] = {}
        self._table: str | None = None
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "table":
            self._table = dict(attrs).get("id") or f"table{len(self.tables)}"
            self.tables[self._table] = []
        elif tag == "tr" and self._table is not None:
            self.tables[self._table].append([])
        elif tag in ("td", "th") and self._table is not None:
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._table is not None and self._cell is not None:
            self.tables[self._table][-1].append(" ".join("".join(self._cell).split()))
            self._cell = None
        elif tag == "table":
            self._table = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def html_tables(text: str) -> dict[str, Rows]:
    """Each table of a page, by its header (the results grid as `grid`)."""
    parser = Tables()
    parser.feed(text)
    tables: dict[str, Rows] = {}
    for name, rows in parser.tables.items():
        if rows and rows[0]:
            tables["grid" if name == "grid" else _key(tables, rows[0])] = rows
    return tables


def measures_of(summary: dict[str, Any], aggregate: str) -> dict[Key, Seen]:
    """An aggregate's measures in a stored summary (what gate, history and targets read)."""
    (agg,) = [a for a in summary["aggregates"] if a["aggregate"] == aggregate]
    return {
        (m["subject"], m["name"]): Seen(
            m["value"], (m["ci_low"], m["ci_high"]), None, m["n_scored"], m["n_failed"]
        )
        for m in agg["measures"]
    }


def junit(path: Path, line: str, task: str, measures: list[str]) -> dict[Key, Seen]:
    """Each case's `value X` (a run's target) or `current X [lo, hi]` (a gate's), as `.4g`."""
    out: dict[Key, Seen] = {}
    for case in ET.parse(path).getroot().iter("testcase"):
        subject, _, of = str(case.get("classname")).partition(".")
        measure = str(case.get("name")).split(" ")[0]
        text = " ".join((el.text or "") + " " + el.get("message", "") for el in case)
        found = re.search(rf"\b{line} (n/a|[-\d.e+]+)(?: \[([-\d.e+]+), ([-\d.e+]+)\])?", text)
        if of == task and measure in measures and found:
            ci = (found.group(2), found.group(3)) if found.group(2) else None
            out[(subject, measure)] = Seen(found.group(1), ci, ".4g")
    return out


def grid(rows: Rows, task: str, measures: list[str]) -> dict[Key, Seen]:
    """The run page's results grid: a row per (task, evaluator / measure), a column per
    subject; an aggregate's measure is named with its source (`recall_accuracy (audit)`)."""
    cells: dict[Key, Seen] = {}
    for row in rows[1:]:
        measure = row[1].split(" (")[0]
        if row[0] == task and measure in measures:
            for subject, c in zip(rows[0][2:], row[2:], strict=True):
                cells[(subject, measure)] = cell(c, ".3f")
    return cells


def health_text(text: str, task: str, measures: list[str]) -> dict[Key, Seen]:
    """`  agent/audit recall_accuracy: 0.800 [0.376, 0.964] (n=5)`."""
    out: dict[Key, Seen] = {}
    for found in re.finditer(rf"^  (\S+)/{re.escape(task)} (\S+): (.*)$", text, re.M):
        if found.group(2) in measures:
            out[(found.group(1), found.group(2))] = cell(found.group(3), ".3f")
    return out


def _latest(cell: str) -> Seen:
    """A `latest` cell: `0.812`, or an n/a with its count (`n/a (0 scored)`)."""
    na = re.fullmatch(r"n/a \((\d+) scored\)", cell)
    return Seen("n/a", None, ".3f", int(na.group(1))) if na else Seen(cell, None, ".3f")


def history_text(text: str, task: str, measures: list[str]) -> dict[Key, Seen]:
    """The `latest` column of each measure's row."""
    return {
        (row[0], row[2]): _latest(row[4])
        for row in find(terminal_tables(text), "subject", "task", "evaluator", "trend")[1:]
        if len(row) == 6 and row[1] == task and row[2] in measures
    }


def stored_views(
    run_id: str, db: str, root: Path, name: str, task: str, aggregate: str
) -> tuple[Views, dict[str, str]]:
    """Every view of a stored run that has no shape of the kind's own (`runs show --json`, the
    results grid of `memgauge report` and the viewer, `gate --json` and `--junit`), and the
    text of the views that draw the kind's shapes (`runs show`, `memgauge report`, the viewer's
    run page), by name."""
    seen: Views = {}
    shown = last_json(cli(["runs", "show", run_id, "--store", db, "--json"]))
    seen[f"runs show --json ({name})"] = measures = measures_of(shown["summary"], aggregate)
    names = sorted({m for _, m in measures})
    page = root / f"{name}.html"
    cli(["report", run_id, "--out", str(page), "--store", db])
    with TestClient(create_app(db)) as client:
        response = client.get(f"/runs/{run_id}")
    assert response.status_code == 200
    texts = {
        f"runs show ({name})": cli(["runs", "show", run_id, "--store", db]),
        f"memgauge report ({name})": page.read_text(),
        f"viewer run page ({name})": response.text,
    }
    for where in (f"memgauge report ({name})", f"viewer run page ({name})"):
        seen[f"{where}: grid"] = grid(html_tables(texts[where])["grid"], task, names)
    xml = root / f"{name}-gate.xml"
    gate = ["gate", run_id, "--store", db, "--json", "--no-learn", "--junit", str(xml)]
    seen[f"gate --json ({name})"] = {
        (c["subject"], c["evaluator"]): Seen(
            c["current"], None if c["ci"] is None else tuple(c["ci"]), None, c["n_scored"]
        )
        for c in last_json(cli(gate))["metrics"]
        if c["task"] == task and c["evaluator"] in names
    }
    seen[f"gate --junit ({name})"] = junit(xml, "current", task, names)
    return seen, texts


def shape_tables(texts: dict[str, str]) -> dict[str, dict[str, Rows]]:
    """The tables of each text `stored_views` gave, by view and first column's name."""
    return {
        view: (html_tables(text) if "<html" in text[:500].lower() else terminal_tables(text))
        for view, text in texts.items()
    }


def latest_views(db: str, suite: str, name: str, task: str, measures: list[str]) -> Views:
    """`health` and `history` (text and `--json`): they read the latest run of `suite`."""
    seen: Views = {}
    health = last_json(cli(["health", "--store", db, "--suite", suite, "--json"]))
    (latest,) = health["latest_evaluations"]
    seen[f"health --json ({name})"] = {
        (m["subject"], m["measure"]): Seen(
            m["value"],
            None if m["ci"] is None else tuple(m["ci"]),
            None,
            m["n_scored"],
            m["n_failed"],
        )
        for m in latest["metrics"]
        if m["task"] == task and m["measure"] in measures
    }
    text = cli(["health", "--store", db, "--suite", suite])
    seen[f"health ({name})"] = health_text(text, task, measures)
    history = last_json(cli(["history", suite, "--store", db, "--json"]))
    seen[f"history --json ({name})"] = {
        (m["subject"], m["evaluator"]): Seen(m["values"][-1])
        for m in history["metrics"]
        if m["task"] == task and m["evaluator"] in measures
    }
    text = cli(["history", suite, "--store", db])
    seen[f"history ({name})"] = history_text(text, task, measures)
    return seen


def plugin_failure(
    out: str, subject: str, task: str, measures: list[str], helper: str
) -> tuple[dict[Key, Seen], str]:
    """What a failing `assert_*` helper of the pytest plug-in printed (`out`, the pytester
    run's stdout): its table of `subject`'s measures, and the id of the run it recorded."""
    table: dict[Key, Seen] = {}
    for m in measures:
        found = re.search(rf"{subject}/{task}/{m}\s+(n/a|[\d.]+)\s+\[([\d.]+), ([\d.]+)\]", out)
        assert found, (m, out[-3000:])
        table[(subject, m)] = Seen(found.group(1), (found.group(2), found.group(3)), ".4f")
    run_id = re.search(rf"{helper}: run (\S+) ", out)
    assert run_id, out[-3000:]
    return table, run_id.group(1)


def _shown(v: float | str | None, fmt: str | None) -> float | str | None:
    """`v` as a view printing it with `fmt` shows it."""
    if v is None:
        return None if fmt is None else "n/a"
    if fmt is None or isinstance(v, str):
        return v
    return f"{100 * v:.1f}" if fmt == "pct" else format(v, fmt)


def disagreements(reference: dict[Key, Seen], views: Views) -> list[str]:
    """Every disagreement of a view with the reference, as `view: subject/measure: what`."""
    wrong = []
    for view, got in views.items():
        missing = sorted(set(reference) - set(got))
        if missing:
            wrong.append(f"{view}: no {', '.join('/'.join(k) for k in missing)}")
        for key, s in got.items():
            want = reference[key]
            name = f"{view}: {'/'.join(key)}"
            if s.value != _shown(want.value, s.fmt):
                wrong.append(f"{name}: value {s.value}, not {want.value}")
            shown_ci = None if want.ci is None else tuple(_shown(b, s.fmt) for b in want.ci)
            if s.ci is not None and shown_ci is not None and s.ci != shown_ci:
                wrong.append(f"{name}: CI {s.ci}, not {want.ci}")
            for count in ("n_scored", "n_failed"):
                have = getattr(s, count)
                if have is not None and have != getattr(want, count):
                    wrong.append(f"{name}: {count} {have}, not {getattr(want, count)}")
    return wrong


def _measure(m: dict[str, Any]) -> Seen:
    """A MeasureValue's JSON (`run --json`'s `measures`, a side of `runs compare --json`'s)."""
    return Seen(m["value"], (m["ci_low"], m["ci_high"]), None, m["n_scored"], m["n_failed"])


def run_views(text: str, name: str, task: str, measures: list[str], *, table: bool = True) -> Views:
    """`memgauge run SUITE --json`'s output (the terminal's tables on stderr, then its JSON):
    its `measures` (every run-level number) and, with `table`, its tables of the aggregates'
    measures (the primary and targeted ones, then the secondary ones)."""
    seen: Views = {}
    seen[f"run --json ({name}): measures"] = {
        (m["subject"], m["name"]): _measure(m)
        for m in last_json(text)["measures"]
        if m["task"] == task and m["name"] in measures
    }
    if not table:
        return seen
    # the headline measures' table, then the secondary ones'
    tables = [r for r in terminal_tables(text).values() if r[0][:2] == ["measure", "task"]]
    assert tables, text[-3000:]
    seen[f"run terminal ({name}): aggregates' measures"] = {
        (subject, row[0]): cell(c, ".3f")
        for rows in tables
        for row in rows[1:]
        if row[1] == task and row[0] in measures
        for subject, c in zip(rows[0][2:], row[2:], strict=True)
    }
    return seen


def compare_views(a: str, b: str, db: str, task: str, measures: list[str]) -> tuple[Views, Views]:
    """`runs compare A B` (`--json`'s `measures`, and the terminal's table of them): A's
    numbers, and B's."""
    doc = last_json(cli(["runs", "compare", a, b, "--store", db, "--json"]))
    sides: tuple[Views, Views] = ({}, {})
    for side, seen in zip(("a", "b"), sides, strict=True):
        seen[f"runs compare --json ({side})"] = {
            (r["subject"], r["measure"]): _measure(r[side])
            for r in doc["measures"]
            if r["task"] == task and r["measure"] in measures and r[side] is not None
        }
    rows = find(
        terminal_tables(cli(["runs", "compare", a, b, "--store", db])), "measure", "subject", "task"
    )
    for column, seen in zip((3, 4), sides, strict=True):
        seen[f"runs compare ({'ab'[column - 3]})"] = {
            (row[1], row[0]): cell(row[column], ".3f")
            for row in rows[1:]
            if row[2] == task and row[0] in measures and row[column] != "-"
        }
    return sides


def systems_views(runs: list[str], db: str, task: str, measures: list[str]) -> dict[str, Views]:
    """`runs compare RUN...` of one run (its subjects the systems) or of three or more (the
    runs the systems), and its `--format markdown` and `--json`: per system (a column), the
    numbers its table of the aggregates' measures shows. A row names its subject where the
    systems are runs of several subjects; else the system is the subject."""
    argv = ["runs", "compare", *runs, "--store", db]
    name = f"runs compare {' '.join(r[-8:] for r in runs)}"
    doc = json.loads(cli_output([*argv, "--json"]))  # indented: the systems table's JSON
    out: dict[str, Views] = {system: {} for system in doc["systems"]}
    for system, seen in out.items():
        seen[f"{name} --json"] = {
            (r["subject"] or system, r["measure"]): _measure(r["values"][system])
            for r in doc["aggregate_measures"]
            if r["task"] == task and r["measure"] in measures and r["values"][system]
        }
    texts = {
        name: terminal_tables(cli(argv)),
        f"{name} --format markdown": markdown_tables(cli([*argv, "--format", "markdown"])),
    }
    for view, tables in texts.items():
        rows = find(tables, "measure")
        lead = 3 if rows[0][1] == "subject" else 2
        for i, system in enumerate(rows[0][lead:], lead):
            out[system][view] = {
                (row[1] if lead == 3 else system, row[0]): cell(row[i], ".3f")
                for row in rows[1:]
                if row[lead - 1] == task and row[0] in measures and row[i] != "-"
            }
    return out
