"""The tests' own cost: pytest runs of the same test ids in two checkouts, interleaved, each a
fresh process whose wall time and CPU (its own and its children's, every process it reaped) are
measured; min and median of --reps, the load average before and after.

    python benchmarks/bench_tests.py --before /tmp/before --after . --reps 3 \\
        tests/pytest_plugin/test_assertions.py

--before is a checkout of the commit to compare with (`git archive REV | tar -x -C DIR`); each
side runs with its own src and tests (PYTHONPATH=SIDE/src, cwd SIDE). Extra pytest options
after `--` (`-- -n 2 --dist loadgroup`).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path


def run_once(side: Path, args: list[str]) -> tuple[float, float, int]:
    """One `python -m pytest ARGS` in `side`: wall s, CPU s of it and its children, exit code."""
    env = {**os.environ, "PYTHONPATH": str(side / "src"), "MEMGAUGE_NO_SKIP": "1"}
    cmd = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", *args]
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=side, env=env, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    return wall, usage.ru_utime + usage.ru_stime, proc.returncode


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", type=Path, required=True)
    parser.add_argument("--after", type=Path, default=Path("."))
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("tests", nargs="+", help="test ids or paths, then `--` pytest options")
    opts, extra = parser.parse_known_args()
    args = [*opts.tests, *[a for a in extra if a != "--"]]
    sides = {"before": opts.before.resolve(), "after": opts.after.resolve()}
    print(f"load average at the start: {os.getloadavg()}")
    got: dict[str, list[tuple[float, float]]] = {name: [] for name in sides}
    for rep in range(opts.reps):
        for name, side in sides.items():
            wall, cpu, code = run_once(side, args)
            got[name].append((wall, cpu))
            print(f"rep {rep + 1} {name}: {wall:.1f} s wall, {cpu:.1f} CPU-s, exit {code}")
    print(f"load average at the end: {os.getloadavg()}")
    print("| side | wall s min / median | CPU-s min / median |")
    print("|---|---:|---:|")
    for name, runs in got.items():
        walls, cpus = [w for w, _ in runs], [c for _, c in runs]
        print(
            f"| {name} | {min(walls):.1f} / {statistics.median(walls):.1f} "
            f"| {min(cpus):.1f} / {statistics.median(cpus):.1f} |"
        )


if __name__ == "__main__":
    main()
