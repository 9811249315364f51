"""Server-side SVG charts: every text escaped, and every text laid out inside its <svg> by the
estimate the layout uses (the browser test measures the real boxes)."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from itertools import pairwise

from memgauge.view.charts import Bar, Line, bar_chart, line_chart, text_width

NS = "{http://www.w3.org/2000/svg}"


def _texts_inside(svg: str) -> None:
    root = ET.fromstring(svg)
    width = float(root.get("width", "0"))
    height = float(root.get("height", "0"))
    for t in root.iter(f"{NS}text"):
        x, y = float(t.get("x", "0")), float(t.get("y", "0"))
        w = text_width(t.text or "")
        anchor = t.get("text-anchor", "start")
        left = x - (w if anchor == "end" else w / 2 if anchor == "middle" else 0)
        assert left >= 0, (t.text, left)
        assert left + w <= width, (t.text, left, w, width)
        assert y - 11 >= 0, (t.text, y)
        assert y + 3 <= height, (t.text, y, height)


def test_bar_labels_and_values_fit_and_are_escaped() -> None:
    long = "<script>alert(1)</script> a very long subject name " * 4
    svg = bar_chart(
        "latency",
        [
            Bar(long, 0, 2854.6, 2000.0, 3000.0, "p50 2854.60 / p95 3000.00"),
            Bar("WWWWMMMM", 1, None),
            Bar("x", 2, 0.1, None, None, "0.100"),
        ],
    )
    assert "<script>" not in svg
    assert "&lt;script&gt;" in svg
    _texts_inside(str(svg))
    # the whole label stays readable on hover
    assert "a very long subject name" in re.sub(r"\s+", " ", str(svg))


def test_line_chart_text_fits_with_a_band_baseline_and_rules() -> None:
    svg = line_chart(
        "nDCG@10 of <b>suite</b>",
        [f"2026-01-{d:02d} 10:00" for d in range(1, 13)],
        [
            Line("value", [0.5 + d / 100 for d in range(12)], [0.4] * 12, [0.7] * 12),
            Line("baseline", [None, *[0.55] * 11], dashed=True),
        ],
        rules=[("treatment better (2.99)", 2.99), ("no difference (-1.61)", -1.61)],
    )
    assert "&lt;b&gt;" in svg
    assert "<polygon" in svg
    assert "stroke-dasharray" in svg
    _texts_inside(str(svg))


def test_a_run_s_time_is_drawn_where_its_label_has_room() -> None:
    """Two runs of one day on the trend page: each x label keeps its time (both read
    "2026-11-29 …" when labels were cut to 100 px whatever the room between them), and
    labels drawn side by side do not overlap."""
    root = ET.fromstring(
        str(
            line_chart(
                "icontains", ["2026-11-29 16:19", "2026-11-29 16:21"], [Line("v", [0.6, 0.6])]
            )
        )
    )
    ticks = [t.text for t in root.iter(f"{NS}text") if (t.text or "").startswith("2026")]
    assert ticks == ["2026-11-29 16:19", "2026-11-29 16:21"]
    many = [f"2026-01-{d:02d} 10:00" for d in range(1, 13)]
    svg = str(line_chart("nDCG@10", many, [Line("v", [0.5] * 12)]))
    _texts_inside(svg)
    spans = []
    for t in ET.fromstring(svg).iter(f"{NS}text"):
        if (t.text or "").startswith("2026"):
            x, w = float(t.get("x", "0")), text_width(t.text or "")
            anchor = t.get("text-anchor", "start")
            left = x - (w if anchor == "end" else w / 2 if anchor == "middle" else 0)
            spans.append((left, left + w))
    assert len(spans) > 2
    assert all(a[1] < b[0] for a, b in pairwise(spans)), spans


def test_a_single_point_and_empty_charts() -> None:
    _texts_inside(str(line_chart("one run", ["2026-01-01 10:00"], [Line("v", [0.3])])))
    assert str(bar_chart("none", [])) == ""
    assert str(line_chart("none", [], [])) == ""


def test_points_share_an_x_widen_the_scale_and_escape_their_titles() -> None:
    from memgauge.view.charts import Point
    from memgauge.view.optimization import best_so_far

    iterations = [
        {"step": 0, "score": 0.5},
        {"step": 1, "score": 0.4},
        {"step": 1, "score": 0.9},  # best-of-n: two candidates at step 1
        {"step": 2, "score": None},  # a failed candidate moves nothing
    ]
    line = best_so_far(iterations)
    assert line == [0.5, 0.9, 0.9]
    points = [
        Point(int(r["step"]), float(r["score"]), f"<i>{r['step']}</i>")
        for r in iterations
        if r["score"] is not None
    ]
    points.append(Point(2, 2.5, "far above the line"))
    svg = str(
        line_chart("score", ["0", "1", "2"], [Line("best", line, markers=False)], points=points)
    )
    root = ET.fromstring(svg)
    circles = list(root.iter(f"{NS}circle"))
    assert len(circles) == 4  # the points only: the line has no markers
    assert len({c.get("cx") for c in circles[1:3]}) == 1  # step 1's candidates share an x
    assert "&lt;i&gt;" in svg
    assert all(0 <= float(c.get("cy", "-1")) <= float(root.get("height", "0")) for c in circles)
    _texts_inside(svg)


def _y_ticks(svg: str) -> list[float]:
    root = ET.fromstring(svg)
    return [float(t.text or "") for t in root.iter(f"{NS}text") if t.get("class") == "y-tick"]


def test_a_0_1_measure_s_axis_stays_within_0_1() -> None:
    """Issue 29: a recall of 1.0 in every run was drawn on an axis from 0.42 to 1.58."""
    runs = ["2026-01-01 10:00", "2026-01-02 10:00"]
    flat = _y_ticks(str(line_chart("Recall@5", runs, [Line("value", [1.0, 1.0])])))
    assert (min(flat), max(flat)) == (0.0, 1.0)
    one = _y_ticks(str(line_chart("Recall@5", runs[:1], [Line("value", [1.0])])))
    assert (min(one), max(one)) == (0.0, 1.0)
    # a band up to 1.0 and a value near 0: the margin stops at 0 and 1
    banded = _y_ticks(
        str(line_chart("nDCG@10", runs, [Line("value", [0.02, 0.9], [0.0, 0.8], [0.1, 1.0])]))
    )
    assert (min(banded), max(banded)) == (0.0, 1.0)
    inside = _y_ticks(str(line_chart("nDCG@10", runs, [Line("value", [0.3, 0.6])])))
    assert 0.0 < min(inside) < 0.3
    assert 0.6 < max(inside) < 1.0
    # values past 0 or 1 keep their margin: a lift, an SPRT path
    lift = _y_ticks(str(line_chart("lift", runs, [Line("value", [-0.4, 1.4])])))
    assert min(lift) < -0.4
    assert max(lift) > 1.4


def test_scatter_dots_whiskers_and_names_fit_and_are_escaped() -> None:
    from memgauge.view.charts import Dot, scatter_chart

    long = "<script>alert(1)</script> a very long subject name"
    svg = scatter_chart(
        "Recall@10 against context tokens",
        "context tokens per query (median, o200k_base)",
        "Recall@10",
        [
            Dot("lexical", 480.0, 0.62, (410.0, 530.0), (0.51, 0.73)),
            Dot(long, 1400.0, 0.81, None, (0.72, 0.88)),
        ],
    )
    assert "<script>" not in svg
    assert "&lt;script&gt;" in svg
    _texts_inside(str(svg))
    root = ET.fromstring(str(svg))
    circles = list(root.iter(f"{NS}circle"))
    assert len(circles) == 2
    # the higher accuracy is drawn higher, the larger context further right
    (a, b) = circles
    assert float(b.get("cy", "0")) < float(a.get("cy", "0"))
    assert float(b.get("cx", "0")) > float(a.get("cx", "0"))
    whiskers = [ln for g in root.iter(f"{NS}g") for ln in g.iter(f"{NS}line")]
    assert len(whiskers) == 3  # x and y for the first, y only for the second
    ticks = [t.text for t in root.iter(f"{NS}text") if t.get("class") == "x-tick"]
    assert ticks[0] == "0"
    assert ticks[-1] == "1,512"  # 1,400 padded by 8% of the range
