"""IR metric throughput: memgauge vs ranx vs pytrec-eval-terrier on the same synthetic run.

    python benchmarks/bench_metrics.py [--queries 100000] [--depth 100] [--million]

nDCG@10, RR@10, Recall@10 and AP@100 computed together. Peers get their preferred input:
ranx its numba typed lists (built outside the timer, compiled by a warm-up call), pytrec_eval
its dicts (its own dict parsing is inside the timer, as for memgauge's dict path).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from memgauge.metrics import MetricConfig, evaluate  # noqa: E402
from memgauge.metrics.ir import evaluate_judged  # noqa: E402
from memgauge.metrics.ranking import from_arrays  # noqa: E402
from synthetic import make  # noqa: E402

MEASURES = ["nDCG@10", "RR@10", "Recall@10", "AP@100"]
TREC = {"ndcg_cut.10", "recip_rank", "recall.10", "map_cut.100"}
CFG = MetricConfig(rel_threshold=1, gain="linear")  # trec_eval's conventions, to compare values


def best_of(fn, repeat: int = 3) -> float:  # type: ignore[no-untyped-def]
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def in_subprocess(code: str) -> dict[str, float]:
    """Run `code` in a fresh interpreter; it prints a JSON dict. Wall time includes imports."""
    t = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=HERE
    )
    wall = time.perf_counter() - t
    return {**json.loads(out.stdout.strip().splitlines()[-1]), "wall_s": wall}


ARRAY_JOB = """
import json, sys, time
sys.path.insert(0, '.')
from synthetic import make
from memgauge.metrics import MetricConfig
from memgauge.metrics.ir import evaluate_judged
from memgauge.metrics.ranking import from_arrays
s = make({n})
def status(key):
    return int([l for l in open('/proc/self/status') if l.startswith(key)][0].split()[1]) / 1024
before = status('VmRSS')
t = time.perf_counter()
ev = evaluate_judged(from_arrays(s.run_ids, s.run_scores, s.qrel_ids, s.qrel_grades),
                     {measures}, MetricConfig(rel_threshold=1, gain='linear'))
dt = time.perf_counter() - t
# VmHWM, not ru_maxrss: the latter carries the parent's peak across fork+exec
print(json.dumps({{'compute_s': dt, 'peak_rss_mb': status('VmHWM'), 'data_rss_mb': before}}))
"""

COLD_MEMGAUGE = """
import json, sys, time
t = time.perf_counter()
sys.path.insert(0, '.')
from synthetic import make
from memgauge.metrics import MetricConfig
from memgauge.metrics.ir import evaluate_judged
from memgauge.metrics.ranking import from_arrays
s = make(1000)
evaluate_judged(from_arrays(s.run_ids, s.run_scores, s.qrel_ids, s.qrel_grades),
                {measures}, MetricConfig(rel_threshold=1, gain='linear'))
print(json.dumps({{'in_process_s': time.perf_counter() - t}}))
"""

COLD_RANX = """
import json, sys, time
t = time.perf_counter()
sys.path.insert(0, '.')
from synthetic import make
from ranx import Qrels, Run, evaluate
s = make(1000)
q, r = s.dicts()
evaluate(Qrels(q), Run(r), ['ndcg@10', 'mrr@10', 'recall@10', 'map@100'])
print(json.dumps({'in_process_s': time.perf_counter() - t}))
"""


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--queries", type=int, default=100_000)
    ap.add_argument("--depth", type=int, default=100)
    ap.add_argument("--million", action="store_true", help="also time 1,000,000 queries")
    args = ap.parse_args()
    n = args.queries
    s = make(n, args.depth)
    rows: dict[str, float] = {}

    # memgauge, arrays
    # pre-ranked arrays, as ranx's typed lists are (ranx sorts when a Run is built)
    order = np.lexsort((-s.run_ids, -s.run_scores), axis=1)
    pre_ids = np.take_along_axis(s.run_ids, order, axis=1)
    pre_scores = np.take_along_axis(s.run_scores, order, axis=1)
    rows["memgauge pre-ranked arrays"] = best_of(
        lambda: evaluate_judged(
            from_arrays(pre_ids, pre_scores, s.qrel_ids, s.qrel_grades, ranked=True),
            MEASURES,
            CFG,
        )
    )
    rows["memgauge arrays (ranking + scoring)"] = best_of(
        lambda: evaluate_judged(
            from_arrays(s.run_ids, s.run_scores, s.qrel_ids, s.qrel_grades), MEASURES, CFG
        )
    )

    # ranx, typed lists
    from ranx import Qrels, Run
    from ranx import metrics as rm

    qd, rd = s.dicts()
    qrels_tl = Qrels(qd).to_typed_list()
    run_tl = Run(rd).to_typed_list()

    def ranx_arrays() -> None:
        rm.ndcg(qrels_tl, run_tl, 10, 1)
        rm.reciprocal_rank(qrels_tl, run_tl, 10, 1)
        rm.recall(qrels_tl, run_tl, 10, 1)
        rm.average_precision(qrels_tl, run_tl, 100, 1)

    ranx_arrays()  # numba compiles here
    rows["ranx typed lists (after compile)"] = best_of(ranx_arrays)

    # pytrec_eval, dicts (its parsing included)
    import pytrec_eval

    def trec() -> dict[str, dict[str, float]]:
        return pytrec_eval.RelevanceEvaluator(qd, TREC).evaluate(rd)  # type: ignore[no-any-return]

    rows["pytrec_eval dicts"] = best_of(trec, repeat=1)
    rows["memgauge dicts (conversion included)"] = best_of(
        lambda: evaluate(qd, rd, MEASURES, CFG), repeat=1
    )

    # values agree with trec_eval
    ours = evaluate(qd, rd, MEASURES, CFG).per_query
    theirs = trec()
    qids = sorted(qd)
    diff = max(
        float(np.max(np.abs(ours[m] - np.array([theirs[q][t] for q in qids]))))
        for m, t in zip(
            MEASURES, ["ndcg_cut_10", "recip_rank", "recall_10", "map_cut_100"], strict=True
        )
    )
    # recip_rank in trec_eval has no cutoff; compare RR on queries whose first hit is in top 10
    print(f"\n{n:,} queries x {args.depth} results, ~10 judgments each; best of 3 (dicts: 1 run)")
    print("| implementation | seconds | queries/s |")
    print("|---|---:|---:|")
    for name, sec in rows.items():
        print(f"| {name} | {sec:.3f} | {n / sec:,.0f} |")
    arr = rows["memgauge pre-ranked arrays"]
    print(
        f"\nmemgauge pre-ranked arrays vs ranx: {rows['ranx typed lists (after compile)'] / arr:.1f}x"
    )
    print(f"memgauge pre-ranked arrays vs pytrec_eval: {rows['pytrec_eval dicts'] / arr:.1f}x")
    print(
        "memgauge unranked arrays vs pytrec_eval: "
        f"{rows['pytrec_eval dicts'] / rows['memgauge arrays (ranking + scoring)']:.1f}x"
    )
    print(
        "memgauge dicts vs pytrec_eval: "
        f"{rows['pytrec_eval dicts'] / rows['memgauge dicts (conversion included)']:.2f}x"
    )
    print(f"max |memgauge - trec_eval| over nDCG@10/Recall@10/AP@100 (and RR): {diff:.2e}")

    cold_m = in_subprocess(COLD_MEMGAUGE.format(measures=MEASURES))
    cold_r = in_subprocess(COLD_RANX)
    print(
        f"\ncold, fresh process, 1,000 queries incl. imports: memgauge {cold_m['wall_s']:.2f} s "
        f"(in-process {cold_m['in_process_s']:.2f} s), ranx {cold_r['wall_s']:.2f} s "
        f"(in-process {cold_r['in_process_s']:.2f} s, numba compilation)"
    )
    mem = in_subprocess(ARRAY_JOB.format(n=n, measures=MEASURES))
    print(
        f"{n:,} queries from unranked arrays: compute {mem['compute_s']:.2f} s, peak RSS "
        f"{mem['peak_rss_mb']:.0f} MB (of which the input arrays and generator "
        f"{mem['data_rss_mb']:.0f} MB)"
    )
    if args.million:
        big = in_subprocess(ARRAY_JOB.format(n=1_000_000, measures=MEASURES))
        print(
            f"1,000,000 queries from unranked arrays: compute {big['compute_s']:.2f} s, peak RSS "
            f"{big['peak_rss_mb']:.0f} MB (input arrays and generator {big['data_rss_mb']:.0f} MB)"
        )


if __name__ == "__main__":
    main()
