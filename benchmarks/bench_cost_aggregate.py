"""CPU-seconds of the cost aggregate (or `--aggregate ir`) on a LoCoMo run's records, before
against after, each in a fresh process as `evaluate` meets it (its first call: the tokenizer,
NumPy's first calls), and a second call in the same process (warm).

    python benchmarks/bench_cost_aggregate.py --before /tmp/before --dataset DIR [--runs 7]
        [--home kept|new] [--aggregate cost|ir]

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
from typing import Any

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
    ap.add_argument("--aggregate", choices=("cost", "ir"), default="cost")
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
    (cost,) = (a for a in task.aggregates if a.name == args.aggregate)
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
    print(f"{args.aggregate}; home: {args.home}; runs: {args.runs}; load: {os.getloadavg()[0]:.1f}")
    for name, parts in times.items():
        for part, ts in parts.items():
            print(f"{name:6s} {part:4s} min {min(ts):.4f}  median {statistics.median(ts):.4f}")
    if args.aggregate == "ir":
        _ir_pairs(cost, view, records, suite.seed, checkouts["before"], args.runs)
        return
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


def _ir_pairs(ir: Any, view: Any, records: list[Any], seed: int, before: Path, runs: int) -> None:
    """The ir aggregate's intervals in this process: the seven measures' (`_summaries`) and the
    categories' (`_breakdowns`), the before checkout's `stats.bootstrap` loaded from its file."""
    import numpy as np

    from bench_summary_cuts import _load, _pair
    from memgauge.aggregates.ir import IRAggregate
    from memgauge.stats import bootstrap
    from memgauge.stats.breakdown import breakdowns

    seen: dict[str, Any] = {}
    summaries = IRAggregate._summaries

    def spy(self: Any, values: Any, n_failed: int, seed: int) -> Any:
        seen["values"] = values
        return summaries(self, values, n_failed, seed)

    IRAggregate._summaries = spy  # type: ignore[method-assign]
    ir.compute(view, {records[0].subject: records})
    IRAggregate._summaries = summaries  # type: ignore[method-assign]
    matrix = np.vstack(list(seen["values"].values()))
    old = _load(before / "memgauge" / "stats" / "bootstrap.py", "_before_bootstrap")
    _pair(
        f"bootstrap_cis, {matrix.shape}",
        lambda: [vars(ci) for ci in old.bootstrap_cis(matrix, seed=seed)],
        lambda: [vars(ci) for ci in bootstrap.bootstrap_cis(matrix, seed=seed)],
        runs,
    )
    groups = [q.category for q in view.dataset.queries if q.id in {r.item_id for r in records}]
    if len(groups) == matrix.shape[1]:
        import memgauge.stats.breakdown as breakdown_module

        def old_breakdowns() -> Any:
            breakdown_module.bootstrap_cis = old.bootstrap_cis
            try:
                return [
                    {g: vars(st.ci) for g, st in row.items()}
                    for row in breakdowns(matrix, groups, seed=seed)
                ]
            finally:
                breakdown_module.bootstrap_cis = bootstrap.bootstrap_cis

        _pair(
            "breakdowns by category",
            old_breakdowns,
            lambda: [
                {g: vars(st.ci) for g, st in row.items()}
                for row in breakdowns(matrix, groups, seed=seed)
            ],
            runs,
        )


if __name__ == "__main__":
    main()
