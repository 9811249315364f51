"""What shadowing adds to a served search (issue 19): a 200 ms treatment, shadowing off and on.

    python benchmarks/bench_shadow.py [--calls 3000] [--gap-ms 1]

In one process run: the same in-memory control search (10 ids) is called bare, through a
`ShadowRunner` with shadowing off (percent 0), and on (10% and 100% of queries; one worker,
and eight), its treatment sleeping 200 ms, comparisons recorded into a SQLite results store.
Calls are paced `--gap-ms` apart (untimed), so the workers run treatments, diffs and store
writes while the caller is being timed: their share of the GIL is part of what is measured. Each
mode runs 3 times; the table gives the min and the median over the 3 runs of each run's p50 and
p99 per call, and the added latency (the mode's minus the bare call's, per run) at p99.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from memgauge.online.shadow import ShadowRunner
from memgauge.store.shadow import ShadowStore

IDS = [f"m{i}" for i in range(10)]


def control(query: str, k: int) -> list[str]:
    return IDS[:k]


def treatment(query: str, k: int) -> list[str]:
    time.sleep(0.2)
    return IDS[:k][::-1]


def timed(call: object, n: int, gap_s: float, tag: str) -> np.ndarray:
    """Per-call microseconds of `call(query_id, text)` over `n` paced calls."""
    out = np.empty(n)
    fn = call  # a bound method or function taking (query_id, text)
    for i in range(n):
        t = time.perf_counter_ns()
        fn(f"{tag}-{i}", "oauth refresh token")  # type: ignore[operator]
        out[i] = (time.perf_counter_ns() - t) / 1000
        end = time.perf_counter() + gap_s
        while time.perf_counter() < end:  # pace the traffic; not timed
            time.sleep(gap_s / 4)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=3000)
    ap.add_argument("--gap-ms", type=float, default=1.0)
    args = ap.parse_args()
    gap = args.gap_ms / 1000
    modes = [
        ("bare control (no runner)", None, 0, 1),
        ("runner, shadowing off", 0.0, 0, 1),
        ("runner, shadowing on 10%", 10.0, 0, 1),
        ("runner, shadowing on 100%", 100.0, 0, 1),
        ("runner, shadowing on 100%, 8 workers", 100.0, 0, 8),
    ]
    load_before = os.getloadavg()
    results: dict[str, list[tuple[float, float]]] = {m[0]: [] for m in modes}
    stats: dict[str, dict[str, int]] = {}
    with tempfile.TemporaryDirectory() as tmp, ShadowStore(Path(tmp) / "r.db") as store:
        for rep in range(3):
            for name, percent, _, workers in modes:
                if percent is None:
                    us = timed(lambda qid, text: control(text, 10), args.calls, gap, f"b{rep}")
                else:
                    runner = ShadowRunner(
                        f"bench-{name}", control, treatment, store, percent=percent,
                        workers=workers,
                    )  # fmt: skip
                    us = timed(runner.search, args.calls, gap, f"r{rep}{name}")
                    runner.close(timeout=0.5)  # queued 200 ms shadows are not the caller's time
                    stats[name] = runner.stats()
                results[name].append((float(np.percentile(us, 50)), float(np.percentile(us, 99))))
    load_after = os.getloadavg()
    bare = results[modes[0][0]]
    print(
        f"{args.calls:,} calls per mode and run, {args.gap_ms:g} ms apart, 3 runs; load average"
        f" {load_before[0]:.2f} before, {load_after[0]:.2f} after ({os.cpu_count()} cores)\n"
    )
    print("| mode | p50 us (min / median) | p99 us (min / median) | added p99 us (min / median) |")
    print("|---|---:|---:|---:|")
    for name, *_ in modes:
        runs = results[name]
        p50 = [r[0] for r in runs]
        p99 = [r[1] for r in runs]
        added = [r[1] - b[1] for r, b in zip(runs, bare, strict=True)]
        print(
            f"| {name} | {min(p50):.2f} / {statistics.median(p50):.2f} "
            f"| {min(p99):.2f} / {statistics.median(p99):.2f} "
            f"| {min(added):+.2f} / {statistics.median(added):+.2f} |"
        )
    print("\nlast run's runner stats:")
    for name, s in stats.items():
        print(f"- {name}: {s}")


if __name__ == "__main__":
    main()
