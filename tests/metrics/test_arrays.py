"""`evaluate_arrays`, the chunked and threaded array entry point: equal bit for bit to scoring
the grade matrix, whatever the chunking, the threads and the ids (hash-bucket collisions,
ids beyond 32 bits, rows with hundreds of judgments)."""

from __future__ import annotations

import numpy as np
import pytest
from metrics_pin import CONFIGS, MEASURES, batch

from memgauge.metrics import MetricConfig, evaluate, evaluate_arrays, evaluate_judged
from memgauge.metrics import arrays as arrays_module
from memgauge.metrics.arrays import RowNames, from_arrays


def _same(a: dict[str, np.ndarray], b: dict[str, np.ndarray]) -> None:
    assert a.keys() == b.keys()
    for k in a:
        assert a[k].tobytes() == b[k].tobytes(), k  # bit for bit, NaN included


@pytest.mark.parametrize("lookup", ["hash", "sorted"])
@pytest.mark.parametrize("workers", [1, 3])
@pytest.mark.parametrize("config", sorted(CONFIGS))
def test_equal_to_the_grade_matrix_in_many_small_chunks(
    lookup: str, workers: int, config: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(arrays_module, "_CELLS", 30 * 7)  # 64-row chunks (the floor)
    if lookup == "sorted":  # the lookup of rows with very many judgments, on every row
        monkeypatch.setattr(arrays_module, "_HASH_JUDGED", 1)
    monkeypatch.setattr(arrays_module, "_GATHER_CELLS", 50)  # rank one entry's row at a time
    b = batch(n=300)
    rid, rsc, qid, qgr = b["arrays"]
    pre_ids, pre_scores = b["pre"]
    cfg = CONFIGS[config]
    for args, kw in [
        ((rid, rsc), {}),
        ((rid, rsc), {"depth": 4}),
        ((pre_ids, pre_scores), {"ranked": True}),
        ((pre_ids, pre_scores), {"ranked": True, "depth": 7}),
    ]:
        want = evaluate_judged(from_arrays(*args, qid, qgr, **kw), MEASURES, cfg)
        got = evaluate_arrays(*args, qid, qgr, MEASURES, cfg, workers=workers, **kw)
        _same(got.per_query, want.per_query)
        assert got.counts == want.counts
        assert list(got.query_ids) == list(want.query_ids)


def _dict_case(
    run_ids: np.ndarray, run_scores: np.ndarray, qrel_ids: np.ndarray, qrel_grades: np.ndarray
) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]:
    # ids zero-padded to one width: string order is integer order, so ties break alike
    def name(d: int) -> str:
        return f"{d:020d}"

    qrels = {
        f"{i:03d}": {
            name(d): int(g) for d, g in zip(qrel_ids[i], qrel_grades[i], strict=True) if d >= 0
        }
        for i in range(len(qrel_ids))
    }
    run = {
        f"{i:03d}": {
            name(d): float(s) for d, s in zip(run_ids[i], run_scores[i], strict=True) if d >= 0
        }
        for i in range(len(run_ids))
    }
    return qrels, run


@pytest.mark.parametrize(
    "scale",
    [
        1 << 16,  # structure in the low bits: the same low 16 bits for every id
        1_000_000,
        (1 << 40) + 3,  # ids beyond 32 bits
        1,
    ],
)
def test_ids_that_share_hash_buckets_or_exceed_32_bits(scale: int) -> None:
    rng = np.random.default_rng(scale % 1000)
    n, depth, judged = 40, 30, 12
    run_ids = np.stack([rng.choice(60, depth, replace=False) for _ in range(n)]) * scale
    run_scores = rng.integers(0, 4, size=(n, depth)) / 2
    qrel_ids = np.stack([rng.choice(60, judged, replace=False) for _ in range(n)]) * scale
    qrel_grades = rng.integers(-1, 4, size=(n, judged))
    run_ids[::5, -4:] = -1  # padding
    qrel_ids[::3, -2:] = -1
    measures = ["nDCG@10", "AP", "RR", "P@5", "R-prec", "Recall@20"]
    cfg = MetricConfig(rel_threshold=1, gain="linear")
    got = evaluate_arrays(run_ids, run_scores, qrel_ids, qrel_grades, measures, cfg)
    want = evaluate(*_dict_case(run_ids, run_scores, qrel_ids, qrel_grades), measures, cfg)
    for m in measures:
        np.testing.assert_allclose(got.per_query[m], want.per_query[m], atol=1e-12)


def test_hundreds_of_judgments_per_row_and_a_doc_judged_twice() -> None:
    rng = np.random.default_rng(3)
    n, depth, judged = 6, 80, 300  # over 254 judged columns: a 16-bit hash table
    run_ids = np.stack([rng.choice(1000, depth, replace=False) for _ in range(n)])
    run_scores = rng.integers(0, 6, size=(n, depth)) / 5
    qrel_ids = np.stack([rng.choice(1000, judged, replace=False) for _ in range(n)])
    qrel_grades = rng.integers(0, 4, size=(n, judged))
    measures = ["nDCG@20", "AP", "P@10", "R-prec"]
    got = evaluate_arrays(run_ids, run_scores, qrel_ids, qrel_grades, measures)
    want = evaluate(*_dict_case(run_ids, run_scores, qrel_ids, qrel_grades), measures)
    for m in measures:
        np.testing.assert_allclose(got.per_query[m], want.per_query[m], atol=1e-12)
    # the same document judged twice in a row keeps its highest grade (relevant at >= 2)
    for grades in ([[1, 3, 0]], [[3, 1, 0]]):
        twice = evaluate_arrays([[5, 6]], [[2.0, 1.0]], [[5, 5, 6]], grades, ["P@1"])
        assert twice.per_query["P@1"].tolist() == [1.0]


def test_unranked_scores_must_be_finite_and_ranked_rows_do_not_read_them() -> None:
    with pytest.raises(ValueError, match="finite"):
        evaluate_arrays([[1, 2]], [[np.nan, 1.0]], [[1]], [[1]], ["RR"])
    ev = evaluate_arrays([[1, 2]], [[np.nan, 1.0]], [[2]], [[2]], ["RR"], ranked=True)
    assert ev.per_query["RR"].tolist() == [0.5]


def test_default_query_ids_are_row_numbers_made_when_read() -> None:
    ev = evaluate_arrays(
        [[1], [-1], [2]], [[1.0], [0.0], [1.0]], [[1], [3], [-1]], [[2], [2], [0]], ["RR"]
    )
    names = ev.query_ids
    assert isinstance(names, RowNames)
    assert len(names) == 3
    assert names[0] == "0"
    assert names[-1] == "2"
    assert names[1:] == ["1", "2"]
    assert list(names) == ["0", "1", "2"]
    assert names == ["0", "1", "2"]
    assert names != "012"
    assert RowNames(1) != "0"
    assert ev.counts.missing_from_run == ["1"]
    assert ev.counts.no_relevant == ["2"]


def test_dict_ranks_equal_when_their_rows_are_gathered_a_few_at_a_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from memgauge.metrics import ranking

    b = batch(n=300)
    want = evaluate(b["qrels"], b["run"], MEASURES, CONFIGS["trec_eval"])
    monkeypatch.setattr(ranking, "_BLOCK_CELLS", 40)  # one query per block, a document a time
    got = evaluate(b["qrels"], b["run"], MEASURES, CONFIGS["trec_eval"])
    _same(got.per_query, want.per_query)


def test_runs_where_most_scores_tie_rank_ids_as_integers() -> None:
    """More tied pairs than entries switches from comparing strings pair by pair to integer
    ranks of the ids: both must give trec_eval's order."""
    pytrec_eval = pytest.importorskip("pytrec_eval")
    rng = np.random.default_rng(11)
    docs = [f"d{i}" for i in range(300)]  # string order differs from number order
    run = {
        f"q{q}": {d: float(rng.integers(0, 2)) for d in rng.choice(docs, 200, replace=False)}
        for q in range(20)
    }
    qrels = {
        f"q{q}": {d: int(rng.integers(0, 3)) for d in rng.choice(docs, 60, replace=False)}
        for q in range(20)
    }
    cfg = MetricConfig(rel_threshold=1, gain="linear")
    ours = evaluate(qrels, run, ["AP@50", "nDCG@20", "P@10", "R-prec"], cfg)
    theirs = pytrec_eval.RelevanceEvaluator(
        qrels, {"map_cut.50", "ndcg_cut.20", "P.10", "Rprec"}
    ).evaluate(run)
    for m, t in [
        ("AP@50", "map_cut_50"),
        ("nDCG@20", "ndcg_cut_20"),
        ("P@10", "P_10"),
        ("R-prec", "Rprec"),
    ]:
        want = [theirs[q][t] for q in ours.query_ids]
        np.testing.assert_allclose(ours.per_query[m], want, atol=1e-12)


def test_rows_with_thousands_of_judgments_are_matched_by_sorting() -> None:
    rng = np.random.default_rng(5)
    n, depth, judged = 4, 60, 1500  # over _HASH_JUDGED judged columns
    run_ids = np.stack([rng.choice(4000, depth, replace=False) for _ in range(n)])
    run_scores = rng.integers(0, 6, size=(n, depth)) / 5
    qrel_ids = np.stack([rng.choice(4000, judged, replace=False) for _ in range(n)])
    qrel_grades = rng.integers(-1, 4, size=(n, judged))
    qrel_ids[1, :700] = -1  # padding
    measures = ["nDCG@20", "AP", "P@10", "R-prec"]
    got = evaluate_arrays(run_ids, run_scores, qrel_ids, qrel_grades, measures)
    want = evaluate(*_dict_case(run_ids, run_scores, qrel_ids, qrel_grades), measures)
    for m in measures:
        np.testing.assert_allclose(got.per_query[m], want.per_query[m], atol=1e-12)


def test_a_ranked_row_with_a_hit_past_leading_padding_is_not_empty() -> None:
    ev = evaluate_arrays([[-1, 5]], [[0.0, 1.0]], [[5]], [[2]], ["RR@1"], ranked=True)
    assert ev.counts.empty_result == []
