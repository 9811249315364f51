"""The Markdown summary: what a pull-request comment or a notebook cell needs.

Every text from the data (dataset, system, measure, metric, category and stage names, reasons,
notes) goes through `escape.md_text`, every table cell included: a name cannot bring raw HTML,
a link, or a `|` or line break that reshapes a table."""

from __future__ import annotations

from memgauge.aggregates.retrieval_result import MetricComparison, RetrievalEvalResult
from memgauge.report.agent_notes import DEFINITIONS_HEADING, definitions, na_reasons
from memgauge.report.escape import md_text
from memgauge.report.fmt import (
    agent_names,
    category_marks,
    fmt_agent,
    fmt_ci,
    fmt_num,
    fmt_p,
    fmt_pct,
    fmt_summary,
    marks,
    ok_systems,
)

__all__ = ["render_markdown"]


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    lines = ["| " + " | ".join(md_text(h) for h in header) + " |"]
    lines.append("|" + "|".join("---" for _ in header) + "|")
    lines.extend("| " + " | ".join(md_text(c) for c in row) + " |" for row in rows)
    return lines


def _category_comparisons(
    result: RetrievalEvalResult, measure: str, baseline: str | None
) -> list[str]:
    """The paired comparisons of `measure` within each category, as the overall table."""
    rows = []
    for comp in result.comparisons:
        for group, metrics in comp.by_category.items():
            for mc in metrics:
                if mc.measure != measure:
                    continue
                rows.append(_comparison_row(f"{comp.candidate} vs {comp.baseline}", group, mc))
    note = (
        f"Paired by category against {md_text(baseline)}: the same tests on each category's "
        "queries, Holm-corrected across measures within the category (every measure is in "
        "result.json)."
    )
    return [note, "", *_table(["pair", "category", *_COMPARISON_COLUMNS], rows)]


_COMPARISON_COLUMNS = ["a", "b", "Δ", "Δ CI", "p", "p (Holm)", "d_z", "n", ""]


def _comparison_row(pair: str, label: str, mc: MetricComparison) -> list[str]:
    """One paired comparison as a table row: pair, measure or category, then
    `_COMPARISON_COLUMNS`."""
    return [
        pair,
        label,
        fmt_num(mc.mean_a),
        fmt_num(mc.mean_b),
        ("n/a" if mc.delta is None else f"{mc.delta:+.3f}"),
        fmt_ci(mc.ci_low, mc.ci_high),
        fmt_p(mc.p_value),
        fmt_p(mc.p_holm),
        fmt_num(mc.effect_size, 2),
        str(mc.n),
        mc.mark,
    ]


def render_markdown(result: RetrievalEvalResult) -> str:
    """The whole result as Markdown: summary table, comparisons, agent metrics, breakdowns."""
    st = result.settings
    ds = result.dataset
    systems = ok_systems(result)
    mk = marks(result)
    out = [
        f"# Retrieval evaluation: {md_text(ds.name)}",
        "",
        f"run `{result.run_id}` · {result.created_at:%Y-%m-%d %H:%M} UTC · memgauge "
        f"{result.memgauge_version}",
        "",
        f"{ds.n_memories} memories, {ds.n_queries} queries, {ds.n_judgments} judgments. "
        f"Conventions: {st.conventions}; search depth {st.k}; "
        f"{st.confidence:.0%} bootstrap CIs ({st.n_resamples} resamples, seed {st.seed}).",
        "",
        *([f"Dataset protocol: {ds.protocol}.", ""] if ds.protocol else []),
        "## Summary",
        "",
    ]
    baseline = systems[0].name if systems else None
    rows = []
    for s in systems:
        row = [s.name]
        for m in st.measures:
            cell = fmt_summary(s.metrics.get(m))
            mark = mk.get((s.name, m))
            if mark and mark.mark:
                cell += f" {mark.arrow}{mark.mark}"
            row.append(cell)
        rows.append(row)
    out += _table(["system", *st.measures], rows)
    if len(systems) > 1:
        out += [
            "",
            f"Marks compare each system with {md_text(baseline)} (paired randomization test, Holm-"
            f"corrected across measures): `*` p < {st.alpha}, `**` p < {st.alpha / 5:g}.",
        ]
    unavailable = [s for s in result.systems if s.status != "ok"]
    if unavailable:
        out += [""] + [
            f"- **{md_text(s.name)}**: {md_text(s.status)} ({md_text(s.reason)})"
            for s in unavailable
        ]

    if result.comparisons:
        out += ["", "## Paired comparisons", ""]
        rows = []
        for comp in result.comparisons:
            for mc in comp.metrics:
                rows.append(_comparison_row(f"{comp.candidate} vs {comp.baseline}", mc.measure, mc))
        out += _table(["pair", "measure", *_COMPARISON_COLUMNS], rows)

    names = agent_names(result)
    if names:
        out += ["", "## Agent-memory metrics", ""]
        rows = []
        for n in names:
            first = next((s.agent_metrics[n] for s in systems if n in s.agent_metrics), None)
            target = first.target if first and first.target else ""
            rows.append([n, target, *(fmt_agent(s.agent_metrics.get(n)) for s in systems)])
        out += _table(["metric", "target", *(s.name for s in systems)], rows)
        reasons = na_reasons(names, systems)
        if reasons:
            out += ["", *(f"- {md_text(line)}" for line in reasons)]
        out += ["", f"{DEFINITIONS_HEADING}:", ""]
        out += [f"- **{md_text(label)}**: {md_text(text)}" for label, text in definitions(names)]

    primary = st.measures[0] if st.measures else None
    cmk = category_marks(result)
    for dim in ("category", "intent"):
        groups: dict[str, None] = {}
        for s in systems:
            groups.update(dict.fromkeys(s.breakdown.get(dim, {})))
        if not primary or not groups:
            continue
        out += ["", f"## {md_text(primary)} by {dim}", ""]
        rows = []
        for g in groups:
            cells = []
            n_max = 0
            for s in systems:
                summ = s.breakdown.get(dim, {}).get(g, {}).get(primary)
                cell = fmt_summary(summ)
                mark = cmk.get((s.name, g, primary)) if dim == "category" else None
                if mark and mark.mark:
                    cell += f" {mark.arrow}{mark.mark}"
                cells.append(cell)
                n_max = max(n_max, summ.n_scored if summ else 0)
            rows.append([g, str(n_max), *cells])
        out += _table([dim, "n", *(s.name for s in systems)], rows)
        if dim == "category" and cmk:
            out += ["", *_category_comparisons(result, primary, baseline)]

    expanded = [s for s in systems if s.expansion is not None]
    if expanded:
        out += ["", "## Query-expansion impact", ""]
        out.append(
            "Each system's ranking before query expansion (a) against after (b), paired on the "
            "queries with both (randomization test, Holm-corrected across measures)."
        )
        rows = []
        for s in expanded:
            assert s.expansion is not None
            for mc in s.expansion.metrics:
                rows.append(_comparison_row(s.name, mc.measure, mc))
        out += ["", *_table(["system", "measure", *_COMPARISON_COLUMNS], rows), ""]
        for s in expanded:
            assert s.expansion is not None
            out.append(
                f"- **{md_text(s.name)}**: {s.expansion.n_queries} queries; "
                f"{fmt_pct(s.expansion.new_hit_share)} of the returned memories found only "
                f"after expansion; {s.expansion.new_relevant} relevant memories found only after"
            )

    lat = [(s.name, st_name, v) for s in systems for st_name, v in s.latency_ms.items()]
    if lat:
        out += ["", "## Latency (ms)", ""]
        out += _table(
            ["system", "stage", "p50", "p95", "p99", "n"],
            [
                [name, stage, f"{v.p50:.2f}", f"{v.p95:.2f}", f"{v.p99:.2f}", str(v.n)]
                for name, stage, v in lat
            ],
        )
        if any(stage.startswith("embed") for _, stage, _ in lat):
            out += [
                "",
                "`embed`: the query's embedding was computed; `embed_cached`: the embedding"
                " cache answered. Compare `search` across systems: it leaves the query's"
                " embedding out, so a system measured after another filled the cache does not"
                " look faster.",
            ]

    out += ["", "## Accounting", ""]
    for s in systems:
        counts = ", ".join(f"{k} {v}" for k, v in s.counts.items())
        out.append(f"- **{md_text(s.name)}**: {counts}")
        out += [f"  - {md_text(note)}" for note in s.notes]
    return "\n".join(out) + "\n"
