"""One self-contained HTML report: inline CSS, inline SVG charts, no network to open it.

Every string from the data is escaped; the small inline script only filters the per-query table.
"""

from __future__ import annotations

from html import escape

from memgauge.aggregates.retrieval_result import MetricSummary, RetrievalEvalResult, SystemResult
from memgauge.report._fmt import (
    agent_names,
    fmt_agent,
    fmt_ci,
    fmt_num,
    fmt_p,
    fmt_summary,
    marks,
    ok_systems,
)

__all__ = ["render_html"]

PALETTE = ["#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#9c755f"]

CSS = """
body{font:14px/1.45 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:2rem auto;
max-width:1180px;padding:0 1rem;color:#1d2330;background:#fff}
h1{font-size:1.5rem;margin-bottom:.2rem}h2{font-size:1.15rem;margin-top:2rem;
border-bottom:1px solid #dde1e8;padding-bottom:.25rem}
.meta{color:#5b6475}table{border-collapse:collapse;margin:.6rem 0;font-variant-numeric:tabular-nums}
th,td{border:1px solid #dde1e8;padding:.3rem .55rem;text-align:left;vertical-align:top}
th{background:#f4f6f9}td.num{text-align:right;white-space:nowrap}
.up{color:#1a7f37;font-weight:600}.down{color:#c62828;font-weight:600}.na{color:#8a93a3}
.ok{color:#1a7f37}.warn{color:#b26a00}.hit{background:#e6f4ea}.chip{display:inline-block;
padding:0 .35rem;margin:0 .15rem .15rem 0;border-radius:3px;background:#eef1f5;font-size:12px}
.chip.hit{background:#c9ebd2}.legend span{display:inline-block;margin-right:1rem}
.legend i{display:inline-block;width:.8rem;height:.8rem;margin-right:.3rem;vertical-align:-1px}
input#filter{padding:.3rem .5rem;width:20rem;margin:.3rem 0}.notes li{color:#5b6475}
svg text{font:11px system-ui,sans-serif;fill:#1d2330}
"""

SCRIPT = """
document.getElementById('filter').addEventListener('input', function (e) {
  var q = e.target.value.toLowerCase();
  document.querySelectorAll('#perquery tbody tr').forEach(function (tr) {
    tr.style.display = tr.textContent.toLowerCase().indexOf(q) >= 0 ? '' : 'none';
  });
});
"""


def _e(text: object) -> str:
    return escape(str(text), quote=True)


def _legend(systems: list[SystemResult]) -> str:
    items = "".join(
        f'<span><i style="background:{PALETTE[i % len(PALETTE)]}"></i>{_e(s.name)}</span>'
        for i, s in enumerate(systems)
    )
    return f'<p class="legend">{items}</p>'


def _bars(
    groups: list[str],
    systems: list[SystemResult],
    value: dict[tuple[int, int], MetricSummary | None],
    title: str,
    y_max: float = 1.0,
) -> str:
    """Grouped bars with CI whiskers; a missing value draws 'n/a' instead of a bar."""
    if not groups or not systems:
        return ""
    n_sys = len(systems)
    bar_w = 18
    gap = 26
    group_w = n_sys * bar_w + gap
    left, top, height = 42, 22, 200
    width = left + group_w * len(groups) + 10
    total_h = top + height + 48
    parts = [
        f'<svg role="img" aria-label="{_e(title)}" width="{width}" height="{total_h}" '
        f'viewBox="0 0 {width} {total_h}" xmlns="http://www.w3.org/2000/svg">',
        f'<text x="{left}" y="14" font-weight="600">{_e(title)}</text>',
    ]
    for tick in range(6):
        v = y_max * tick / 5
        y = top + height - height * tick / 5
        parts.append(
            f'<line x1="{left}" x2="{width - 10}" y1="{y:.1f}" y2="{y:.1f}" stroke="#e5e8ee"/>'
            f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end">{v:.1f}</text>'
        )

    def ypos(v: float) -> float:
        return top + height - height * max(0.0, min(v, y_max)) / y_max

    for gi, g in enumerate(groups):
        x0 = left + gi * group_w + gap / 2
        for si, s in enumerate(systems):
            x = x0 + si * bar_w
            summ = value.get((gi, si))
            color = PALETTE[si % len(PALETTE)]
            if summ is None or summ.value is None:
                parts.append(
                    f'<text x="{x + bar_w / 2:.1f}" y="{top + height - 4}" text-anchor="middle" '
                    f'fill="#8a93a3" font-size="9">n/a</text>'
                )
                continue
            y = ypos(summ.value)
            tip = f"{s.name} · {g}: {fmt_summary(summ)} (n={summ.n_scored})"
            parts.append(
                f'<rect x="{x:.1f}" y="{y:.1f}" width="{bar_w - 3}" '
                f'height="{top + height - y:.1f}" fill="{color}"><title>{_e(tip)}</title></rect>'
            )
            if summ.ci_low is not None and summ.ci_high is not None:
                cx = x + (bar_w - 3) / 2
                y1, y2 = ypos(summ.ci_low), ypos(summ.ci_high)
                parts.append(
                    f'<path d="M{cx:.1f} {y1:.1f}V{y2:.1f}M{cx - 3:.1f} {y1:.1f}h6'
                    f'M{cx - 3:.1f} {y2:.1f}h6" stroke="#1d2330" stroke-width="1"/>'
                )
        label_x = x0 + n_sys * bar_w / 2
        parts.append(
            f'<text x="{label_x:.1f}" y="{top + height + 14}" text-anchor="end" '
            f'transform="rotate(-25 {label_x:.1f} {top + height + 14})">{_e(g)}</text>'
        )
    parts.append("</svg>")
    return "".join(parts)


def _latency_svg(systems: list[SystemResult]) -> str:
    rows = [(s, stage, v) for s in systems for stage, v in s.latency_ms.items()]
    if not rows:
        return ""
    hi = max(v.p95 for _, _, v in rows) or 1.0
    left, bar_h, width = 190, 16, 640
    h = 24 + len(rows) * (bar_h + 6) + 10
    parts = [
        f'<svg role="img" aria-label="latency" width="{width}" height="{h}" '
        f'viewBox="0 0 {width} {h}" xmlns="http://www.w3.org/2000/svg">',
        '<text x="0" y="14" font-weight="600">Search latency, ms (bar p50, line to p95)</text>',
    ]
    scale = (width - left - 70) / hi
    for i, (s, stage, v) in enumerate(rows):
        y = 24 + i * (bar_h + 6)
        color = PALETTE[systems.index(s) % len(PALETTE)]
        parts.append(
            f'<text x="{left - 6}" y="{y + 12}" text-anchor="end">{_e(s.name)} · {_e(stage)}</text>'
            f'<rect x="{left}" y="{y}" width="{max(v.p50 * scale, 1):.1f}" height="{bar_h}" '
            f'fill="{color}"/><line x1="{left + v.p50 * scale:.1f}" '
            f'x2="{left + v.p95 * scale:.1f}" y1="{y + bar_h / 2}" y2="{y + bar_h / 2}" '
            f'stroke="#1d2330"/><text x="{left + v.p95 * scale + 6:.1f}" y="{y + 12}">'
            f"{v.p50:.2f} / {v.p95:.2f}</text>"
        )
    parts.append("</svg>")
    return "".join(parts)


def _summary_table(result: RetrievalEvalResult, systems: list[SystemResult]) -> str:
    mk = marks(result)
    head = "".join(f"<th>{_e(m)}</th>" for m in result.settings.measures)
    rows = []
    for s in systems:
        cells = []
        for m in result.settings.measures:
            summ = s.metrics.get(m)
            cls = "num na" if summ is None or summ.value is None else "num"
            mark = mk.get((s.name, m))
            badge = ""
            if mark and mark.mark:
                kind = "up" if mark.arrow == "▲" else "down"
                badge = f' <span class="{kind}">{mark.arrow}{_e(mark.mark)}</span>'
            cells.append(f'<td class="{cls}">{_e(fmt_summary(summ))}{badge}</td>')
        rows.append(f"<tr><th>{_e(s.name)}</th>{''.join(cells)}</tr>")
    return f"<table><thead><tr><th>system</th>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"


def _comparisons(result: RetrievalEvalResult) -> str:
    if not result.comparisons:
        return ""
    rows = []
    for comp in result.comparisons:
        for mc in comp.metrics:
            delta = "n/a" if mc.delta is None else f"{mc.delta:+.3f}"
            rows.append(
                "<tr>"
                + "".join(
                    f'<td class="{c}">{_e(v)}</td>'
                    for c, v in (
                        ("", f"{comp.candidate} vs {comp.baseline}"),
                        ("", mc.measure),
                        ("num", fmt_num(mc.mean_a)),
                        ("num", fmt_num(mc.mean_b)),
                        ("num", delta),
                        ("num", fmt_ci(mc.ci_low, mc.ci_high)),
                        ("num", fmt_p(mc.p_value)),
                        ("num", fmt_p(mc.p_holm)),
                        ("num", fmt_num(mc.effect_size, 2)),
                        ("num", mc.n),
                        ("", mc.mark),
                    )
                )
                + "</tr>"
            )
    head = "".join(
        f"<th>{h}</th>"
        for h in ("pair", "measure", "a", "b", "Δ", "Δ 95% CI", "p", "p Holm", "d_z", "n", "")
    )
    return (
        "<h2>Paired comparisons</h2><p class='meta'>Primary test: paired randomization (sign "
        "flip); t-test and Wilcoxon p in result.json. Holm correction across measures.</p>"
        f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"
    )


def _agent_table(result: RetrievalEvalResult, systems: list[SystemResult]) -> str:
    names = agent_names(result)
    if not names:
        return ""
    head = "".join(f"<th>{_e(s.name)}</th>" for s in systems)
    rows = []
    for n in names:
        first = next((s.agent_metrics[n] for s in systems if n in s.agent_metrics), None)
        cells = []
        for s in systems:
            a = s.agent_metrics.get(n)
            cls = "num"
            if a is None or a.value is None:
                cls += " na"
            elif a.meets_target is not None:
                cls += " ok" if a.meets_target else " warn"
            title = f' title="{_e(a.note)}"' if a is not None and a.note else ""
            cells.append(f'<td class="{cls}"{title}>{_e(fmt_agent(a))}</td>')
        target = _e(first.target or "") if first else ""
        rows.append(f"<tr><th>{_e(n)}</th><td>{target}</td>{''.join(cells)}</tr>")
    return (
        "<h2>Agent-memory metrics</h2><p class='meta'>Seed 002 section 3. n/a means no "
        "applicable data (the count says how much there was); hover a cell for how it was "
        f"computed.</p><table><thead><tr><th>metric</th><th>target</th>{head}</tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table>"
    )


def _per_query(result: RetrievalEvalResult, systems: list[SystemResult]) -> str:
    primary = result.settings.measures[0] if result.settings.measures else None
    if primary is None or not systems:
        return ""
    by_sys = [{q.query_id: q for q in s.per_query} for s in systems]
    order = list(dict.fromkeys(q.query_id for s in systems for q in s.per_query))
    rows = []
    for qid in order:
        base = next(m[qid] for m in by_sys if qid in m)
        rel = set(base.relevant)
        cells = []
        for m in by_sys:
            q = m.get(qid)
            if q is None:
                cells.append('<td class="na">-</td>')
                continue
            if q.error:
                cells.append(f'<td class="warn">failed: {_e(q.error)}</td>')
                continue
            v = q.metrics.get(primary)
            chips = "".join(
                f'<span class="chip{" hit" if h in rel else ""}">{_e(h)}</span>' for h in q.hits[:5]
            )
            cells.append(f"<td><b>{_e(fmt_num(v))}</b><br>{chips}</td>")
        rows.append(
            f"<tr><td>{_e(qid)}</td><td>{_e(base.text)}</td><td>{_e(base.category or '')}</td>"
            f"<td>{_e(base.intent or '')}</td><td>{_e(', '.join(base.relevant))}</td>"
            f"{''.join(cells)}</tr>"
        )
    head = "".join(f"<th>{_e(s.name)}: {_e(primary)}, top 5</th>" for s in systems)
    return (
        f"<h2>Per query</h2><input id='filter' placeholder='filter queries, ids, categories'>"
        f"<p class='meta'>Green ids are judged relevant (grade >= "
        f"{result.settings.rel_threshold}).</p><table id='perquery'><thead><tr><th>id</th>"
        f"<th>query</th><th>category</th><th>intent</th><th>relevant</th>{head}</tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table>"
    )


def render_html(result: RetrievalEvalResult) -> str:
    """The report as one HTML document."""
    st = result.settings
    ds = result.dataset
    systems = ok_systems(result)
    measures = st.measures
    metric_chart = _bars(
        measures,
        systems,
        {
            (gi, si): s.metrics.get(m)
            for gi, m in enumerate(measures)
            for si, s in enumerate(systems)
        },
        f"Metrics with {st.confidence:.0%} bootstrap CIs",
    )
    sections = []
    primary = measures[0] if measures else None
    for dim in ("category", "intent"):
        groups = list(dict.fromkeys(g for s in systems for g in s.breakdown.get(dim, {})))
        if primary and groups:
            chart = _bars(
                groups,
                systems,
                {
                    (gi, si): s.breakdown.get(dim, {}).get(g, {}).get(primary)
                    for gi, g in enumerate(groups)
                    for si, s in enumerate(systems)
                },
                f"{primary} by {dim}",
            )
            sections.append(f"<h2>{_e(primary)} by {dim}</h2>{chart}")
    unavailable = "".join(
        f"<li><b>{_e(s.name)}</b>: {_e(s.status)} ({_e(s.reason or '')})</li>"
        for s in result.systems
        if s.status != "ok"
    )
    notes = "".join(
        f"<li><b>{_e(s.name)}</b>: "
        + _e(", ".join(f"{k} {v}" for k, v in s.counts.items()))
        + "".join(f"<br>{_e(n)}" for n in s.notes)
        + "</li>"
        for s in systems
    )
    mark_note = (
        f"<p class='meta'>Marks compare with <b>{_e(systems[0].name)}</b>: ▲/▼ direction, "
        f"* p &lt; {st.alpha}, ** p &lt; {st.alpha / 5:g} (Holm-corrected).</p>"
        if len(systems) > 1
        else ""
    )
    latency = _latency_svg(systems)
    body = (
        f"<h1>Retrieval evaluation: {_e(ds.name)}</h1>"
        f"<p class='meta'>run {_e(result.run_id)} · {result.created_at:%Y-%m-%d %H:%M} UTC · "
        f"memgauge {_e(result.memgauge_version)} · {ds.n_memories} memories, {ds.n_queries} "
        f"queries, {ds.n_judgments} judgments · relevant = grade &gt;= {st.rel_threshold} · "
        f"nDCG gain {_e(st.gain)} · depth {st.k}"
        + (f" · protocol {_e(ds.protocol)}" if ds.protocol else "")
        + "</p>"
        f"{_legend(systems)}<h2>Summary</h2>{_summary_table(result, systems)}{mark_note}"
        + (f"<ul>{unavailable}</ul>" if unavailable else "")
        + metric_chart
        + _comparisons(result)
        + _agent_table(result, systems)
        + "".join(sections)
        + (f"<h2>Latency</h2>{latency}" if latency else "")
        + f"<h2>Accounting</h2><ul class='notes'>{notes}</ul>"
        + _per_query(result, systems)
    )
    return (
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>"
        "<meta name='viewport' content='width=device-width, initial-scale=1'>"
        f"<title>memgauge: {_e(ds.name)}</title><style>{CSS}</style></head>"
        f"<body>{body}<script>{SCRIPT}</script></body></html>\n"
    )
