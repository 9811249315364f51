"""What each page shows, as plain data, from the records: a run (its grid of subject x task x
evaluator, targets, gate, LLM spend, provenance, charts, and the sections of its kind), a page
of items, one item. The server fills these from the store; `memgauge report` and `evaluate`'s
report.html from a run's records; the templates draw them either way.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field, fields
from datetime import datetime
from typing import Any

import yaml
from markupsafe import Markup

from memgauge.aggregates.hits import hit_channels, hits_of
from memgauge.api import interim_summary
from memgauge.data.records import (
    COMBINED,
    ItemRecord,
    MeasureValue,
    RunRecord,
    RunSummary,
    ScoreRecord,
)
from memgauge.data.shapes import Breakdown, Curve, Shape, Table
from memgauge.metrics.conventions import DEFAULT_REL_THRESHOLD
from memgauge.report.fmt import conventions_lines, fmt_ci, fmt_num
from memgauge.report.liveness import liveness
from memgauge.report.shapes import Section, cell_text, grid, sections
from memgauge.store.run_pages import ItemRow
from memgauge.track.gate import GateConfig, GateResult, evaluate_gate, with_unended
from memgauge.track.regressions import kinds_of
from memgauge.view import charts

__all__ = [
    "LIVE",
    "Cell",
    "GridRow",
    "RunPage",
    "duration",
    "hit_rows",
    "is_live",
    "item_row",
    "run_page",
    "stale_reason",
]

#: statuses of a run that is still going: its pages refresh by themselves
LIVE = ("queued", "running")
#: what `liveness` reads of a run
_OWNER_FIELDS = {"run_id", "status", "pid", "host", "pid_start", "heartbeat_at"}


@dataclass
class Cell:
    """One subject's numbers for one (task, evaluator) of the grid."""

    mean: float | None
    ci_low: float | None
    ci_high: float | None
    pass_rate: float | None
    n_scored: int
    n_failed: int
    n_fallback: int = 0
    #: why the value is n/a, where the aggregate says
    note: str | None = None


@dataclass
class GridRow:
    """One (task, evaluator or measure) row of the run's grid, a cell per subject."""

    task: str
    evaluator: str
    source: str
    cells: dict[str, Cell]


@dataclass
class RunPage:
    """Everything the run page (and the report) shows of one run."""

    run: RunRecord
    summary: RunSummary | None
    live: bool
    subjects: list[str]
    grid: list[GridRow]
    charts: list[Markup]
    gate: GateResult | None
    usage: list[dict[str, Any]]
    provenance: list[tuple[str, str]]
    specs: dict[str, str]
    tasks: list[dict[str, Any]]
    failures: list[dict[str, Any]]
    #: each aggregate's shapes
    sections: list[Section] = field(default_factory=list)
    others: list[dict[str, Any]] = field(default_factory=list)
    #: the conventions of the run's IR numbers, one line per task and evaluator / aggregate
    conventions: list[str] = field(default_factory=list)
    #: the verdict `memgauge gate` recorded for the run (pass, fail, accepted), None if never
    #: gated: its baseline may have held runs this store does not (`--baseline` bundles)
    verdict: str | None = None
    #: why a run that says `running` may not be (its owner is gone, or silent: `liveness`);
    #: such a run is not live (its page does not refresh)
    stale: str | None = None


def stale_reason(run: RunRecord | Mapping[str, Any]) -> str | None:
    """Why `run` (a record, or a row with its owner's fields), which says `running`, may not
    be: its owner is gone or silent (`liveness`, as `runs list` and `runs show` judge it)."""
    if isinstance(run, RunRecord):
        return liveness(run.model_dump(include=_OWNER_FIELDS))
    return liveness(run)


def is_live(run: RunRecord | Mapping[str, Any]) -> bool:
    """Whether `run` is still going: its pages refresh by themselves."""
    status = run.status if isinstance(run, RunRecord) else run["status"]
    return status in LIVE and stale_reason(run) is None


def duration(start: str | None, end: str | None) -> str:
    """`1 h 02 min`, `3.4 s`, or '' when either end is missing."""
    if not start or not end:
        return ""
    seconds = (datetime.fromisoformat(end) - datetime.fromisoformat(start)).total_seconds()
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, sec = divmod(int(seconds), 60)
    if minutes < 60:
        return f"{minutes} min {sec:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"


def _grid(summary: RunSummary) -> tuple[list[str], list[GridRow]]:
    """Rows of (task, evaluator): the evaluators' means and pass rates, then the aggregates'
    own measures (IR metrics, P / R / F1, tiers, audit rates) that no evaluator gave."""
    subjects: dict[str, None] = {}
    rows: dict[tuple[str, str], GridRow] = {}
    for e in summary.evaluators:
        subjects[e.subject] = None
        row = rows.setdefault((e.task, e.evaluator), GridRow(e.task, e.evaluator, "evaluator", {}))
        row.cells[e.subject] = Cell(
            e.mean, e.ci_low, e.ci_high, e.pass_rate, e.n_scored, e.n_failed, e.n_fallback or 0
        )
    for m in summary.combined():
        row = rows.setdefault((m.task, m.name), GridRow(m.task, m.name, m.source, {}))
        row.cells[m.subject] = _measure_cell(m)
    for agg in summary.aggregates:
        for m in agg.measures:
            subjects[m.subject] = None
            row = rows.setdefault((m.task, m.name), GridRow(m.task, m.name, agg.aggregate, {}))
            if m.subject not in row.cells:
                row.cells[m.subject] = _measure_cell(m)
    # per task: the evaluators' rows, their combined score, then the aggregates' measures
    order = {"evaluator": 0, COMBINED: 1}
    return list(subjects), sorted(rows.values(), key=lambda r: (r.task, order.get(r.source, 2)))


def _measure_cell(m: MeasureValue) -> Cell:
    """A run-level number's cell: no pass rate."""
    return Cell(m.value, m.ci_low, m.ci_high, None, m.n_scored, m.n_failed, m.n_fallback, m.note)


def _grid_charts(subjects: Sequence[str], grid: Sequence[GridRow]) -> list[Markup]:
    """Per task, the evaluators' means with CIs, one bar per subject (0-1 scales only)."""
    out = []
    for task in dict.fromkeys(r.task for r in grid):
        bars = []
        for r in grid:
            if r.task != task or r.source != "evaluator":
                continue
            for si, s in enumerate(subjects):
                c = r.cells.get(s)
                if c is None:
                    continue
                label = f"{r.evaluator} · {s}" if len(subjects) > 1 else r.evaluator
                note = f"{fmt_num(c.mean)} {fmt_ci(c.ci_low, c.ci_high)}".strip()
                bars.append(Bar(label, si, c.mean, c.ci_low, c.ci_high, note))
        values = [b.high or b.value or 0.0 for b in bars]
        if bars and max(values) <= 1.0:
            out.append(charts.bar_chart(f"{task}: mean with 95% CI", bars, x_max=1.0))
    return out


Bar = charts.Bar


def _flat(value: Any, prefix: str = "") -> list[tuple[str, str]]:
    """A nested mapping as (dotted key, text) rows."""
    if isinstance(value, Mapping) and value:
        out: list[tuple[str, str]] = []
        for k, v in value.items():
            out.extend(_flat(v, f"{prefix}.{k}" if prefix else str(k)))
        return out
    if isinstance(value, str):
        return [(prefix, value)]
    return [(prefix, json.dumps(value, default=str))]


def _usage(summary: RunSummary | None) -> list[dict[str, Any]]:
    usage = summary.llm_usage if summary else {}
    return [{"model": model, **row} for model, row in usage.items() if isinstance(row, Mapping)]


def shape_chart(shape: Shape) -> Markup | None:
    """The chart the HTML draws beside a shape, by its type: a table's values with their CIs
    as bars (when some value has a CI and every value lies in 0-1), a curve's lines, or its
    dots with their CI whiskers (a scatter)."""
    if isinstance(shape, Curve) and shape.style == "scatter":
        dots = [
            charts.Dot(
                s.name,
                x,
                y,
                x_ci=s.x_ci[i] if s.x_ci else None,
                y_ci=s.y_ci[i] if s.y_ci else None,
                color=charts.PALETTE[si % len(charts.PALETTE)],
            )
            for si, s in enumerate(shape.series)
            for i, (x, y) in enumerate(s.points)
            if y is not None
        ]
        return charts.scatter_chart(shape.title, shape.x, shape.y, dots)
    if isinstance(shape, Curve):
        xs = sorted({x for s in shape.series for x, _ in s.points})
        lines = [
            charts.Line(
                s.name,
                [dict(s.points).get(x) for x in xs],
                color=charts.PALETTE[i % len(charts.PALETTE)],
            )
            for i, s in enumerate(shape.series)
        ]
        return charts.line_chart(shape.title, [f"{x:g}" for x in xs], lines)
    if not isinstance(shape, Table | Breakdown):
        return None
    g = grid(shape)
    bars = []
    for row in g.rows:
        for si, (col, c) in enumerate(zip(g.columns[1:], row[1:], strict=False)):
            if c.text is None:
                label = f"{row[0].text} · {col}" if len(g.columns) > 2 else str(row[0].text)
                low, high = c.ci or (None, None)
                bars.append(Bar(label, si, c.value, low, high, cell_text(c)))
    values = [v for b in bars for v in (b.value, b.high) if v is not None]
    if not any(b.low is not None for b in bars) or not all(0.0 <= v <= 1.0 for v in values):
        return None
    return charts.bar_chart(g.title, bars, x_max=1.0)


def run_page(
    run: RunRecord,
    *,
    items: Callable[[], Sequence[ItemRecord]],
    usage: Callable[[], Mapping[str, Mapping[str, int]]],
    subjects: Mapping[str, Any],
    tasks: Sequence[Mapping[str, Any]],
    history: Callable[[], Sequence[RunRecord]],
    failures: Sequence[Mapping[str, Any]],
    others: Sequence[Mapping[str, Any]] = (),
    excluded: Callable[[], Collection[str]] = frozenset,
    verdict: str | None = None,
) -> RunPage:
    """The run page's data. `items` and `usage` are read only for a run still going (its
    summary is computed from the items recorded so far); `history` (earlier completed runs of
    the suite) and `excluded` (those of them that failed the gate, not accepted) only for a
    completed run (the gate's rolling baseline, as `memgauge gate` takes it); `verdict`: what
    `memgauge gate` recorded for the run, shown beside."""
    stale = stale_reason(run)
    live = run.status in LIVE and stale is None
    summary = run.summary
    if summary is None or live:
        summary = interim_summary(run, items(), usage())
    names, grid = _grid(summary)
    gate = None
    # an optimization's candidates share one suite name but not their items (tuning and
    # held-out splits, of every study of the suite): their study compares them, not a gate
    if run.status == "completed" and run.summary is not None and run.kind != "optimize":
        earlier = [r for r in history() if r.created_at < run.created_at]
        gate = evaluate_gate(run, earlier, GateConfig(), kinds_of(run), excluded())
        gate = with_unended(gate, others)  # as `memgauge gate` warns
    page = RunPage(
        run=run,
        summary=summary,
        live=live,
        stale=stale,
        subjects=names or list(subjects),
        grid=grid,
        charts=_grid_charts(names, grid),
        gate=gate,
        usage=_usage(summary),
        provenance=_flat(run.provenance),
        specs={
            name: yaml.safe_dump(spec, sort_keys=True, allow_unicode=True).strip()
            for name, spec in subjects.items()
        },
        tasks=[dict(t) for t in tasks],
        failures=[dict(f) for f in failures],
        others=[dict(o) for o in others],
        conventions=conventions_lines(summary),
        verdict=verdict,
    )
    page.sections = sections(summary)
    return page


#: the fields of an items-table row that are its item record's own, as recorded
_AS_RECORDED = [
    f.name for f in fields(ItemRow) if f.name not in ("n_failures", "scores", "baseline")
]


def item_row(it: ItemRecord) -> ItemRow:
    """An item record as a row of the items table: its failures counted, its scores listed."""
    as_recorded = {name: getattr(it, name) for name in _AS_RECORDED}
    return ItemRow(**as_recorded, n_failures=len(it.failures), scores=list(it.scores))


def hit_rows(
    it: ItemRecord, rel_threshold: int = DEFAULT_REL_THRESHOLD
) -> list[dict[str, Any]] | None:
    """A retrieval item's ranked hits with their grades (`expected`: id -> grade), channels
    and scores; None for an item that is not a retrieval one."""
    hits = hits_of(it.output)
    grades = it.expected if isinstance(it.expected, Mapping) else None
    if hits is None or grades is None:
        return None
    rows = []
    for rank, h in enumerate(hits, 1):
        hid = str(h.get("id"))
        grade = grades.get(hid)
        rows.append(
            {
                "rank": h.get("rank", rank),
                "id": hid,
                "text": h.get("text"),
                "score": h.get("score"),
                "grade": grade,
                "relevant": isinstance(grade, int) and grade >= rel_threshold,
                "channels": hit_channels(h),
            }
        )
    return rows


def judge_fields(s: ScoreRecord) -> dict[str, Any]:
    """What a judge's verdict recorded beside its score: template hash, parse route, model,
    the panel's votes, the raw reply (each only when present)."""
    d = s.detail
    keys = ("judge", "model", "template", "template_version", "template_hash", "route")
    out: dict[str, Any] = {key: d[key] for key in keys if d.get(key) is not None}
    raw = s.raw_reply if s.raw_reply is not None else d.get("raw_reply")
    if raw is not None:
        out["raw_reply"] = raw if isinstance(raw, str) else json.dumps(raw, indent=2)
    if isinstance(d.get("votes"), list):
        out["votes"] = d["votes"]
    return out


def other_detail(s: ScoreRecord) -> list[tuple[str, str]]:
    """The rest of a verdict's detail, as rows (none when nothing is left: not a row `{}`)."""
    skip = {"judge", "model", "template", "template_version", "template_hash", "route"}
    skip |= {"raw_reply", "votes"}
    rest = {k: v for k, v in s.detail.items() if k not in skip}
    return _flat(rest) if rest else []
