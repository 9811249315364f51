"""What the ir aggregate shows, drawn from its stored detail (`RetrievalEvalResult`'s systems,
comparisons and settings, as dicts: a LoCoMo run's per-query rows are not validated again):
the measures per system, paired comparisons (overall, by category, before / after query
expansion), the agent-memory metrics, the primary measure by category and intent, latency and
the queries' accounting."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from memgauge._util.listing import counted
from memgauge._util.numbers import ALPHA
from memgauge.data.shapes import Breakdown, Paired, PairedRow, Shape, Table, cell, text
from memgauge.metrics.agent import agent_metric_definition
from memgauge.metrics.conventions import NO_RELEVANT_IF_UNSTATED, conventions_text

__all__ = ["ir_shapes"]

Row = Mapping[str, Any]


def _summary(s: Row | None) -> Any:
    if s is None:
        return text("-")
    return cell(
        s.get("value"), (s.get("ci_low"), s.get("ci_high")), s.get("n_scored"), s.get("n_failed", 0)
    )


def _paired_rows(candidate: str, rows: Sequence[Row]) -> list[PairedRow]:
    return [
        PairedRow(
            candidate=candidate,
            measure=m["measure"],
            a=m.get("mean_a"),
            b=m.get("mean_b"),
            delta=m.get("delta"),
            ci=(m.get("ci_low"), m.get("ci_high")),
            p=m.get("p_value"),
            p_adjusted=m.get("p_holm"),
            n=m.get("n", 0),
            mark=m.get("mark") or "",
        )
        for m in rows
    ]


def _conventions(st: Row) -> str:
    if "rel_threshold" not in st or "gain" not in st:
        return ""
    no_relevant = str(st.get("no_relevant", NO_RELEVANT_IF_UNSTATED))
    measures = [str(m) for m in st.get("measures") or ()]
    return conventions_text(
        int(st["rel_threshold"]), str(st["gain"]), no_relevant=no_relevant, measures=measures
    )


def ir_shapes(detail: Mapping[str, Any]) -> list[Shape]:
    """The ir aggregate's shapes (see the module)."""
    st: Row = detail.get("settings") or {}
    ds: Row = detail.get("dataset") or {}
    measures = list(st.get("measures") or detail.get("measures") or [])
    systems: list[Row] = list(detail.get("systems") or [])
    ok = [s for s in systems if s.get("status") == "ok"]
    names = [s["name"] for s in ok]
    about = [
        # first: a reader must know the queries and judgments were written by a model
        str(ds.get("synthetic") or ""),
        f"{ds.get('name', 'dataset')}: {counted(ds.get('n_memories', 0), 'memory', 'memories')}, "
        f"{counted(ds.get('n_queries', 0), 'query', 'queries')}, {counted(ds.get('n_judgments', 0), 'judgment')}",
        _conventions(st),
        f"depth {st.get('k')}" if st.get("k") is not None else "",
        f"protocol {ds['protocol']}" if ds.get("protocol") else "",
    ]
    rows = [
        [text(s["name"]), *(_summary(s.get("metrics", {}).get(m)) for m in measures)] for s in ok
    ]
    rows += [
        [
            text(s["name"]),
            text(s.get("status"), f"{s.get('status')} ({s.get('reason') or ''})"),
            *(text("") for _ in measures[1:]),
        ]
        for s in systems
        if s.get("status") != "ok"
    ]
    shapes: list[Shape] = [
        Table(
            title="Retrieval measures",
            key="retrieval-summary",
            note=" · ".join(x for x in about if x),
            columns=["system", *measures],
            rows=rows,
        )
    ]
    comparisons: list[Row] = list(detail.get("comparisons") or [])
    if comparisons:
        baseline = str(comparisons[0].get("baseline"))
        tests = ", ".join(dict.fromkeys(str(c.get("test")) for c in comparisons))
        correction = "Holm across measures"
        shapes.append(
            Paired(
                title="Paired comparisons",
                note=f"paired {tests} test, alpha {st.get('alpha', ALPHA)}",
                baseline=baseline,
                correction=correction,
                rows=[r for c in comparisons for r in _paired_rows(c["candidate"], c["metrics"])],
            )
        )
    shapes += _sequential(comparisons) + _warnings(ds)
    agent = list(dict.fromkeys(n for s in ok for n in s.get("agent_metrics") or {}))
    if agent:
        arows = []
        for n in agent:
            got = [(s.get("agent_metrics") or {}).get(n) for s in ok]
            target = next((a.get("target") for a in got if a and a.get("target")), "")
            cells = [
                text("-")
                if a is None
                else cell(
                    a.get("value"),
                    None,  # the CIs some have are in result.json; a count beside each value
                    a.get("n"),
                    met=a.get("meets_target"),
                    note=a.get("note"),
                )
                for a in got
            ]
            name = text(n, agent_metric_definition(n))
            arows.append([name, text(target), *cells])
        # their counts are of searches, hits, chains or pairs: a failed search is in none of
        # them, so it is said once here, as the retrieval measures' cells say it
        failed = [
            f"{name} {n}"
            for name, s in zip(names, ok, strict=True)
            if (n := (s.get("counts") or {}).get("n_failed"))
        ]
        shapes.append(
            Table(
                title="Agent-memory metrics",
                note="seed 002 section 3, each with its definition (K is the cutoff in its "
                "name); n/a means no applicable data: the count says how much there was"
                + (
                    f"; failed searches are left out of every one ({', '.join(failed)})"
                    if failed
                    else ""
                ),
                columns=["metric", "target", *names],
                rows=arows,
            )
        )
    for dim in ("category", "intent") if measures else ():
        per = [((s.get("breakdown") or {}).get(dim) or {}) for s in ok]
        groups = list(dict.fromkeys(g for p in per for g in p))
        if groups:
            values = {g: [_summary((p.get(g) or {}).get(measures[0])) for p in per] for g in groups}
            title = f"{measures[0]} by {dim}"
            shapes.append(
                Breakdown(title=title, measure=measures[0], by=dim, subjects=names, values=values)
            )
    by_cat = [
        r
        for c in comparisons
        for g, ms in (c.get("by_category") or {}).items()
        for r in _paired_rows(f"{c['candidate']} [{g}]", ms)
        if measures and r.measure == measures[0]  # every measure is in result.json
    ]
    if by_cat:
        shapes.append(
            Paired(
                title=f"Paired comparisons of {measures[0]} by category",
                baseline=str(comparisons[0].get("baseline")),
                correction="Holm across measures within the category",
                rows=by_cat,
            )
        )
    for s in ok:
        ex = s.get("expansion")
        if ex:
            shapes.append(
                Paired(
                    title=f"Query-expansion impact: {s['name']}",
                    note=f"{counted(ex.get('n_queries'), 'query', 'queries')}; {ex.get('new_relevant', 0)} relevant "
                    "memories found only after expansion",
                    baseline="before expansion",
                    correction="Holm across measures",
                    rows=_paired_rows("after expansion", ex.get("metrics") or []),
                )
            )
    lat = [
        [
            text(s["name"]),
            text(stage),
            *(cell(v.get(k)) for k in ("p50", "p95", "p99", "mean")),
            text(v.get("n")),
        ]
        for s in ok
        for stage, v in (s.get("latency_ms") or {}).items()
    ]
    if lat:
        cols = ["system", "stage", "p50", "p95", "p99", "mean", "n"]
        shapes.append(Table(title="Search latency, ms", columns=cols, rows=lat))
    acc = [
        [
            text(s["name"], " ".join(map(_sentence, s.get("notes") or [])) or None),
            text(", ".join(f"{k} {v}" for k, v in (s.get("counts") or {}).items())),
        ]
        for s in ok
    ]
    if acc:
        shapes.append(Table(title="Accounting", columns=["system", "queries"], rows=acc))
    return shapes


def _sequential(comparisons: list[Row]) -> list[Shape]:
    """Seed 002's sequentialTestDecision of each comparison, with the SPRT behind it."""
    rows = []
    for c in comparisons:
        sq = c.get("sequential")
        if not sq:
            continue
        llr = sq.get("log_lr")
        rows.append(
            [
                text(f"{c['candidate']} vs {c['baseline']}"),
                text(sq["measure"]),
                text(str(c.get("sequential_test_decision"))),
                text("not started" if llr is None else f"{llr:.3f}"),
                text(f"[{sq['lower']:.3f}, {sq['upper']:.3f}] ({sq['bounds']})"),
                text(f"{sq['n']} of {sq['n_pairs']} ({sq['n_informative']} informative)"),
            ]
        )
    if not rows:
        return []
    first = next(c["sequential"] for c in comparisons if c.get("sequential"))
    return [
        Table(
            title="Sequential test (seed 002's sequentialTestDecision)",
            note=f"SPRT on paired {first['measure']} differences, effect {first['delta']:g}, "
            f"alpha {first['alpha']:g}, beta {first['beta']:g}, at least "
            f"{first['min_samples']} informative pairs",
            columns=["comparison", "measure", "decision", "log LR", "bounds", "pairs read"],
            rows=rows,
        )
    ]


def _warnings(ds: Row) -> list[Shape]:
    """The dataset's coverage warnings (seed 002's queries per category, as `health` says)."""
    warnings = list(ds.get("warnings") or [])
    if not warnings:
        return []
    return [
        Table(title="Coverage warnings", columns=["warning"], rows=[[text(w)] for w in warnings])
    ]


def _sentence(note: str) -> str:
    """`note` ending as a sentence ends, so that notes read one after another: a note that
    quotes a search's error ends where the error does ("... got SearchResult")."""
    note = note.rstrip()
    return note if note.endswith((".", "!", "?")) else f"{note}."
