"""What the metric golden test pins: every per-query value of every IR measure, through every
entry point (dicts, ranked lists, unranked and pre-ranked arrays, with and without a depth),
under four sets of conventions, on a seeded random batch with ties, padding, negative and zero
grades, queries missing from the run and empty results.

Values are pinned bit for bit: one SHA-256 per (entry point, conventions, measure) over the
float64 bytes, so that a refactor of the scoring code must reproduce every value exactly, not
to a tolerance. `python tests/metrics/metrics_pin.py` rewrites `metrics_golden.json`; run it
only before a refactor, and commit the file on its own.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import numpy as np

from memgauge.metrics import MetricConfig, evaluate, evaluate_judged, evaluate_ranked
from memgauge.metrics.ir import Evaluation

GOLDEN = Path(__file__).resolve().parent / "metrics_golden.json"

MEASURES = [
    "P@5",
    "Recall@10",
    "RR",
    "RR@3",
    "AP",
    "AP@10",
    "R-prec",
    "nDCG",
    "nDCG@5",
    "Hit@3",
    "recall_any@5",
    "recall_all@10",
    "ndcg_any@5",
]
CONFIGS = {
    "memgauge": MetricConfig(),
    "trec_eval": MetricConfig(
        rel_threshold=1, gain="linear", no_relevant="skip", missing_from_run="skip"
    ),
    "l0_one": MetricConfig(rel_threshold=0, gain="exp", no_relevant="one"),
    "l1_exp_one": MetricConfig(rel_threshold=1, gain="exp", no_relevant="one"),
}


def batch(seed: int = 7, n: int = 150) -> dict[str, Any]:
    """A random batch as arrays (int ids, -1 padding) and as the dicts and lists they mean."""
    rng = np.random.default_rng(seed)
    depth, width = 30, 9
    run_ids = np.full((n, depth), -1, dtype=np.int64)
    run_scores = np.zeros((n, depth))
    qrel_ids = np.full((n, width), -1, dtype=np.int64)
    qrel_grades = np.zeros((n, width), dtype=np.int64)
    for i in range(n):
        m = int(rng.integers(0, depth + 1)) if i % 10 else 0  # every 10th query: nothing
        run_ids[i, :m] = rng.choice(40, size=m, replace=False)
        run_scores[i, :m] = rng.integers(0, 6, size=m) / 2  # few distinct scores: ties
        j = int(rng.integers(0, width + 1))
        qrel_ids[i, :j] = rng.choice(40, size=j, replace=False)
        qrel_grades[i, :j] = rng.integers(-1, 5, size=j)
    qrels = {
        f"q{i:03d}": {
            f"d{d}": int(g) for d, g in zip(qrel_ids[i], qrel_grades[i], strict=True) if d >= 0
        }
        for i in range(n)
    }
    run = {
        f"q{i:03d}": {
            f"d{d}": float(s) for d, s in zip(run_ids[i], run_scores[i], strict=True) if d >= 0
        }
        for i in range(n)
        if i % 7  # every 7th query is absent from the run
    }
    # a memory system's hit lists, with a repeated hit now and then
    ranked = {q: [*docs, *list(docs)[:1]] for q, docs in run.items()}
    order = np.lexsort((-run_ids, -np.where(run_ids >= 0, run_scores, -np.inf)), axis=1)
    return {
        "qrels": qrels,
        "run": run,
        "ranked": ranked,
        "arrays": (run_ids, run_scores, qrel_ids, qrel_grades),
        "pre": (
            np.take_along_axis(run_ids, order, axis=1),
            np.take_along_axis(run_scores, order, axis=1),
        ),
        "names": [f"q{i:03d}" for i in range(n)],
    }


def _digest(ev: Evaluation) -> dict[str, Any]:
    out: dict[str, Any] = {
        m: hashlib.sha256(np.ascontiguousarray(v, dtype=np.float64).tobytes()).hexdigest()
        for m, v in ev.per_query.items()
    }
    out["counts"] = ev.counts.as_dict()
    return out


def pins() -> dict[str, Any]:
    """Digests of every entry point x conventions on `batch()`."""
    from memgauge.metrics.arrays import from_arrays

    b = batch()
    rid, rsc, qid, qgr = b["arrays"]
    pre_ids, pre_scores = b["pre"]
    out: dict[str, Any] = {}
    for cname, cfg in CONFIGS.items():
        paths = {
            "dicts": evaluate(b["qrels"], b["run"], MEASURES, cfg),
            "ranked_lists": evaluate_ranked(b["qrels"], b["ranked"], MEASURES, cfg),
            "arrays": evaluate_judged(
                from_arrays(rid, rsc, qid, qgr, query_ids=b["names"]), MEASURES, cfg
            ),
            "arrays_depth5": evaluate_judged(
                from_arrays(rid, rsc, qid, qgr, depth=5), MEASURES, cfg
            ),
            "pre_ranked": evaluate_judged(
                from_arrays(pre_ids, pre_scores, qid, qgr, ranked=True), MEASURES, cfg
            ),
        }
        for pname, ev in paths.items():
            out[f"{pname}/{cname}"] = _digest(ev)
    return out


if __name__ == "__main__":
    GOLDEN.write_text(json.dumps(pins(), indent=1, sort_keys=True) + "\n")
    print(f"wrote {GOLDEN}")
