"""Numbers without a run: IR measures of a TREC run file against qrels (trec_eval's
conventions, or seed 002's). How many judged queries a comparison needs is in `_samplesize`."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path

from memgauge.data.trec import read_qrels, read_run_tagged
from memgauge.errors import check_path
from memgauge.metrics import MAX_EXP_GRADE, Measure, MetricConfig, evaluate, parse_measure
from memgauge.metrics.ir import Evaluation, exp_gained

__all__ = ["score_trec_run"]


def score_trec_run(
    qrels: str | Path,
    run: str | Path,
    measures: Sequence[Measure | str],
    config: MetricConfig,
    *,
    depth: int | None = None,
) -> Evaluation:
    """Score TREC run file `run` (qid Q0 docid rank score tag) against TREC qrels file `qrels`
    (qid 0 docid grade), either of them gzip-compressed or ranx's JSON instead (`{qid: {docid:
    score}}`, `{qid: {docid: grade}}`; `data.trec`): documents ranked by score descending, ties
    by doc id descending; `depth` keeps each query's top `depth` (trec_eval's `-M`). The
    evaluation carries the run's tag (`runid`; None for a JSON run).

    With nDCG under exp gain (2^grade - 1), a grade past MAX_EXP_GRADE is refused on its line
    (the gain is not a finite double there) rather than turned into a NaN. `measures`: Measures
    or their names (`"nDCG@10"`, read by `parse_measure`)."""
    if isinstance(measures, str | Measure):
        raise TypeError(f"measures takes a list of measures, e.g. [{measures!r}], not one")
    parsed = [parse_measure(m) for m in measures]
    check_path("qrels", qrels)
    check_path("run", run)
    qrels, run = Path(qrels), Path(run)
    if exp_gained(parsed, config):  # nDCG(gains=...) has its own gains, however large a grade
        q = read_qrels(
            qrels,
            max_grade=MAX_EXP_GRADE,
            why="the largest grade exp gain (2^grade - 1) can take; use linear gain (--gain "
            "linear, or nDCG(dcg='log2') for one measure) or a gain table (nDCG(gains={...}))",
        )
    else:
        q = read_qrels(qrels)
    scores, tag = read_run_tagged(run)
    ev = evaluate(q, scores, parsed, config, depth=depth)
    return dataclasses.replace(ev, runid=tag)
