"""The signed-rank test's p where SciPy enumerates sign flips (13 pairs or fewer with a tie or a
zero): memgauge's count against scipy.stats.wilcoxon on the same differences, and `memgauge
demo` end to end before and after (its categories compare four systems on few queries).

python benchmarks/bench_signed_rank.py [--before-src DIR]   (DIR: a `git archive` of the src
before; the demo is then timed with each, interleaved, three times)
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
from scipy import stats

from memgauge.stats.signed_rank import wilcoxon_p

SRC = Path(__file__).resolve().parents[1] / "src"


def cases(n_cases: int) -> list[np.ndarray]:
    rng = np.random.default_rng(0)
    grid = np.array([-1.0, -0.5, -0.25, 0.0, 0.0, 0.25, 0.5, 1.0])
    return [rng.choice(grid, size=int(rng.integers(4, 14))) for _ in range(n_cases)]


def per_call_ms(fn, data: list[np.ndarray]) -> list[float]:  # type: ignore[no-untyped-def]
    out = []
    for _ in range(3):
        t = time.process_time()
        for d in data:
            fn(d)
        out.append((time.process_time() - t) / len(data) * 1000)
    return out


def demo_cpu(src: Path) -> float:
    with tempfile.TemporaryDirectory() as home:
        env = {**os.environ, "PYTHONPATH": str(src), "MEMGAUGE_HOME": home}
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run(
            [sys.executable, "-m", "memgauge", "demo", "--out", f"{home}/out"],
            env=env,
            check=True,
            capture_output=True,
        )
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--before-src", type=Path)
    args = parser.parse_args()
    data = cases(200)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        scipy_ms = per_call_ms(lambda d: stats.wilcoxon(d, zero_method="wilcox").pvalue, data)
    ours_ms = per_call_ms(wilcoxon_p, data)
    assert all(wilcoxon_p(d) == stats.wilcoxon(d, zero_method="wilcox").pvalue for d in data)
    print(f"load {os.getloadavg()[0]:.2f}; 200 cases of 4-13 pairs with ties and zeros")
    print("| p of one test | CPU ms min | CPU ms median |\n|---|---:|---:|")
    for name, ms in (("scipy.stats.wilcoxon", scipy_ms), ("memgauge wilcoxon_p", ours_ms)):
        print(f"| {name} | {min(ms):.3f} | {statistics.median(ms):.3f} |")
    if args.before_src:
        runs: dict[str, list[float]] = {"before": [], "after": []}
        for _ in range(3):
            runs["before"].append(demo_cpu(args.before_src))
            runs["after"].append(demo_cpu(SRC))
        print("| memgauge demo | CPU-s min | CPU-s median |\n|---|---:|---:|")
        for name, secs in runs.items():
            print(f"| {name} | {min(secs):.2f} | {statistics.median(secs):.2f} |")


if __name__ == "__main__":
    main()
