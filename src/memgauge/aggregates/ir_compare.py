"""Paired comparisons of two systems' per-query IR values: overall and within each query
category (seed 002 section 3.4's stratified evaluation), each Holm-corrected across measures.

Both read the queries the two systems scored alike (a query one of them failed is left out of
the pair). Within a category the same tests run on that category's queries only, and the Holm
correction spans that category's measures, as the overall comparison's spans all measures: a
category's marks mean what the overall marks mean, for fewer queries.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

import numpy as np

from memgauge._util.numbers import fmean
from memgauge.aggregates.retrieval_result import Comparison, MetricComparison, SequentialTest
from memgauge.stats import NO_GROUP, compare_many
from memgauge.stats.sequential import SPRT, sequential_test

__all__ = ["Scored", "compare_pair", "metric_rows", "sequential_measure"]

#: One system's scored values: (name, {measure: per-query values}, query ids in that order).
Scored = tuple[str, dict[str, np.ndarray[Any, Any]], list[str]]
Test = Literal["randomization", "t", "wilcoxon"]


def metric_rows(
    a: Mapping[str, np.ndarray[Any, Any]],
    b: Mapping[str, np.ndarray[Any, Any]],
    *,
    primary_test: Test,
    seed: int,
    alpha: float,
    n_resamples: int,
) -> list[MetricComparison]:
    """`compare_many` on aligned per-query values (Holm across the measures given), as rows."""
    compared = compare_many(
        a, b, primary_test=primary_test, seed=seed, alpha=alpha, n_resamples=n_resamples
    )
    return [
        MetricComparison(
            measure=m,
            mean_a=c.mean_a,
            mean_b=c.mean_b,
            delta=c.delta,
            ci_low=c.delta_ci_low,
            ci_high=c.delta_ci_high,
            p_value=c.p_value,
            p_holm=c.p_holm,
            p_t=c.p_t,
            p_wilcoxon=c.p_wilcoxon,
            effect_size=c.effect_size,
            mark=c.mark,
            n=c.n,
        )
        for m, c in compared.items()
    ]


def compare_pair(
    base: Scored,
    cand: Scored,
    categories: Mapping[str, str | None],
    *,
    primary_test: Test,
    seed: int,
    alpha: float,
    n_resamples: int,
    sprt: SPRT | None = None,
) -> Comparison:
    """`cand` against `base` over their common queries, and per category of those queries
    (`categories`: query id -> category; no category at all: no per-category rows); with
    `sprt`, seed 002's sequential test on the paired differences (`sequential_measure`)."""
    common = sorted(set(base[2]) & set(cand[2]))
    ia = {q: i for i, q in enumerate(base[2])}
    ib = {q: i for i, q in enumerate(cand[2])}
    a_idx = np.asarray([ia[q] for q in common], dtype=np.int64)
    b_idx = np.asarray([ib[q] for q in common], dtype=np.int64)
    a = {m: v[a_idx] for m, v in base[1].items()}
    b = {m: v[b_idx] for m, v in cand[1].items()}
    options: dict[str, Any] = {
        "primary_test": primary_test,
        "seed": seed,
        "alpha": alpha,
        "n_resamples": n_resamples,
    }
    # the means as each system's value is taken: over its queries in its own order (the
    # tests pair the queries sorted by id, and a float sum depends on the order)
    own = np.argsort(a_idx, kind="stable")
    rows = _own_means(metric_rows(a, b, **options), a, b, own)
    groups = [categories.get(q) for q in common]
    by_category: dict[str, list[MetricComparison]] = {}
    if any(g is not None for g in groups):
        labels = np.asarray([NO_GROUP if g is None else g for g in groups], dtype=object)
        for group in sorted(set(labels.tolist())):
            mask = labels == group
            by_category[group] = _own_means(
                metric_rows(
                    {m: v[mask] for m, v in a.items()},
                    {m: v[mask] for m, v in b.items()},
                    **options,
                ),
                a,
                b,
                own[mask[own]],
            )
    sequential = None
    measure = sequential_measure(list(a))
    if sprt is not None and measure is not None:
        sequential = SequentialTest(
            measure=measure, **sequential_test(sprt, b[measure] - a[measure])
        )
    return Comparison(
        baseline=base[0],
        candidate=cand[0],
        test=primary_test,
        metrics=rows,
        by_category=by_category,
        sequential_test_decision=sequential.sequential_test_decision if sequential else None,
        sequential=sequential,
    )


def _own_means(
    rows: list[MetricComparison],
    a: Mapping[str, np.ndarray[Any, Any]],
    b: Mapping[str, np.ndarray[Any, Any]],
    order: np.ndarray[Any, Any],
) -> list[MetricComparison]:
    """`rows` with each mean taken over the pairs both systems scored, in `order` (the
    baseline's own order of the queries): a comparison of every query a system scored gives
    that system's value to the last bit, as its table reports it (0.3375, not the
    0.33749999999999997 the id-sorted sum gives, printed 0.337 beside 0.338)."""
    out = []
    for row in rows:
        xa, xb = a[row.measure][order], b[row.measure][order]
        keep = ~(np.isnan(xa) | np.isnan(xb))
        if not keep.any() or row.mean_a is None:
            out.append(row)
            continue
        mean_a, mean_b = fmean(xa[keep]), fmean(xb[keep])
        out.append(row.model_copy(update={"mean_a": mean_a, "mean_b": mean_b}))
    return out


def sequential_measure(measures: list[str]) -> str | None:
    """The measure the sequential test reads: seed 002's MRR (RR@10, else the first RR@k),
    else nDCG@10, else the first measure."""
    rr = [m for m in measures if m.startswith("RR@")]
    if "RR@10" in measures:
        return "RR@10"
    if rr:
        return rr[0]
    return "nDCG@10" if "nDCG@10" in measures else next(iter(measures), None)
