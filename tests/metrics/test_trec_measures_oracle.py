"""trec_eval's official measures and ir_measures' others against their tools, on random cases
with a fresh seed each run (MEMGAUGE_TEST_SEED replays one), to 1e-9.

- pytrec_eval (trec_eval 9.0.8 inside): bpref, infAP, gm_map, map, set_P, set_recall, set_F,
  num_q, num_ret, num_rel, num_rel_ret, and `--depth` (trec_eval's -M), with negative grades
  (pooled, not judged) and tied scores exact in float32.
- iprec_at_recall: trec_eval 10 turns a recall level into a count of relevant documents with
  `lround(level * R)`, trec_eval 9 (and so pytrec_eval) with `(long)(level * R + 0.9)`. A
  transcription of trec_eval's loop, written here from m_iprec_at_recall.c's rules, takes
  either rounding: with 9's it equals pytrec_eval, with 10's memgauge (and trec_eval 10's own
  test outputs, test_trec_eval_files.py).
- ir_measures: RBP(rel=T, p) (its cwl_eval provider), Judged@k, SetP, SetR, SetF, NumRet,
  NumRel, NumRet(rel=T) (NumRelRet), on runs without tied scores (ir_measures' providers break
  ties their own ways; the README's conventions table says how).
- RBP_resid: a transcription of trec_eval's m_rbp_resid.c.
- `evaluate_arrays` equals the dict path on every new measure, negative grades included.
"""

from __future__ import annotations

import math
import os
import secrets
from collections.abc import Callable

import numpy as np
import pytest

from memgauge.metrics import MetricConfig, evaluate, evaluate_arrays

pytrec_eval = pytest.importorskip("pytrec_eval")

Qrels = dict[str, dict[str, int]]
Run = dict[str, dict[str, float]]
LEVELS = (*(i / 10 for i in range(11)), 0.25, 0.75, 0.05, 0.15)


@pytest.fixture
def seed() -> int:
    return int(os.environ.get("MEMGAUGE_TEST_SEED") or secrets.randbits(32))


def _case(
    rng: np.random.Generator, n: int, *, ties: bool = True, negative: bool = True
) -> tuple[Qrels, Run]:
    """Judged queries (grades -2..4, some with nothing relevant), each returned (trec_eval 10
    refuses a judged query absent from the run without -c); ids whose string order is not
    their number order."""
    qrels: Qrels = {}
    run: Run = {}
    for i in range(n):
        q = f"q{i}"
        pool = [f"d{j}" for j in rng.choice(40, size=int(rng.integers(2, 40)), replace=False)]
        judged = rng.choice(pool, size=int(rng.integers(1, min(len(pool), 20) + 1)), replace=False)
        low = -2 if negative else 0
        grades = rng.integers(low, int(rng.choice([1, 3, 5])), size=len(judged))
        # trec_eval crashes on a query judged only below -1 (form_res_rels.c sizes an array
        # by the top grade + 1); memgauge scores it as one with nothing relevant
        grades[0] = max(grades[0], 0)
        qrels[q] = {str(d): int(g) for d, g in zip(judged, grades, strict=True)}
        returned = rng.choice(pool, size=int(rng.integers(1, len(pool) + 1)), replace=False)
        if ties:
            scores = rng.integers(0, 8, size=len(returned)) / 4  # exact in float32
        else:
            scores = rng.permutation(len(returned)) / 8 + 1.0  # distinct, exact in float32
        run[q] = {str(d): float(s) for d, s in zip(returned, scores, strict=True)}
    return qrels, run


def _ranking(scores: dict[str, float]) -> list[str]:
    return sorted(scores, key=lambda d: (scores[d], d), reverse=True)


def _top(run: Run, depth: int) -> Run:
    return {q: {d: s[d] for d in _ranking(s)[:depth]} for q, s in run.items()}


def _close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)


# trec_eval's name -> memgauge's
PYTREC = {
    "bpref": "Bpref",
    "infAP": "infAP",
    "map": "AP",
    "set_P": "SetP",
    "set_recall": "SetR",
    "set_F": "SetF",
    "num_ret": "NumRet",
    "num_rel": "NumRel",
    "num_rel_ret": "NumRelRet",
}


@pytest.mark.parametrize("depth", [None, 7])
def test_official_and_set_measures_equal_pytrec_eval(seed: int, depth: int | None) -> None:
    rng = np.random.default_rng(seed)
    qrels, run = _case(rng, 300)
    measures = [*PYTREC.values(), "gm_map", "NumQ"]
    for level in (1, 2, 3):
        cfg = MetricConfig(level, "linear", missing_from_run="skip")
        ev = evaluate(qrels, run, measures, cfg, depth=depth)
        te_run = run if depth is None else _top(run, depth)
        oracle = pytrec_eval.RelevanceEvaluator(
            qrels, {*PYTREC, "gm_map", "num_q"}, relevance_level=level
        ).evaluate(te_run)
        for i, q in enumerate(ev.query_ids):
            for trec, ours in PYTREC.items():
                got, want = ev.per_query[ours][i], oracle[q][trec]
                assert _close(got, want), f"seed {seed} level {level} {q} {trec}: {got} {want}"
        agg = ev.aggregate()
        logs = [v["gm_map"] for v in oracle.values()]  # per query: log(max(AP, 1e-5))
        assert _close(agg["gm_map"], math.exp(sum(logs) / len(logs))), seed  # type: ignore[arg-type]
        assert agg["NumQ"] == len(oracle)
        for trec in ("num_ret", "num_rel", "num_rel_ret"):
            assert agg[PYTREC[trec]] == sum(v[trec] for v in oracle.values()), (seed, trec)


def _iprec(
    judged: dict[str, int], scores: dict[str, float], level: int, rounding: Callable[[float], int]
) -> dict[float, float]:
    """trec_eval's iprec_at_recall for one query, from its rules (m_iprec_at_recall.c): walk
    the ranking from the bottom, keeping the best precision seen, and give each recall level
    the best precision once its count of relevant documents is reached."""
    rels = [judged.get(d, -1) >= level for d in _ranking(scores)]
    num_rel = sum(1 for g in judged.values() if g >= level)
    num_ret, rel_ret = len(rels), sum(rels)
    cutoffs = {x: rounding(x * num_rel) for x in LEVELS}
    out = dict.fromkeys(LEVELS, 0.0)
    pending = sorted((c, x) for x, c in cutoffs.items() if c <= rel_ret)
    best = rel_ret / num_ret if num_ret else 0.0
    so_far = rel_ret
    for i in range(num_ret, 0, -1):
        if so_far == 0:
            break
        best = max(best, so_far / i)
        if rels[i - 1]:
            while pending and pending[-1][0] == so_far:
                out[pending.pop()[1]] = best
            so_far -= 1
    for _, x in pending:
        out[x] = best
    return out


def _lround(x: float) -> int:
    return math.floor(x + 0.5)  # x >= 0


def _v9(x: float) -> int:
    return int(x + 0.9)


def test_iprec_equals_trec_eval_10_whose_rule_is_trec_eval_9s_but_the_rounding(seed: int) -> None:
    rng = np.random.default_rng(seed)
    qrels, run = _case(rng, 300)
    names = {x: f"iprec_at_recall_{x:.2f}" for x in LEVELS}
    for level in (1, 2):
        oracle = pytrec_eval.RelevanceEvaluator(
            qrels, {f"iprec_at_recall.{','.join(str(x) for x in LEVELS)}"}, relevance_level=level
        ).evaluate(run)
        ev = evaluate(qrels, run, [f"IPrec@{x!r}" for x in LEVELS], MetricConfig(level, "linear"))
        for i, q in enumerate(ev.query_ids):
            v9 = _iprec(qrels[q], run[q], level, _v9)
            v10 = _iprec(qrels[q], run[q], level, _lround)
            for x in LEVELS:
                assert _close(v9[x], oracle[q][names[x]]), (seed, q, x, "transcription")
                assert _close(ev.per_query[f"IPrec@{x!r}"][i], v10[x]), (seed, q, x)


def _rbp_resid(judged: dict[str, int], scores: dict[str, float], p: float) -> float:
    """trec_eval's rbp_resid: p^n plus (1 - p) p^(i-1) for each returned document not judged
    >= 0; left at 0 when there is none."""
    unjudged, total, weight = 0, 0.0, 1.0
    for d in _ranking(scores):
        if judged.get(d, -1) < 0:
            unjudged += 1
            total += weight
        weight *= p
    return weight + (1 - p) * total if unjudged else 0.0


def test_rbp_resid_is_trec_evals(seed: int) -> None:
    rng = np.random.default_rng(seed)
    qrels, run = _case(rng, 300)
    for p in (0.5, 0.8, 0.9, 0.95):
        name = f"RBP_resid(p={p!r})"
        ev = evaluate(qrels, run, [name], MetricConfig(1, "linear"))
        for i, q in enumerate(ev.query_ids):
            assert _close(ev.per_query[name][i], _rbp_resid(qrels[q], run[q], p)), (seed, q, p)


def test_ir_measures_rbp_judged_set_and_counts(seed: int) -> None:
    ir_measures = pytest.importorskip("ir_measures")
    pytest.importorskip("cwl")
    from ir_measures import RBP, Judged, NumRel, NumRet, SetF, SetP, SetR

    rng = np.random.default_rng(seed)
    qrels, run = _case(rng, 150, ties=False)
    for level in (1, 2):
        pairs = {
            RBP(rel=level, p=0.8): "RBP(p=0.8)",
            RBP(rel=level, p=0.95): "RBP(p=0.95)",
            RBP(rel=level, p=0.5): "RBP(p=0.5)",
            Judged @ 1: "Judged@1",
            Judged @ 5: "Judged@5",
            Judged @ 10: "Judged@10",
            Judged: "Judged",
            SetP(rel=level): "SetP",
            SetR(rel=level): "SetR",
            SetF(rel=level): "SetF",
            NumRet: "NumRet",
            NumRet(rel=level): "NumRelRet",
        }
        if level == 1:  # no ir_measures provider counts NumRel at another level
            pairs[NumRel] = "NumRel"
        ev = evaluate(qrels, run, list(pairs.values()), MetricConfig(level, "linear"))
        row = {q: i for i, q in enumerate(ev.query_ids)}
        seen = 0
        for metric in ir_measures.iter_calc(list(pairs), qrels, run):
            ours = ev.per_query[pairs[metric.measure]][row[metric.query_id]]
            assert _close(ours, float(metric.value)), (seed, level, metric)
            seen += 1
        assert seen == len(pairs) * len(qrels), seed


def test_the_array_entry_point_equals_the_dict_path(seed: int) -> None:
    """Negative grades reach `evaluate_arrays` as pooled-unjudged too (bpref, infAP, Judged)."""
    rng = np.random.default_rng(seed)
    qrels, run = _case(rng, 200)
    qids = sorted(qrels)
    width = max(len(run[q]) for q in qids)
    jwidth = max(len(qrels[q]) for q in qids)
    run_ids = np.full((len(qids), width), -1)
    run_scores = np.zeros((len(qids), width))
    qrel_ids = np.full((len(qids), jwidth), -1)
    qrel_grades = np.zeros((len(qids), jwidth), dtype=np.int64)
    for i, q in enumerate(qids):
        docs = list(run[q])
        run_ids[i, : len(docs)] = [int(d[1:]) for d in docs]
        run_scores[i, : len(docs)] = list(run[q].values())
        judged = list(qrels[q])
        qrel_ids[i, : len(judged)] = [int(d[1:]) for d in judged]
        qrel_grades[i, : len(judged)] = list(qrels[q].values())
    measures = ["Bpref", "infAP", "Judged@5", "IPrec@0.3", "RBP(p=0.8)", "RBP_resid(p=0.9)"]
    measures += ["SetF", "NumRelRet", "NumRet", "gm_map"]
    # zero-padded ids: integer order equals string order, so tie-breaking agrees
    padded = {q: {f"{int(d[1:]):02d}": s for d, s in run[q].items()} for q in qids}
    pq = {q: {f"{int(d[1:]):02d}": g for d, g in qrels[q].items()} for q in qids}
    cfg = MetricConfig(1, "linear")
    dicts = evaluate(pq, padded, measures, cfg)
    arrays = evaluate_arrays(
        run_ids, run_scores, qrel_ids, qrel_grades, measures, cfg, query_ids=qids
    )
    for m in measures:
        np.testing.assert_allclose(arrays.per_query[m], dicts.per_query[m], atol=1e-12, err_msg=m)
