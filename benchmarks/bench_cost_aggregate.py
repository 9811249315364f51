"""CPU-seconds of the cost aggregate on a LoCoMo run's records, before against after, each in a
fresh process as `evaluate` meets it (its first call: the tokenizer, NumPy's first calls), and
a second call in the same process (warm).

    python benchmarks/bench_cost_aggregate.py --before /tmp/before --dataset DIR [--runs 7]
        [--home kept|new]

DIR: a retrieval dataset (`memgauge import locomo ... --out DIR`). It is evaluated once with this
checkout (`bench_summary_cuts._records`) and the records handed to each process (pickled; every
output read once first, as the ir aggregate before it has). `--home kept`: every process gets
a copy of a home an earlier run of that checkout used (the token counts it kept); `new`: an
empty home. Processes alternate before / after; each prints its times and the aggregate's
result, checked equal. Reported: min and median of `time.process_time` per checkout.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import pickle
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _child(state: Path) -> None:
    from memgauge.aggregates.hits import hits_of

    view, by, cost = pickle.loads(state.read_bytes())
    for records in by.values():
        for r in records:
            hits_of(r.output)
    # the records' own heap out of the collector's way (its passes over them are the
    # pickle's, not the aggregate's)
    gc.collect()
    gc.freeze()
    t = time.process_time()
    first = cost.compute(view, by)
    cold = time.process_time() - t
    t = time.process_time()
    cost.compute(view, by)
    warm = time.process_time() - t
    result = first.model_dump(mode="json")
    print(json.dumps({"cold": cold, "warm": warm, "result": result}, default=str))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--before", type=Path, required=True)
    ap.add_argument("--dataset", type=Path, required=True)
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--home", choices=("kept", "new"), default="kept")
    ap.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child is not None:
        _child(args.child)
        return
    sys.path.insert(0, str(ROOT / "benchmarks"))
    sys.path.insert(0, str(ROOT / "src"))
    from bench_summary_cuts import _load, _pair, _records
    from memgauge.runs.summary import subjects_of

    got = _records(args.dataset)
    task, suite = got["plan"][0], got["suite"]
    subjects = subjects_of(task, suite)
    view = task.view(subjects, suite.seed)
    (cost,) = (a for a in task.aggregates if a.name == "cost")
    records = [it for it in got["items"] if it.repeat == 0 and it.subject == subjects[0]]
    records.sort(key=lambda r: r.seq)
    checkouts = {"before": args.before.resolve() / "src", "after": ROOT / "src"}
    times: dict[str, dict[str, list[float]]] = {n: {"cold": [], "warm": []} for n in checkouts}
    with tempfile.TemporaryDirectory() as tmp:
        state = Path(tmp) / "state.pickle"
        state.write_bytes(pickle.dumps((view, {subjects[0]: records}, cost)))

        def run(name: str, home: Path) -> dict[str, object]:
            env = {**os.environ, "PYTHONPATH": str(checkouts[name]), "MEMGAUGE_HOME": str(home)}
            cmd = [sys.executable, __file__, "--before", ".", "--dataset", ".", "--child"]
            out = subprocess.run([*cmd, str(state)], env=env, capture_output=True, check=True)
            found: dict[str, object] = json.loads(out.stdout)
            return found

        homes = {name: Path(tmp) / f"home-{name}" for name in checkouts}
        for name, home in homes.items():  # a warm-up each, whose home the `kept` runs copy
            home.mkdir()
            run(name, home)
        for i in range(args.runs):
            seen = []
            for name in checkouts:
                home = Path(tmp) / f"run-{i}-{name}"
                if args.home == "kept":
                    shutil.copytree(homes[name], home)
                else:
                    home.mkdir()
                got_run = run(name, home)
                seen.append(got_run.pop("result"))
                for part in ("cold", "warm"):
                    times[name][part].append(float(got_run[part]))  # type: ignore[arg-type]
            assert seen[0] == seen[1], "the results differ"
    print(f"home: {args.home}; runs: {args.runs}; load: {os.getloadavg()[0]:.1f}; CPU-s")
    for name, parts in times.items():
        for part, ts in parts.items():
            print(f"{name:6s} {part:4s} min {min(ts):.4f}  median {statistics.median(ts):.4f}")
    # the two spreads' quantile intervals (p50, p95 of context tokens and latency), in this
    # process, the before checkout's `stats.resampled` loaded from its file (`stats.bootstrap`
    # and `stats.shared_draws` this checkout's)
    import numpy as np

    from memgauge.aggregates.cost_values import costs_of
    from memgauge.stats import resampled
    from memgauge.stats.shared_draws import shared_draws

    old = _load(checkouts["before"] / "memgauge" / "stats" / "resampled.py", "_before_resampled")
    known = {m.id: m.text for m in view.dataset.memories}
    costs = costs_of(records, encoding=cost.encoding, known=known, qrels=None, rel_threshold=2,
                     accuracy=None, stage="total")  # fmt: skip
    series = [
        np.asarray([q.tokens for q in costs.queries], np.float64),
        np.asarray([q.latency_ms for q in costs.queries], np.float64),
    ]
    labels = ("quantile_cis, tokens", "quantile_cis, latency")
    with shared_draws():  # as in the aggregate: the indices drawn once, by the warm-up
        for label, values in zip(labels, series, strict=True):
            _pair(
                label,
                lambda v=values: old.quantile_cis(v, (50.0, 95.0), seed=suite.seed),
                lambda v=values: resampled.quantile_cis(v, (50.0, 95.0), seed=suite.seed),
                args.runs,
            )


if __name__ == "__main__":
    main()
