"""A cold LoCoMo run, end to end, as a user types it: `memgauge import locomo` then
`memgauge evaluate DATASET -s lexical -s hybrid`, each in a fresh MEMGAUGE_HOME and
MEMGAUGE_EMBEDDINGS (no embedding cache, no built ONNX graph).

    python benchmarks/bench_cold_locomo.py [--locomo ../shared/datasets/locomo10.json]
        [--reps 3] [--src NAME=PATH ...]

`--src NAME=PATH` runs the commands with PATH (a checkout's `src`) first on PYTHONPATH, so two
versions are measured in one session, interleaved (default: this checkout's `src` only). Each
rep reports wall time and CPU time (user + system of the two processes, from the children's
rusage: work on both cores counts twice) and the load average before it; then min and median.
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
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def loadavg() -> str:
    """The 1-minute load average."""
    return Path("/proc/loadavg").read_text().split()[0]


def cold_run(src: str, locomo: str) -> tuple[float, float]:
    """Wall and CPU seconds of import + evaluate with empty caches."""
    with tempfile.TemporaryDirectory() as tmp:
        t = Path(tmp)
        env = {
            **os.environ,
            "PYTHONPATH": src,
            "MEMGAUGE_HOME": str(t / "home"),
            "MEMGAUGE_EMBEDDINGS": str(t / "embeddings"),
        }
        cli = [sys.executable, "-m", "memgauge"]
        quiet = ["--out", str(t / "ev"), "--no-store", "--quiet"]
        commands = [
            [*cli, "import", "locomo", locomo, "--out", str(t / "loc")],
            [*cli, "evaluate", str(t / "loc"), "-s", "lexical", "-s", "hybrid", *quiet],
        ]
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        for cmd in commands:
            subprocess.run(cmd, env=env, cwd=tmp, check=True, stdout=subprocess.DEVNULL)
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--locomo", default=str(ROOT.parent / "shared" / "datasets" / "locomo10.json"))
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--src", action="append", default=[], help="NAME=PATH, repeatable")
    args = ap.parse_args()
    sources = dict(s.split("=", 1) for s in args.src) or {"this": str(ROOT / "src")}
    walls: dict[str, list[float]] = {n: [] for n in sources}
    cpus: dict[str, list[float]] = {n: [] for n in sources}
    for rep in range(args.reps):
        for name, src in sources.items():  # interleaved: the load falls on each alike
            load = loadavg()
            wall, cpu = cold_run(src, args.locomo)
            walls[name].append(wall)
            cpus[name].append(cpu)
            print(
                f"rep {rep + 1} {name}: wall {wall:.1f} s, CPU {cpu:.1f} s "
                f"(load {load} before, {loadavg()} after)",
                flush=True,
            )
    print("| version | wall min (s) | wall median (s) | CPU min (s) | CPU median (s) |")
    print("|---|---:|---:|---:|---:|")
    for name in sources:
        w, c = walls[name], cpus[name]
        print(
            f"| {name} | {min(w):.1f} | {statistics.median(w):.1f} | {min(c):.1f} "
            f"| {statistics.median(c):.1f} |"
        )


if __name__ == "__main__":
    main()
