"""LongMemEval's own retrieval conventions (Wu et al. 2025, `src/retrieval/eval_utils.py`).

**Session measures from a turn ranking** (`evaluate_retrieval_turn2session`), per query:

- A turn's session label is its id up to its last `_` (`strip_turn_id`: `answer_4be1_2_3` ->
  `answer_4be1_2`). LongMemEval's turn ids are `<session id>_<turn number>`, and a user turn
  of an answer session without `has_answer` is renamed `noans_...`: so the turns of one
  answer session carry two labels, `answer_x` for its evidence turns and `noans_x` for the
  others, and count as two sessions (quirk 1).
- The correct sessions are the labels of the relevant turns; the corpus labels are those of
  every turn in the query's corpus (one per turn, repeated).
- The cutoff grows: `e = k`; while `e <= N` (N = turns in the corpus) and the top `e` turns
  hold fewer than `k` distinct labels, `e += 1`. So `e` may end at N + 1 (quirk 2), and a
  label counts as a session even when it is a `noans_` half (quirk 1 again).
- recall_any@k = 1 if any correct label is among the labels of the top `e` turns;
  recall_all@k = 1 if every correct label is, so 1.0 when there is none (`all([])`,
  quirk 3).
- ndcg_any@k is nDCG over the top `e` *turns*, each relevant when its label is correct (so
  two turns of one correct session both gain; quirk 4): DCG = rel_1 + sum_{2<=i<=e} rel_i /
  log2(i); the ideal ranks the corpus's turns with a correct label first (also cut at `e`);
  0 when that ideal is 0.

memgauge gets a memory system's top `depth` hits, where LongMemEval ranks the whole corpus.
The values are exact whenever the hits reach `e`, or hold the whole corpus; a query whose hits
ran out first is counted in `short` (search deeper: `--k`).

**recall_all with no relevant turn**: LongMemEval's `evaluate_retrieval` gives 1.0 (the same
`all([])`), where memgauge's `recall_all` gives 0. `vacuous_recall_all` applies LongMemEval's
value, for datasets imported under its paper protocol (`DatasetProtocol.recall_all_no_relevant`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np

from memgauge._types import BoolArray, FloatArray, IntArray
from memgauge.errors import UsageError
from memgauge.metrics.conventions import DEFAULT_REL_THRESHOLD
from memgauge.metrics.ir import Evaluation
from memgauge.metrics.measures import SESSION_MEASURES, Measure, parse_measure

__all__ = ["SessionEvaluation", "session_label", "turn2session", "vacuous_recall_all"]


def session_label(turn_id: str) -> str:
    """LongMemEval's `strip_turn_id`: the id without its last `_`-separated part."""
    return "_".join(turn_id.split("_")[:-1])


@dataclass(frozen=True)
class SessionEvaluation:
    """Per-query session measures (aligned with `query_ids`, sorted like `Evaluation`'s).

    Attributes:
        query_ids: the judged queries, sorted.
        per_query: canonical measure string -> values.
        short: queries whose hits ran out before LongMemEval's grown cutoff, with fewer hits
            than the corpus has turns (their values may be below LongMemEval's).
    """

    query_ids: list[str]
    per_query: dict[str, FloatArray]
    short: list[str]


@dataclass(frozen=True)
class _Rows:
    """One query per row: label codes of the ranking (-1 = padding) and what they mean."""

    first: BoolArray  # the rank where a label first appears
    rel: BoolArray  # the turn's label is a correct session
    n_returned: IntArray
    n_corpus: IntArray
    n_ideal: IntArray  # corpus turns with a correct label
    n_correct: IntArray  # distinct correct labels


def _rows(
    qids: list[str],
    qrels: Mapping[str, Mapping[str, int]],
    ranked: Mapping[str, Sequence[str]],
    corpora: Mapping[str, Sequence[str]],
    rel_threshold: int,
) -> _Rows:
    codes_rows: list[list[int]] = []
    rel_rows: list[list[bool]] = []
    n_corpus, n_ideal, n_correct = [], [], []
    for q in qids:
        correct = {session_label(d) for d, g in qrels[q].items() if g >= rel_threshold}
        corpus_labels = [session_label(d) for d in corpora.get(q, ())]
        n_corpus.append(len(corpus_labels))
        n_ideal.append(sum(label in correct for label in corpus_labels))
        n_correct.append(len(correct))
        code: dict[str, int] = {}
        seen: set[str] = set()
        row_codes, row_rel = [], []
        for d in ranked.get(q, ()):
            if d in seen:  # a duplicate hit counts once, at its first rank (as from_ranked)
                continue
            seen.add(d)
            label = session_label(d)
            row_codes.append(code.setdefault(label, len(code)))
            row_rel.append(label in correct)
        codes_rows.append(row_codes)
        rel_rows.append(row_rel)
    width = max((len(r) for r in codes_rows), default=0) or 1
    codes = np.full((len(qids), width), -1, dtype=np.int64)
    rel = np.zeros((len(qids), width), dtype=bool)
    for i, (c, r) in enumerate(zip(codes_rows, rel_rows, strict=True)):
        codes[i, : len(c)] = c
        rel[i, : len(r)] = r
    # first occurrence of each (row, label): np.unique returns the first flat index of each key
    keys = np.arange(len(qids))[:, None] * (width + 1) + codes
    valid = codes.ravel() >= 0
    _, first_idx = np.unique(keys.ravel()[valid], return_index=True)
    first = np.zeros(codes.size, dtype=bool)
    first[np.flatnonzero(valid)[first_idx]] = True
    return _Rows(
        first=first.reshape(codes.shape),
        rel=rel,
        n_returned=np.asarray([len(c) for c in codes_rows], dtype=np.int64),
        n_corpus=np.asarray(n_corpus, dtype=np.int64),
        n_ideal=np.asarray(n_ideal, dtype=np.int64),
        n_correct=np.asarray(n_correct, dtype=np.int64),
    )


def _effective_k(rows: _Rows, k: int) -> IntArray:
    """LongMemEval's grown cutoff `e` per row (see the module docstring)."""
    distinct = np.cumsum(rows.first, axis=1)
    reached = distinct >= k
    has = reached.any(axis=1)
    p = np.where(has, np.argmax(reached, axis=1) + 1, np.iinfo(np.int64).max)
    grown = np.where(p <= rows.n_corpus, p, rows.n_corpus + 1)
    return np.where(k > rows.n_corpus, k, grown).astype(np.int64)


def _disc(n: int) -> FloatArray:
    """LongMemEval's discounts for ranks 1..n: 1, then 1 / log2(i) for i >= 2."""
    return np.asarray(1.0 / np.log2(np.maximum(np.arange(1, n + 1), 2)), dtype=np.float64)


def turn2session(
    qrels: Mapping[str, Mapping[str, int]],
    ranked: Mapping[str, Sequence[str]],
    corpora: Mapping[str, Sequence[str]],
    measures: Iterable[Measure | str],
    *,
    rel_threshold: int = DEFAULT_REL_THRESHOLD,
) -> SessionEvaluation:
    """LongMemEval's session measures from turn rankings.

    Args:
        qrels: `{qid: {turn id: grade}}`; a turn is relevant at grade >= `rel_threshold`.
        ranked: `{qid: [turn id, ...]}`, best first (a query absent ranks nothing).
        corpora: `{qid: [turn id, ...]}`, every turn of the query's corpus.
        measures: `session_recall_any@k`, `session_recall_all@k`, `session_ndcg_any@k`.
        rel_threshold: the grade at or above which a judged turn is relevant.

    Edge cases: a query with no relevant turn scores 0 / 1.0 / 0 (LongMemEval's); an empty
    ranking finds nothing; k larger than the corpus keeps e = k.
    """
    parsed = [parse_measure(m) for m in measures]
    other = [str(m) for m in parsed if m.name not in SESSION_MEASURES]
    if other:
        raise UsageError(f"turn2session computes session_* measures only, not {other}")
    qids = sorted(qrels)
    rows = _rows(qids, qrels, ranked, corpora, rel_threshold)
    width = rows.first.shape[1]
    pos = np.arange(1, width + 1)[None, :]
    disc = _disc(width)
    per_query: dict[str, FloatArray] = {}
    short = np.zeros(len(qids), dtype=bool)
    for m in parsed:
        assert m.cutoff is not None  # parse_measure requires one for these
        e = _effective_k(rows, m.cutoff)
        short |= rows.n_returned < np.minimum(e, rows.n_corpus)
        inside = pos <= e[:, None]
        hits = rows.rel & inside
        values: FloatArray
        if m.name == "session_recall_any":
            values = np.asarray(hits.any(axis=1), dtype=np.float64)
        elif m.name == "session_recall_all":
            found = np.count_nonzero(hits & rows.first, axis=1)
            values = (found >= rows.n_correct).astype(np.float64)
        else:
            dcg: FloatArray = np.asarray(hits.astype(np.float64) @ disc, dtype=np.float64)
            n_ideal = np.minimum(rows.n_ideal, e)
            cum = np.concatenate([[0.0], np.cumsum(_disc(int(n_ideal.max(initial=0))))])
            ideal = cum[n_ideal]
            values = np.zeros(len(qids), dtype=np.float64)
            np.divide(dcg, ideal, out=values, where=ideal > 0)
        per_query[str(m)] = values
    return SessionEvaluation(
        query_ids=qids,
        per_query=per_query,
        short=[q for q, s in zip(qids, short, strict=True) if s],
    )


def vacuous_recall_all(ev: Evaluation) -> Evaluation:
    """`ev` with LongMemEval's recall_all@k = 1.0 for queries with no relevant document
    (`all()` of nothing); every other value as it was. Skipped queries (NaN) stay skipped."""
    if not ev.counts.no_relevant:
        return ev
    empty = np.isin(np.asarray(ev.query_ids, dtype=object), ev.counts.no_relevant)
    per_query = dict(ev.per_query)
    for name, values in ev.per_query.items():
        if parse_measure(name).name == "recall_all":
            fixed = values.copy()
            fixed[empty & ~np.isnan(values)] = 1.0
            per_query[name] = fixed
    return replace(ev, per_query=per_query)
