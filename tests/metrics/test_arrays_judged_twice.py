"""A document judged twice in one row of qrel arrays counts once, at its highest grade, in every
measure and through every array entry point: the same values as the dict API (one grade per
document) over the de-duplicated judgments."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from metrics_pin import CONFIGS, MEASURES

from memgauge.metrics import MetricConfig, evaluate, evaluate_arrays, evaluate_judged, order_run
from memgauge.metrics.arrays import from_arrays
from memgauge.metrics.ir import Evaluation

Rows = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]


def _name(d: int) -> str:
    return f"{d:03d}"  # one width: string order is integer order, so ties break alike


def _as_dicts(
    rid: np.ndarray, rsc: np.ndarray, qid: np.ndarray, qgr: np.ndarray, width: int = 1
) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]:
    """The qrels each judged document once at its highest grade; the run without its empty
    rows (an array row of padding only is a query the run does not have). Rows are named by
    their number, `width` digits (the dict API orders queries by name)."""
    qrels: dict[str, dict[str, int]] = {}
    for i in range(len(qid)):
        row: dict[str, int] = {}
        for d, g in zip(qid[i].tolist(), qgr[i].tolist(), strict=True):
            if d >= 0:
                row[_name(d)] = max(g, row.get(_name(d), g))
        qrels[f"{i:0{width}d}"] = row
    run = {
        f"{i:0{width}d}": {
            _name(d): s for d, s in zip(rid[i].tolist(), rsc[i].tolist(), strict=True) if d >= 0
        }
        for i in range(len(rid))
        if (rid[i] >= 0).any()
    }
    return qrels, run


# the element strategies built once, not in each draw (building one costs Hypothesis more
# than drawing from it)
ROWS, WIDTH = st.integers(1, 4), st.integers(1, 8)
DOC, SCORE, GRADE = st.integers(0, 9), st.integers(0, 2), st.integers(-2, 4)
JUDGED_ID = st.integers(0, 5) | st.just(-1)


@st.composite
def batches(draw: st.DrawFn) -> Rows:
    """Rows of distinct returned ids (padding anywhere) with tied scores, and judged ids from
    a pool of 6, so that most rows judge some document two or three times, at grades from -2
    to 4 (below 0: unjudged), padding mixed in."""
    n = draw(ROWS)
    width = draw(WIDTH)
    judged = draw(WIDTH)
    rid = np.full((n, width), -1, dtype=np.int64)
    rsc = np.zeros((n, width))
    qid = np.full((n, judged), -1, dtype=np.int64)
    qgr = np.zeros((n, judged), dtype=np.int64)
    for i in range(n):
        ids = draw(st.lists(DOC, max_size=width, unique=True))
        cols = draw(st.permutations(range(width)))[: len(ids)]
        rid[i, cols] = ids
        rsc[i, cols] = draw(st.lists(SCORE, min_size=len(ids), max_size=len(ids)))
        jids = draw(st.lists(JUDGED_ID, max_size=judged))
        qid[i, : len(jids)] = jids
        qgr[i] = draw(st.lists(GRADE, min_size=judged, max_size=judged))
    return rid, rsc, qid, qgr


def _ranked(rid: np.ndarray, rsc: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each row in trec_eval order, padding last."""
    order = np.lexsort((-rid, -np.where(rid >= 0, rsc, -np.inf)), axis=1)
    return np.take_along_axis(rid, order, axis=1), np.take_along_axis(rsc, order, axis=1)


def _within(a: np.ndarray, b: np.ndarray) -> bool:
    """What assert_allclose(rtol=0, atol=1e-12) passes, at a quarter of its cost (it runs
    thousands of times per test; assert_allclose still judges, and words, any difference)."""
    return a.shape == b.shape and bool(
        np.all((np.abs(a - b) <= 1e-12) | (a == b) | (np.isnan(a) & np.isnan(b)))
    )


def _same(got: Evaluation, want: Evaluation) -> None:
    for m in want.per_query:
        a, b = np.asarray(got.per_query[m]), np.asarray(want.per_query[m])
        if not _within(a, b):
            np.testing.assert_allclose(a, b, rtol=0, atol=1e-12)
    assert got.counts.as_dict() == want.counts.as_dict()


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=batches(), config=st.sampled_from(sorted(CONFIGS)), depth=st.integers(1, 8))
def test_a_document_judged_twice_counts_once_at_its_highest_grade(
    case: Rows, config: str, depth: int
) -> None:
    rid, rsc, qid, qgr = case
    cfg = CONFIGS[config]
    names = [str(i) for i in range(len(rid))]
    qrels, run = _as_dicts(rid, rsc, qid, qgr)
    want = evaluate(qrels, run, MEASURES, cfg)
    cut = {q: {d: docs[d] for d in order_run(docs)[:depth]} for q, docs in run.items()}
    want_cut = evaluate(qrels, cut, MEASURES, cfg)
    pre_ids, pre_scores = _ranked(rid, rsc)
    for got, expected in [
        (evaluate_arrays(rid, rsc, qid, qgr, MEASURES, cfg, query_ids=names), want),
        (
            evaluate_arrays(rid, rsc, qid, qgr, MEASURES, cfg, query_ids=names, depth=depth),
            want_cut,
        ),
        (evaluate_judged(from_arrays(rid, rsc, qid, qgr, query_ids=names), MEASURES, cfg), want),
        (evaluate_arrays(pre_ids, pre_scores, qid, qgr, MEASURES, cfg, ranked=True), want),
        (evaluate_arrays(pre_ids, None, qid, qgr, MEASURES, cfg, ranked=True), want),
        (
            evaluate_arrays(pre_ids, None, qid, qgr, MEASURES, cfg, ranked=True, depth=depth),
            want_cut,
        ),
        (
            evaluate_judged(from_arrays(pre_ids, None, qid, qgr, ranked=True), MEASURES, cfg),
            want,
        ),
    ]:
        _same(got, expected)


def test_the_issue_example_gives_trec_evals_values() -> None:
    ev = evaluate_arrays(
        [[5, 7]],
        [[1.0, 0.5]],
        [[5, 5]],
        [[1, 1]],
        ["Recall@1", "R-prec", "AP", "nDCG"],
        MetricConfig(1, "linear"),
    )
    assert {m: v.tolist() for m, v in ev.per_query.items()} == {
        "Recall@1": [1.0],
        "R-prec": [1.0],
        "AP": [1.0],
        "nDCG": [1.0],
    }
    # the highest of the copies' grades, wherever it stands among them
    for grades in ([[3, 1, 0]], [[1, 0, 3]], [[-1, 3, 3]]):
        ev = evaluate_arrays([[5, 6]], None, [[5, 5, 5]], grades, ["R-prec", "nDCG"], ranked=True)
        assert ev.per_query["R-prec"].tolist() == [1.0]
        assert ev.per_query["nDCG"].tolist() == [1.0]


def test_ranked_rows_need_no_scores_and_unranked_rows_do() -> None:
    ev = evaluate_arrays([[7, 5]], None, [[5]], [[2]], ["RR", "P@2"], ranked=True)
    assert ev.per_query["RR"].tolist() == [0.5]
    assert ev.per_query["P@2"].tolist() == [0.5]
    with pytest.raises(ValueError, match="ranked=True"):
        evaluate_arrays([[7, 5]], None, [[5]], [[2]], ["RR"])


@pytest.mark.parametrize("lookup", ["hash", "sorted"])
def test_both_lookups_and_small_chunks_count_a_repeat_once(
    lookup: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memgauge.metrics import arrays as arrays_module

    monkeypatch.setattr(arrays_module, "_CELLS", 64 * 12)  # 64-row chunks, the floor
    if lookup == "sorted":  # the lookup of rows with very many judgments, on every row
        monkeypatch.setattr(arrays_module, "_HASH_JUDGED", 1)
    rng = np.random.default_rng(27)
    n, width, judged = 300, 12, 10
    rid = np.stack([rng.choice(30, width, replace=False) for _ in range(n)])
    rid[rng.random((n, width)) < 0.1] = -1
    rsc = rng.integers(0, 4, size=(n, width)) / 2
    qid = rng.integers(-1, 15, size=(n, judged))  # most rows judge some document twice
    qgr = rng.integers(-2, 5, size=(n, judged))
    cfg = CONFIGS["l1_exp_one"]
    want = evaluate(*_as_dicts(rid, rsc, qid, qgr, width=3), MEASURES, cfg)
    got = evaluate_arrays(rid, rsc, qid, qgr, MEASURES, cfg, query_ids=want.query_ids, workers=2)
    assert (
        int((np.sort(qid, axis=1)[:, 1:] == np.sort(qid, axis=1)[:, :-1]).any(axis=1).sum())
        > n // 2
    )
    _same(got, want)
