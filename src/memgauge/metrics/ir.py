"""Vectorised IR measures over a `Judged` batch: one NumPy expression per measure, no per-query loop.

Notation, per query: `rel_i` = 1 if the document at rank i (1-based) has grade >= threshold;
`g_i` its grade; `R` the number of judged documents with grade >= threshold; `k` the cutoff.

- P@k = (sum_{i<=k} rel_i) / k — trec_eval `P_k` (divides by k even when fewer are returned).
- Recall@k = (sum_{i<=k} rel_i) / R — trec_eval `recall_k`.
- RR@k = 1 / min{i <= k : rel_i = 1}, 0 if none — trec_eval `recip_rank` on the run cut at k.
- AP@k = (sum_{i<=k} rel_i * P@i) / R — trec_eval `map_cut_k` (divides by all R, not min(R, k)).
- R-prec = (sum_{i<=R} rel_i) / R — trec_eval `Rprec`.
- nDCG@k = DCG@k / IDCG@k, DCG@k = sum_{i<=k} gain(g_i) / log2(i + 1), IDCG from all judged
  documents sorted by grade (Järvelin & Kekäläinen 2002; trec_eval `ndcg_cut_k`). gain "exp":
  2^g - 1 (Burges et al. 2005; seed 002), "linear": g (trec_eval). nDCG uses grades, not the
  threshold. Exp gain is defined up to grade 1023 (2^1024 overflows a double); a query whose
  top grade exceeds 960 has its gains scaled by 2^-(top - 960), which leaves its nDCG (a
  ratio) unchanged and keeps the sums finite, and every other query is computed unscaled.
- Hit@k = 1 if any rel_i = 1 for i <= k.
- recall_any@k = Hit@k; recall_all@k = 1 if all R relevant are in the top k (LongMemEval,
  Wu et al. 2025, src/retrieval/eval_utils.py).
- ndcg_any@k = LongMemEval's nDCG: binary relevance (grade >= threshold), DCG = rel_1 +
  sum_{2<=i<=k} rel_i / log2(i) (rank 1 undiscounted, rank i >= 2 by log2 i), ideal from the R
  relevant documents.

trec_eval's and ir_measures' other measures (Bpref, infAP, IPrec@x, gm_map, RBP(p) and its
residual, Judged@k, SetP / SetR / SetF, NumQ / NumRet / NumRel / NumRelRet) are in
`memgauge.metrics.trec_measures`, with their formulas; counts are summed over queries and gm_map
is a geometric mean (`AGGREGATION`), every other measure a mean.

Threshold 0 is trec_eval's `-l0`: judged grade-0 documents are relevant, unjudged documents
never, and R counts judgments only (see `ranking`).

A measure given ir_measures' parameters (`Measure.options`) is computed with its own threshold
(`rel=`: T and R at it, the no-relevant convention too), on the judged documents only
(`judged_only=True`: the others leave the ranking and those below move up, trec_eval's `-J`),
or with a gain table (`gains=`: nDCG's gain of grade g is the table's value, else g, linear;
the ideal ranking sorted by gain) or gain formula (`dcg='log2'`: linear, `dcg='exp-log2'`:
exp), in place of the run's `MetricConfig`.

Edge cases: a query with R = 0 (no relevant documents) and a judged query absent from the run
score 0 by default (`no_relevant="skip"` / `missing_from_run="skip"` give NaN, excluded from
means); both are counted in `Counts`. Cutoffs must be >= 1.

`no_relevant="one"` is seed 002's convention (its `computeRecall` returns 1.0 when nothing is
relevant: "perfect recall vacuously"), applied to every measure that is a share of what there
was to find, 0/0 for such a query: Recall, recall_all, AP, R-prec and ndcg_any score 1.0, and
nDCG does when its ideal gain is 0 too (a query whose only judgments are grade 1 under
threshold 2 keeps its computed nDCG). Measures that need a relevant hit to exist (RR, Hit,
recall_any) and P@k (nothing relevant was shown) keep 0, as the seed's MRR does.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, get_args

import numpy as np
from numpy.typing import NDArray

from memgauge._types import BoolArray, FloatArray, GradeArray, IntArray
from memgauge._util.listing import counted
from memgauge._util.numbers import fmean
from memgauge.errors import UsageError
from memgauge.metrics.conventions import (
    DEFAULT_GAIN,
    DEFAULT_MISSING_FROM_RUN,
    DEFAULT_NO_RELEVANT,
    DEFAULT_REL_THRESHOLD,
    Gain,
    MissingFromRun,
    NoRelevant,
    conventions_text,
)
from memgauge.metrics.measures import AGGREGATION, SESSION_MEASURES, Measure, parse_measure
from memgauge.metrics.ranking import Hits, Judged, from_ranked, hits_from_run
from memgauge.metrics.trec_measures import COMPUTE, MIN_GEO_MEAN, ratio

__all__ = [
    "CONVENTIONS",
    "MAX_EXP_GRADE",
    "NO_RELEVANT",
    "VACUOUS_ONE",
    "Counts",
    "Evaluation",
    "MetricConfig",
    "check_rel_threshold",
    "evaluate",
    "evaluate_judged",
    "evaluate_ranked",
]

#: What a query with no relevant document scores: 0 (default), 1 where that is 0/0 (seed 002),
#: or nothing (left out of the means). Every IR entry point (`metrics`, `evaluate`, suites'
#: `ir` aggregate and `retrieval` evaluator) takes these three.
NO_RELEVANT: tuple[str, ...] = get_args(NoRelevant)
#: The measures that are a share of what there was to find: 1.0 under `no_relevant="one"`.
VACUOUS_ONE: frozenset[str] = frozenset(
    {"Recall", "recall_all", "AP", "R-prec", "ndcg_any", "nDCG"}
)

MAX_EXP_GRADE = 1023  # 2^1024 - 1 is not a finite double
_EXP_UNSCALED = 960  # up to here, sums of up to 2^63 exp gains stay finite unscaled


def check_rel_threshold(value: int) -> None:
    """A UsageError for a negative `rel_threshold` of a spec (a retrieval evaluator's, the ir
    aggregate's), before anything is scored: `MetricConfig`'s ValueError, met later, ended
    `validate` and `run` in exit 70."""
    if value < 0:
        raise UsageError(f"rel_threshold {value}: give a grade of 0 or more")


@dataclass(frozen=True)
class MetricConfig:
    """Conventions where tools disagree.

    Attributes:
        rel_threshold: grade at or above which a document is relevant for binary measures
            (seed 002: 2; trec_eval: 1).
        gain: nDCG gain, "exp" (2^g - 1, seed 002) or "linear" (trec_eval).
        no_relevant: a query with no relevant documents scores "zero" (default), "one" on
            the measures where that is 0/0 (seed 002's Recall; see the module docstring), or
            is "skip"ped (NaN).
        missing_from_run: a judged query absent from the run scores "zero" or is "skip"ped.
    """

    rel_threshold: int = DEFAULT_REL_THRESHOLD
    gain: Gain = DEFAULT_GAIN
    no_relevant: NoRelevant = DEFAULT_NO_RELEVANT
    missing_from_run: MissingFromRun = DEFAULT_MISSING_FROM_RUN

    def __post_init__(self) -> None:
        # a negative threshold would make unjudged documents and padding relevant
        if self.rel_threshold < 0:
            raise ValueError(f"rel_threshold {self.rel_threshold} is negative; use 0 or more")
        if self.gain not in ("exp", "linear"):
            raise ValueError(f"gain {self.gain!r}: use 'exp' or 'linear'")
        if self.no_relevant not in NO_RELEVANT:
            raise ValueError(
                f"no_relevant {self.no_relevant!r}: use one of {', '.join(NO_RELEVANT)}"
            )

    @property
    def conventions(self) -> str:
        """All four conventions as one line, e.g. `relevant: grade >= 2, gain: exp, no relevant
        document: zero, missing from run: zero`."""
        return conventions_text(
            self.rel_threshold,
            self.gain,
            no_relevant=self.no_relevant,
            missing_from_run=self.missing_from_run,
        )


#: named sets of conventions (`memgauge metrics --conventions NAME`):
#: - memgauge: seed 002's, relevant = grade >= 2 and exp gain; every judged query counts;
#: - trec_eval: what trec_eval (and pytrec_eval, and ir_measures through it) does by default:
#:   relevant = grade >= 1 (`-l1`), linear gain in nDCG, a query with no relevant document
#:   scores 0 and counts, and a judged query the run does not contain is left out of the mean
#:   (trec_eval averages over the queries in both files unless given `-c`). ranx agrees on the
#:   threshold and on linear gain (its `ndcg`; `ndcg_burges` is exp).
CONVENTIONS: dict[str, MetricConfig] = {
    "memgauge": MetricConfig(),
    "trec_eval": MetricConfig(
        rel_threshold=1, gain="linear", no_relevant="zero", missing_from_run="skip"
    ),
}


@dataclass(frozen=True)
class Counts:
    """Query accounting: nothing is dropped silently."""

    n_judged: int
    n_evaluated: int
    no_relevant: list[str] = field(default_factory=list)
    missing_from_run: list[str] = field(default_factory=list)
    empty_result: list[str] = field(default_factory=list)
    run_only: list[str] = field(default_factory=list)
    skipped: int = 0

    def as_dict(self) -> dict[str, Any]:
        """Counts (and id lists) as plain JSON-able data."""
        return {
            "n_judged": self.n_judged,
            "n_evaluated": self.n_evaluated,
            "n_scored": self.n_judged - self.skipped,
            "n_no_relevant": len(self.no_relevant),
            "n_missing_from_run": len(self.missing_from_run),
            "n_empty_result": len(self.empty_result),
            "n_run_only": len(self.run_only),
            "no_relevant": self.no_relevant,
            "missing_from_run": self.missing_from_run,
            "run_only": self.run_only,
        }

    def notes(self, no_relevant: str = DEFAULT_NO_RELEVANT) -> list[str]:
        """Human-readable accounting lines for reports (`no_relevant`: how those queries were
        scored, `MetricConfig.no_relevant`)."""
        out = []
        if self.no_relevant:
            how = {
                "zero": "scored as any other: 0, but nDCG counts grades below the threshold",
                "one": "--no-relevant one: scored 1.0 where the measure is 0/0, as seed 002's "
                "Recall",
                "skip": "--no-relevant skip: left out of the means",
                # a suite's retrieval evaluator may fail such an item; its ir aggregate follows
                "fail": "no_relevant: fail: not scored, counted as failed",
            }[no_relevant]
            out.append(f"{len(self.no_relevant)} judged queries have no relevant memory ({how}).")
        if self.missing_from_run:
            out.append(
                f"{counted(len(self.missing_from_run), 'judged query', 'judged queries')}"
                f" {'is' if len(self.missing_from_run) == 1 else 'are'} absent from the run "
                "(scored 0 unless skipped)."
            )
        if self.empty_result:
            out.append(f"{counted(len(self.empty_result), 'query', 'queries')} returned no hits.")
        if self.run_only:
            out.append(
                f"{counted(len(self.run_only), 'run query', 'run queries')} "
                + (
                    "has no judgments and was"
                    if len(self.run_only) == 1
                    else "have no judgments and were"
                )
                + " ignored."
            )
        return out


@dataclass(frozen=True)
class Evaluation:
    """Per-query values of each measure (aligned with `query_ids`), the accounting, and the run's
    tag when it was read from a TREC run file."""

    query_ids: Sequence[str]
    per_query: dict[str, FloatArray]
    counts: Counts
    config: MetricConfig
    runid: str | None = None  # a run file's tag (trec_eval's `runid`), where one was read

    def aggregate(self) -> dict[str, float | None]:
        """Each measure over the scored queries (None when no query was scored): the mean; the
        sum for the counts (NumQ, NumRet, NumRel, NumRelRet); for gm_map the geometric mean of
        max(AP, 1e-5), as trec_eval."""
        out: dict[str, float | None] = {}
        for name, values in self.per_query.items():
            scored = values[~np.isnan(values)]
            how = AGGREGATION.get(parse_measure(name).name)
            if not scored.size:
                out[name] = None
            elif how == "sum":
                out[name] = float(scored.sum())
            elif how == "gmean":
                out[name] = float(np.exp(np.log(np.maximum(scored, MIN_GEO_MEAN)).mean()))
            else:
                out[name] = fmean(scored)
        return out


def _gain(grades: GradeArray, gain: str, shift: FloatArray | None = None) -> FloatArray:
    """Per-document gain; unjudged and padding gain 0. `shift` (per row of a matrix, or per
    document of a vector) scales exp gains by 2^-shift: 2^(g - s) - 2^-s."""
    g: FloatArray = np.maximum(grades, 0).astype(np.float64)
    if gain != "exp":
        return g
    if shift is None:
        return np.exp2(g) - 1.0
    s = shift[:, None] if g.ndim == 2 else shift
    return np.asarray(np.exp2(g - s) - np.exp2(-s), dtype=np.float64)


def _exp_shift(ideal: GradeArray) -> FloatArray | None:
    """Per-row exponent shift keeping exp-gain sums finite; None when no row needs one (the
    common case, computed exactly as without scaling)."""
    top = ideal[:, 0].astype(np.float64)  # rows are sorted descending
    if not (top > _EXP_UNSCALED).any():
        return None
    return np.maximum(top - _EXP_UNSCALED, 0.0)


def _cut(matrix: NDArray[Any], k: int | None) -> NDArray[Any]:
    return matrix if k is None else matrix[:, :k]


def _dense(h: Hits, select: BoolArray, values: FloatArray, k: int | None) -> FloatArray:
    """The selected hits' values in a (queries, min(k, width)) matrix, zeros elsewhere: nDCG
    sums a row with a matrix-vector product, exactly as over a grade matrix."""
    width = h.width if k is None else min(k, h.width)
    out = np.zeros((len(h.n_returned), width), dtype=np.float64)
    out[h.row[select], h.pos[select]] = values
    return out


def judged_only(h: Hits) -> Hits:
    """`h` with the documents not judged >= 0 taken out of each ranking, the others moving up
    (trec_eval's `-J`, ir_measures' `judged_only=True`: a POOLED document goes too)."""
    keep = h.grade >= 0
    row = h.row[keep]
    counts = np.bincount(row, minlength=len(h.n_returned))
    starts = np.cumsum(counts) - counts
    return replace(
        h,
        row=row,
        pos=np.arange(row.size, dtype=np.int64) - starts[row],
        grade=h.grade[keep],
        n_returned=counts.astype(np.int64),
        width=max(int(counts.max(initial=0)), 1),
    )


def threshold(m: Measure, cfg: MetricConfig) -> int:
    """The relevance threshold `m` is computed at: its own (`rel=`), else the run's."""
    return cfg.rel_threshold if m.rel is None else m.rel


def _table_gain(grades: GradeArray, table: Mapping[int, float]) -> FloatArray:
    """Gains from a gain table (`gains=`): a grade it names gains its value, another its grade,
    unjudged and padding 0 (ir_measures maps the judgments' grades the same way)."""
    g: FloatArray = np.maximum(grades, 0).astype(np.float64)
    for grade, gain in table.items():
        g[grades == grade] = gain
    return g


def _compute(m: Measure, h: Hits, cfg: MetricConfig, n_rel: IntArray) -> FloatArray:
    """One measure's value per query, from the hits (rank and grade of each judged document
    returned). Sums run in rank order, as over the grade matrix, so values are equal bit for
    bit whichever form a batch arrives in. `n_rel` is R at the measure's threshold (its own,
    `rel=`, else the run's: `score_hits` counts each once), and `judged_only` ranks the judged
    documents only."""
    t = threshold(m, cfg)
    if m.judged_only:
        h = judged_only(h)
    n = len(h.n_returned)
    R = n_rel.astype(np.float64)
    k = m.cutoff
    if m.name in COMPUTE:
        return COMPUTE[m.name](m, h, t, n_rel)
    if m.name == "gm_map":  # AP per query; the geometric mean is its aggregate
        return _compute(Measure("AP", options=(("rel", t),)), h, cfg, n_rel)
    rel = h.grade >= t
    within = rel if k is None else rel & (h.pos < k)
    if m.name == "P":
        assert k is not None
        return np.asarray(np.bincount(h.row[within], minlength=n) / k, dtype=np.float64)
    if m.name in ("Recall", "Hit", "recall_any", "recall_all"):
        found = np.bincount(h.row[within], minlength=n).astype(np.float64)
        if m.name == "Recall":
            return ratio(found, R)
        if m.name == "recall_all":
            return ((found >= R) & (R > 0)).astype(np.float64)
        return (found > 0).astype(np.float64)
    rows, cols = h.row[within], h.pos[within]  # relevant hits, by row then rank
    if m.name == "RR":
        first = np.ones(rows.size, dtype=bool)
        first[1:] = rows[1:] != rows[:-1]
        out = np.zeros(n, dtype=np.float64)
        out[rows[first]] = 1.0 / (cols[first] + 1.0)
        return out
    if m.name == "AP":
        # the i-th relevant hit of a row, at rank c (0-based), adds precision i / (c + 1)
        counts = np.bincount(rows, minlength=n)
        starts = np.cumsum(counts) - counts
        nth = np.arange(rows.size) - starts[rows] + 1
        total = np.asarray(np.bincount(rows, weights=nth / (cols + 1.0), minlength=n))
        return ratio(total.astype(np.float64), R)
    if m.name == "R-prec":
        return ratio(
            np.bincount(h.row[rel & (h.pos < n_rel[h.row])], minlength=n).astype(np.float64), R
        )
    if m.name == "nDCG" and m.gains is not None:  # linear gain through the table
        gained_all = _table_gain(h.grade, m.gains)
        gained = gained_all > 0 if k is None else (gained_all > 0) & (h.pos < k)
        gains = _dense(h, gained, gained_all[gained], k)
        disc = 1.0 / np.log2(np.arange(2, gains.shape[1] + 2, dtype=np.float64))
        ideal = _cut(-np.sort(-_table_gain(h.ideal, m.gains), axis=1), k)
        idisc = 1.0 / np.log2(np.arange(2, ideal.shape[1] + 2, dtype=np.float64))
        return ratio(gains @ disc, ideal @ idisc)
    if m.name == "nDCG":
        kind = m.dcg_gain or cfg.gain
        shift = _exp_shift(h.ideal) if kind == "exp" else None
        gained = (h.grade > 0) if k is None else (h.grade > 0) & (h.pos < k)
        g = _gain(h.grade[gained], kind, None if shift is None else shift[h.row[gained]])
        gains = _dense(h, gained, g, k)
        disc = 1.0 / np.log2(np.arange(2, gains.shape[1] + 2, dtype=np.float64))
        ideal = _gain(_cut(h.ideal, k), kind, shift)
        idisc = 1.0 / np.log2(np.arange(2, ideal.shape[1] + 2, dtype=np.float64))
        return ratio(gains @ disc, ideal @ idisc)
    if m.name == "ndcg_any":
        assert k is not None
        r = _dense(h, within, np.ones(rows.size), k)
        disc = 1.0 / np.log2(np.maximum(np.arange(1, r.shape[1] + 1, dtype=np.float64), 2.0))
        ideal = (np.arange(k)[None, :] < n_rel[:, None]).astype(np.float64)
        idisc = 1.0 / np.log2(np.maximum(np.arange(1, k + 1, dtype=np.float64), 2.0))
        return ratio(r @ disc, ideal @ idisc)
    raise AssertionError(f"no implementation for {m}")  # parse_measure admits only the above


def parse_measures(measures: Iterable[Measure | str]) -> list[Measure]:
    """Parsed, deduplicated in order; session measures refused (they need a corpus)."""
    parsed = list(dict.fromkeys(parse_measure(m) for m in measures))
    _refuse_session_measures(parsed)
    return parsed


def exp_gained(measures: Iterable[Measure], cfg: MetricConfig) -> bool:
    """Whether one of `measures` gains 2^grade - 1: nDCG under exp gain (its own `dcg=`, else
    the run's), unless it has its own gain table (`gains=`)."""
    return any(
        m.name == "nDCG" and m.gains is None and (m.dcg_gain or cfg.gain) == "exp" for m in measures
    )


def check_grades(top: int, measures: Sequence[Measure], cfg: MetricConfig) -> None:
    """ValueError when nDCG with exp gain meets a grade above MAX_EXP_GRADE (2^g - 1 is not a
    finite double there; use linear gain)."""
    if top > MAX_EXP_GRADE and exp_gained(measures, cfg):
        raise ValueError(
            f"grade {top} is above {MAX_EXP_GRADE}: exp gain 2^grade - 1 overflows; "
            "use linear gain for grades this large"
        )


def thresholds(measures: Sequence[Measure], cfg: MetricConfig) -> list[int]:
    """The relevance thresholds `measures` are computed at: the run's first, then each
    measure's own (`rel=`)."""
    return list(dict.fromkeys([cfg.rel_threshold, *(threshold(m, cfg) for m in measures)]))


def score_hits(
    measures: Sequence[Measure], hits: Hits, cfg: MetricConfig
) -> tuple[dict[str, FloatArray], dict[int, IntArray]]:
    """Each measure's raw value per query (before the no-relevant and missing-from-run
    conventions), and R per query at each of `thresholds(measures, cfg)`."""
    n_rel = {t: hits.n_relevant(t) for t in thresholds(measures, cfg)}
    if not len(hits.n_returned):
        return {str(m): np.zeros(0) for m in measures}, n_rel
    return {str(m): _compute(m, hits, cfg, n_rel[threshold(m, cfg)]) for m in measures}, n_rel


def summarize(
    values: dict[str, FloatArray],
    cfg: MetricConfig,
    *,
    query_ids: Sequence[str],
    n_rel: Mapping[int, IntArray],
    in_run: BoolArray,
    n_returned: IntArray,
    ideal_top: IntArray,
    run_only: list[str],
) -> Evaluation:
    """Apply the conventions to raw values (`score_hits`) and count the queries. `n_rel` is
    R per query at each threshold a measure is computed at: a measure with its own (`rel=`)
    finds the queries with no relevant document at that one; the accounting (`Counts`) counts
    them at the run's."""
    missing = ~in_run
    per_query: dict[str, FloatArray] = {}
    for name, raw in values.items():
        measure = parse_measure(name)
        skip, ones = _conventions(cfg, n_rel[threshold(measure, cfg)] == 0, missing)
        v = np.asarray(raw, dtype=np.float64)
        kind = measure.name
        if ones is not None and kind in VACUOUS_ONE:
            v[ones & (ideal_top <= 0) if kind == "nDCG" else ones] = 1.0
        v[skip] = np.nan
        per_query[name] = v
    no_rel = n_rel[cfg.rel_threshold] == 0
    skip, _ = _conventions(cfg, no_rel, missing)

    def named(rows: BoolArray) -> list[str]:
        return [str(query_ids[i]) for i in np.flatnonzero(rows).tolist()]

    counts = Counts(
        n_judged=len(query_ids),
        n_evaluated=int((~missing).sum()),
        no_relevant=named(no_rel),
        missing_from_run=named(missing),
        empty_result=named((n_returned == 0) & ~missing),
        run_only=run_only,
        skipped=int(skip.sum()),
    )
    return Evaluation(query_ids=query_ids, per_query=per_query, counts=counts, config=cfg)


def _conventions(
    cfg: MetricConfig, no_rel: BoolArray, missing: BoolArray
) -> tuple[BoolArray, BoolArray | None]:
    """The queries left out (NaN) and those scored a vacuous 1.0 (None: no such convention)."""
    skip = np.zeros(len(missing), dtype=bool)
    if cfg.no_relevant == "skip":
        skip |= no_rel
    if cfg.missing_from_run == "skip":
        skip |= missing
    # seed 002's vacuous 1.0; nDCG only where its ideal gain is 0 as well (grades <= 0)
    # (a query absent from the run keeps its own convention, missing_from_run)
    ones = no_rel & ~skip & ~missing if cfg.no_relevant == "one" else None
    return skip, ones


def evaluate_judged(
    judged: Judged | Hits, measures: Iterable[Measure | str], config: MetricConfig | None = None
) -> Evaluation:
    """Score a prepared batch (a grade matrix or its hits): the array-level entry point.

    Raises ValueError when nDCG with exp gain meets a grade above MAX_EXP_GRADE (2^g - 1 is
    not a finite double there; use linear gain).
    """
    cfg = config or MetricConfig()
    parsed = parse_measures(measures)
    hits = judged if isinstance(judged, Hits) else Hits.from_judged(judged)
    check_grades(int(hits.ideal.max(initial=0)), parsed, cfg)
    values, n_rel = score_hits(parsed, hits, cfg)
    return summarize(
        values,
        cfg,
        query_ids=hits.query_ids,
        n_rel=n_rel,
        in_run=hits.in_run,
        n_returned=hits.n_returned,
        ideal_top=hits.ideal[:, 0].astype(np.int64),
        run_only=hits.run_only,
    )


def _refuse_session_measures(measures: Sequence[Measure]) -> None:
    session = [str(m) for m in measures if m.name in SESSION_MEASURES]
    if session:
        raise UsageError(
            f"{', '.join(session)}: session measures from a turn ranking need each query's "
            "corpus; `memgauge evaluate` computes them on a LongMemEval dataset imported with "
            "--protocol paper --granularity turn"
        )


def measure_depth(measures: Sequence[Measure]) -> int | None:
    """How deep the deepest of `measures` looks (None: the whole ranking; judged_only looks
    past its cutoff for the judged documents)."""
    if any(m.cutoff is None or m.judged_only or m.name == "R-prec" for m in measures):
        return None
    return max((m.cutoff for m in measures if m.cutoff is not None), default=None)


def evaluate(
    qrels: Mapping[str, Mapping[str, int]],
    run: Mapping[str, Mapping[str, float]],
    measures: Iterable[Measure | str],
    config: MetricConfig | None = None,
    *,
    depth: int | None = None,
) -> Evaluation:
    """Score a run `{qid: {docid: score}}` against qrels `{qid: {docid: grade}}`.

    Documents are ranked in trec_eval's order (score descending, then doc id descending).
    `depth` keeps each query's top `depth` documents only, before any measure looks
    (trec_eval's `-M`: NumRet, SetP and the measures without a cutoff see no deeper).
    """
    parsed = [parse_measure(m) for m in measures]
    if depth is not None and depth < 1:
        raise ValueError(f"depth {depth}: keep 1 or more documents per query")
    deepest = measure_depth(parsed)
    cap = depth if deepest is None else deepest if depth is None else min(depth, deepest)
    return evaluate_judged(hits_from_run(qrels, run, cap), parsed, config)


def evaluate_ranked(
    qrels: Mapping[str, Mapping[str, int]],
    ranked: Mapping[str, Sequence[str]],
    measures: Iterable[Measure | str],
    config: MetricConfig | None = None,
) -> Evaluation:
    """Score already-ranked id lists `{qid: [docid, ...]}` (best first) against qrels."""
    parsed = [parse_measure(m) for m in measures]
    return evaluate_judged(from_ranked(qrels, ranked, measure_depth(parsed)), parsed, config)
