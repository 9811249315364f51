"""IR metric throughput: memgauge vs ranx vs pytrec-eval-terrier, in one run, on the same data.

    python benchmarks/bench_metrics.py [--queries 100000] [--million] [--repeat 3]

nDCG@10, RR@10, Recall@10 and AP@100 computed together under trec_eval's conventions, on a
synthetic run (`synthetic.py`) of n queries x 100 results with tied scores and about 10 graded
judgments per query. Every implementation runs `--repeat` times, interleaved; the table gives
the minimum and the median of wall time and of CPU time (user + system of this process, so
that work on both cores counts twice).

- Arrays (every size): memgauge's `evaluate_arrays` on pre-ranked and on unranked arrays, one
  thread per core; ranx's numba kernels (`prange`: both cores) on its typed lists, built from
  the same pre-ranked arrays outside the timer and compiled by a warm-up call.
- Dicts (--queries only; a million dict queries need over 20 GB): `{qid: {docid: ...}}` with
  string ids, read by pytrec_eval (its parsing inside the timer) and by memgauge's `evaluate`.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from memgauge.metrics import MetricConfig, evaluate, evaluate_arrays  # noqa: E402
from synthetic import Synthetic, make  # noqa: E402

MEASURES = ["nDCG@10", "RR@10", "Recall@10", "AP@100"]
TREC = {"ndcg_cut.10": "ndcg_cut_10", "recall.10": "recall_10", "map_cut.100": "map_cut_100"}
CFG = MetricConfig(rel_threshold=1, gain="linear")  # trec_eval's conventions, to compare values


def timed(fns: dict[str, Callable[[], Any]], repeat: int) -> dict[str, dict[str, float]]:
    """Run each function `repeat` times, interleaved; min and median of wall and CPU time."""
    walls: dict[str, list[float]] = {k: [] for k in fns}
    cpus: dict[str, list[float]] = {k: [] for k in fns}
    for _ in range(repeat):
        for name, fn in fns.items():
            w, c = time.perf_counter(), time.process_time()
            fn()
            walls[name].append(time.perf_counter() - w)
            cpus[name].append(time.process_time() - c)
    return {
        k: {
            "wall_min": min(walls[k]),
            "wall_med": statistics.median(walls[k]),
            "cpu_min": min(cpus[k]),
            "cpu_med": statistics.median(cpus[k]),
        }
        for k in fns
    }


def table(n: int, rows: dict[str, dict[str, float]]) -> None:
    print(f"\n{n:,} queries x 100 results")
    print("| implementation | wall min (s) | wall median (s) | CPU min (s) | CPU median (s) |")
    print("|---|---:|---:|---:|---:|")
    for name, t in rows.items():
        print(
            f"| {name} | {t['wall_min']:.3f} | {t['wall_med']:.3f} | {t['cpu_min']:.3f} "
            f"| {t['cpu_med']:.3f} |"
        )


def pre_ranked(s: Synthetic) -> tuple[np.ndarray, np.ndarray]:
    """Rows in trec_eval order (score desc, then id desc), as a ranked array input is."""
    order = np.lexsort((-s.run_ids, -s.run_scores), axis=1)
    return np.take_along_axis(s.run_ids, order, axis=1), np.take_along_axis(
        s.run_scores, order, axis=1
    )


def ranx_lists(s: Synthetic, ids: np.ndarray, scores: np.ndarray) -> tuple[Any, Any]:
    """ranx's typed lists (one (k, 2) float64 array per query: doc id, score or grade; qrels by
    grade descending, as `Qrels.to_typed_list` makes them) straight from the arrays."""
    from numba import njit
    from numba.typed import List as TypedList

    @njit(cache=False)  # type: ignore[misc]
    def build(a: np.ndarray, b: np.ndarray, by_value: bool) -> Any:
        out = TypedList()
        for i in range(a.shape[0]):
            keep = a[i] >= 0
            x, y = a[i][keep].astype(np.float64), b[i][keep].astype(np.float64)
            if by_value:
                o = np.argsort(-y, kind="mergesort")
                x, y = x[o], y[o]
            out.append(np.column_stack((x, y)))
        return out

    return build(s.qrel_ids, s.qrel_grades, True), build(ids, scores, False)


def ranx_fn(qrels: Any, run: Any) -> Callable[[], dict[str, np.ndarray]]:
    from ranx import metrics as rm

    def go() -> dict[str, np.ndarray]:
        return {
            "nDCG@10": rm.ndcg(qrels, run, 10, 1),
            "RR@10": rm.reciprocal_rank(qrels, run, 10, 1),
            "Recall@10": rm.recall(qrels, run, 10, 1),
            "AP@100": rm.average_precision(qrels, run, 100, 1),
        }

    return go


def arrays_size(n: int, repeat: int) -> None:
    s = make(n)
    ids, scores = pre_ranked(s)
    qtl, rtl = ranx_lists(s, ids, scores)
    ranx = ranx_fn(qtl, rtl)
    theirs = ranx()  # numba compiles here
    ours = evaluate_arrays(ids, scores, s.qrel_ids, s.qrel_grades, MEASURES, CFG, ranked=True)
    rows = timed(
        {
            "memgauge, pre-ranked arrays": lambda: evaluate_arrays(
                ids, scores, s.qrel_ids, s.qrel_grades, MEASURES, CFG, ranked=True
            ),
            "ranx, typed lists (after compile)": ranx,
            "memgauge, unranked arrays (ranks too)": lambda: evaluate_arrays(
                s.run_ids, s.run_scores, s.qrel_ids, s.qrel_grades, MEASURES, CFG
            ),
        },
        repeat,
    )
    table(n, rows)
    m, r = rows["memgauge, pre-ranked arrays"], rows["ranx, typed lists (after compile)"]
    print(
        f"pre-ranked arrays vs ranx: {r['wall_min'] / m['wall_min']:.2f}x (wall, min), "
        f"{r['wall_med'] / m['wall_med']:.2f}x (wall, median), "
        f"{r['cpu_min'] / m['cpu_min']:.2f}x (CPU, min)"
    )
    diffs = {k: float(np.max(np.abs(ours.per_query[k] - theirs[k]))) for k in MEASURES}
    print(
        "max |memgauge - ranx| per measure: " + ", ".join(f"{k} {v:.1e}" for k, v in diffs.items())
    )


def dicts(n: int, repeat: int) -> None:
    import pytrec_eval

    s = make(n)
    qd, rd = s.dicts()

    def trec() -> dict[str, dict[str, float]]:
        ev = pytrec_eval.RelevanceEvaluator(qd, set(TREC) | {"recip_rank"})
        return ev.evaluate(rd)  # type: ignore[no-any-return]

    rows = timed(
        {
            "pytrec_eval, dicts (its parsing included)": trec,
            "memgauge, dicts (conversion included)": lambda: evaluate(qd, rd, MEASURES, CFG),
        },
        repeat,
    )
    table(n, rows)
    t, m = (
        rows["pytrec_eval, dicts (its parsing included)"],
        rows["memgauge, dicts (conversion included)"],
    )
    print(
        f"dicts vs pytrec_eval: {t['cpu_min'] / m['cpu_min']:.2f}x (CPU, min), "
        f"{t['cpu_med'] / m['cpu_med']:.2f}x (CPU, median)"
    )
    ours = evaluate(qd, rd, MEASURES, CFG).per_query
    theirs = trec()
    qids = sorted(qd)
    diff = max(
        float(np.max(np.abs(ours[m] - np.array([theirs[q][t] for q in qids]))))
        for m, t in zip(["nDCG@10", "Recall@10", "AP@100"], TREC.values(), strict=True)
    )
    print(f"max |memgauge - trec_eval| over nDCG@10, Recall@10, AP@100: {diff:.1e}")


COLD = {
    "memgauge": """
import json, sys, time
t = time.perf_counter()
sys.path.insert(0, '.')
from synthetic import make
from memgauge.metrics import MetricConfig, evaluate_arrays
s = make(1000)
evaluate_arrays(s.run_ids, s.run_scores, s.qrel_ids, s.qrel_grades,
                ['nDCG@10', 'RR@10', 'Recall@10', 'AP@100'], MetricConfig(rel_threshold=1, gain='linear'))
print(json.dumps({'in_process_s': time.perf_counter() - t}))
""",
    "ranx": """
import json, sys, time
t = time.perf_counter()
sys.path.insert(0, '.')
from synthetic import make
from ranx import Qrels, Run, evaluate
s = make(1000)
q, r = s.dicts()
evaluate(Qrels(q), Run(r), ['ndcg@10', 'mrr@10', 'recall@10', 'map@100'])
print(json.dumps({'in_process_s': time.perf_counter() - t}))
""",
}

RSS = """
import json, sys, time
sys.path.insert(0, '.')
from synthetic import make
from memgauge.metrics import MetricConfig, evaluate_arrays
s = make({n})
def status(key):
    return int([l for l in open('/proc/self/status') if l.startswith(key)][0].split()[1]) / 1024
before = status('VmRSS')
evaluate_arrays(s.run_ids, s.run_scores, s.qrel_ids, s.qrel_grades,
                ['nDCG@10', 'RR@10', 'Recall@10', 'AP@100'], MetricConfig(rel_threshold=1, gain='linear'))
# VmHWM, not ru_maxrss: the latter carries the parent's peak across fork+exec
print(json.dumps({{'peak_rss_mb': status('VmHWM'), 'data_rss_mb': before}}))
"""


def in_subprocess(code: str) -> dict[str, float]:
    """Run `code` in a fresh interpreter; it prints a JSON dict. Wall time includes imports."""
    t = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=HERE
    )
    return {**json.loads(out.stdout.strip().splitlines()[-1]), "wall_s": time.perf_counter() - t}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--queries", type=int, default=100_000)
    ap.add_argument("--million", action="store_true", help="also time 1,000,000 queries")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    print(f"{os.cpu_count()} CPUs; load average at start: {os.getloadavg()}")
    sizes = [args.queries] + ([1_000_000] if args.million else [])
    for n in sizes:
        arrays_size(n, args.repeat)
    dicts(args.queries, args.repeat)
    cold = {k: in_subprocess(code) for k, code in COLD.items()}
    print(
        "\ncold, fresh process, 1,000 queries incl. imports: "
        + ", ".join(
            f"{k} {v['wall_s']:.2f} s (in-process {v['in_process_s']:.2f} s)"
            for k, v in cold.items()
        )
    )
    for n in sizes:
        mem = in_subprocess(RSS.format(n=n))
        print(
            f"{n:,} queries from unranked arrays: peak RSS {mem['peak_rss_mb']:.0f} MB, of "
            f"which the input arrays and generator {mem['data_rss_mb']:.0f} MB"
        )
    print(f"load average at end: {os.getloadavg()}")


if __name__ == "__main__":
    main()
