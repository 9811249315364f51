"""Server-side SVG charts: every text escaped, and every text laid out inside its <svg> by the
estimate the layout uses (the browser test measures the real boxes)."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

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


def test_a_single_point_and_empty_charts() -> None:
    _texts_inside(str(line_chart("one run", ["2026-01-01 10:00"], [Line("v", [0.3])])))
    assert str(bar_chart("none", [])) == ""
    assert str(line_chart("none", [], [])) == ""
