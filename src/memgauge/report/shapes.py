"""An aggregate's shapes as every medium draws them: the sections of a run (one per aggregate
of a task, its shapes read back whatever the stored form), each shape laid out by its type as
one grid of cells, and a cell's text. The terminal (`shapes_terminal`), Markdown
(`shapes_markdown`) and HTML (the viewer's `_shapes.html`, for the viewer and the one-file
report) draw grids; JSON is the shapes' own model dump (`shapes_json`).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from memgauge.data.records import AggregateResult, MeasureValue, RunSummary
from memgauge.data.shapes import (
    Breakdown,
    Cell,
    Confusion,
    Curve,
    Examples,
    Paired,
    Shape,
    Table,
    cell,
    text,
)
from memgauge.report.fmt import fmt_ci, fmt_num, fmt_p, fmt_pct, fmt_signed, na_text

__all__ = [
    "Grid",
    "Section",
    "beyond_tables",
    "cell_text",
    "deltas_table",
    "footnotes",
    "grid",
    "measures_table",
    "sections",
    "shapes_json",
    "shapes_of",
    "systems_measures_table",
]


@dataclass(frozen=True)
class Section:
    """What a report shows of one aggregate of one task."""

    aggregate: str
    task: str
    title: str
    shapes: list[Shape]


@dataclass(frozen=True)
class Grid:
    """A shape laid out as a table."""

    title: str
    note: str | None
    columns: list[str]
    rows: list[list[Cell]]


def _component(name: str) -> Any:
    from memgauge.aggregates import AGGREGATES

    return AGGREGATES.get(name).factory if name in AGGREGATES else None


def shapes_of(agg: AggregateResult) -> list[Shape]:
    """Its shapes; for a result stored before shapes existed (form 1: `detail` only), the ones
    its aggregate draws from that detail (none when the aggregate is not installed)."""
    if agg.form > 1 and agg.shapes:
        return list(agg.shapes)
    upgrade = getattr(_component(agg.aggregate), "shapes_from", None)
    drawn = list(upgrade(agg.detail)) if callable(upgrade) and agg.detail else []
    # an aggregate that draws nothing of its own (a plug-in's that gives measures only) shows
    # its measures, as every medium draws a table
    return drawn or ([_measures(agg.aggregate, agg.measures)] if agg.measures else [])


def _measures(
    title: str, measures: Sequence[MeasureValue], lead: Sequence[str] = ("measure",)
) -> Table:
    """Measures as a table: a row per measure (and task, where `lead` has it, in its order),
    a column per subject."""
    subjects = list(dict.fromkeys(m.subject for m in measures))
    rows: dict[tuple[str, ...], list[Cell]] = {}
    for m in measures:
        key = tuple(m.task if col == "task" else m.name for col in lead)
        row = rows.setdefault(key, [*(text(k) for k in key), *(text("-") for _ in subjects)])
        row[len(lead) + subjects.index(m.subject)] = cell(
            m.value, (m.ci_low, m.ci_high), m.n_scored, m.n_failed
        )
    return Table(
        title=title,
        note="mean or measure with its 95% CI and count",
        columns=[*lead, *subjects],
        rows=list(rows.values()),
    )


def sections(summary: RunSummary | Mapping[str, Any] | None) -> list[Section]:
    """One section per aggregate that has something to show, in the run's order (`summary`
    as stored, or its JSON form)."""
    if isinstance(summary, Mapping):
        summary = RunSummary.model_validate(summary)
    out = []
    for agg in summary.aggregates if summary is not None else ():
        shapes = shapes_of(agg)
        if shapes:
            title = getattr(_component(agg.aggregate), "title", None) or agg.aggregate
            out.append(Section(agg.aggregate, agg.task, str(title), shapes))
    return out


def measures_table(summary: RunSummary) -> Table:
    """Every run-level number (evaluators' means, aggregates' measures, a task's combined
    score), per subject."""
    return _measures("Results", [*summary.measures(), *summary.combined()], ("task", "measure"))


def beyond_tables(summary: RunSummary, *, apart: Collection[str] = ()) -> list[Table]:
    """The numbers its evaluators' rows do not show (`beyond_evaluators`), per subject, but
    those of the aggregates named in `apart` (drawn in a table of their own): the headline
    ones, the numbers the gate decides on, then the secondary ones (seed 002's agent-memory
    metrics, an attribution, a macro average), which it shows as information unless a target,
    `--fail-under` or `--measure` names them. A table of none is left out."""
    found = [m for m in summary.beyond_evaluators() if m.source not in apart]
    shown = summary.headline(found)
    secondary = [m for m in found if m not in shown]
    # the measure first: a leading column after the first wraps at a tier's width
    lead = ("measure", "task")
    titles = (
        (shown, "Aggregates' measures (what gate decides on)"),
        (secondary, "Secondary measures (gate decides on one a target, --measure names)"),
    )
    return [_measures(title, group, lead) for group, title in titles if group]


def _side(m: Mapping[str, Any] | None) -> Cell:
    """A run's MeasureValue (as JSON) as `runs show` draws it: value, interval and counts."""
    if m is None:
        return text("-")
    return cell(m["value"], (m["ci_low"], m["ci_high"]), m["n_scored"], m["n_failed"])


def _measure_text(name: str, sides: Sequence[Mapping[str, Any] | None]) -> Cell:
    """A measure's name, with "lower is better" under it where its sides (the last that has
    it says) tell a lower number is the better one: a rate of bad events."""
    m: Mapping[str, Any] = next((s for s in reversed(sides) if s), {})
    return text(name, None if m.get("higher_is_better", True) else "lower is better")


def deltas_table(rows: Sequence[Mapping[str, Any]], a: str, b: str) -> Table:
    """`measure_deltas`' rows as a table: per subject, task and measure, A's and B's number
    with its interval and counts, as `runs show` draws it, and B - A."""
    return Table(
        title=f"Aggregates' measures (what gate decides on): A (baseline) run {a}, B run {b}",
        note="each run's number with its 95% CI and count; an aggregate's number is not a mean"
        " of items, so no paired test",
        columns=["measure", "subject", "task", "A (baseline)", "B", "delta B - A"],
        rows=[
            [
                _measure_text(r["measure"], (r["a"], r["b"])),
                text(r["subject"]),
                text(r["task"]),
                _side(r["a"]),
                _side(r["b"]),
                _num(r["delta"], "signed"),
            ]
            for r in rows
        ],
    )


def systems_measures_table(rows: Sequence[Mapping[str, Any]], systems: Sequence[str]) -> Table:
    """`system_measures`' rows as a table: per measure, task (and subject, where a system is
    a run of several) each system's number with its interval and counts, as `runs show`
    draws it."""
    lead = (
        ["measure", "subject", "task"] if any(r["subject"] for r in rows) else ["measure", "task"]
    )
    return Table(
        title="Aggregates' measures (what gate decides on)",
        note="each system's number as its run reports it, with its 95% CI and count; an"
        " aggregate's number is not a mean of items, so no test between systems",
        columns=[*lead, *systems],
        rows=[
            [
                _measure_text(r["measure"], [r["values"][s] for s in systems]),
                *(text(r[col]) for col in lead[1:]),
                *(_side(r["values"][s]) for s in systems),
            ]
            for r in rows
        ],
    )


def shapes_json(shapes: Sequence[Shape]) -> list[dict[str, Any]]:
    """The shapes as JSON (each carries its `type`)."""
    return [s.model_dump(mode="json") for s in shapes]


def cell_text(c: Cell) -> str:
    """`0.812 [0.700, 0.900] (n=10)`, `81.2% [70.0%, 90.0%] (n=8, 2 failed)`, `n/a (0 scored,
    2 failed)`, or the cell's text: a value's failed items are said beside it, as an n/a's."""
    if c.text is not None:
        return c.text
    if c.value is None:
        if c.n is None:
            return "n/a"
        return na_text(c.n, c.n_failed)
    if c.pct:
        ci = f" [{fmt_pct(c.ci[0])}, {fmt_pct(c.ci[1])}]" if c.ci else ""
        shown = fmt_pct(c.value) + ci
    else:
        shown = f"{fmt_num(c.value)} {fmt_ci(*c.ci) if c.ci else ''}".rstrip()
    if c.n is None:
        return shown
    return f"{shown} (n={c.n}{f', {c.n_failed} failed' if c.n_failed else ''})"


def footnotes(g: Grid) -> list[str]:
    """What the cells' notes say, once each, for the media that draw notes under a table: a
    row's meaning (a note on its name), and why a value is n/a (`name is n/a for column:
    why`). A note on a value that is there is its tooltip in HTML, and left out here."""
    out: dict[str, None] = {}
    for row in g.rows:
        name = cell_text(row[0]) if row else ""
        for col, c in zip(g.columns, row, strict=False):
            if c.note and c.text is not None:
                out[f"{name}: {c.note}"] = None
            elif c.note and c.value is None:
                out[f"{name} is n/a for {col}: {c.note}"] = None
    return list(out)


def _num(v: float | None, fmt: str = "num") -> Cell:
    if v is None:
        return text("n/a")
    return text(fmt_p(v) if fmt == "p" else fmt_signed(v) if fmt == "signed" else fmt_num(v))


def grid(shape: Shape) -> Grid:
    """`shape` laid out by its type as columns and rows of cells."""
    if isinstance(shape, Table):
        return Grid(shape.title, shape.note, shape.columns, shape.rows)
    if isinstance(shape, Breakdown):
        rows = [[text(k), *cells] for k, cells in shape.values.items()]
        return Grid(shape.title, shape.note, [shape.by, *shape.subjects], rows)
    if isinstance(shape, Confusion):
        cols = ["subject", "actual \\ predicted", *shape.labels]
        rows = [
            [text(subject), text(label), *(text(n) for n in counts[i])]
            for subject, counts in shape.counts.items()
            for i, label in enumerate(shape.labels)
        ]
        return Grid(shape.title, shape.note, cols, rows)
    if isinstance(shape, Paired):
        note = " · ".join(
            x for x in (f"against {shape.baseline}", shape.note, shape.correction) if x
        )
        cols = ["candidate", "measure", "a", "b", "Δ", "Δ 95% CI", "p", "p adjusted", "n", ""]
        rows = [
            [
                text(r.candidate),
                text(r.measure),
                _num(r.a),
                _num(r.b),
                _num(r.delta, "signed"),
                text(fmt_ci(*r.ci) if r.ci else ""),
                _num(r.p, "p"),
                _num(r.p_adjusted, "p"),
                text(r.n),
                text(r.mark),
            ]
            for r in shape.rows
        ]
        return Grid(shape.title, note, cols, rows)
    if isinstance(shape, Curve) and shape.style == "scatter":
        # a dot per row: its series, x and y with their intervals
        rows = [
            [
                text(s.name),
                cell(x, s.x_ci[i] if s.x_ci else None),
                cell(y, s.y_ci[i] if s.y_ci else None, s.n[i] if s.n else None),
            ]
            for s in shape.series
            for i, (x, y) in enumerate(s.points)
        ]
        return Grid(shape.title, shape.note, ["subject", shape.x, shape.y], rows)
    if isinstance(shape, Curve):
        xs = sorted({x for s in shape.series for x, _ in s.points})
        by = [dict(s.points) for s in shape.series]
        rows = [[text(f"{x:g}"), *(cell(p.get(x)) for p in by)] for x in xs]
        cols = [shape.x, *(f"{shape.y}: {s.name}" for s in shape.series)]
        return Grid(shape.title, shape.note, cols, rows)
    assert isinstance(shape, Examples)
    verdict = {True: "ok", False: "failed", None: ""}
    rows = [
        [text(e.subject or ""), text(e.id), text(e.text), text(verdict[e.ok])] for e in shape.items
    ]
    return Grid(shape.title, shape.note, ["subject", "item", "what", "verdict"], rows)
