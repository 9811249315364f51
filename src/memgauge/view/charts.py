"""SVG charts made on the server: bars with CI whiskers, lines with CI bands and a baseline,
dots with CI whiskers on numeric axes (a scatter),
the SPRT's path between its bounds. No plotting library, no script.

Every text is escaped, and every text is laid out inside its `<svg>`: a label gets a column
as wide as the longest label needs, measured with a conservative per-character width (`width`)
and cut with an ellipsis past a limit (the whole text stays in a `<title>`), and a value is
written in a column reserved for it on the right, never past the end of its bar. A chart is
as wide as its content and shrinks with the page (`max-width: 100%`), text and all. A line
chart's y axis stays within 0-1 where its values do (its tick labels are `text.y-tick`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from markupsafe import Markup, escape

__all__ = [
    "PALETTE",
    "Bar",
    "Dot",
    "Line",
    "Point",
    "bar_chart",
    "line_chart",
    "scatter_chart",
    "text_width",
]

PALETTE = ["#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#9c755f"]
FONT = 11  # px, every chart's text
_NARROW = set("ijlt.,:;'!|()[]{} `")
_WIDE = set("MWmw@%&")


def text_width(text: str, size: float = FONT) -> float:
    """An upper estimate of `text`'s width in px at `size` (wider than DejaVu Sans, Liberation
    and the usual system sans-serif fonts measure it: the layout never relies on a font)."""
    em = 0.0
    for ch in text:
        if ch in _NARROW:
            em += 0.4
        elif ch in _WIDE or ord(ch) > 0x2E80:  # wide Latin letters, CJK
            em += 1.05
        elif ch.isupper() or ch.isdigit():
            em += 0.75
        else:
            em += 0.65
    return em * size


def _fit(text: str, budget: float, size: float = FONT) -> str:
    """`text`, cut with an ellipsis to fit `budget` px."""
    if text_width(text, size) <= budget:
        return text
    while text and text_width(text + "…", size) > budget:
        text = text[:-1]
    return text + "…"


def _t(x: float, y: float, text: str, *, anchor: str = "start", extra: str = "") -> str:
    return f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}"{extra}>{escape(text)}</text>'


def _svg(width: float, height: float, label: str, body: list[str]) -> Markup:
    return Markup(
        f'<svg class="chart" role="img" aria-label="{escape(label)}" width="{width:.0f}"'
        f' height="{height:.0f}" viewBox="0 0 {width:.0f} {height:.0f}"'
        f' xmlns="http://www.w3.org/2000/svg" font-size="{FONT}">' + "".join(body) + "</svg>"
    )


@dataclass(frozen=True)
class Bar:
    """One bar: its label, series (colour), value and CI (None: n/a), and the text beside it."""

    label: str
    series: int
    value: float | None
    low: float | None = None
    high: float | None = None
    note: str = ""


def bar_chart(
    title: str, bars: Sequence[Bar], *, x_max: float | None = None, max_label: float = 260
) -> Markup:
    """Horizontal bars, one row each, with CI whiskers; an n/a value is written, not drawn.
    `x_max`: the scale's end (default: the largest value or CI bound)."""
    if not bars:
        return Markup("")
    hi = x_max or max([b.high if b.high is not None else (b.value or 0.0) for b in bars] + [1e-9])
    label_w = min(max(text_width(b.label) for b in bars), max_label) + 8
    note_w = max(text_width(b.note or "n/a") for b in bars) + 10
    plot_w = 360.0
    row, top = 18, 24
    width = label_w + plot_w + note_w + 4
    height = top + row * len(bars) + 8
    body = [_t(2, 14, _fit(title, width - 4), extra=' font-weight="600"')]
    for i, b in enumerate(bars):
        y = top + i * row
        body.append(
            f"<g><title>{escape(b.label)}: {escape(b.note or 'n/a')}</title>"
            + _t(label_w - 6, y + 12, _fit(b.label, label_w - 8), anchor="end")
        )
        x0 = label_w
        if b.value is None:
            body.append(_t(x0 + 2, y + 12, "n/a", extra=' fill="#8a93a3"') + "</g>")
            continue
        w = max(plot_w * max(0.0, min(b.value, hi)) / hi, 1.0)
        color = PALETTE[b.series % len(PALETTE)]
        body.append(f'<rect x="{x0:.1f}" y="{y + 3}" width="{w:.1f}" height="12" fill="{color}"/>')
        if b.low is not None and b.high is not None:
            lo_x = x0 + plot_w * max(0.0, min(b.low, hi)) / hi
            hi_x = x0 + plot_w * max(0.0, min(b.high, hi)) / hi
            body.append(
                f'<path d="M{lo_x:.1f} {y + 9}H{hi_x:.1f}M{lo_x:.1f} {y + 5}v8M{hi_x:.1f}'
                f' {y + 5}v8" stroke="#1d2330" stroke-width="1" fill="none"/>'
            )
        body.append(_t(label_w + plot_w + 6, y + 12, b.note) + "</g>")
    return _svg(width, height, title, body)


@dataclass(frozen=True)
class Line:
    """One series of a line chart: a value per x (None: a gap), an optional band, a style."""

    name: str
    values: Sequence[float | None]
    low: Sequence[float | None] | None = None
    high: Sequence[float | None] | None = None
    dashed: bool = False
    color: str = PALETTE[0]
    markers: bool | None = None  # a dot at each value; default: unless dashed


@dataclass(frozen=True)
class Point:
    """A free dot on a line chart: at x position `x` (several may share one), its value,
    the text of its tooltip, and its colour."""

    x: int
    value: float
    title: str
    color: str = PALETTE[0]


def _scale(
    lines: Sequence[Line], rules: Sequence[tuple[str, float]], points: Sequence[Point] = ()
) -> tuple[float, float]:
    vals = [
        v
        for ln in lines
        for seq in (ln.values, ln.low, ln.high)
        if seq
        for v in seq
        if v is not None
    ]
    vals += [v for _, v in rules] + [p.value for p in points]
    if not vals:
        return 0.0, 1.0
    lo, hi = min(vals), max(vals)
    if hi - lo < 1e-9:
        # one value: a share's whole range, else a unit around it
        if 0.0 <= lo <= 1.0:
            return 0.0, 1.0
        y_lo, y_hi = lo - 0.5, hi + 0.5
    else:
        pad = (hi - lo) * 0.08
        y_lo, y_hi = lo - pad, hi + pad
    # the margin never passes 0 or 1 where the values do not: a 0-1 measure's axis stays in
    # 0-1 (issue 29: a recall of 1.0 was drawn on an axis up to 1.58), a non-negative one
    # starts at 0 at the lowest
    if lo >= 0.0:
        y_lo = max(y_lo, 0.0)
    for bound in (0.0, 1.0):
        if hi <= bound:
            y_hi = min(y_hi, bound)
    return y_lo, y_hi


def line_chart(
    title: str,
    x_labels: Sequence[str],
    lines: Sequence[Line],
    *,
    rules: Sequence[tuple[str, float]] = (),
    points: Sequence[Point] = (),
    width: float = 720,
    height: float = 240,
) -> Markup:
    """Lines over x positions (runs, iterations, pairs), with shaded bands where a series has
    bounds, dashed series (a baseline), labelled horizontal rules (a bound, a target), and
    free `points` (every candidate of an optimization step)."""
    if not x_labels:
        return Markup("")
    y_lo, y_hi = _scale(lines, rules, points)
    tick_texts = [f"{y_lo + (y_hi - y_lo) * k / 4:.3g}" for k in range(5)]
    left = max(text_width(t) for t in tick_texts) + 10
    rule_w = max([text_width(name) for name, _ in rules] + [0]) + 8
    legend_h = 16
    top, bottom = 24 + legend_h, 30
    plot_w = width - left - rule_w - 8
    plot_h = height - top - bottom
    n = len(x_labels)

    def x(i: int) -> float:
        return left + (plot_w * i / (n - 1) if n > 1 else plot_w / 2)

    def y(v: float) -> float:
        return top + plot_h - plot_h * (v - y_lo) / (y_hi - y_lo)

    body = [_t(2, 14, _fit(title, width - 4), extra=' font-weight="600"')]
    lx = 2.0
    for ln in lines:
        name = _fit(ln.name, 200)
        dash = ' stroke-dasharray="5 3"' if ln.dashed else ""
        if lx + 22 + text_width(name) < width:
            body.append(
                f'<line x1="{lx:.1f}" x2="{lx + 16:.1f}" y1="{top - legend_h + 2}"'
                f' y2="{top - legend_h + 2}" stroke="{ln.color}" stroke-width="2"{dash}/>'
                + _t(lx + 20, top - legend_h + 6, name)
            )
        lx += 30 + text_width(name)
    for k, t in enumerate(tick_texts):
        yy = y(y_lo + (y_hi - y_lo) * k / 4)
        body.append(
            f'<line x1="{left:.1f}" x2="{left + plot_w:.1f}" y1="{yy:.1f}" y2="{yy:.1f}"'
            ' stroke="#e5e8ee"/>' + _t(left - 5, yy + 4, t, anchor="end", extra=' class="y-tick"')
        )
    for ln in lines:
        if ln.low is not None and ln.high is not None:
            pts = [(i, lo, hi) for i, (lo, hi) in enumerate(zip(ln.low, ln.high, strict=True))]
            seg = [(i, lo, hi) for i, lo, hi in pts if lo is not None and hi is not None]
            if seg:
                upper = " ".join(f"{x(i):.1f},{y(hi):.1f}" for i, _, hi in seg)
                lower = " ".join(f"{x(i):.1f},{y(lo):.1f}" for i, lo, _ in reversed(seg))
                body.append(
                    f'<polygon points="{upper} {lower}" fill="{ln.color}" fill-opacity="0.15"/>'
                )
        dash = ' stroke-dasharray="5 3"' if ln.dashed else ""
        pts2 = [(i, v) for i, v in enumerate(ln.values) if v is not None]
        if len(pts2) > 1:
            d = " ".join(f"{x(i):.1f},{y(v):.1f}" for i, v in pts2)
            body.append(
                f'<polyline points="{d}" fill="none" stroke="{ln.color}" stroke-width="2"{dash}/>'
            )
        if ln.markers if ln.markers is not None else not ln.dashed:
            for i, v in pts2:
                body.append(
                    f'<circle cx="{x(i):.1f}" cy="{y(v):.1f}" r="3" fill="{ln.color}">'
                    f"<title>{escape(x_labels[i])}: {v:.4g}</title></circle>"
                )
    for p in points:
        body.append(
            f'<circle cx="{x(p.x):.1f}" cy="{y(p.value):.1f}" r="4" fill="{p.color}"'
            f' fill-opacity="0.75"><title>{escape(p.title)}</title></circle>'
        )
    for name, v in rules:
        yy = y(v)
        body.append(
            f'<line x1="{left:.1f}" x2="{left + plot_w:.1f}" y1="{yy:.1f}" y2="{yy:.1f}"'
            ' stroke="#c62828" stroke-dasharray="2 2"/>'
            + _t(left + plot_w + 4, yy + 4, _fit(name, rule_w - 6))
        )
    # x labels: the first and the last, and as many between as fit whole (a label of up to
    # 260 px; a first or last one is anchored at its end, so it reaches into one gap only):
    # two runs of one day keep the time that tells them apart, and no two labels overlap
    labels = [_fit(t, 260) for t in x_labels]
    need = 1.5 * max(text_width(t) for t in labels) + 12
    per = plot_w / (n - 1) if n > 1 else plot_w
    step = max(1, math.ceil(need / per))
    shown = list(range(0, n, step))
    if shown[-1] != n - 1:
        if len(shown) > 1 and (n - 1 - shown[-1]) * per < need:
            shown.pop()
        shown.append(n - 1)
    for i in shown:
        label = labels[i]
        anchor = "start" if i == 0 and n > 1 else "end" if i == n - 1 and n > 1 else "middle"
        if n == 1:
            anchor = "middle"
        body.append(_t(x(i), top + plot_h + 16, label, anchor=anchor))
    return _svg(width, height, title, body)


@dataclass(frozen=True)
class Dot:
    """One dot of a scatter: its name (the legend's and the tooltip's), x and y, and their
    95% intervals as whiskers (None: none computed)."""

    name: str
    x: float
    y: float
    x_ci: tuple[float, float] | None = None
    y_ci: tuple[float, float] | None = None
    color: str = PALETTE[0]


def _range(values: Sequence[float]) -> tuple[float, float]:
    """An axis over `values`, padded, from 0 where they are all non-negative (a cost axis)."""
    lo, hi = min(values), max(values)
    if lo >= 0.0:
        lo = 0.0
    if hi - lo < 1e-9:
        return lo - 0.5, hi + 0.5
    return lo, hi + (hi - lo) * 0.08


def _tick(v: float) -> str:
    """An x tick: whole numbers past 10 (tokens, ms), with thousands separated."""
    return f"{v:,.0f}" if abs(v) >= 10 else f"{v:.3g}"


def scatter_chart(
    title: str,
    x_label: str,
    y_label: str,
    dots: Sequence[Dot],
    *,
    width: float = 560,
    height: float = 300,
) -> Markup:
    """Dots on numeric axes (accuracy against context tokens or latency, one per subject),
    with CI whiskers both ways, each dot named beside it and in its tooltip."""
    if not dots:
        return Markup("")
    xs = [v for d in dots for v in (d.x, *(d.x_ci or ()))]
    ys = [v for d in dots for v in (d.y, *(d.y_ci or ()))]
    x_lo, x_hi = _range(xs)
    y_lo, y_hi = _scale([Line("", ys)], [])
    y_ticks = [f"{y_lo + (y_hi - y_lo) * k / 4:.3g}" for k in range(5)]
    left = max(text_width(t) for t in y_ticks) + 10
    top, bottom, right = 24, 44, 12 + max(min(text_width(d.name), 120) for d in dots)
    plot_w, plot_h = width - left - right, height - top - bottom

    def px(v: float) -> float:
        return left + plot_w * (v - x_lo) / (x_hi - x_lo)

    def py(v: float) -> float:
        return top + plot_h - plot_h * (v - y_lo) / (y_hi - y_lo)

    body = [_t(2, 14, _fit(title, width - 4), extra=' font-weight="600"')]
    for k, t in enumerate(y_ticks):
        yy = py(y_lo + (y_hi - y_lo) * k / 4)
        body.append(
            f'<line x1="{left:.1f}" x2="{left + plot_w:.1f}" y1="{yy:.1f}" y2="{yy:.1f}"'
            ' stroke="#e5e8ee"/>' + _t(left - 5, yy + 4, t, anchor="end", extra=' class="y-tick"')
        )
    for k in range(5):
        xv = x_lo + (x_hi - x_lo) * k / 4
        anchor = "start" if k == 0 else "end" if k == 4 else "middle"
        body.append(
            _t(px(xv), top + plot_h + 14, _tick(xv), anchor=anchor, extra=' class="x-tick"')
        )
    body.append(_t(left + plot_w / 2, height - 6, _fit(x_label, plot_w), anchor="middle"))
    for d in dots:
        cx, cy = px(d.x), py(d.y)
        whiskers = ""
        if d.x_ci is not None:
            whiskers += (
                f'<line x1="{px(d.x_ci[0]):.1f}" x2="{px(d.x_ci[1]):.1f}" y1="{cy:.1f}"'
                f' y2="{cy:.1f}" stroke="{d.color}" stroke-width="1.5"/>'
            )
        if d.y_ci is not None:
            whiskers += (
                f'<line x1="{cx:.1f}" x2="{cx:.1f}" y1="{py(d.y_ci[0]):.1f}"'
                f' y2="{py(d.y_ci[1]):.1f}" stroke="{d.color}" stroke-width="1.5"/>'
            )
        tip = f"{d.name}: {y_label} {d.y:.4g} at {x_label} {d.x:.4g}"
        body.append(
            f'<g class="dot">{whiskers}<circle cx="{cx:.1f}" cy="{cy:.1f}" r="4.5"'
            f' fill="{d.color}"><title>{escape(tip)}</title></circle>'
            + _t(cx + 7, cy - 6, _fit(d.name, 120))
            + "</g>"
        )
    return _svg(width, height, title, body)
