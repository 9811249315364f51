"""An evaluation printed as trec_eval prints it, so that `diff` against trec_eval's output is
clean: `%-22s\\t%s\\t%6.4f` lines (counts as integers), trec_eval's measure names (memgauge's
canonical name for a measure trec_eval does not compute the same way), with `-q` each scored
query's lines in query order before the `all` lines, `num_q` and `gm_map` on the `all` lines
only, and `runid` first when the report is trec_eval's default one (meas_print_single.c,
meas_print_final.c)."""

from __future__ import annotations

import math
from collections.abc import Sequence

from memgauge.metrics.ir import Evaluation
from memgauge.metrics.measures import AGGREGATION, Measure, parse_measure, trec_name

__all__ = ["format_value", "trec_eval_report"]

# trec_eval prints these only on its `all` lines
_SUMMARY_ONLY = frozenset({"NumQ", "gm_map"})


def format_value(measure: str | Measure, value: float | None) -> str:
    """A measure's value as printed: `n/a`, a count (NumRet, ...) as an integer, else 4 places."""
    if value is None or math.isnan(value):
        return "n/a"
    if AGGREGATION.get(parse_measure(measure).name) == "sum":
        return str(round(value))
    return f"{value:.4f}"


def trec_eval_report(
    ev: Evaluation, measures: Sequence[Measure], *, per_query: bool, runid: bool
) -> str:
    """The report as trec_eval prints it (`per_query`: its `-q`; `runid`: print the run's tag
    first, as trec_eval's default report does). A query left out of the means (absent from the
    run without -c) gets no lines, as in trec_eval."""

    def line(m: Measure, qid: str, v: float | None) -> str:
        return f"{trec_name(m) or str(m):<22}\t{qid}\t{format_value(m, v)}"

    rows: list[str] = []
    if per_query:
        for i, qid in enumerate(ev.query_ids):
            values = [float(ev.per_query[str(m)][i]) for m in measures]
            if all(math.isnan(v) for v in values):
                continue
            rows.extend(
                line(m, qid, v)
                for m, v in zip(measures, values, strict=True)
                if m.name not in _SUMMARY_ONLY
            )
    agg = ev.aggregate()
    if runid:
        rows.append(f"{'runid':<22}\tall\t{ev.runid}")
    rows.extend(line(m, "all", agg[str(m)]) for m in measures)
    return "\n".join(rows)
